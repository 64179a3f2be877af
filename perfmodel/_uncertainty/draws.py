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

from .._closed import one_gpu_scores
from .._config import Config
from .._errors import InputError
from .._fitting import (
    data_scale,
    DEFAULTS,
    FitResult,
    gauss_newton_inverse,
    objective,
    raw_bounds,
    reduce_batch,
    refine_lbfgs,
)
from .._levels import refuse_blend_draws
from .._model import AbstractScalingModel
from .._text import brief
from .conformal import Calibrated, calibrated, scores, table
from .drift import drift_scale, Drifted, origin_rows, rolling_origins
from .problem import along_unknown, check_method, partition, Problem

RESAMPLING = ("residual", "wild", "case")
DISCREPANCY = 0.05  # prior model-form drift of log time per doubling outside the data
DISCREPANCY_DOF = 2.0  # its weight, in doublings² of evidence
NOISE = 0.01  # prior relative noise of one measurement (log scale)
NOISE_DOF = 4.0  # its weight, in measurements
LAPLACE_SAMPLES = 4000
BOOTSTRAP_SAMPLES = 1000


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

    model: AbstractScalingModel | None
    delta: Float[Array, "*samples k"] | None
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
        zeta: for ``"conformal"``, each member's normalised score (`conformal`).
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
    dof: float
    tau: float
    tau_dof: float
    gpus_range: tuple[float, float]
    zeta: np.ndarray | None = None

    def __repr__(self) -> str:
        return brief("Ensemble", self.summary().replace("\n", "; "))

    def summary(self) -> str:
        """How many draws of which kind, and what they carry beyond the parameters."""
        lo, hi = self.gpus_range
        return "\n".join(
            [
                f"{self.raw.shape[0]} {self.method} draws of {', '.join(self.names)} around "
                f"the {self.fit.label} fit of {self.fit.data.source}",
                f"noise of a new measurement: scale {self.sigma:.3g} ({self.dof:.3g} degrees "
                "of freedom)",
                f"model-form drift outside {lo:g}–{hi:g} GPUs: {self.tau:.3g} per doubling "
                f"({self.tau_dof:.3g} degrees of freedom)",
            ]
        )

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
        if self.unknown.size == 0:  # nothing undetermined: no need to set up the problem
            return np.zeros(np.shape(config.gpus), dtype=bool)
        with jax.enable_x64(True):
            return along_unknown(Problem(self.fit), self.unknown, config)

    def models(self) -> tuple[eqx.Module, eqx.Module]:
        """``(batched, static)``: a `Drifted` pytree whose arrays have a leading sample
        axis where they vary, and the part shared by all samples; combine one row with
        ``eqx.combine`` or `vmap` over the first. Laplace members are `Linearized`
        around the fit; bootstrap members are the refitted models themselves."""
        if self.method == "conformal":
            with jax.enable_x64(True):
                curve = calibrated(self.fit)
                # The node term is static: the same in both halves of the tree.
                one = jnp.asarray(one_gpu_scores(self.zeta))
                varying = Calibrated(
                    None, jnp.asarray(self.zeta), None, None, curve.node, zeta_one=one
                )
            return varying, eqx.tree_at(lambda c: c.zeta, curve, None, is_leaf=_is_none)
        with jax.enable_x64(True):
            params, static, unravel = partition(self.fit)
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


@eqx.filter_jit
def _refits(start, lower, upper, steps, static, config, times, weights, loss, target):
    """L-BFGS refits from `start` to each row of `times` and `weights`, in one `vmap`."""

    def one(t, w):
        args = (static, config, t, w, loss, target)
        p, value, _, _ = refine_lbfgs(objective, start, lower, upper, steps, args)
        return p, value

    return jax.vmap(one)(times, weights)


def _scale_draws(rng, dof: float, size: int) -> np.ndarray:
    """``sqrt(ν/χ²_ν)``: the scale-mixture factor that makes a normal draw Student-t."""
    if not math.isfinite(dof):
        return np.ones(size)
    return np.sqrt(dof / rng.chisquare(dof, size))


def _refit_rows(problem: Problem, times, weights) -> tuple[np.ndarray, np.ndarray]:
    """Flat stored parameters and losses of refits to each row of `times`/`weights`
    (``(m, n)``, per measurement), each reduced to the distinct configurations first
    (`reduce_batch`: the same minimiser, and code compiled for their number only)."""
    fit = problem.fit
    config, times, weights = reduce_batch(fit.data, fit.loss_kind, times, weights)
    return _refits_of(fit, config, times, weights)


def _refits_of(fit: FitResult, config, times, weights) -> tuple[np.ndarray, np.ndarray]:
    """Refits of `fit`'s free parameters from its optimum, flat stored values and losses."""
    params, static, _ = partition(fit)
    model = eqx.combine(params, static)
    lower, upper = raw_bounds(model, list(fit.free), fit.bounds, data_scale(fit.data))
    ends, values = _refits(
        params,
        lower,
        upper,
        DEFAULTS.lbfgs_steps,
        static,
        config,
        jnp.asarray(times),
        jnp.asarray(weights),
        fit.loss_kind,
        fit.target,
    )
    return np.asarray(jax.vmap(lambda p: ravel_pytree(p)[0])(ends)), np.asarray(values)


def ensemble(
    fit: FitResult,
    method: str | None = None,
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
        method: ``"laplace"`` (Gaussian at the optimum, instant), ``"conformal"``
            (the calibrated intervals of a blend, `conformal`), ``"bootstrap"``
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
    method = method or fit.intervals
    check_method(method)
    if method == "conformal":
        return _conformal(fit, LAPLACE_SAMPLES if samples is None else samples, seed)
    refuse_blend_draws(fit.family, method, "intervals")
    if not fit.free:
        raise InputError(
            f"every parameter of the {fit.family} fit is fixed: it has no uncertainty to draw "
            "(free one to get intervals)"
        )
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
        problem = Problem(fit)
        residuals, sigma2, dof = problem.noise(noise, noise_dof)
        jac = problem.space_jacobian(problem.theta, problem.groups)
        inverse, unknown = gauss_newton_inverse(jac * np.sqrt(problem.counts)[:, None])
        w = _scale_draws(rng, dof, size)
        theta = np.asarray(problem.theta)
        origins = rolling_origins(problem) if discrepancy > 0 else []
        # Every refit (bootstrap resamples, then rolling origins) runs in one vmap.
        batch = [origin_rows(problem, origins)] if origins else []
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
            joint = _joint_covariance(fit, problem)
            if joint is None:
                root = _sqrt_psd(inverse) * math.sqrt(sigma2)
            else:  # the step times and the nccl-tests logs together (`fit_joint`)
                root, unknown = _sqrt_psd(joint), np.zeros((0, problem.k))
            deviation = rng.standard_normal((size, problem.k)) @ root.T
            noise = math.sqrt(sigma2) * rng.standard_normal(size)
        raw = np.clip(theta + w[:, None] * deviation, problem.raw_lo, problem.raw_hi)
        tau, tau_dof = 0.0, math.inf
        if discrepancy > 0:
            tau, tau_dof = drift_scale(
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


def _joint_covariance(fit: FitResult, problem: Problem) -> np.ndarray | None:
    """The fit's own Laplace covariance where it was computed from more than the step
    times (`FitResult.covariance_from`: a joint fit with nccl-tests logs), finite and in
    the problem's parameter order; else None. Drawn from the step times alone, a joint
    fit's links were left open and its 90% interval at a measured count was 59–105 ms
    around 83 ms measured (review round 10b)."""
    covariance = fit.raw_covariance
    if fit.covariance_from == "measurements" or covariance is None:
        return None
    covariance = np.asarray(covariance, dtype=np.float64)
    if covariance.shape != (problem.k, problem.k) or not np.all(np.isfinite(covariance)):
        return None
    if tuple(problem.names) != tuple(fit.free):
        return None
    return covariance


def _sqrt_psd(matrix: np.ndarray) -> np.ndarray:
    values, vectors = np.linalg.eigh((matrix + matrix.T) / 2)
    return vectors * np.sqrt(np.clip(values, 0.0, None))


def _bootstrap_rows(problem: Problem, jac, inverse, residuals, sigma2, resample, size, rng):
    """``(times, weights, pool)``: `size` + 1 resampled datasets (row 0 is the data
    themselves, the centre the deviations are taken from, so that an optimum that
    stopped short does not bias them) and the residuals new noise is drawn from."""
    # `jac` is per distinct configuration; a measurement's leverage is its configuration's.
    leverage = np.clip(np.einsum("ij,jk,ik->i", jac, inverse, jac), 0.0, 1.0)[problem.index]
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
        _, group = data.distinct()
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


def _bootstrap_deviations(problem: Problem, flat, values, rng) -> np.ndarray:
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


def _is_none(x) -> bool:
    return x is None


def _conformal(fit: FitResult, samples: int, seed: int) -> Ensemble:
    """Members ``û·exp(ζ·s(N))`` of a blend (`conformal`): no parameter varies."""
    calibrated(fit)  # refuses a fit that is not the default blend
    if not samples >= 2:
        raise InputError(f"samples must be ≥ 2, got {samples}")
    k = len(fit.free)
    gpus = fit.data.gpus
    return Ensemble(
        fit=fit,
        method="conformal",
        names=tuple(fit.free),
        raw=np.zeros((samples, k)),
        noise=np.zeros(samples),
        drift=np.zeros(samples),
        unknown=np.zeros((0, k)),
        sigma=0.0,
        dof=math.inf,
        tau=0.0,
        tau_dof=math.inf,
        gpus_range=(float(gpus.min()), float(gpus.max())),
        zeta=scores(samples, seed, table(fit)),
    )
