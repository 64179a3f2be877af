"""Statistical efficiency of large batches: steps to a target as a function of the global
batch, and time (or cost) to train as those steps times the step time.

McCandlish et al. (2018, "An Empirical Model of Large-Batch Training") find that, with the
learning rate tuned for each batch, the optimizer steps S and the training examples E
needed to reach a given loss trade off along a hyperbola::

    (S/S_min − 1)(E/E_min − 1) = 1,   S = S_min·(1 + B_noise/B),   E = E_min·(1 + B/B_noise)

with E = B·S. B_noise (samples) is the critical batch: well below it doubling the batch
halves the steps (E stays near E_min); well above it the steps stay near S_min and the
extra samples are wasted. E may be counted in samples or in epochs (samples / dataset
size D); then S = E·D/B, and `samples_per_unit` = D converts.

Time to train at N GPUs and global batch B is ``S(B)·T_step(N, B)``, with the step time
from any step-time family; its cost is ``N·time/3600·price`` (GPU-hours at price 1).

Everything here is a pure function of arrays (NumPy or JAX, broadcasting) except the
fit (`fit_critical_batch`, NumPy, profile likelihood) and the grid search (`plan`); the
parameters travel in a small Equinox module, `CriticalBatch`, stored as logarithms.
"""

import dataclasses
import math
from statistics import NormalDist

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float
import numpy as np

from ._errors import InputError

OBJECTIVES = ("time", "cost")
MIN_GAIN = 0.1  # a doubling of the GPUs "helps" when it saves at least this share of time
NOISE_FLOOR = 0.02  # relative run-to-run scatter of the work to target assumed at least
# Model-form drift of log work (log step time) per doubling of the batch (of N) beyond the
# data: the prior perfmodel's step-time intervals use (`_ensemble.DISCREPANCY`).
DRIFT = 0.05
_GRID_MARGIN = 7.0  # the fit's B_noise range: e^±7 beyond the batches measured
_GRID_POINTS = 1401


# Closed forms -------------------------------------------------------------------------


def work_to_target(batch, work_min, noise_batch):
    """Examples (or epochs) to the target at global batch `batch`: ``E_min·(1 + B/B_noise)``.

    Args:
        batch: global batch B, samples per step.
        work_min: E_min, the work needed with a vanishing batch (samples, or epochs).
        noise_batch: B_noise, samples (inf: work independent of the batch).
    """
    return work_min * (1.0 + batch / noise_batch)


def steps_to_target(batch, work_min, noise_batch, samples_per_unit=1.0):
    """Optimizer steps to the target: ``S = E·D/B = S_min·(1 + B_noise/B)`` with
    ``S_min = E_min·D/B_noise``; `samples_per_unit` D is the samples per unit of work
    (1 when E is in samples, the dataset size when in epochs)."""
    return work_to_target(batch, work_min, noise_batch) * samples_per_unit / batch


def steps_min(work_min, noise_batch, samples_per_unit=1.0):
    """S_min = E_min·D/B_noise, the steps needed with an unbounded batch."""
    return work_min * samples_per_unit / noise_batch


def hyperbola(steps, work, steps_min_, work_min):
    """``(S/S_min − 1)(E/E_min − 1)``: 1 on the McCandlish trade-off curve."""
    return (steps / steps_min_ - 1.0) * (work / work_min - 1.0)


def statistical_efficiency(batch, noise_batch):
    """E_min/E(B) = 1/(1 + B/B_noise): the fraction of the samples at batch B that a
    vanishing batch would have needed (1 far below the critical batch, → 0 above)."""
    return 1.0 / (1.0 + batch / noise_batch)


def doubling_gain(batch, noise_batch):
    """S(B)/S(2B) = (1 + B_noise/B)/(1 + B_noise/(2B)): how many times fewer steps a
    doubled batch needs (→ 2 far below the critical batch, → 1 far above)."""
    return (1.0 + noise_batch / batch) / (1.0 + noise_batch / (2.0 * batch))


def time_to_train(step_time_s, batch, work_min, noise_batch, samples_per_unit=1.0):
    """Seconds to the target: ``S(B)·T_step`` with `step_time_s` seconds per step at B."""
    return steps_to_target(batch, work_min, noise_batch, samples_per_unit) * step_time_s


def cost_to_train(
    step_time_s, gpus, batch, work_min, noise_batch, samples_per_unit=1.0, price_per_gpu_hour=1.0
):
    """``N·time/3600·price``: GPU-hours to the target at price 1, else currency."""
    seconds = time_to_train(step_time_s, batch, work_min, noise_batch, samples_per_unit)
    return gpus * seconds / 3600.0 * price_per_gpu_hour


def optimal_batch(overhead_s, per_sample_s, noise_batch):
    """The batch minimising time to train at a fixed GPU count when the step time is
    linear in the batch, ``T_step = a + b·B`` (a: seconds per step that do not grow with
    the batch — communication, optimizer, launch; b: seconds per sample of the step at
    that GPU count): ``B* = sqrt(a·B_noise/b)``, where the steps saved by a larger batch
    stop paying for its longer step. (Time = S_min·(a + b·B + a·B_noise/B + b·B_noise),
    whose derivative in B vanishes there.)"""
    return (overhead_s * noise_batch / per_sample_s) ** 0.5


def minimum_time(overhead_s, per_sample_s, work_min, noise_batch, samples_per_unit=1.0):
    """The time to train at `optimal_batch`: ``S_min·(√a + √(b·B_noise))²``, seconds."""
    s_min = steps_min(work_min, noise_batch, samples_per_unit)
    return s_min * (overhead_s**0.5 + (per_sample_s * noise_batch) ** 0.5) ** 2


class CriticalBatch(eqx.Module):
    """The critical-batch model of the work to a target, parameters stored as logarithms.

    Fields:
        log_work_min: log E_min, E_min in the unit of the work it was fitted to (samples
            or epochs).
        log_noise_batch: log B_noise, B_noise in samples (the unit of the global batch).
    """

    log_work_min: Float[Array, ""] = eqx.field(converter=jnp.asarray)
    log_noise_batch: Float[Array, ""] = eqx.field(converter=jnp.asarray)

    @property
    def work_min(self) -> Float[Array, ""]:
        return jnp.exp(self.log_work_min)

    @property
    def noise_batch(self) -> Float[Array, ""]:
        return jnp.exp(self.log_noise_batch)

    def __call__(self, batch: ArrayLike) -> Float[Array, "..."]:
        """Work to the target at `batch` (unit of E_min); finite gradients at any batch."""
        return jnp.exp(self.log_work_min + jnp.log1p(batch * jnp.exp(-self.log_noise_batch)))

    def steps(self, batch: ArrayLike, samples_per_unit: ArrayLike = 1.0) -> Float[Array, "..."]:
        """Optimizer steps to the target at `batch`, ``E(B)·D/B``."""
        return self(batch) * samples_per_unit / batch


# Fitting ------------------------------------------------------------------------------


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

    def log_work_range(self, batch, level: float = 0.9) -> tuple[np.ndarray, np.ndarray]:
        """The range of log E(`batch`) over the B_noise values the data allow at `level`
        (profile likelihood: ``n·log(RSS(B_noise)/RSS_min) ≤ χ²₁(level)``, with RSS_min
        at least n·`noise_floor`²). Where the data leave B_noise open on one side, the
        range reaches the corresponding limit (work independent of the batch, or steps
        independent of it)."""
        batch = np.asarray(batch, float)
        n = self.work.size
        floor = max(self.rss, n * self.noise_floor**2)
        chi2 = NormalDist().inv_cdf(0.5 + level / 2.0) ** 2
        allowed = n * np.log(np.maximum(self.profile_rss, floor) / floor) <= chi2
        u = self.log_noise_grid[allowed]
        log_e_min = _profile_log_work_min(self.batch, self.work, u)
        values = log_e_min[:, None] + np.log1p(batch.ravel()[None, :] * np.exp(-u)[:, None])
        shape = batch.shape
        return values.min(axis=0).reshape(shape), values.max(axis=0).reshape(shape)

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
        centre = np.log(np.asarray(self.model(batch)))
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
    if not math.isfinite(dof):
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
    model = CriticalBatch(np.float64(log_e_min), np.float64(u))
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


# A step-time family of GPU count and batch ------------------------------------------

STEP_NOISE_FLOOR = 0.01  # relative noise of one step-time measurement assumed at least


def linear_step_time(gpus, batch, overhead_s, sample_time_s):
    """Seconds per step of data-parallel training whose compute splits the global batch
    over the GPUs: ``T = a + c·B/N`` — `overhead_s` a (seconds per step that neither
    more GPUs nor a smaller batch shorten: all-reduce, optimizer, launch) plus
    `sample_time_s` c (seconds of compute per sample on one GPU) × the per-GPU batch.
    At a fixed N it is `optimal_batch`'s ``a + b·B`` with ``b = c/N``."""
    return overhead_s + sample_time_s * batch / gpus


class LinearStepTime(eqx.Module):
    """`linear_step_time` with its parameters stored as logarithms.

    Fields:
        log_overhead: log a, seconds per step.
        log_sample_time: log c, seconds per sample on one GPU.
    """

    log_overhead: Float[Array, ""] = eqx.field(converter=jnp.asarray)
    log_sample_time: Float[Array, ""] = eqx.field(converter=jnp.asarray)

    def __call__(self, gpus: ArrayLike, batch: ArrayLike) -> Float[Array, "..."]:
        """Seconds per step at `gpus` GPUs and global batch `batch`."""
        return jnp.exp(self.log_overhead) * (
            1.0 + batch / gpus * jnp.exp(self.log_sample_time - self.log_overhead)
        )


@dataclasses.dataclass(frozen=True)
class LinearStepFit:
    """`LinearStepTime` fitted to step times (or times per epoch × batch).

    ``T = a·(1 + x/x₀)`` with x = B/N the per-GPU batch and x₀ = a/c has the critical-
    batch model's form, so it is fitted the same way (`fit_critical_batch` on x, with
    E_min → a and B_noise → x₀) and shares its profile-likelihood intervals.

    Attributes:
        model: the fitted parameters.
        profile: the fit on the per-GPU batch (a `CriticalBatchFit`).
        gpus_range: the smallest and largest GPU counts fitted.
    """

    model: LinearStepTime
    profile: CriticalBatchFit
    gpus_range: tuple[float, float]

    @property
    def overhead_s(self) -> float:
        return float(np.exp(self.model.log_overhead))

    @property
    def sample_time_s(self) -> float:
        return float(np.exp(self.model.log_sample_time))

    def predict_interval(self, gpus, batch, level: float = 0.9, drift: float = DRIFT):
        """Step time at (`gpus`, `batch`) with a central interval of probability
        `level`: the profile range and measurement noise (`CriticalBatchFit`), and a
        model-form drift of `drift` in log time per doubling of N outside the GPU
        counts fitted, added in quadrature."""
        gpus, batch = np.broadcast_arrays(np.asarray(gpus, float), np.asarray(batch, float))
        band = self.profile.predict_interval(batch / gpus, level)
        lo, hi = self.gpus_range
        doublings = np.log2(np.maximum(gpus / hi, 1.0)) + np.log2(np.maximum(lo / gpus, 1.0))
        extra = NormalDist().inv_cdf(0.5 + level / 2.0) * drift * doublings
        centre = np.log(band["work"])
        below = np.hypot(centre - np.log(band["work_lo"]), extra)
        above = np.hypot(np.log(band["work_hi"]) - centre, extra)
        return {
            "time_s": band["work"],
            "time_s_lo": np.exp(centre - below),
            "time_s_hi": np.exp(centre + above),
        }


def fit_linear_step_time(
    gpus, batch, step_time_s, *, source: str = "<arrays>", noise_floor: float = STEP_NOISE_FLOOR
) -> LinearStepFit:
    """Fit ``T = a + c·B/N`` to step times measured at GPU counts `gpus` and global
    batches `batch` (squared log error; a and c > 0).

    Raises:
        InputError: as `fit_critical_batch`, naming the per-GPU batch.
    """
    gpus, batch = np.asarray(gpus, float).ravel(), np.asarray(batch, float).ravel()
    if gpus.shape != batch.shape or not np.all(np.isfinite(gpus) & (gpus >= 1)):
        raise InputError(f"{source}: gpus: expected one GPU count ≥ 1 per global batch")
    profile = fit_critical_batch(
        batch / gpus, step_time_s, source=f"{source} (per-GPU batch)", noise_floor=noise_floor
    )
    log_a = profile.model.log_work_min
    model = LinearStepTime(log_a, log_a - profile.model.log_noise_batch)
    return LinearStepFit(model, profile, (float(gpus.min()), float(gpus.max())))


# Answers ------------------------------------------------------------------------------


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
    )


def _knee(gpus, time_grid, min_gain) -> float | None:
    """The smallest GPU count after which a doubling (with the best batch at each count)
    saves less than `min_gain` of the time to train, or None."""
    best = time_grid.min(axis=1)
    for k in range(gpus.size - 1):
        if not (np.isfinite(best[k]) and np.isfinite(best[k + 1])):
            continue
        per_doubling = (best[k + 1] / best[k]) ** (1.0 / math.log2(gpus[k + 1] / gpus[k]))
        if per_doubling > 1.0 - min_gain:
            return float(gpus[k])
    return None


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
        text += f" is {n:g} GPUs at global batch {b:g}"
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
