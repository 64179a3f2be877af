"""Fitting the critical-batch model to runs: profile likelihood over B_noise, its
intervals, and time-to-train intervals from a work interval and a step-time interval."""

import dataclasses
import math
from statistics import NormalDist

import jax
import numpy as np

from .._errors import InputError
from .closed import CriticalBatch, work_to_target

NOISE_FLOOR = 0.02  # relative run-to-run scatter of the work to target assumed at least
# Model-form drift of log work (log step time) per doubling of the batch (of N) beyond the
# data: the prior perfmodel's step-time intervals use (`_uncertainty`'s DISCREPANCY).
DRIFT = 0.05
_GRID_MARGIN = 7.0  # the fit's B_noise range: e^±7 beyond the batches measured
_GRID_POINTS = 1401


@dataclasses.dataclass(frozen=True)
class CriticalBatchFit:
    """A `CriticalBatch` fitted to (batch, work to target) of runs.

    Attributes:
        model: the fitted parameters (float64 NumPy leaves).
        batch, work: the data (samples per step; samples or epochs).
        log_noise_grid: log B_noise values of the profile (samples).
        profile_rss: residual sum of squares of log work at each, with E_min profiled.
        rss: the smallest of them.
        dof: degrees of freedom of the residuals, n − 2 (at least 1).
        noise: relative run-to-run scatter of the work, s = sqrt(rss/dof), at least
            `noise_floor`.
        bound: ``""`` when B_noise is determined, ``"lower"`` when the data only bound
            it from below (the work does not grow with the batch measured), ``"upper"``
            when only from above (the steps do not fall), ``"none"`` with one batch.
        message: a readable account of what the data determine.
        noise_floor: the smallest relative scatter assumed (`NOISE_FLOOR` by default).
    """

    model: CriticalBatch
    batch: np.ndarray
    work: np.ndarray
    log_noise_grid: np.ndarray
    profile_rss: np.ndarray
    rss: float
    dof: int
    noise: float
    bound: str
    message: str
    noise_floor: float = NOISE_FLOOR

    @property
    def work_min(self) -> float:
        return float(np.exp(self.model.log_work_min))

    @property
    def noise_batch(self) -> float:
        return float(np.exp(self.model.log_noise_batch))

    def work_at(self, batch) -> np.ndarray:
        """E(`batch`) in float64 NumPy: ``E_min·(1 + B/B_noise)``."""
        return work_to_target(np.asarray(batch, float), self.work_min, self.noise_batch)

    def log_work_range(self, batch, level: float = 0.9) -> tuple[np.ndarray, np.ndarray]:
        """The range of log E(`batch`) over the B_noise values the data allow at `level`
        (profile likelihood: ``n·log(RSS(B_noise)/RSS_min) ≤ χ²₁(level)``, with RSS_min
        at least n·`noise_floor`²). Where the data leave B_noise open on one side, the
        range reaches the corresponding limit (work independent of the batch, or steps
        independent of it)."""
        batch = np.asarray(batch, float)
        u = self.allowed_log_noise(level)
        log_e_min = _profile_log_work_min(self.batch, self.work, u)
        values = log_e_min[:, None] + np.log1p(batch.ravel()[None, :] * np.exp(-u)[:, None])
        shape = batch.shape
        return values.min(axis=0).reshape(shape), values.max(axis=0).reshape(shape)

    def allowed_log_noise(self, level: float = 0.9) -> np.ndarray:
        """The log B_noise values of the profile grid the data allow at `level`:
        ``n·log(RSS(B_noise)/RSS_min) ≤ χ²₁(level)``, with RSS_min at least
        n·`noise_floor`²."""
        n = self.work.size
        floor = max(self.rss, n * self.noise_floor**2)
        chi2 = NormalDist().inv_cdf(0.5 + level / 2.0) ** 2
        return self.log_noise_grid[n * np.log(np.maximum(self.profile_rss, floor) / floor) <= chi2]

    def noise_batch_range(self, level: float = 0.9) -> tuple[float, float]:
        """The smallest and largest B_noise (samples) the data allow at `level`; 0 or inf
        where the allowed set reaches the end of the grid (the data leave that side
        open)."""
        u = self.allowed_log_noise(level)
        lo = 0.0 if u.min() <= self.log_noise_grid[0] else float(np.exp(u.min()))
        hi = np.inf if u.max() >= self.log_noise_grid[-1] else float(np.exp(u.max()))
        return lo, hi

    def predict_interval(
        self, batch, level: float = 0.9, drift: float = DRIFT
    ) -> dict[str, np.ndarray]:
        """Work to the target of a new run at `batch`, with a central interval of
        probability `level`: the profile range of the curve (`log_work_range`) widened,
        in quadrature on each side, by the run-to-run scatter (Student t, `dof`) and by a
        model-form drift of `drift` in log work per doubling of the batch outside the
        batches fitted (the hyperbola is an approximation: B_noise itself changes over
        training, and each batch's learning rate is tuned separately)."""
        batch = np.asarray(batch, float)
        centre = np.log(self.work_at(batch))
        lo, hi = self.log_work_range(batch, level)
        t = t_quantile(0.5 + level / 2.0, self.dof)
        doublings = np.log2(np.maximum(batch / self.batch.max(), 1.0)) + np.log2(
            np.maximum(self.batch.min() / batch, 1.0)
        )
        spread = np.hypot(
            t * self.noise, NormalDist().inv_cdf(0.5 + level / 2.0) * drift * doublings
        )
        below = np.hypot(centre - lo, spread)
        above = np.hypot(hi - centre, spread)
        return {
            "work": np.exp(centre),
            "work_lo": np.exp(centre - below),
            "work_hi": np.exp(centre + above),
        }


def t_quantile(p: float, dof: float) -> float:
    """Quantile p ∈ (0.5, 1) of Student's t (Cornish–Fisher expansion in 1/ν, to the
    third order; within 1% of the exact value for ν ≥ 3 at p ≤ 0.975)."""
    z = NormalDist().inv_cdf(p)
    if not dof < 1e6:  # ∞, or so large that the t is the normal (1e308 overflowed v³)
        return z
    v = max(float(dof), 1.0)
    g1 = (z**3 + z) / 4.0
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96.0
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384.0
    return z + g1 / v + g2 / v**2 + g3 / v**3


def _profile_log_work_min(batch, work, log_noise) -> np.ndarray:
    """log E_min minimising the squared log error at each log B_noise in `log_noise`."""
    shifted = np.log(work)[None, :] - np.log1p(batch[None, :] * np.exp(-log_noise)[:, None])
    return shifted.mean(axis=1)


def _profile_rss(batch, work, log_noise) -> np.ndarray:
    shifted = np.log(work)[None, :] - np.log1p(batch[None, :] * np.exp(-log_noise)[:, None])
    return np.sum((shifted - shifted.mean(axis=1, keepdims=True)) ** 2, axis=1)


def fit_critical_batch(
    batch, work, *, source: str = "<arrays>", noise_floor: float = NOISE_FLOOR
) -> CriticalBatchFit:
    """Fit ``E = E_min·(1 + B/B_noise)`` to runs' global batch and work to the target.

    Minimises the squared log error ``Σ (log E_pred − log E)²``: E_min is exact given
    B_noise (a mean in log space), and log B_noise is found on a grid reaching e^7
    beyond the batches measured, refined by golden-section search. Repeated runs at one
    batch are separate points (their scatter is the run-to-run noise).

    Args:
        batch: global batch of each run, samples per step.
        work: its work to the target: samples, or epochs.
        source: where the data came from, for messages.
        noise_floor: the smallest relative run-to-run scatter assumed.

    Raises:
        InputError: fewer than two runs, or a batch or work that is not a positive
            finite number.
    """
    batch, work = np.asarray(batch, float).ravel(), np.asarray(work, float).ravel()
    if batch.shape != work.shape:
        raise InputError(f"{source}: {batch.size} batches but {work.size} work values")
    for name, values in (("global batch", batch), ("work to target", work)):
        bad = ~(np.isfinite(values) & (values > 0))
        if bad.any():
            raise InputError(
                f"{source}: run {int(np.argmax(bad))}: {name}: expected a positive number, "
                f"got {values[bad][0]!r}"
            )
    if batch.size < 2:
        raise InputError(f"{source}: the critical-batch fit needs at least two runs")
    lo = math.log(batch.min()) - _GRID_MARGIN
    hi = math.log(batch.max()) + _GRID_MARGIN
    grid = np.linspace(lo, hi, _GRID_POINTS)
    rss = _profile_rss(batch, work, grid)
    k = int(np.argmin(rss))
    u = grid[k]
    if 0 < k < grid.size - 1:
        u = _golden(
            lambda x: float(_profile_rss(batch, work, np.array([x]))[0]), grid[k - 1], grid[k + 1]
        )
    best = float(_profile_rss(batch, work, np.array([u]))[0])
    distinct = np.unique(batch).size
    flat = np.ptp(rss) <= 1e-12 * max(1.0, float(rss.max()))
    if distinct < 2 or flat:
        bound, u = "none", hi
        message = (
            "one global batch only: B_noise is not determined; the work to the target is "
            "taken independent of the batch (B_noise → ∞), and intervals span every "
            "B_noise"
        )
    elif k == grid.size - 1:
        bound = "lower"
        message = (
            f"the work to the target does not grow with the batch measured: B_noise ≥ "
            f"{math.exp(grid[np.argmax(rss <= best * 1.01 + 1e-300)]):.3g} samples only"
        )
    elif k == 0:
        bound = "upper"
        message = "the steps to the target do not fall with the batch measured: B_noise is "
        message += "below the smallest batch (only an upper bound)"
    else:
        bound = ""
        message = f"B_noise = {math.exp(u):.4g} samples, E_min = "
        message += f"{math.exp(_profile_log_work_min(batch, work, np.array([u]))[0]):.4g}"
    log_e_min = float(_profile_log_work_min(batch, work, np.array([u]))[0])
    dof = max(batch.size - 2, 1)
    noise = max(math.sqrt(best / dof), noise_floor)
    with jax.enable_x64(True):
        model = CriticalBatch(np.float64(log_e_min), np.float64(u))
    model = jax.tree_util.tree_map(lambda x: np.asarray(x, np.float64), model)
    return CriticalBatchFit(
        model=model,
        batch=batch,
        work=work,
        log_noise_grid=grid,
        profile_rss=rss,
        rss=best,
        dof=dof,
        noise=noise,
        bound=bound,
        message=message,
        noise_floor=noise_floor,
    )


def _golden(f, a: float, b: float, iterations: int = 80) -> float:
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(iterations):
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - ratio * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + ratio * (b - a)
            fd = f(d)
    return (a + b) / 2.0


def time_to_train_interval(work_band, step_band, steps_per_work=1.0) -> dict[str, np.ndarray]:
    """Time to train, ``work × steps_per_work × step time``, with its interval: the two
    intervals' half-widths in log time added in quadrature on each side (independent
    errors of convergence and of step time).

    Args:
        work_band: ``work``, ``work_lo``, ``work_hi`` (`CriticalBatchFit.predict_interval`).
        step_band: ``time_s``, ``time_s_lo``, ``time_s_hi``: seconds per step (any
            family's `predict_interval`), or per unit of work with `steps_per_work` 1.
        steps_per_work: steps per unit of work, D/B (D samples per unit, B the batch).

    Returns:
        ``time_to_train_s``, ``time_to_train_s_lo``, ``time_to_train_s_hi``, seconds.
    """
    w = np.log(np.asarray(work_band["work"], float))
    t = np.log(np.asarray(step_band["time_s"], float))
    centre = w + t + np.log(steps_per_work)
    with np.errstate(invalid="ignore", divide="ignore"):
        below = np.hypot(w - np.log(work_band["work_lo"]), t - np.log(step_band["time_s_lo"]))
        above = np.hypot(np.log(work_band["work_hi"]) - w, np.log(step_band["time_s_hi"]) - t)
    return {
        "time_to_train_s": np.exp(centre),
        "time_to_train_s_lo": np.exp(centre - below),
        "time_to_train_s_hi": np.exp(centre + above),
    }
