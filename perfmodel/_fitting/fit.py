"""Fitting a ScalingModel to benchmarks with Optax: multi-start Adam, then L-BFGS.

Every fit runs in float64: relative errors of a few percent on times that span decades
need more than float32's 7 digits once squared and summed.
"""

import dataclasses
import math

import equinox as eqx
import jax
from jax.flatten_util import ravel_pytree
import jax.numpy as jnp
from jaxtyping import Array, Float
import numpy as np
import optax

from .._config import Config
from .._data import Benchmarks
from .._errors import InputError
from .._model import ScalingModel
from .._presets import build
from .optimise import minimise, project

LOSSES = ("log", "squared", "huber")
HUBER_DELTA = 0.05  # in log space: residuals beyond ~5% count linearly
_RAW_LIMIT = {"time": 50.0, "bandwidth": 50.0, "fraction": 20.0}


def log_squared_error(
    predicted: Float[Array, " n"], measured: Float[Array, " n"]
) -> Float[Array, ""]:
    """Mean of ``(log t_pred − log t_measured)²``: a 10% error costs the same at any scale."""
    return jnp.mean((jnp.log(predicted) - jnp.log(measured)) ** 2)


def objective(params, static, config, time_s, weights, kind: str, target: str) -> Float[Array, ""]:
    """The fitting loss of stored parameters `params` (combined with `static`).

    A weighted mean over measurements (weights are 1 for a plain fit, resample counts
    for a bootstrap): ``(log t_pred − log t)²`` for ``"log"``, its Huber version for
    ``"huber"``, and for ``"squared"`` the squared error of the measured quantity
    (time, or throughput = 1/t) scaled by its mean, which leaves the minimiser unchanged.
    """
    predicted = eqx.combine(params, static)(config)
    if kind == "squared":
        if target == "throughput":
            predicted, time_s = 1.0 / predicted, 1.0 / time_s
        per_point = ((predicted - time_s) / jnp.mean(time_s)) ** 2
    elif kind == "huber":
        per_point = optax.huber_loss(jnp.log(predicted) - jnp.log(time_s), delta=HUBER_DELTA)
    else:
        per_point = (jnp.log(predicted) - jnp.log(time_s)) ** 2
    return jnp.sum(weights * per_point) / jnp.sum(weights)


@dataclasses.dataclass(frozen=True)
class FitResult:
    """A fitted model and how well it fits.

    Attributes:
        model: the fitted `ScalingModel` (leaves are float64 NumPy arrays).
        data: the benchmarks it was fitted to.
        loss_kind: ``"log"``, ``"squared"`` or ``"huber"``.
        loss: final value of the loss.
        converged: True when the optimiser reached a stationary point.
        message: a readable account of convergence and identifiability.
        num_steps: Adam steps per start plus L-BFGS iterations.
        r2: coefficient of determination on the measured quantity.
        mape: mean absolute percentage error on the measured quantity, in percent.
        residuals: ``log(predicted / measured)`` per measurement.
        free: names of the fitted parameters; the rest were fixed.
        fixed: fixed parameter values (physical units).
        bounds: user bounds (physical units) per parameter.
        raw_covariance: Laplace covariance of the free parameters in their stored
            (log/logit) form, or None when the data leave no degrees of freedom.
        warnings: identifiability and convergence warnings.
        config_defaults: config values used for predictions at new GPU counts.
        precision: floating-point precision the fit ran in.
        averaged_with: the family whose fit this one averages in (`_average`: the
            mean step time of two fits, refitted together by the bootstrap), or "".
    """

    model: ScalingModel
    data: Benchmarks
    loss_kind: str
    loss: float
    converged: bool
    message: str
    num_steps: int
    r2: float
    mape: float
    residuals: np.ndarray
    free: tuple[str, ...]
    fixed: dict[str, float]
    bounds: dict[str, tuple[float, float]]
    raw_covariance: np.ndarray | None
    warnings: tuple[str, ...]
    config_defaults: dict[str, float]
    precision: str = "float64"
    averaged_with: str = ""

    @property
    def family(self) -> str:
        return self.model.family

    @property
    def target(self) -> str:
        return self.data.target

    @property
    def label(self) -> str:
        """The family, with the one averaged into it (its parameters then mix both)."""
        if self.averaged_with:
            return f"{self.family} averaged with {self.averaged_with}"
        return self.family

    def parameters(self) -> dict[str, float]:
        """Fitted physical parameter values by name (float64)."""
        with jax.enable_x64(True):
            return {k: float(v) for k, v in self.model.parameters().items()}

    def standard_errors(self) -> dict[str, float]:
        """Laplace standard error of each free parameter, relative (log scale) for
        times and bandwidths, absolute on the logit for fractions; NaN when unknown."""
        if self.raw_covariance is None:
            return {name: math.nan for name in self.free}
        sd = np.sqrt(np.clip(np.diag(self.raw_covariance), 0.0, None))
        return dict(zip(self.free, map(float, sd)))

    def config(self, gpus, **overrides) -> Config:
        """A `Config` at `gpus` with the fitted data's other config values."""
        return Config(gpus=np.asarray(gpus, dtype=float), **{**self.config_defaults, **overrides})

    def predict(self, gpus, **overrides) -> dict[str, np.ndarray]:
        """Predicted ``time_s`` (and ``throughput``), ``speedup`` and ``efficiency``.

        `time_s` is seconds per step, or per unit of work for throughput fits;
        speedup and efficiency are relative to one GPU.
        """
        with jax.enable_x64(True):
            config = self.config(gpus, **overrides)
            out = {
                "gpus": np.asarray(config.gpus, dtype=float),
                "time_s": np.asarray(self.model(config), dtype=float),
                "speedup": np.asarray(self.model.speedup(config), dtype=float),
                "efficiency": np.asarray(self.model.efficiency(config), dtype=float),
            }
        if self.target == "throughput":
            out["throughput"] = 1.0 / out["time_s"]
        return out


def as_float64(tree):
    """`tree` with every array leaf as a float64 JAX array (call inside x64)."""
    return jax.tree_util.tree_map(
        lambda x: jnp.asarray(x, dtype=jnp.float64) if eqx.is_array(x) else x, tree
    )


def _to_numpy_leaves(model: ScalingModel) -> ScalingModel:
    # NumPy leaves follow the caller's precision when used later (float32 unless x64).
    return jax.tree_util.tree_map(
        lambda x: np.asarray(x, dtype=np.float64) if eqx.is_array(x) else x, model
    )


def _start_values(model, names, data: Benchmarks, n_starts: int, seed: int):
    specs = model.parameter_specs()
    rng = np.random.default_rng(seed)
    work = float(np.median(data.time_s * data.gpus))
    size = max(
        float(np.median(data.config.get("message_bytes", [1.0]))),
        float(np.median(data.config.get("input_bytes", [1.0]))),
    )
    starts = {}
    for name in names:
        kind = specs[name].kind
        if kind == "time":
            value = work * 10.0 ** rng.uniform(-6.0, 0.5, n_starts)
        elif kind == "bandwidth":
            value = size / work * 10.0 ** rng.uniform(-0.5, 8.0, n_starts)
        else:
            value = 1.0 / (1.0 + np.exp(-rng.uniform(-3.0, 3.0, n_starts)))
        starts[name] = value
    return starts


def _raw_bounds(model, names, bounds):
    """Bounds of the stored parameters as two pytrees shaped like the free leaves.

    Unbounded sides get wide default limits (e.g. e^±50 for positive values), which keep
    exp() finite; a parameter that ends on one of those limits is reported unidentifiable.
    """
    specs = model.parameter_specs()
    lower, upper = {}, {}
    for name in names:
        spec = specs[name]
        limit = _RAW_LIMIT[spec.kind]
        lo, hi = bounds.get(name, (None, None))
        lower[name] = -limit if lo is None else float(spec.to_raw(lo))
        upper[name] = limit if hi is None else float(spec.to_raw(hi))
    mask = model.raw_leaf_mask(set(names))
    return eqx.filter(_set_raw(model, lower), mask), eqx.filter(_set_raw(model, upper), mask)


def _set_raw(model: ScalingModel, raw: dict[str, float]) -> ScalingModel:
    for name, value in raw.items():
        model = eqx.tree_at(model._leaf_getter(name), model, jnp.asarray(value))
    return model


def _check_options(model, data, loss, fix, bounds):
    if loss not in LOSSES:
        raise InputError(f"unknown loss {loss!r}; valid: {', '.join(LOSSES)}")
    specs = model.parameter_specs()
    for name in [*fix, *bounds]:
        if name not in specs:
            raise InputError(
                f"no parameter {name!r} in model {model.family!r}; valid: " + ", ".join(specs)
            )
    for name, (lo, hi) in bounds.items():
        if lo is not None and hi is not None and not lo < hi:
            raise InputError(f"bound for {name!r}: expected lo < hi, got {lo}:{hi}")
    for term in model.terms:
        for field in term.requires:
            if field not in data.config:
                raise InputError(
                    f"{data.source}: model {model.family!r} needs {field!r} in the data "
                    f"(a CSV column, or a from_arrays argument): its {term.name} term "
                    "depends on it"
                )
    free = [n for n in specs if n not in fix]
    distinct = data.distinct_configs()
    if len(free) > distinct:
        raise InputError(
            f"{data.source}: model {model.family!r} has {len(free)} free parameters "
            f"({', '.join(free)}) but the data have only {distinct} distinct "
            "configurations; measure more GPU counts, fix parameters with --fix, "
            "or choose a smaller model"
        )
    return free


def _config_defaults(data: Benchmarks) -> dict[str, float]:
    # A value that varies between rows is taken at the largest GPU count measured.
    largest = int(np.argmax(data.gpus))
    return {name: float(values[largest]) for name, values in data.config.items()}


def fit(
    model: ScalingModel | str,
    data: Benchmarks,
    *,
    loss: str = "log",
    fix: dict[str, float] | None = None,
    bounds: dict[str, tuple[float | None, float | None]] | None = None,
    n_starts: int = 64,
    adam_steps: int = 600,
    lbfgs_steps: int = 500,
    seed: int = 0,
) -> FitResult:
    """Fit `model` (a `ScalingModel` or a family name) to `data`.

    Many starting points, drawn log-uniformly over decades around the data's scale, run
    through Adam together under `vmap`; the best one is refined with L-BFGS.

    Args:
        model: the model or preset family to fit.
        data: validated benchmarks (`load_benchmarks`).
        loss: ``"log"`` (mean squared log error, the default), ``"squared"`` (least
            squares on the measured quantity) or ``"huber"`` (log errors, robust).
        fix: parameters held at given physical values, e.g. ``{"allreduce.bandwidth":
            50e9}``.
        bounds: ``(lo, hi)`` in physical units per parameter; None leaves a side open.
        n_starts: starting points for the multi-start phase.
        adam_steps: Adam steps per start.
        lbfgs_steps: maximum L-BFGS iterations of the refinement.
        seed: seed of the starting points.

    Raises:
        InputError: unknown loss or parameter names, or too few distinct
            configurations for the free parameters.
    """
    fix, bounds = dict(fix or {}), dict(bounds or {})
    if isinstance(model, str):
        model = build(model)
    if model.family == "pmnf":
        from .._terms.empirical import is_searched
        from .search import fit_pmnf  # imports this module

        if is_searched(model):
            options = dict(n_starts=n_starts, adam_steps=adam_steps, lbfgs_steps=lbfgs_steps)
            return fit_pmnf(model, data, loss=loss, fix=fix, bounds=bounds, seed=seed, **options)
    free = _check_options(model, data, loss, fix, bounds)
    with jax.enable_x64(True):
        return _fit_float64(
            model,
            data,
            loss,
            fix,
            bounds,
            free,
            n_starts,
            adam_steps,
            lbfgs_steps,
            seed,
        )


def fit_at(model: ScalingModel, data: Benchmarks, loss: str = "log") -> FitResult:
    """A `FitResult` for `model` exactly as given, without optimising it.

    Residuals, R², MAPE and the Gauss-Newton covariance are evaluated at the model's
    parameters (a point built from other fits, such as an average of two of them).
    `converged` and the message report whether that point is stationary for `loss`.
    """
    free = _check_options(model, data, loss, {}, {})
    with jax.enable_x64(True):
        model = as_float64(model)
        params, static = eqx.partition(model, model.raw_leaf_mask(set(free)))
        time_s = jnp.asarray(data.time_s)
        args = (static, data.to_config(), time_s, jnp.ones_like(time_s), loss, data.target)
        value, gradient = jax.value_and_grad(objective)(params, *args)
        gnorm = optax.tree_utils.tree_norm(gradient)
        return _result(params, static, data, loss, float(value), float(gnorm), 0, {}, {})


def _fit_float64(
    model, data, loss, fix, bounds, free, n_starts, adam_steps, lbfgs_steps, seed
) -> FitResult:
    model = as_float64(model)
    model = model.with_parameters(fix)
    config = data.to_config()
    time_s = jnp.asarray(data.time_s)
    mask = model.raw_leaf_mask(set(free))
    starts_physical = _start_values(model, free, data, n_starts, seed)
    batched = model.with_parameters(starts_physical)
    starts, _ = eqx.partition(batched, mask)
    _, static = eqx.partition(model, mask)
    lower, upper = _raw_bounds(model, free, bounds)
    starts = project(starts, lower, upper)
    args = (static, config, time_s, jnp.ones_like(time_s), loss, data.target)
    found = minimise(objective, starts, lower, upper, adam_steps, lbfgs_steps, args)
    if found is None:
        raise InputError(f"{data.source}: every start gave a non-finite loss")
    params, value, gnorm, steps = found
    return _result(params, static, data, loss, value, gnorm, steps, fix, bounds)


def _raw_covariance(params, static, config, time_s, target, loss) -> np.ndarray | None:
    """Gauss-Newton (Laplace) covariance of the stored parameters, σ²·(JᵀJ)⁻¹.

    Directions the data do not constrain (singular values of J below 1e-7 of the
    largest) get infinite variance rather than the zero a pseudo-inverse would give.
    """
    flat, unravel = ravel_pytree(params)
    n, k = time_s.shape[0], flat.shape[0]
    if n <= k:
        return None

    def residuals(theta):
        predicted = eqx.combine(unravel(theta), static)(config)
        if loss == "squared":
            if target == "throughput":
                return 1.0 / predicted - 1.0 / time_s
            return predicted - time_s
        return jnp.log(predicted) - jnp.log(time_s)

    r = np.asarray(residuals(flat))
    jac = np.asarray(jax.jacfwd(residuals)(flat))
    sigma2 = float(np.sum(r**2)) / (n - k)
    _, singular, vt = np.linalg.svd(jac, full_matrices=False)
    null = singular <= 1e-7 * singular.max()
    inverse = np.where(null, 0.0, 1.0 / np.where(null, 1.0, singular) ** 2)
    cov = sigma2 * (vt.T * inverse) @ vt
    # A parameter with weight on an unconstrained direction is itself unconstrained.
    unconstrained = np.abs(vt[null]).max(axis=0, initial=0.0) > 1e-3
    cov[unconstrained, :] = np.inf
    cov[:, unconstrained] = np.inf
    return cov


def _negligible(model, name, config, predicted) -> bool:
    """True when moving `name` to either edge of its default range changes no prediction
    (1e-9 relative): its term contributes nothing, like a time the fit drove towards 0
    but whose gradient vanished before it reached the edge."""
    limit = _RAW_LIMIT[model.parameter_specs()[name].kind]
    for edge in (-limit, limit):
        moved = np.asarray(_set_raw(model, {name: edge})(config))
        if np.all(np.abs(moved / predicted - 1.0) < 1e-9):
            return True
    return False


def convergence(value: float, gnorm: float, steps: int, warnings) -> tuple[bool, str]:
    """Whether a fit reached a stationary point, and a readable message with its warnings."""
    tolerance = 1e-6 * max(1.0, value)
    converged = gnorm <= tolerance
    message = (
        "converged"
        if converged
        else f"not converged: gradient norm {gnorm:.3g} > {tolerance:.3g} after {steps} steps"
    )
    if warnings:
        message += "; " + "; ".join(warnings)
    return converged, message


def _result(params, static, data, loss, value, gnorm, steps, fix, bounds) -> FitResult:
    fitted = eqx.combine(params, static)
    config, time_s = data.to_config(), jnp.asarray(data.time_s)
    free = [name for name in fitted.parameter_specs() if name not in fix]
    predicted = np.asarray(fitted(config))
    measured = data.measured
    predicted_q = 1.0 / predicted if data.target == "throughput" else predicted
    ss_res = float(np.sum((predicted_q - measured) ** 2))
    ss_tot = float(np.sum((measured - measured.mean()) ** 2))
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else math.nan
    mape = float(np.mean(np.abs(predicted_q - measured) / measured) * 100.0)

    specs = fitted.parameter_specs()
    warnings = []
    for name in free:
        raw = float(specs[name].to_raw(fitted.parameters()[name]))
        spec = specs[name]
        at_default_limit = abs(raw) >= _RAW_LIMIT[spec.kind] - 1e-6
        at_default_limit = at_default_limit or _negligible(fitted, name, config, predicted)
        if at_default_limit and name not in bounds:
            warnings.append(
                f"{name} is not identifiable: the fit pushed it to the edge of its "
                "range, so the data cannot tell this term's size (it is negligible or "
                "indistinguishable from another term)"
            )
    cov = _raw_covariance(params, static, config, time_s, data.target, loss)
    if cov is not None:
        sd = np.sqrt(np.clip(np.diag(cov), 0.0, None))
        for name, s in zip(free, sd):
            if any(name in w for w in warnings):
                continue
            if not np.isfinite(s):
                warnings.append(
                    f"{name} is not identifiable: other parameters can compensate any "
                    "change in it exactly; fix it (--fix) from another measurement"
                )
            elif s > 2.0:
                warnings.append(
                    f"{name} is poorly determined: its Laplace standard error is a "
                    f"factor of {math.exp(min(s, 50.0)):.3g} on its value"
                )
    converged, message = convergence(value, gnorm, steps, warnings)
    return FitResult(
        model=_to_numpy_leaves(fitted),
        data=data,
        loss_kind=loss,
        loss=value,
        converged=converged,
        message=message,
        num_steps=steps,
        r2=r2,
        mape=mape,
        residuals=np.log(predicted_q / measured),
        free=tuple(free),
        fixed={k: float(v) for k, v in fix.items()},
        bounds={k: tuple(v) for k, v in bounds.items()},
        raw_covariance=cov,
        warnings=tuple(warnings),
        config_defaults=_config_defaults(data),
    )
