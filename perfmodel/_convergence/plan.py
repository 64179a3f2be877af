"""The grid answer: the GPU count and global batch that minimise time or cost to train,
and the reason more GPUs stop helping (the critical batch, the step time, the range)."""

import dataclasses
import math

import numpy as np

from .._errors import InputError
from .._text import brief
from .closed import doubling_gain, statistical_efficiency, steps_to_target, time_to_train

OBJECTIVES = ("time", "cost")
MIN_GAIN = 0.1  # a doubling of the GPUs "helps" when it saves at least this share of time


@dataclasses.dataclass(frozen=True)
class TrainingPlan:
    """The GPU count and global batch that minimise time or cost to train on a grid.

    Attributes:
        objective: ``"time"`` or ``"cost"``.
        gpus, global_batch: the chosen configuration.
        time_to_train_s: seconds to the target there (median over draws when given).
        cost: ``N·time/3600·price`` there (GPU-hours at price 1).
        steps: optimizer steps to the target there.
        time_interval_s, cost_interval: (lo, hi) over the draws (5%–95%), or the point
            twice without draws.
        feasible: False when a deadline was given and nothing meets it.
        limited_by: why more GPUs do not help: ``"critical_batch"`` (the batch passes
            the critical batch), ``"step_time"`` (the step stops getting faster),
            ``"gpu_range"`` (the largest count considered is still the best) or, for
            cost and deadlines, ``"cost"``/``"deadline"``.
        reason: one sentence saying so, with the numbers.
        time_grid_s, cost_grid: (gpus × batches) time and cost at every grid point.
        knee_gpus: the GPU count beyond which a doubling (with the best batch at each
            count) saves less than `min_gain` of the time to train, or None. When the
            fastest count is the largest offered but such a knee exists, `limited_by`
            and `reason` say why returns diminish there.
        gpus_grid, batch_grid: the GPU counts and global batches of the grid.
        noise_batch: the critical batch B_noise the plan used, samples.
        level: probability of the intervals (None: the point twice).
        extrapolated: a sentence when the configuration lies past what the fit measured
            (more GPUs, or a global batch outside its runs'), else None
            (`perfmodel.plan_training`).
    """

    objective: str
    gpus: float
    global_batch: float
    time_to_train_s: float
    cost: float
    steps: float
    time_interval_s: tuple[float, float]
    cost_interval: tuple[float, float]
    feasible: bool
    limited_by: str
    reason: str
    time_grid_s: np.ndarray
    cost_grid: np.ndarray
    knee_gpus: float | None = None
    gpus_grid: np.ndarray | None = None
    batch_grid: np.ndarray | None = None
    noise_batch: float = math.nan
    level: float | None = None
    extrapolated: str | None = None

    def __repr__(self) -> str:
        """One line, as every result's (its grids printed some 200 lines of arrays)."""
        best = (
            f"{self.gpus:g} GPUs at global batch {self.global_batch:g}: "
            f"{self.time_to_train_s:.4g} s to the target, cost {self.cost:.4g}"
        )
        return brief("TrainingPlan", f"{self.objective}", best, f"limited by {self.limited_by}")


def plan(
    gpus,
    batch,
    step_time_s,
    work_min,
    noise_batch,
    *,
    samples_per_unit: float = 1.0,
    objective: str = "time",
    price_per_gpu_hour: float = 1.0,
    deadline_s: float | None = None,
    level: float = 0.9,
    min_gain: float = MIN_GAIN,
) -> TrainingPlan:
    """The (GPU count, global batch) of a grid that minimises time or cost to train.

    Args:
        gpus: GPU counts, shape (n,).
        batch: global batches, samples per step, shape (m,).
        step_time_s: seconds per step at each (gpus, batch), shape (n, m), or (d, n, m)
            for d draws of an ensemble (then `work_min` and `noise_batch` may be (d,)).
            Non-finite entries mark configurations that cannot run (memory, layout).
        work_min, noise_batch: the critical-batch parameters (`CriticalBatch`).
        samples_per_unit: samples per unit of work (dataset size when E is in epochs).
        objective: ``"time"`` (time to train) or ``"cost"`` (GPU-hours × price).
        price_per_gpu_hour: currency per GPU-hour (1: cost in GPU-hours).
        deadline_s: for ``"cost"``: the cheapest configuration that trains within this.
        level: probability of the intervals over the draws.
        min_gain: a doubling of the GPUs that saves less than this share of the time
            counts as not helping (`TrainingPlan.knee_gpus`).

    Raises:
        InputError: an unknown objective, or arrays of mismatched shapes.
    """
    if objective not in OBJECTIVES:
        raise InputError(f"objective: expected one of {', '.join(OBJECTIVES)}, got {objective!r}")
    gpus, batch = np.asarray(gpus, float).ravel(), np.asarray(batch, float).ravel()
    step = np.asarray(step_time_s, float)
    if step.shape[-2:] != (gpus.size, batch.size):
        raise InputError(
            f"step_time_s: expected shape ({gpus.size}, {batch.size}) (gpus × batches) or "
            f"(draws, {gpus.size}, {batch.size}), got {step.shape}"
        )
    draws = step.reshape(-1, gpus.size, batch.size)
    e_min = np.asarray(work_min, float).reshape(-1, 1, 1)
    b_noise = np.asarray(noise_batch, float).reshape(-1, 1, 1)
    with np.errstate(invalid="ignore", over="ignore"):
        times = time_to_train(draws, batch[None, None, :], e_min, b_noise, samples_per_unit)
    times = np.where(np.isfinite(times) & (times > 0), times, np.inf)
    costs = gpus[None, :, None] * times / 3600.0 * price_per_gpu_hour
    with np.errstate(invalid="ignore"):
        time_grid = np.exp(np.median(np.log(times), axis=0))
    cost_grid = gpus[:, None] * time_grid / 3600.0 * price_per_gpu_hour
    if not np.isfinite(time_grid).any():
        raise InputError("no configuration of the grid can run (every step time is non-finite)")
    feasible = True
    score = time_grid if objective == "time" else cost_grid
    if objective == "cost" and deadline_s is not None:
        meets = time_grid <= deadline_s
        if not meets.any():
            feasible = False
        else:
            score = np.where(meets, cost_grid, np.inf)
    i, j = np.unravel_index(int(np.argmin(score)), score.shape)
    b_point = float(np.median(b_noise))
    e_point = float(np.median(e_min))
    tail = (1.0 - level) / 2.0
    t_draws, c_draws = times[:, i, j], costs[:, i, j]
    limited_by, reason = _reason(
        objective, gpus, batch, time_grid, i, j, b_point, deadline_s, feasible
    )
    knee = _knee(gpus, time_grid, min_gain)
    if objective == "time" and limited_by == "gpu_range" and knee is not None:
        k = int(np.argmax(gpus == knee))
        m = int(np.argmin(time_grid[k]))
        limited_by, why = _reason("time", gpus, batch, time_grid, k, m, b_point, None, True)
        reason += (
            f", but beyond {knee:g} GPUs each doubling saves less than {min_gain:.0%}: "
            + why.replace("more GPUs stop helping here because ", "")
        )
    elif objective == "time" and limited_by == "gpu_range" and i > 0:
        reason += _last_doubling(gpus, batch, time_grid, i, j, b_point)
    return TrainingPlan(
        objective=objective,
        gpus=float(gpus[i]),
        global_batch=float(batch[j]),
        time_to_train_s=float(time_grid[i, j]),
        cost=float(cost_grid[i, j]),
        steps=float(steps_to_target(batch[j], e_point, b_point, samples_per_unit)),
        time_interval_s=(float(np.quantile(t_draws, tail)), float(np.quantile(t_draws, 1 - tail))),
        cost_interval=(float(np.quantile(c_draws, tail)), float(np.quantile(c_draws, 1 - tail))),
        feasible=feasible,
        limited_by=limited_by,
        reason=reason,
        time_grid_s=time_grid,
        cost_grid=cost_grid,
        knee_gpus=knee,
        gpus_grid=gpus,
        batch_grid=batch,
        noise_batch=b_point,
        level=level if draws.shape[0] > 1 else None,
    )


def _knee(gpus, time_grid, min_gain) -> float | None:
    """The smallest GPU count after which a doubling (with the best batch at each count)
    saves less than `min_gain` of the time to train, or None."""
    best = time_grid.min(axis=1)
    for k in range(gpus.size - 1):
        # Against the count a doubling reaches (the next one on a grid of powers of two),
        # not the next count of a finer grid: a step of 19% more GPUs at the same batch
        # (the batches are powers of two) read as a doubling that saves little.
        j = int(np.searchsorted(gpus, 2.0 * gpus[k] * (1.0 - 1e-9)))
        j = min(j, gpus.size - 1)
        if not (np.isfinite(best[k]) and np.isfinite(best[j])):
            continue
        per_doubling = (best[j] / best[k]) ** (1.0 / math.log2(gpus[j] / gpus[k]))
        if per_doubling > 1.0 - min_gain:
            return float(gpus[k])
    return None


def _last_doubling(gpus, batch, time_grid, i, j, noise_batch) -> str:
    """How much the last step up in GPUs saves, and where the batch stands against the
    critical batch there (for a fastest count at the end of the range)."""
    # Against half the GPUs, as `_knee` does: on four counts per doubling the last step is
    # 19% more GPUs, and "3444 → 4096 GPUs saves 4%" read as if more barely help.
    h = min(int(np.searchsorted(gpus, gpus[i] / 2.0 * (1.0 - 1e-9))), i - 1)
    before = float(time_grid[h].min())
    saving = 1.0 - float(time_grid[i, j]) / before
    text = f"; going from {gpus[h]:g} to {gpus[i]:g} GPUs saves {saving:.0%}"
    b = batch[j]
    if b >= noise_batch:
        text += (
            f", and the best batch there, {b:g}, is {b / noise_batch:.2g}× the critical batch "
            f"B_noise ≈ {noise_batch:.3g}: doubling it cuts the steps to the target only "
            f"{doubling_gain(b, noise_batch):.2f}×"
        )
    return text


def _reason(objective, gpus, batch, time_grid, i, j, noise_batch, deadline_s, feasible):
    n, b = gpus[i], batch[j]
    if not feasible:
        k, m = np.unravel_index(int(np.argmin(time_grid)), time_grid.shape)
        return "deadline", (
            f"no configuration trains within the deadline of {deadline_s:.4g} s: the fastest "
            f"takes {time_grid[k, m]:.4g} s ({gpus[k]:g} GPUs, global batch {batch[m]:g})"
        )
    if objective == "cost":
        why = "cost" if deadline_s is None else "deadline"
        text = f"the cheapest configuration{'' if deadline_s is None else ' within the deadline'}"
        text += f" is {n:g} GPU{'' if n == 1 else 's'} at global batch {b:g}"
        if b >= noise_batch:
            text += (
                f"; its batch is past the critical batch B_noise ≈ {noise_batch:.3g}, where "
                f"each sample does only {statistical_efficiency(b, noise_batch):.0%} of the "
                "work a small batch's would"
            )
        return why, text
    if i == gpus.size - 1:
        return "gpu_range", (
            f"more GPUs still shorten training up to the largest count considered ({n:g})"
        )
    gain = doubling_gain(b, noise_batch)
    if b >= noise_batch:
        return "critical_batch", (
            f"more GPUs stop helping here because the batch passes the critical batch: at "
            f"{n:g} GPUs the best global batch, {b:g}, is {b / noise_batch:.2g}× the critical "
            f"batch B_noise ≈ {noise_batch:.3g}, so doubling it cuts the steps to the target "
            f"only {gain:.2f}× (each sample does {statistical_efficiency(b, noise_batch):.0%} "
            "of a small batch's work), while the same batch spread over more GPUs does not "
            "shorten the step enough"
        )
    return "step_time", (
        f"more GPUs stop helping here because the step stops getting faster (communication "
        f"and serial time), not because of convergence: the best global batch at {n:g} GPUs, "
        f"{b:g}, is below the critical batch B_noise ≈ {noise_batch:.3g} (doubling it would "
        f"still cut the steps {gain:.2f}×)"
    )
