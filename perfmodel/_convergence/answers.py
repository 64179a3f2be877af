"""The answers of a time-to-train fit: the GPU count and global batch that train fastest,
cheapest, or cheapest within a deadline, with an interval and the reason more GPUs stop
helping."""

import dataclasses
import math

import numpy as np

from .._errors import InputError
from .._uncertainty import check_level
from .family import TimeToTrainFit
from .plan import MIN_GAIN, plan, TrainingPlan

OBJECTIVES = ("time", "cost")
# Default batch grid: powers of two from a quarter of the smallest batch measured to 16×
# the largest (an optimum past the critical batch is usually within a few doublings).
BATCH_BELOW, BATCH_ABOVE = 4.0, 16.0


# GPU counts per doubling of the default grid: the cheapest plan "within 60 s" of the
# shipped SSD fit on powers of two paid 16.56 at 512 GPUs; this grid finds 304 GPUs at
# 12.11 (and 280, at 11.6, in whole nodes of 40: review round 11b).
COUNTS_PER_DOUBLING = 4


def gpu_grid(max_gpus: int = 4096, multiple_of: int = 1) -> np.ndarray:
    """GPU counts to consider: `multiple_of` (whole nodes when more than 1) times the whole
    numbers nearest ``2^(k/4)``, four per doubling (1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 13,
    16, …), and the largest multiple of `multiple_of` up to `max_gpus`, which ends it."""
    if not isinstance(max_gpus, int) or max_gpus < 1:
        raise InputError(f"max_gpus: expected a whole number ≥ 1, got {max_gpus!r}")
    if not isinstance(multiple_of, int) or multiple_of < 1:
        raise InputError(f"multiple_of: expected a whole number ≥ 1, got {multiple_of!r}")
    if multiple_of > max_gpus:
        raise InputError(f"multiple_of {multiple_of} is more than max_gpus {max_gpus}")
    top = max_gpus // multiple_of
    k = np.arange(int(COUNTS_PER_DOUBLING * math.log2(top) + 1e-9) + 1)
    nodes = np.unique(np.append(np.round(2.0 ** (k / COUNTS_PER_DOUBLING)), top))
    return multiple_of * nodes[nodes <= top]


def batch_grid(fit: TimeToTrainFit) -> np.ndarray:
    """Global batches to consider: powers of two from the smallest batch measured / 4 to
    the largest × 16, at least 1."""
    measured = fit.runs.data.config["global_batch"]
    lo = max(0, math.floor(math.log2(measured.min() / BATCH_BELOW)))
    hi = math.ceil(math.log2(measured.max() * BATCH_ABOVE))
    return 2.0 ** np.arange(lo, hi + 1)


def _axis(values, name: str) -> np.ndarray:
    array = np.asarray(values, float).ravel()
    if array.size == 0 or not np.all(np.isfinite(array) & (array >= 1)):
        raise InputError(f"{{arg:{name}}}: expected numbers ≥ 1, got {array[:4].tolist()}")
    return np.unique(array)


def beyond_the_runs(fit: TimeToTrainFit, gpus: float, batch: float) -> str | None:
    """A sentence when (`gpus`, `batch`) lies past what `fit` measured (more or fewer
    GPUs than its runs and step times, or a global batch outside theirs), else None."""
    measured = [fit.runs.data, fit.step.data]
    counts = np.concatenate([np.asarray(d.gpus, float) for d in measured])
    batches = np.concatenate(
        [
            np.asarray(d.config["global_batch"], float)
            for d in measured
            if "global_batch" in d.config
        ]
    )
    past = []
    if gpus > counts.max():
        past.append(f"{gpus / counts.max():.3g}× the {counts.max():g} GPUs")
    elif gpus < counts.min():
        past.append(f"{gpus:g} GPU{'' if gpus == 1 else 's'}, below the {counts.min():g}")
    if batches.size and not batches.min() <= batch <= batches.max():
        edge = batches.max() if batch > batches.max() else batches.min()
        past.append(f"{batch / edge:.3g}× the global batch {edge:g}")
    if not past:
        return None
    span = f"{counts.min():g}–{counts.max():g} GPUs"
    if batches.size:
        span += f", global batches {batches.min():g}–{batches.max():g}"
    return f"extrapolated: {' and '.join(past)} measured (the runs span {span})"


def plan_training(
    fit: TimeToTrainFit,
    *,
    objective: str = "time",
    price_per_gpu_hour: float | None = None,
    deadline_s: float | None = None,
    gpus=None,
    batches=None,
    max_gpus: int = 4096,
    multiple_of: int = 1,
    min_per_gpu: float = 1.0,
    level: float | None = 0.9,
    method: str | None = None,
    min_gain: float = MIN_GAIN,
) -> TrainingPlan:
    """The GPU count and global batch that minimise time to train, or cost to train.

    Every (GPU count, batch) of the grid is predicted by `fit` (`TimeToTrainFit.predict`);
    configurations with fewer than `min_per_gpu` samples per GPU cannot run. The plan's
    `reason` says why more GPUs stop helping: past the critical batch each doubling of
    the batch cuts the steps to the target less than 2× (``critical_batch``), or the step
    stops getting faster (``step_time``), or the largest count is still the fastest
    (``gpu_range``, with the knee where a doubling saves less than `min_gain`).

    Args:
        fit: a time-to-train fit (`fit_time_to_train`).
        objective: ``"time"`` (time to train) or ``"cost"`` (GPU-hours × price).
        price_per_gpu_hour: currency per GPU-hour (None: cost in GPU-hours).
        deadline_s: with ``"cost"``: the cheapest configuration training within this.
        gpus: GPU counts (default `gpu_grid(max_gpus, multiple_of)`).
        batches: global batches, samples per step (default `batch_grid(fit)`).
        max_gpus, multiple_of: the default GPU grid.
        min_per_gpu: fewest samples per GPU in a step (1).
        level: probability of the interval on the time and cost of the plan (None: none).
        method: ``"laplace"`` or ``"bootstrap"`` for the step family's part.
        min_gain: a doubling that saves less than this share of time does not help.

    Raises:
        InputError: an unknown objective, a deadline without ``"cost"``, bad grids.

    Example:
        >>> runs = pm.read_training_runs("tests/data/logs/mllog_ssd")  # doctest: +SKIP
        >>> pm.plan_training(pm.fit_time_to_train(runs)).reason  # doctest: +SKIP
    """
    if objective not in OBJECTIVES:
        raise InputError(f"objective: expected one of {', '.join(OBJECTIVES)}, got {objective!r}")
    if deadline_s is not None:
        if objective != "cost":
            raise InputError("{arg:deadline}: a deadline goes with the cost objective")
        if not (math.isfinite(deadline_s) and deadline_s > 0):
            raise InputError(f"{{arg:deadline}}: expected seconds > 0, got {deadline_s}")
    price = 1.0 if price_per_gpu_hour is None else float(price_per_gpu_hour)
    if not (math.isfinite(price) and price > 0):
        raise InputError(f"{{arg:price_per_gpu_hour}}: expected a positive number, got {price}")
    if level is not None:
        level = check_level(level)
    counts = gpu_grid(max_gpus, multiple_of) if gpus is None else _axis(gpus, "gpus")
    batch = batch_grid(fit) if batches is None else _axis(batches, "batches")
    n, b = np.meshgrid(counts, batch, indexing="ij")
    grid = fit.predict(n, b, level, method)
    runs = b / n >= min_per_gpu
    if not runs.any():
        raise InputError(
            f"no global batch of the grid gives {min_per_gpu:g} sample(s) per GPU at any "
            "GPU count; give larger batches or fewer GPUs"
        )
    step = np.where(runs, grid["step_time_s"], np.inf)
    found = plan(
        counts,
        batch,
        step,
        fit.work_min,
        fit.noise_batch,
        samples_per_unit=fit.samples_per_unit,
        objective=objective,
        price_per_gpu_hour=price,
        deadline_s=deadline_s,
        min_gain=min_gain,
    )
    found = dataclasses.replace(
        found, extrapolated=beyond_the_runs(fit, found.gpus, found.global_batch)
    )
    if level is None:
        return found
    i = int(np.argmax(counts == found.gpus))
    j = int(np.argmax(batch == found.global_batch))
    lo, hi = grid["time_to_train_s_lo"][i, j], grid["time_to_train_s_hi"][i, j]
    per_second = found.gpus / 3600.0 * price
    return dataclasses.replace(
        found,
        time_interval_s=(float(lo), float(hi)),
        cost_interval=(float(lo * per_second), float(hi * per_second)),
        level=level,
    )
