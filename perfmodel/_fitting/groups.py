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


def _unique_rows(columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(columns, axis=0, return_inverse=True)``, by sorting each column once
    (np.unique on rows compares them as byte strings: seconds for 10⁶ rows)."""
    if columns.shape[1] == 1:
        unique, index = np.unique(columns[:, 0], return_inverse=True)
        return unique[:, None], index.ravel()
    order = np.lexsort(columns.T[::-1])
    ordered = columns[order]
    starts = np.concatenate([[True], np.any(ordered[1:] != ordered[:-1], axis=1)])
    index = np.empty(columns.shape[0], dtype=np.intp)
    index[order] = np.cumsum(starts) - 1
    return ordered[starts], index


def reduce(data: Benchmarks, loss: str, weights: np.ndarray | None = None) -> Groups:
    """`data` reduced for `loss` (module docstring); `weights` per measurement (1)."""
    columns = np.stack([data.gpus, *data.config.values()], axis=1)
    w = np.ones(data.gpus.size) if weights is None else np.asarray(weights, dtype=np.float64)
    t = data.time_s
    if loss == "huber":
        index = np.arange(t.size)
        unique, target, weight = columns, t, w
    else:
        unique, index = _unique_rows(columns)
        g = unique.shape[0]
        # A configuration whose measurements all weigh 0 (a held-out fold) keeps an
        # unweighted target, so that every row stays finite.
        w_or_1 = np.where(np.bincount(index, weights=w, minlength=g)[index] > 0, w, 1.0)
        weight = np.bincount(index, weights=w, minlength=g)
        sums = np.bincount(index, weights=w_or_1, minlength=g)
        if loss == "log":
            target = np.exp(np.bincount(index, weights=w_or_1 * np.log(t), minlength=g) / sums)
        elif loss == "relative":
            # In units of the median time, so that 1/t² of times of 1e±300 s stays
            # finite; the weight b²/a is the same in any unit.
            unit = float(np.median(t))
            a = np.bincount(index, weights=w_or_1 / (t / unit) ** 2, minlength=g)
            b = np.bincount(index, weights=w_or_1 / (t / unit), minlength=g)
            target = unit * (b / a)
            weight = np.where(weight > 0, b**2 / a, 0.0)
        elif data.target == "throughput":
            target = sums / np.bincount(index, weights=w_or_1 / t, minlength=g)
        else:
            target = np.bincount(index, weights=w_or_1 * t, minlength=g) / sums
    size = unique.shape[0]
    rows = max(MIN_ROWS, 1 << (size - 1).bit_length())
    pad = np.concatenate([np.arange(size), np.zeros(rows - size, dtype=int)])
    unique, target = unique[pad], target[pad]
    weight = np.where(np.arange(rows) < size, weight[pad], 0.0)
    fields = dict(zip(data.config, unique[:, 1:].T))
    config = Config(gpus=unique[:, 0], **fields).broadcast()
    return Groups(config, target, weight, index, unique[:, 0], size)
