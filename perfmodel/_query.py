"""Questions asked of a fitted model: the best GPU count and where returns diminish."""

import dataclasses

import equinox as eqx
import jax
import numpy as np

from ._errors import InputError
from ._fit import FitResult
from ._terms import SerialTerm

OBJECTIVES = ("time", "cost")


@dataclasses.dataclass(frozen=True)
class Optimum:
    """The best GPU count found.

    Attributes:
        gpus: the GPU count chosen.
        time_s: seconds per step (or per unit of work) there.
        speedup, efficiency: relative to one GPU.
        gpu_seconds: GPU-seconds per step (N · T), the resource a step consumes.
        cost: price of one step in currency units when a price per GPU-hour was given.
        objective: ``"time"`` (fastest) or ``"cost"`` (cheapest per unit of work).
        searched: the largest GPU count considered.
        at_limit: True when the optimum is the largest count searched, so a larger
            search might find a better one.
    """

    gpus: int
    time_s: float
    speedup: float
    efficiency: float
    gpu_seconds: float
    cost: float | None
    objective: str
    searched: int
    at_limit: bool


@dataclasses.dataclass(frozen=True)
class DiminishingReturns:
    """The first GPU count past which adding GPUs stops paying.

    Attributes:
        gpus: that count, or None when no count up to `searched` crosses a criterion.
        criterion: which criterion crossed first, with its threshold.
        marginal_speedup: dS/dN at `gpus` (speedup one more GPU adds).
        efficiency: speedup / N at `gpus`.
        speedup: speedup at `gpus`.
        searched: the largest GPU count considered.
    """

    gpus: int | None
    criterion: str
    marginal_speedup: float
    efficiency: float
    speedup: float
    searched: int


def _candidates(max_gpus: int, multiple_of: int) -> np.ndarray:
    if max_gpus < 1:
        raise InputError(f"max_gpus must be ≥ 1, got {max_gpus}")
    if multiple_of < 1:
        raise InputError(f"multiple_of must be ≥ 1, got {multiple_of}")
    counts = np.arange(multiple_of, max_gpus + 1, multiple_of, dtype=np.float64)
    if multiple_of > 1:
        counts = np.concatenate([[1.0], counts])
    if counts.size == 0:
        raise InputError(f"no GPU count ≤ {max_gpus} is a multiple of {multiple_of}")
    return counts


@eqx.filter_jit
def _curve(model, config):
    def marginal(cfg):
        def speedup_at(n):
            return model.speedup(eqx.tree_at(lambda c: c.gpus, cfg, n))

        return jax.grad(speedup_at)(cfg.gpus)

    times = model(config)
    speedups = model.speedup(config)
    marginals = jax.vmap(marginal)(config)
    return times, speedups, marginals


def _broadcast_config(fit: FitResult, counts: np.ndarray, overrides):
    return fit.config(counts, **overrides).broadcast()


def optimal_gpus(
    fit: FitResult,
    *,
    max_gpus: int = 4096,
    objective: str = "time",
    price_per_gpu_hour: float | None = None,
    deadline_s: float | None = None,
    multiple_of: int = 1,
    **overrides,
) -> Optimum:
    """The GPU count up to `max_gpus` that is fastest, or cheapest per unit of work.

    Args:
        fit: a fitted model.
        max_gpus: the largest count considered.
        objective: ``"time"`` minimises T(N); ``"cost"`` minimises N·T(N) (GPU-seconds
            per step, times the price when given), among counts meeting `deadline_s`.
        price_per_gpu_hour: currency per GPU-hour, to report the cost of a step.
        deadline_s: with ``"cost"``, only counts whose step takes at most this long.
        multiple_of: consider only 1 and multiples of this (e.g. whole nodes).
        overrides: other `Config` fields for the prediction.
    """
    if objective not in OBJECTIVES:
        raise InputError(f"unknown objective {objective!r}; valid: {', '.join(OBJECTIVES)}")
    counts = _candidates(int(max_gpus), int(multiple_of))
    with jax.enable_x64(True):
        config = _broadcast_config(fit, counts, overrides)
        times, speedups, _ = map(np.asarray, _curve(fit.model, config))
    gpu_seconds = counts * times
    if objective == "time":
        score = times
    else:
        score = np.where(
            times <= (np.inf if deadline_s is None else deadline_s), gpu_seconds, np.inf
        )
        if not np.isfinite(score).any():
            fastest = float(times.min())
            raise InputError(
                f"no GPU count up to {max_gpus} meets the deadline of {deadline_s} s; "
                f"the fastest step takes {fastest:.4g} s"
            )
    # The smallest count within a relative 1e-9 of the best: ties go to fewer GPUs.
    best = int(np.flatnonzero(score <= score.min() * (1 + 1e-9))[0])
    cost = None
    if price_per_gpu_hour is not None:
        cost = float(gpu_seconds[best] * price_per_gpu_hour / 3600.0)
    return Optimum(
        gpus=int(counts[best]),
        time_s=float(times[best]),
        speedup=float(speedups[best]),
        efficiency=float(speedups[best] / counts[best]),
        gpu_seconds=float(gpu_seconds[best]),
        cost=cost,
        objective=objective,
        searched=int(counts[-1]),
        at_limit=best == len(counts) - 1 and len(counts) > 1,
    )


def diminishing_returns(
    fit: FitResult,
    *,
    threshold: float = 0.5,
    efficiency_floor: float | None = None,
    max_gpus: int = 4096,
    **overrides,
) -> DiminishingReturns:
    """The first GPU count where one more GPU adds less than `threshold` of speedup.

    The marginal speedup dS/dN comes from the model's derivative (autodiff), so it is
    exact for the model rather than a finite difference. With `efficiency_floor`, the
    count where speedup/N first falls below it counts too; the earlier one wins.
    """
    if not 0 < threshold:
        raise InputError(f"threshold must be > 0, got {threshold}")
    if efficiency_floor is not None and not 0 < efficiency_floor <= 1:
        raise InputError(f"efficiency floor must be in (0, 1], got {efficiency_floor}")
    counts = _candidates(int(max_gpus), 1)
    with jax.enable_x64(True):
        config = _broadcast_config(fit, counts, overrides)
        _, speedups, marginals = map(np.asarray, _curve(fit.model, config))
    efficiency = speedups / counts
    crossings = []
    below = np.flatnonzero(marginals < threshold)
    if below.size:
        crossings.append((below[0], f"marginal speedup < {threshold:g}"))
    if efficiency_floor is not None:
        low = np.flatnonzero(efficiency < efficiency_floor)
        if low.size:
            crossings.append((low[0], f"efficiency < {efficiency_floor:g}"))
    if not crossings:
        last = len(counts) - 1
        return DiminishingReturns(
            None,
            "none reached",
            float(marginals[last]),
            float(efficiency[last]),
            float(speedups[last]),
            int(counts[-1]),
        )
    index, criterion = min(crossings)
    return DiminishingReturns(
        gpus=int(counts[index]),
        criterion=criterion,
        marginal_speedup=float(marginals[index]),
        efficiency=float(efficiency[index]),
        speedup=float(speedups[index]),
        searched=int(counts[-1]),
    )


def amdahl_bound(fit: FitResult, **overrides) -> float | None:
    """Amdahl's bound on speedup, T(1) / t_serial; None when the model has no serial term.

    Every other term is non-negative, so no GPU count beats it.
    """
    serial = [t for t in fit.model.terms if isinstance(t, SerialTerm)]
    if not serial:
        return None
    with jax.enable_x64(True):
        config = fit.config(np.array([1.0]), **overrides)
        return float(fit.model(config)[0] / sum(t(config)[0] for t in serial))
