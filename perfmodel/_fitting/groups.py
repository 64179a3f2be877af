"""Measurements reduced to one row per distinct configuration, for the loss.

Per-step logs hold thousands of measurements at a few GPU counts. Every loss perfmodel
fits is a weighted sum over measurements of a function of ``(prediction, measurement)``
that, at one configuration, depends on the measurements only through a few sums, so the
rows of one configuration can be replaced by one row with a weight and a target without
changing the minimiser:

* ``"log"``: ``Σ w·(log T̂ − log t_i)² = W·(log T̂ − m)² + const``, m the weighted mean
  of ``log t_i``: target ``exp(m)``, weight ``W = Σ w``;
* ``"relative"``: ``Σ w·(T̂/t_i − 1)² = A·T̂² − 2B·T̂ + const`` with ``A = Σ w/t_i²``,
  ``B = Σ w/t_i``, that is ``w′·(T̂/t′ − 1)²`` with ``t′ = B/A``, ``w′ = B²/A``;
* ``"squared"``: the weighted mean of the measured quantity (time, or throughput).

The Huber loss is not a function of such sums, so it keeps every row.

The rows are padded to a power of two (at least `MIN_ROWS`) with copies of the first
row at weight 0, so that series of different lengths share compiled functions.
"""

import dataclasses

import numpy as np

from .._config import Config
from .._data import Benchmarks

MIN_ROWS = 8


@dataclasses.dataclass(frozen=True)
class Groups:
    """The loss's view of the data: one row per distinct configuration.

    Attributes:
        config: the distinct configurations, every field broadcast to ``(g,)``.
        time_s: the target of each row, seconds (per step or per unit of work).
        weights: the weight of each row.
        index: for every measurement, the row of its configuration, ``(n,)``.
        gpus: GPU count of each row.
        size: the number of rows that are not padding.
    """

    config: Config
    time_s: np.ndarray
    weights: np.ndarray
    index: np.ndarray
    gpus: np.ndarray
    size: int


def measurement_weights(data: Benchmarks, power: float) -> np.ndarray:
    """``(N_i / max N)^power`` per measurement: ``power > 0`` weighs the largest GPU
    counts, where an extrapolation starts, the most; 0 weighs all alike."""
    return (data.gpus / data.gpus.max()) ** power


def reduce(data: Benchmarks, loss: str, weights: np.ndarray | None = None) -> Groups:
    """`data` reduced for `loss` (module docstring); `weights` per measurement (1)."""
    w = np.ones(data.gpus.size) if weights is None else np.asarray(weights, dtype=np.float64)
    unique, index = _distinct(data, loss)
    target, weight = _targets(index, unique.shape[0], data.time_s, w, loss, data.target)
    pad, keep = _padding(unique.shape[0])
    config, gpus = _config(data, unique[pad])
    weight = np.where(keep, weight[pad], 0.0)
    return Groups(config, target[pad], weight, index, gpus, unique.shape[0])


def reduce_batch(
    data: Benchmarks, loss: str, times: np.ndarray, weights: np.ndarray
) -> tuple[Config, np.ndarray, np.ndarray]:
    """``(config, targets, weights)``: each row of `times` and `weights` (``(m, n)``: the
    measurements of `data` resampled or reweighted, for bootstrap and rolling-origin
    refits) reduced like `reduce`, on the rows of one shared `config`, ``(m, rows)``."""
    unique, index = _distinct(data, loss)
    pad, keep = _padding(unique.shape[0])
    targets, reduced = [], []
    for t, w in zip(times, weights):
        target, weight = _targets(index, unique.shape[0], t, w, loss, data.target)
        targets.append(target[pad])
        reduced.append(np.where(keep, weight[pad], 0.0))
    config, _ = _config(data, unique[pad])
    shape = (len(targets), pad.size)
    return config, np.reshape(targets, shape), np.reshape(reduced, shape)


def _distinct(data: Benchmarks, loss: str) -> tuple[np.ndarray, np.ndarray]:
    """Rows of the loss's view (every measurement for Huber) and each measurement's row."""
    if loss == "huber":
        columns = np.stack([data.gpus, *data.config.values()], axis=1)
        return columns, np.arange(data.gpus.size)
    return data.distinct()


def _targets(index, g: int, t, w, loss: str, target: str) -> tuple[np.ndarray, np.ndarray]:
    """Target and weight of each of the `g` rows (module docstring)."""
    if loss == "huber":
        return np.asarray(t, dtype=np.float64), w
    # A configuration whose measurements all weigh 0 (a held-out fold) keeps an
    # unweighted target, so that every row stays finite.
    weight = np.bincount(index, weights=w, minlength=g)
    w_or_1 = np.where(weight[index] > 0, w, 1.0)
    sums = np.bincount(index, weights=w_or_1, minlength=g)
    if loss == "log":
        return np.exp(np.bincount(index, weights=w_or_1 * np.log(t), minlength=g) / sums), weight
    if loss == "relative":
        # In units of the median time, so that 1/t² of times of 1e±300 s stays
        # finite; the weight b²/a is the same in any unit.
        unit = float(np.median(t))
        a = np.bincount(index, weights=w_or_1 / (t / unit) ** 2, minlength=g)
        b = np.bincount(index, weights=w_or_1 / (t / unit), minlength=g)
        return unit * (b / a), np.where(weight > 0, b**2 / a, 0.0)
    if target == "throughput":
        return sums / np.bincount(index, weights=w_or_1 / t, minlength=g), weight
    return np.bincount(index, weights=w_or_1 * t, minlength=g) / sums, weight


def _padding(size: int) -> tuple[np.ndarray, np.ndarray]:
    """Row of each padded row (a power of two, at least `MIN_ROWS`; padding repeats the
    first) and whether it is a real one."""
    rows = max(MIN_ROWS, 1 << (size - 1).bit_length())
    pad = np.concatenate([np.arange(size), np.zeros(rows - size, dtype=int)])
    return pad, np.arange(rows) < size


def _config(data: Benchmarks, unique: np.ndarray) -> tuple[Config, np.ndarray]:
    fields = dict(zip(data.config, unique[:, 1:].T))
    return Config(gpus=unique[:, 0], **fields).broadcast(), unique[:, 0]
