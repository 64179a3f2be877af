"""Plausible models around a fit: the draws behind every interval perfmodel reports.

Both methods draw an `Ensemble` of models around the fit:

* ``"laplace"``: stored (log/logit) parameters from the Gauss-Newton Laplace
  approximation ``θ ~ θ̂ + s·(JᵀJ)^{-1/2}·z`` at the optimum;
* ``"bootstrap"``: refits to resampled data, all `vmap`ped through one L-BFGS call,
  warm-started at the optimum (residual, wild or stratified case resampling).

Each member also carries the two things a parameter spread misses:

* noise of a new measurement, with scale `s` from the fit's ``n − k`` residual degrees
  of freedom pooled with a weak prior (`NOISE` relative noise worth `NOISE_DOF`
  measurements: the conjugate update ``s² = (ν₀s₀² + RSS)/(ν₀ + n − k)``), so that a
  fit with as many parameters as measurements still has an interval. The scale is
  itself uncertain, so each member draws ``w = sqrt(ν/χ²_ν)`` and multiplies its
  parameter deviation and its noise by it: the Laplace interval is then the Student-t
  prediction interval (the classical one when the prior's weight is 0);
* model-form error beyond the measured GPU counts: a random drift ``δ`` in log time per
  doubling of N outside ``[min measured, max measured]``, ``log T = log T_model + δ·d(N)``,
  ``δ ~ τ·t_ν'``. ``τ`` is estimated from the fit's own rolling-origin extrapolation errors
  (refit on the smaller counts, predict the next one) pooled with a prior of
  `DISCREPANCY` per doubling worth `DISCREPANCY_DOF` doublings².

Both priors were chosen, and checked by leave-one-source-out cross-validation, on the
held-out measurements of the shipped series: ``benchmarks/calibration.py``.
"""

import dataclasses
import math

import equinox as eqx
import jax
from jax.flatten_util import ravel_pytree
import jax.numpy as jnp
from jaxtyping import Array, Float
import numpy as np

from .._config import Config
from .._errors import InputError
from .._fitting.average import averaged_parameters, nested_fit
from .._fitting.fit import _raw_bounds, as_float64, FitResult, objective
from .._fitting.optimise import refine_lbfgs
from .._model import ScalingModel

METHODS = ("laplace", "bootstrap")
RESAMPLING = ("residual", "wild", "case")
DISCREPANCY = 0.05  # prior model-form drift of log time per doubling outside the data
DISCREPANCY_DOF = 2.0  # its weight, in doublings² of evidence
NOISE = 0.01  # prior relative noise of one measurement (log scale)
NOISE_DOF = 4.0  # its weight, in measurements
LAPLACE_SAMPLES = 4000
BOOTSTRAP_SAMPLES = 1000
_NULL = 1e-7  # singular values of J below this share of the largest span no data


def check_level(level: float) -> float:
    """`level` as a float in (0, 1), or an InputError."""
    try:
        level = float(level)
    except (TypeError, ValueError):
        raise InputError(f"interval level must be a number in (0, 1), got {level!r}")
    if not 0.0 < level < 1.0:
        raise InputError(f"interval level must be in (0, 1), e.g. 0.9, got {level:g}")
    return level


def _check_method(method: str) -> None:
    if method not in METHODS:
        raise InputError(f"unknown interval method {method!r}; valid: {', '.join(METHODS)}")


def _doublings(gpus, lo, hi):
    """Doublings of N outside the measured range [lo, hi]: 0 inside it."""
    log_n = jnp.log2(gpus)
    return jax.nn.relu(log_n - jnp.log2(hi)) + jax.nn.relu(jnp.log2(lo) - log_n)


class Drifted(eqx.Module):
    """A model whose log time drifts by `drift` per doubling outside ``[lo, hi]`` GPUs.

    ``T(config) = model(config) · exp(drift · d(N))``; `speedup` is relative to 1 GPU,
    like `ScalingModel.speedup`, so the queries of `optimal_gpus` apply unchanged.
    """

    model: ScalingModel
    drift: Float[Array, ""]
    lo: float = eqx.field(static=True)
    hi: float = eqx.field(static=True)

    def __call__(self, config: Config) -> Float[Array, "..."]:
        factor = jnp.exp(self.drift * _doublings(config.gpus, self.lo, self.hi))
        return self.model(config) * factor

    def speedup(self, config: Config) -> Float[Array, "..."]:
        base = eqx.tree_at(lambda c: c.gpus, config, jnp.ones_like(config.gpus))
        return self(base) / self(config)


class Linearized(eqx.Module):
    """`model` linearised in its stored parameters around the fit: log time moves by
    ``J(config)·delta``, the first-order change of ``log T`` when the free parameters
    (`free`, in `ravel_pytree` order) move by `delta`.

    ``T(config) = T̂(config) · exp(∂log T̂/∂θ · delta)``, computed with one `jax.jvp`, so
    it stays differentiable in the config (marginal speedups). This is the linearised
    ("GLM") Laplace predictive: a Gaussian in the parameters stays a Gaussian in log
    time, where pushing it through the model could turn a loosely determined log
    parameter into a factor of e^10.
    """

    model: ScalingModel
    delta: Float[Array, " k"]
    free: tuple[str, ...] = eqx.field(static=True)

    def __call__(self, config: Config) -> Float[Array, "..."]:
        params, static = eqx.partition(self.model, self.model.raw_leaf_mask(set(self.free)))
        theta, unravel = ravel_pytree(params)

        def log_time(t):
            return jnp.log(eqx.combine(unravel(t), static)(config))

        primal, tangent = jax.jvp(log_time, (theta,), (self.delta,))
        return jnp.exp(primal + tangent)


@dataclasses.dataclass(frozen=True)
class Ensemble:
    """Plausible models around a fit, as samples (draw `i` is row `i` of each array).

    Attributes:
        fit: the fit they describe.
        method: ``"laplace"`` or ``"bootstrap"``.
        names: the free parameters, in the order of the columns of `raw`.
        raw: stored (log/logit) values of the free parameters, ``(samples, k)``.
        noise: noise of a new measurement, in the fit's residual space (log time, or the
            measured quantity for the squared loss), already scaled by `w`.
        drift: model-form drift of log time per doubling outside the measured range.
        unknown: ``(r, k)`` directions of the stored parameters the data do not
            determine (rows of V from the SVD of the Jacobian); predictions that move
            along them have unbounded intervals.
        sigma: residual scale `s`; dof: its degrees of freedom ``n − k``.
        tau: model-form drift scale per doubling; tau_dof: its degrees of freedom.
        gpus_range: smallest and largest measured GPU counts.
    """

    fit: FitResult
    method: str
    names: tuple[str, ...]
    raw: np.ndarray
    noise: np.ndarray
    drift: np.ndarray
    unknown: np.ndarray
    sigma: float
    dof: int
    tau: float
    tau_dof: float
    gpus_range: tuple[float, float]

    def parameters(self) -> dict[str, np.ndarray]:
        """Physical values of each free parameter across the samples."""
        specs = self.fit.model.parameter_specs()
        with jax.enable_x64(True):
            return {
                name: np.asarray(specs[name].to_physical(jnp.asarray(self.raw[:, i])))
                for i, name in enumerate(self.names)
            }

    def undetermined(self, config) -> np.ndarray:
        """True at each config whose prediction moves along a direction of the
        parameters that the data leave undetermined (its interval is unbounded)."""
        with jax.enable_x64(True):
            return _along_unknown(_Problem(self.fit), self.unknown, config)

    def models(self) -> tuple[Drifted, Drifted]:
        """``(batched, static)``: a `Drifted` pytree whose arrays have a leading sample
        axis where they vary, and the part shared by all samples; combine one row with
        ``eqx.combine`` or `vmap` over the first. Laplace members are `Linearized`
        around the fit; bootstrap members are the refitted models themselves."""
        with jax.enable_x64(True):
            params, static, unravel = _partition(self.fit)
            lo, hi = self.gpus_range
            drift = jnp.asarray(self.drift)
            if self.method == "laplace":
                theta, _ = ravel_pytree(params)
                delta = jnp.asarray(self.raw) - theta[None, :]
                varying = Drifted(Linearized(None, delta, self.names), drift, lo, hi)
                model = eqx.combine(params, static)
                shared = Drifted(Linearized(model, None, self.names), None, lo, hi)
            else:
                batched = jax.vmap(unravel)(jnp.asarray(self.raw))
                varying = Drifted(batched, drift, lo, hi)
                shared = Drifted(static, None, lo, hi)
        return varying, shared


def _partition(fit: FitResult):
    model = as_float64(fit.model)
    params, static = eqx.partition(model, model.raw_leaf_mask(set(fit.free)))
    _, unravel = ravel_pytree(params)
    return params, static, unravel


def _flat_names(fit: FitResult) -> tuple[str, ...]:
    """The free parameter names in the order `ravel_pytree` lays out their leaves."""
    model = as_float64(fit.model)
    marked = model
    for i, name in enumerate(fit.free):
        marked = eqx.tree_at(model._leaf_getter(name), marked, jnp.asarray(float(i)))
    params, _ = eqx.partition(marked, model.raw_leaf_mask(set(fit.free)))
    return tuple(fit.free[int(i)] for i in np.asarray(ravel_pytree(params)[0]))


def _space(fit: FitResult):
    """The residual space of the fit's loss: ``(to, from)`` maps of time_s."""
    if fit.loss_kind != "squared":
        return jnp.log, jnp.exp
    if fit.target == "throughput":
        return (lambda t: 1.0 / t), (lambda h: 1.0 / h)
    return (lambda t: t), (lambda h: h)


@eqx.filter_jit
def _refits(start, lower, upper, steps, static, config, times, weights, loss, target):
    """L-BFGS refits from `start` to each row of `times` and `weights`, in one `vmap`."""

    def one(t, w):
        args = (static, config, t, w, loss, target)
        p, value, _, _ = refine_lbfgs(objective, start, lower, upper, steps, args)
        return p, value

    return jax.vmap(one)(times, weights)


class _Problem:
    """The fitted data and model in stored coordinates, float64 (build inside x64)."""

    def __init__(self, fit: FitResult):
        self.fit = fit
        self.params, self.static, self.unravel = _partition(fit)
        self.theta, _ = ravel_pytree(self.params)
        self.names = _flat_names(fit)
        self.config = fit.data.to_config()
        # The data as the fit's residuals place them around the current model: the
        # measurements themselves, except after `what_if` changed a parameter, when the
        # original residuals (and so the original uncertainty) are kept.
        sign = 1.0 if fit.target == "time" else -1.0
        fitted = self.predicted(self.theta, self.config)
        self.time_s = fitted * jnp.exp(-sign * jnp.asarray(fit.residuals))
        self.to_space, self.from_space = _space(fit)
        self.n, self.k = int(self.time_s.shape[0]), int(self.theta.shape[0])
        model = eqx.combine(self.params, self.static)
        self.lower, self.upper = _raw_bounds(model, list(fit.free), fit.bounds)
        self.raw_lo = np.asarray(ravel_pytree(self.lower)[0])
        self.raw_hi = np.asarray(ravel_pytree(self.upper)[0])

    def predicted(self, theta, config):
        """Model time_s at `config` for flat stored parameters `theta`."""
        return eqx.combine(self.unravel(theta), self.static)(config)

    def space_jacobian(self, theta, config) -> np.ndarray:
        """d(residual-space prediction)/dθ at every config, ``(configs, k)``."""

        def h(t):
            return self.to_space(self.predicted(t, config))

        return np.asarray(jax.jacfwd(h)(theta))

    def fitted_space(self) -> np.ndarray:
        return np.asarray(self.to_space(self.predicted(self.theta, self.config)))

    def measured_space(self) -> np.ndarray:
        return np.asarray(self.to_space(self.time_s))

    def noise(self, prior: float, prior_dof: float) -> tuple[np.ndarray, float, float]:
        """``(residuals, s², ν)``: the residuals in the loss's space and the noise scale
        pooled with its prior, ``s² = (ν₀·s₀² + RSS) / (ν₀ + n − k)`` on
        ``ν = ν₀ + n − k`` degrees of freedom (the conjugate scaled-inverse-χ² update).
        `prior` is relative (log space); for the squared loss it is scaled by the RMS
        of the fitted values. An InputError when nothing, data or prior, gives ν > 0."""
        dof = prior_dof + self.n - self.k
        if not dof > 0:
            raise InputError(
                f"{self.fit.data.source}: the {self.fit.family} fit has {self.k} free "
                f"parameters and {self.n} measurements, which leaves no residual to "
                "estimate its uncertainty from, and no noise prior was given; measure "
                "more GPU counts, repeat measurements, or fix parameters with --fix"
            )
        residuals = self.measured_space() - self.fitted_space()
        if self.fit.loss_kind == "squared":
            prior = prior * float(np.sqrt(np.mean(self.fitted_space() ** 2)))
        return residuals, (prior_dof * prior**2 + float(np.sum(residuals**2))) / dof, dof


def _svd(jac: np.ndarray):
    """``(inverse, null)``: (JᵀJ)⁺ on the determined directions, and the rows of Vᵀ the
    data leave undetermined."""
    _, singular, vt = np.linalg.svd(jac, full_matrices=False)
    null = singular <= _NULL * max(float(singular.max(initial=0.0)), 1e-300)
    inv = np.where(null, 0.0, 1.0 / np.where(null, 1.0, singular) ** 2)
    # A k-column J with fewer rows has k − rows further null directions.
    _, _, vt_full = np.linalg.svd(jac, full_matrices=True)
    extra = vt_full[len(singular) :]
    return (vt.T * inv) @ vt, np.concatenate([vt[null], extra])


def _scale_draws(rng, dof: float, size: int) -> np.ndarray:
    """``sqrt(ν/χ²_ν)``: the scale-mixture factor that makes a normal draw Student-t."""
    if not math.isfinite(dof):
        return np.ones(size)
    return np.sqrt(dof / rng.chisquare(dof, size))


def _origins(problem: _Problem) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """Rolling origins: ``(train, target, doublings)`` for each measured count ``u_j``
    whose smaller counts determine the k free parameters."""
    data = problem.fit.data
    counts = np.unique(data.gpus)
    columns = np.stack([data.gpus, *data.config.values()], axis=1)
    origins = []
    for j in range(1, len(counts)):
        train = data.gpus <= counts[j - 1]
        if problem.k and len(np.unique(columns[train], axis=0)) >= problem.k:
            origins.append((train, data.gpus == counts[j], math.log2(counts[j] / counts[j - 1])))
    return origins


def _refit_rows(problem: _Problem, times, weights) -> tuple[np.ndarray, np.ndarray]:
    """Flat stored parameters and losses of refits to each row of `times`/`weights`.

    An averaged fit (`_average`) is refitted the way it was made: both of its fits are
    refitted to every row and their step times averaged.
    """
    flat, values = _refits_of(problem.fit, problem.config, times, weights)
    if not problem.fit.averaged_with:
        return flat, values
    nested = nested_fit(problem.fit)
    nested_flat, nested_values = _refits_of(nested, problem.config, times, weights)
    specs, nested_specs = problem.fit.model.parameter_specs(), nested.model.parameter_specs()
    full = {n: np.exp(flat[:, i]) for i, n in enumerate(problem.names)}
    part = {n: np.exp(nested_flat[:, i]) for i, n in enumerate(_flat_names(nested))}
    if any(specs[n].kind != "time" for n in full) or any(
        nested_specs[n].kind != "time" for n in part
    ):
        raise InputError(f"{problem.fit.data.source}: only averages of times can be refitted")
    averaged = averaged_parameters(full, part)
    flat = np.log(np.stack([averaged[n] for n in problem.names], axis=1))
    return flat, np.where(np.isfinite(nested_values), values, np.inf)


def _refits_of(fit: FitResult, config, times, weights) -> tuple[np.ndarray, np.ndarray]:
    """Refits of `fit`'s free parameters from its optimum, flat stored values and losses."""
    params, static, _ = _partition(fit)
    lower, upper = _raw_bounds(eqx.combine(params, static), list(fit.free), fit.bounds)
    ends, values = _refits(
        params,
        lower,
        upper,
        500,
        static,
        config,
        jnp.asarray(times),
        jnp.asarray(weights),
        fit.loss_kind,
        fit.target,
    )
    return np.asarray(jax.vmap(lambda p: ravel_pytree(p)[0])(ends)), np.asarray(values)


def _origin_rows(problem: _Problem, origins) -> tuple[np.ndarray, np.ndarray]:
    """The data and 0/1 weights that refit each origin, padded to a power of two rows
    (repeating the first) so that series with different numbers of origins share code."""
    masks = [train for train, _, _ in origins] or [np.ones(problem.n, dtype=bool)]
    masks += masks[:1] * (max(4, 1 << (len(masks) - 1).bit_length()) - len(masks))
    weights = np.array(masks, dtype=np.float64)
    return np.broadcast_to(np.asarray(problem.time_s), weights.shape), weights


def _drift_scale(problem: _Problem, origins, flat, values, sigma2, prior, weight):
    """Model-form drift per doubling from the fit's own extrapolation errors.

    Each origin j was refitted on the GPU counts up to ``u_{j−1}`` (`flat`, `values`)
    and predicts the rows at ``u_j``. The moment estimate pooled with the prior is
    ``τ² = (ν₀τ₀² + Σ_j max(0, ē_j² − a_j)) / (ν₀ + Σ_j d_j²)``, where ``ē_j²`` is the
    mean squared log error at ``u_j``, ``a_j = s²·(1 + lev_j)`` what noise and parameter
    uncertainty alone explain, and ``d_j = log2(u_j/u_{j−1})``.

    Returns:
        ``(tau, dof)`` with ``dof = ν₀ + number of origins used``.
    """
    excess, info, used = 0.0, 0.0, 0
    for (train, target, span), theta, value in zip(origins, flat, values):
        if not np.isfinite(value):
            continue
        theta = jnp.asarray(theta)
        predicted = problem.predicted(theta, problem.config)
        error = np.asarray(jnp.log(predicted) - jnp.log(problem.time_s))[target]
        jac = problem.space_jacobian(theta, problem.config)
        inverse, _ = _svd(jac[train])
        lev = np.einsum("ij,jk,ik->i", jac[target], inverse, jac[target])
        # Noise and parameter spread in log space (delta method for linear spaces).
        scale = _log_scale(problem, predicted)[target]
        explained = sigma2 * float(np.mean((1.0 + lev) * scale**2))
        excess += max(0.0, float(np.mean(error**2)) - explained)
        info += span**2
        used += 1
    tau2 = (weight * prior**2 + excess) / (weight + info)
    return math.sqrt(tau2), weight + used


def _log_scale(problem: _Problem, predicted) -> np.ndarray:
    """d(log time)/d(residual space) at `predicted`: 1 for log losses, 1/|h| otherwise."""
    if problem.fit.loss_kind != "squared":
        return np.ones(np.shape(predicted))
    return 1.0 / np.abs(np.asarray(problem.to_space(predicted)))


def ensemble(
    fit: FitResult,
    method: str = "laplace",
    *,
    samples: int | None = None,
    resample: str = "residual",
    discrepancy: float = DISCREPANCY,
    discrepancy_dof: float = DISCREPANCY_DOF,
    noise: float = NOISE,
    noise_dof: float = NOISE_DOF,
    seed: int = 0,
) -> Ensemble:
    """Draw plausible models around `fit` (see the module docstring).

    Args:
        fit: a fitted model with at least one residual degree of freedom.
        method: ``"laplace"`` (Gaussian at the optimum, instant) or ``"bootstrap"``
            (refits to resampled data, vmapped in one call).
        samples: number of draws (default 4000 Laplace, 1000 bootstrap).
        resample: for the bootstrap: ``"residual"`` (leverage-adjusted residuals in the
            loss's space, the default), ``"wild"`` (the same with random signs, for
            unequal noise) or ``"case"`` (rows resampled within each configuration;
            needs repeated measurements to vary anything).
        discrepancy: prior model-form drift of log time per doubling outside the
            measured GPU counts; 0 turns the model-form term off.
        discrepancy_dof: the prior's weight, in doublings² of evidence (and degrees of
            freedom of the drift's Student-t when no origin can be refitted).
        noise: prior relative noise of one measurement (log scale); it matters when
            the data leave few residual degrees of freedom, and lets a fit with as
            many parameters as measurements have an interval at all.
        noise_dof: the prior's weight in measurements; 0 uses the residuals alone.
        seed: seed of the draws.

    Raises:
        InputError: unknown method or resampling, or no residual degrees of freedom.
    """
    _check_method(method)
    if resample not in RESAMPLING:
        raise InputError(f"unknown resampling {resample!r}; valid: {', '.join(RESAMPLING)}")
    if not (math.isfinite(discrepancy) and discrepancy >= 0):
        raise InputError(f"discrepancy must be ≥ 0 (log time per doubling), got {discrepancy}")
    if not discrepancy_dof > 0:
        raise InputError(f"discrepancy_dof must be > 0, got {discrepancy_dof}")
    if not (noise > 0 and math.isfinite(noise) and noise_dof >= 0):
        raise InputError(f"noise prior must be > 0 with weight ≥ 0, got {noise}, {noise_dof}")
    size = samples
    if size is None:
        size = LAPLACE_SAMPLES if method == "laplace" else BOOTSTRAP_SAMPLES
    if not size >= 2:
        raise InputError(f"samples must be ≥ 2, got {size}")
    if (
        method == "bootstrap"
        and resample == "case"
        and fit.data.distinct_configs() == len(fit.data.gpus)
    ):
        raise InputError(
            f"{fit.data.source}: case resampling within configurations needs repeated "
            "measurements, and every configuration here was measured once; use "
            "resample='residual'"
        )
    rng = np.random.default_rng(seed)
    with jax.enable_x64(True):
        problem = _Problem(fit)
        residuals, sigma2, dof = problem.noise(noise, noise_dof)
        jac = problem.space_jacobian(problem.theta, problem.config)
        inverse, unknown = _svd(jac)
        w = _scale_draws(rng, dof, size)
        theta = np.asarray(problem.theta)
        origins = _origins(problem) if discrepancy > 0 else []
        # Every refit (bootstrap resamples, then rolling origins) runs in one vmap.
        batch = [_origin_rows(problem, origins)] if origins else []
        if method == "bootstrap":
            *rows, pool = _bootstrap_rows(
                problem, jac, inverse, residuals, sigma2, resample, size, rng
            )
            batch.insert(0, rows)
        flat, values = np.empty((0, problem.k)), np.empty(0)
        if batch:
            flat, values = _refit_rows(problem, *map(np.concatenate, zip(*batch)))
        if method == "bootstrap":
            deviation = _bootstrap_deviations(problem, flat[: size + 1], values[: size + 1], rng)
            noise = pool[rng.integers(0, problem.n, size)]
            flat, values = flat[size + 1 :], values[size + 1 :]
        else:
            root = _sqrt_psd(inverse)
            deviation = rng.standard_normal((size, problem.k)) @ root.T * math.sqrt(sigma2)
            noise = math.sqrt(sigma2) * rng.standard_normal(size)
        raw = np.clip(theta + w[:, None] * deviation, problem.raw_lo, problem.raw_hi)
        tau, tau_dof = 0.0, math.inf
        if discrepancy > 0:
            tau, tau_dof = _drift_scale(
                problem, origins, flat, values, sigma2, discrepancy, discrepancy_dof
            )
        drift = tau * rng.standard_normal(size) * _scale_draws(rng, tau_dof, size)
    gpus = fit.data.gpus
    return Ensemble(
        fit=fit,
        method=method,
        names=problem.names,
        raw=raw,
        noise=w * noise,
        drift=drift,
        unknown=unknown,
        sigma=math.sqrt(sigma2),
        dof=dof,
        tau=tau,
        tau_dof=tau_dof,
        gpus_range=(float(gpus.min()), float(gpus.max())),
    )


def _sqrt_psd(matrix: np.ndarray) -> np.ndarray:
    values, vectors = np.linalg.eigh((matrix + matrix.T) / 2)
    return vectors * np.sqrt(np.clip(values, 0.0, None))


def _bootstrap_rows(problem: _Problem, jac, inverse, residuals, sigma2, resample, size, rng):
    """``(times, weights, pool)``: `size` + 1 resampled datasets (row 0 is the data
    themselves, the centre the deviations are taken from, so that an optimum that
    stopped short does not bias them) and the residuals new noise is drawn from."""
    leverage = np.clip(np.einsum("ij,jk,ik->i", jac, inverse, jac), 0.0, 1.0)
    # Leverage-adjusted, centred residuals (Davison & Hinkley, 1997, eq. 6.9); a point
    # the model fits exactly (leverage 1) has no residual to offer.
    spare = np.where(leverage < 1.0 - 1e-9, 1.0 - leverage, np.inf)
    adjusted = residuals / np.sqrt(spare)
    adjusted = adjusted - adjusted.mean()
    # Their shape, at the pooled scale s (which the noise prior informs); with no
    # residual left at all, Gaussian draws at that scale (a parametric bootstrap).
    rms = float(np.sqrt(np.mean(adjusted**2)))
    if rms > 1e-12 * math.sqrt(sigma2):
        adjusted = adjusted * (math.sqrt(sigma2) / rms)
    else:
        adjusted = math.sqrt(sigma2) * rng.standard_normal(problem.n)
    fitted, measured = problem.fitted_space(), problem.measured_space()
    n = problem.n
    weights = np.ones((size + 1, n))
    space = np.broadcast_to(fitted, (size + 1, n)).copy()
    if resample == "residual":
        space += adjusted[rng.integers(0, n, (size + 1, n))]
    elif resample == "wild":
        space += adjusted * rng.choice([-1.0, 1.0], (size + 1, n))
    else:
        space[:] = measured
        data = problem.fit.data
        columns = np.stack([data.gpus, *data.config.values()], axis=1)
        _, group = np.unique(columns, axis=0, return_inverse=True)
        for g in np.unique(group):
            rows = np.flatnonzero(group == g)
            picks = rows[rng.integers(0, rows.size, (size + 1, rows.size))]
            weights[:, rows] = 0.0
            for column in range(rows.size):
                np.add.at(weights, (np.arange(size + 1), picks[:, column]), 1.0)
    space[0], weights[0] = measured, 1.0
    if problem.fit.loss_kind == "squared":
        # Keep resampled times positive when the noise is large against the value.
        space = np.maximum(space, 1e-6 * np.abs(fitted))
    pool = adjusted
    return np.asarray(problem.from_space(jnp.asarray(space))), weights, pool


def _bootstrap_deviations(problem: _Problem, flat, values, rng) -> np.ndarray:
    """Refits minus the centre refit (row 0); failed refits are replaced by draws from
    the others, and an error says so when most failed."""
    size = len(values) - 1
    good = np.isfinite(values) & np.all(np.isfinite(flat), axis=1)
    if not good[0] or good.sum() < max(3, size // 2):
        raise InputError(
            f"{problem.fit.data.source}: most bootstrap refits failed "
            f"({size + 1 - int(good.sum())} of {size + 1}); use method='laplace'"
        )
    center, flat = flat[0], flat[1:][good[1:]]
    if len(flat) < size:
        flat = flat[rng.integers(0, len(flat), size)]
    return flat - center


def _along_unknown(problem: _Problem, unknown: np.ndarray, config) -> np.ndarray:
    """True where the prediction at a config moves along a direction the data leave open."""
    if unknown.size == 0:
        return np.zeros(np.shape(config.gpus), dtype=bool)

    def log_time(theta):
        return jnp.log(problem.predicted(theta, config))

    jac = np.asarray(jax.jacfwd(log_time)(problem.theta))
    along = np.abs(jac @ unknown.T).max(axis=1)
    return along > 1e-6 * (np.abs(jac).max(axis=1) + 1e-300)
