"""Parameter and prediction intervals of a fit, from the draws of `perfmodel.ensemble`.

`predict_interval` gives the central interval of a new measurement (or of the mean
curve) at any GPU count; `parameter_intervals` one per parameter. Both take
``method="laplace"`` (default) or ``"bootstrap"``; `optimal_gpus` and
`diminishing_returns` take the same `interval`/`method` arguments.
"""

import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._errors import InputError
from .._fitting import FitResult, gauss_newton_inverse
from .._levels import check_gpu_list, interval_columns, KINDS, refuse_blend_draws
from .conformal import conformal_bounds
from .draws import Ensemble, ensemble, NOISE, NOISE_DOF
from .problem import along_unknown, check_level, check_method, Problem


def t_quantile(p: float, dof: float) -> float:
    """Quantile `p` ∈ (0.5, 1) of Student's t with `dof` degrees of freedom: bisection
    (in log t) on ``P(T > t) = I_{ν/(ν+t²)}(ν/2, 1/2) / 2``, so SciPy is not needed."""
    with jax.enable_x64(True):
        if not math.isfinite(dof):
            return math.sqrt(2.0) * float(jax.scipy.special.erfinv(jnp.float64(2.0 * p - 1.0)))
        return float(_t_bisect(jnp.float64(p), jnp.float64(dof)))


@jax.jit
def _t_bisect(p, dof):
    def step(_, bracket):
        lo, hi = bracket
        mid = (lo + hi) / 2
        tail = 0.5 * jax.scipy.special.betainc(dof / 2, 0.5, dof / (dof + jnp.exp(2 * mid)))
        return jnp.where(tail > 1 - p, mid, lo), jnp.where(tail > 1 - p, hi, mid)

    lo, hi = jax.lax.fori_loop(0, 200, step, (jnp.log(1e-12), jnp.log(1e12)))
    return jnp.exp((lo + hi) / 2)


@eqx.filter_jit
def _log_times(varying, shared, config):
    """Log seconds per step of every sample (rows) at every config (columns)."""

    def one(v):
        return jnp.log(eqx.combine(v, shared)(config))

    return jax.vmap(one)(varying)


def get_ensemble(fit, method, ensemble_=None, samples=None, seed=0) -> "Ensemble":
    """`ensemble_` when given (checked to be drawn for `fit`), else the default draws
    ``ensemble(fit, method, samples=samples, seed=seed)`` that every interval shares
    (`method` None: the given draws' method, else the fit's own, `FitResult.intervals`)."""
    method = method or (ensemble_.method if ensemble_ is not None else fit.intervals)
    check_method(method)
    if ensemble_ is None:
        return ensemble(fit, method, samples=samples, seed=seed)
    if ensemble_.fit is not fit:
        raise InputError("the ensemble given was drawn for another fit")
    return ensemble_


def log_time_draws(fit: FitResult, draws: Ensemble, gpus, **overrides) -> np.ndarray:
    """Log seconds per step of every draw (rows) at `gpus` (columns): the plausible
    curves, model-form drift included and measurement noise left out."""
    counts = np.asarray(gpus, dtype=float)
    with jax.enable_x64(True):
        config = fit.config(counts, **overrides).broadcast()
        varying, shared = draws.models()
        return np.asarray(_log_times(varying, shared, config))


def predict_interval(
    fit: FitResult,
    gpus,
    level: float = 0.9,
    method: str | None = None,
    *,
    kind: str = "prediction",
    ensemble: Ensemble | None = None,
    samples: int | None = None,
    seed: int = 0,
    **overrides,
) -> dict[str, np.ndarray]:
    """Predicted time per step at `gpus` with a central interval of probability `level`.

    With ``kind="prediction"`` (the default) the interval is for a new measurement:
    parameter uncertainty, measurement noise and, outside the measured GPU counts,
    model-form drift; ``kind="confidence"`` leaves the noise out (the mean curve).

    Args:
        fit: a fitted model.
        gpus: GPU counts.
        level: probability inside the interval, in (0, 1).
        method: ``"laplace"``, ``"bootstrap"`` or ``"conformal"`` (see `ensemble`);
            default the fit's own (`FitResult.intervals`: conformal for the default
            blend, calibrated on published series, else Laplace).
        kind: ``"prediction"`` or ``"confidence"`` (not for conformal intervals, which
            are for new measurements only).
        ensemble: draws from `ensemble(fit, ...)` to reuse (then `method`, `samples`
            and `seed` are ignored).
        samples, seed: passed to `ensemble`.
        overrides: other `Config` fields for the prediction.

    Returns:
        NumPy arrays ``gpus``, ``time_s``, ``time_s_lo``, ``time_s_hi`` (seconds per step,
        or per unit of work) and, for throughput fits, ``throughput``,
        ``throughput_lo``, ``throughput_hi``. Where the data leave a parameter the
        prediction depends on undetermined, the bounds are 0 and inf.

    Example:
        >>> fit = pm.fit("amdahl", pm.load_dataset("tf_dgx1_p100_vgg16_real"))  # doctest: +SKIP
        >>> band = pm.predict_interval(fit, [8, 16, 32], level=0.9)  # doctest: +SKIP
        >>> band["throughput_lo"], band["throughput_hi"]  # doctest: +SKIP
    """
    level = check_level(level)
    if kind not in KINDS:
        raise InputError(f"unknown interval kind {kind!r}; valid: {', '.join(KINDS)}")
    counts = check_gpu_list(gpus)
    if counts.ndim == 0:  # one count: the same columns, each a number (not 4000 draws)
        band = predict_interval(
            fit,
            counts[None],
            level,
            method,
            kind=kind,
            ensemble=ensemble,
            samples=samples,
            seed=seed,
            **overrides,
        )
        return {k: np.asarray(v)[0, ...] for k, v in band.items()}
    method = method or (ensemble.method if ensemble is not None else fit.intervals)
    point = fit.predict(counts, **overrides)
    per_step = counts if fit.data.per_gpu else 1.0
    if method == "conformal" and kind != "prediction":
        raise InputError(
            "the default blend's intervals are conformal, for new measurements (--kind "
            "prediction; the speedup CI comes from the same conformal curves, each against "
            "the curve's one-GPU time, or its own where no single GPU was measured); for "
            "the curve's time refit one family (perfmodel fit "
            "CSV --model NAME) and ask with --method laplace (kind='confidence', "
            "method='laplace' from Python)"
        )
    if method == "conformal":  # closed form, draws or not (the command line's too)
        with jax.enable_x64(True):
            lo, hi = conformal_bounds(fit, fit.config(counts, **overrides).broadcast(), level)
        return interval_columns(fit.target, point, lo * per_step, hi * per_step)
    draws = get_ensemble(fit, method, ensemble, samples, seed)
    with jax.enable_x64(True):
        problem = Problem(fit)
        config = fit.config(counts, **overrides).broadcast()
        varying, shared = draws.models()
        log_t = np.asarray(_log_times(varying, shared, config))
        if kind == "prediction":
            noise = draws.noise[:, None]
            if fit.loss_kind == "squared":
                curve = np.asarray(problem.to_space(jnp.exp(log_t)))
                # Noise as large as the value would make it negative: floor each draw at
                # a millionth of its own noiseless value (as the bootstrap does), so a
                # count's bounds do not depend on the other counts asked.
                space = np.maximum(curve + noise, 1e-6 * np.abs(curve))
                log_t = np.log(np.asarray(problem.from_space(jnp.asarray(space))))
            else:
                log_t = log_t + noise
        open_ = along_unknown(problem, draws.unknown, config)
    tail = (1.0 - level) / 2.0
    lo = np.exp(np.quantile(log_t, tail, axis=0))
    hi = np.exp(np.quantile(log_t, 1.0 - tail, axis=0))
    lo, hi = np.where(open_, 0.0, lo), np.where(open_, np.inf, hi)
    return interval_columns(fit.target, point, lo * per_step, hi * per_step)


def _member_intervals(fit: FitResult, p: float) -> dict[str, tuple[float, float]]:
    """A blend's coefficients, each from its member's own fit (`FitResult.raw_covariance`,
    `perfmodel._fitting.blend.member_covariance`): ``θ̂·exp(±t_{n−k}·s)`` with ``s`` the
    standard error of log θ, n the measurements and k the coefficients its member fitted;
    0 to inf where the member leaves it undetermined."""
    errors = fit.standard_errors()
    per_member: dict[str, int] = {}
    for name, sd in errors.items():
        if math.isfinite(sd):
            member = name.split(".", 1)[0]
            per_member[member] = per_member.get(member, 0) + 1
    n = int(np.size(fit.data.gpus))
    out = {}
    for name, value in fit.parameters().items():
        sd = errors.get(name, math.inf)
        if name in fit.fixed:
            continue
        if not math.isfinite(sd):
            out[name] = (0.0, math.inf)
            continue
        k = per_member[name.split(".", 1)[0]]
        half = min(t_quantile(p, n - k) * sd, 700.0)  # e^700: as good as unbounded
        out[name] = (value * math.exp(-half), value * math.exp(half))
    return out


def parameter_intervals(
    fit: FitResult,
    level: float = 0.9,
    method: str | None = None,
    *,
    ensemble: Ensemble | None = None,
    samples: int | None = None,
    seed: int = 0,
) -> dict[str, tuple[float, float]]:
    """A central interval of probability `level` for every parameter, in its unit.

    Laplace: the Student-t interval ``θ̂ ± t_{n−k}·s·sqrt((JᵀJ)⁻¹_ii)`` on the stored
    (log/logit) value, mapped to the physical one; bootstrap: percentiles of the
    refits. Fixed parameters have zero width; a parameter the data do not determine
    spans its whole range (its bounds, or 0 to inf; 0 to 1 for fractions). The default
    blend's coefficients get their members' own Laplace intervals (each member is fitted
    alone); the bootstrap is refused for it.
    """
    level = check_level(level)
    specs = fit.model.parameter_specs()
    values = fit.parameters()
    out = {name: (values[name], values[name]) for name in fit.fixed}
    tail = (1.0 - level) / 2.0
    if fit.family == "blend":  # its members' own fits: no draws of the blend to read
        if method == "bootstrap":
            refuse_blend_draws(fit.family, method, "parameter intervals")
        out.update(_member_intervals(fit, 1.0 - tail))
        return {name: out[name] for name in specs}
    with jax.enable_x64(True):
        problem = Problem(fit)
        method = method or "laplace"  # a parameter's own interval, also in a blend
        if method == "laplace" and ensemble is None:
            _, sigma2, dof = problem.noise(NOISE, NOISE_DOF)
            inverse, unknown = gauss_newton_inverse(problem.weighted_jacobian())
            half = t_quantile(1.0 - tail, dof) * math.sqrt(sigma2) * np.sqrt(np.diag(inverse))
            theta = np.asarray(problem.theta)
            lo, hi = theta - half, theta + half
        else:
            draws = get_ensemble(fit, method, ensemble, samples, seed)
            unknown = draws.unknown
            lo = np.quantile(draws.raw, tail, axis=0)
            hi = np.quantile(draws.raw, 1.0 - tail, axis=0)
        lo, hi = (
            np.clip(lo, problem.raw_lo, problem.raw_hi),
            np.clip(hi, problem.raw_lo, problem.raw_hi),
        )
        open_ = np.abs(unknown).max(axis=0, initial=0.0) > 1e-3
        for i, name in enumerate(problem.names):
            spec = specs[name]
            if open_[i]:
                bound_lo, bound_hi = fit.bounds.get(name, (None, None))
                natural = (0.0, 1.0) if spec.kind == "fraction" else (0.0, math.inf)
                out[name] = (
                    natural[0] if bound_lo is None else float(bound_lo),
                    natural[1] if bound_hi is None else float(bound_hi),
                )
            else:
                out[name] = (float(spec.to_physical(lo[i])), float(spec.to_physical(hi[i])))
    return {name: out[name] for name in specs}
