"""Model-form error of time to train beyond the runs fitted: a drift of log time per
doubling of the GPU count or the batch outside them, its scale estimated from the fit's
own rolling-origin extrapolations (the design of `_uncertainty`'s step-time drift,
applied to time to train)."""

import dataclasses
import math

import numpy as np

from .._readers import TrainingRuns
from .closed import linear_step_time, steps_to_target
from .linear import fit_linear_step_time
from .profile import fit_critical_batch

# Prior drift of log time to train per doubling beyond the runs, and its weight in
# doublings² of evidence. Chosen on the DGX A100 series of `benchmarks/time_to_train.py`
# (every protocol) and checked on the DGX-2H ones (benchmarks/RESULTS.md).
DRIFT_PRIOR = 0.08
DRIFT_PRIOR_DOF = 8.0


def doublings(gpus, batch, gpus_range, batch_range) -> np.ndarray:
    """Doublings outside the runs fitted: ``sqrt(d_N² + d_B²)`` with d_N the doublings of
    the GPU count outside ``gpus_range`` and d_B those of the batch outside
    ``batch_range`` (0 inside both): the step time drifts with N, the work with B, and
    the two add in quadrature."""
    gpus, batch = np.asarray(gpus, float), np.asarray(batch, float)

    def outside(x, lo, hi):
        return np.maximum(np.log2(np.maximum(x / hi, 1.0)), np.log2(np.maximum(lo / x, 1.0)))

    return np.asarray(np.hypot(outside(gpus, *gpus_range), outside(batch, *batch_range)))


@dataclasses.dataclass(frozen=True)
class Drift:
    """The drift scale of a fit.

    Attributes:
        tau: drift of log time to train per doubling outside the runs fitted.
        dof: degrees of freedom of its Student-t (prior weight + origins used).
        origins: rolling origins that informed it (0: the prior alone).
        gpus_range, batch_range: the smallest and largest GPU count and batch fitted.
        prior, prior_dof: the prior τ₀ and its weight ν₀ it was estimated with.
    """

    tau: float
    dof: float
    origins: int
    gpus_range: tuple[float, float]
    batch_range: tuple[float, float]
    prior: float = DRIFT_PRIOR
    prior_dof: float = DRIFT_PRIOR_DOF

    def distance(self, gpus, batch) -> np.ndarray:
        return doublings(gpus, batch, self.gpus_range, self.batch_range)


def _subset(runs: TrainingRuns, keep: np.ndarray) -> TrainingRuns:
    data = runs.data
    data = dataclasses.replace(
        data,
        gpus=data.gpus[keep],
        time_s=data.time_s[keep],
        config={k: np.asarray(v)[keep] for k, v in data.config.items()},
        lines=None if data.lines is None else np.asarray(data.lines)[keep],
        files=None if data.files is None else tuple(np.asarray(data.files)[keep]),
    )
    return dataclasses.replace(runs, data=data, work=runs.work[keep], runs=())


def _predict_closed(runs: TrainingRuns, per_unit: float, gpus, batch) -> np.ndarray | None:
    """Time to train at (gpus, batch) from the critical batch and the closed-form
    ``a + c·B/N`` fitted to `runs` (what `batch_linear` fits, without the optimiser);
    None when the runs share one per-GPU batch, which leaves a and c apart undetermined."""
    data = runs.data
    b = data.config["global_batch"]
    if np.unique(b / data.gpus).size < 2:
        return None
    critical = fit_critical_batch(b, runs.work, source=data.source)
    step = fit_linear_step_time(data.gpus, b, data.time_s * b / (runs.work * per_unit))
    seconds = linear_step_time(gpus, batch, step.overhead_s, step.sample_time_s)
    return steps_to_target(batch, critical.work_min, critical.noise_batch, per_unit) * seconds


def estimate_drift(
    runs: TrainingRuns,
    per_unit: float,
    noise_variance: float,
    *,
    prior: float = DRIFT_PRIOR,
    prior_dof: float = DRIFT_PRIOR_DOF,
    predict=None,
) -> Drift:
    """Drift per doubling from rolling origins: for each GPU count ``u_j`` (j ≥ 3) refit
    on the runs at counts up to ``u_{j−1}`` and predict those at ``u_j``; an origin whose
    runs do not determine the model (one global batch, or `predict` returning None) is
    skipped.

    ``τ² = (ν₀τ₀² + Σ_j max(0, ē_j² − s²)) / (ν₀ + Σ_j d_j²)``, with ``ē_j²`` the mean
    squared log error of the runs at ``u_j``, ``s²`` (`noise_variance`) what run-to-run
    noise alone explains, and ``d_j`` the doublings of GPUs or batch beyond the origin's
    runs (`doublings`). Its degrees of freedom are ``ν₀`` plus the origins used.

    Args:
        runs: the runs fitted.
        per_unit: samples per unit of work.
        noise_variance: squared relative noise of one run's time to train.
        prior, prior_dof: τ₀ and ν₀.
        predict: ``(runs, per_unit, gpus, batch) → seconds`` or None, the model refitted
            to a subset (default: the closed-form `batch_linear` step time).
    """
    predict = predict or _predict_closed
    data = runs.data
    batch = data.config["global_batch"]
    ranges = {
        "gpus_range": (float(data.gpus.min()), float(data.gpus.max())),
        "batch_range": (float(batch.min()), float(batch.max())),
        "prior": float(prior),
        "prior_dof": float(prior_dof),
    }
    if math.isinf(prior_dof):  # the prior alone, known exactly: a normal quantile
        return Drift(tau=prior, dof=math.inf, origins=0, **ranges)
    counts = np.unique(data.gpus)
    excess, info, used = 0.0, 0.0, 0
    for j in range(2, counts.size):
        train, target = data.gpus <= counts[j - 1], data.gpus == counts[j]
        if np.unique(batch[train]).size < 2:
            continue
        predicted = predict(_subset(runs, train), per_unit, data.gpus[target], batch[target])
        if predicted is None:
            continue
        error = np.log(data.time_s[target] / predicted)
        if not np.all(np.isfinite(error)):
            continue
        span = doublings(
            data.gpus[target],
            batch[target],
            (data.gpus[train].min(), counts[j - 1]),
            (batch[train].min(), batch[train].max()),
        )
        excess += max(0.0, float(np.mean(error**2)) - noise_variance)
        info += float(np.mean(span)) ** 2
        used += 1
    tau = math.sqrt((prior_dof * prior**2 + excess) / max(prior_dof + info, 1e-12))
    return Drift(tau=tau, dof=prior_dof + used, origins=used, **ranges)
