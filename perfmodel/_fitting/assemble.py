"""What every fit ends with: quality, Laplace covariance, identifiability, the result.

Whatever found the parameters (the exact solver of `linear`, multi-start Adam and
L-BFGS, a PMNF search, a joint fit), `assemble` turns them into a `FitResult` the same
way, from the sensitivities ``∂T̂/∂θ`` of the predictions to the stored parameters at the
distinct configurations (`Groups`), so 10⁶ measurements cost as little as ten.
"""

import math

import equinox as eqx
import jax
from jax.flatten_util import ravel_pytree
import numpy as np

from .._data import Benchmarks
from .._model import AbstractScalingModel
from .canonical import mixed_workloads, nodes_disagree, repeats_apart
from .covariance import fit_quality, laplace_covariance
from .groups import Groups, reduce
from .problem import (
    as_float64,
    config_defaults,
    data_scale,
    default_raw_range,
    FitOptions,
    to_numpy_leaves,
)
from .result import convergence, FitResult
from .twin import free_names, numpy_model, sensitivities_at


@eqx.filter_jit
def _sensitivities(params, static, config):
    """Predictions ``T̂`` at `config` and ``∂T̂/∂θ`` for the flat stored parameters."""
    flat, unravel = ravel_pytree(params)

    def predict(theta):
        return eqx.combine(unravel(theta), static)(config)

    return predict(flat), jax.jacfwd(predict)(flat)


def sensitivities(params, static, config) -> tuple[np.ndarray, np.ndarray]:
    """NumPy ``(T̂, ∂T̂/∂θ)`` at `config`: ``(g,)`` and ``(g, k)`` (call inside x64);
    in NumPy for the models with a twin (`twin`), else through JAX."""
    model = eqx.combine(params, static)
    if numpy_model(model) is not None:  # the names' order only for a model with a twin
        names = free_names(params, model)
        if names is not None:
            return sensitivities_at(model, config, flat_names(model, names))
    predicted, jac = _sensitivities(params, static, config)
    return np.asarray(predicted, dtype=np.float64), np.asarray(jac, dtype=np.float64)


def row_weights(groups: Groups, data: Benchmarks, loss: str, predicted) -> np.ndarray:
    """Per row of `groups`, the weight that makes ``Σ_g weight_g·J_gᵀJ_g`` the ``JᵀJ`` of
    every measurement's residual (module `groups`): counts, or ``Σ (T̂_g/t_i)²`` for the
    relative loss, whose residual divides by each measurement (and whose Jacobian rows
    then divide by ``T̂_g``: ratios stay finite for times of 1e±300 s)."""
    g = groups.time_s.size
    if loss == "relative":
        ratio = predicted[groups.index] / data.time_s
        return np.bincount(groups.index, weights=ratio**2, minlength=g)
    return np.bincount(groups.index, minlength=g).astype(np.float64)


def covariance(predicted, sens, groups: Groups, data: Benchmarks, loss: str) -> np.ndarray | None:
    """Laplace covariance ``σ²(JᵀJ)⁻¹`` of the stored parameters from the sensitivities at
    the distinct configurations and the residuals of every measurement."""
    rows = predicted[groups.index]
    if loss == "squared":
        # Residuals and Jacobian both divided by the mean measured value: σ²(JᵀJ)⁻¹ is
        # unchanged, and measurements of 1e300 stay finite when squared.
        if data.target == "throughput":
            scale = float(np.mean(1.0 / data.time_s))
            slope = -1.0 / predicted**2 / scale
            r = (1.0 / rows - 1.0 / data.time_s) / scale
        else:
            scale = float(np.mean(data.time_s))
            slope = np.full_like(predicted, 1.0 / scale)
            r = (rows - data.time_s) / scale
    elif loss == "relative":
        slope = 1.0 / predicted
        r = rows / data.time_s - 1.0
    else:
        slope = 1.0 / predicted
        r = np.log(rows) - np.log(data.time_s)
    jac = sens * (slope * np.sqrt(row_weights(groups, data, loss, predicted)))[:, None]
    return laplace_covariance(jac, r)


def at_default_limit(model: AbstractScalingModel, name: str, scale: float) -> bool:
    """True when `name` sits on the edge of its default range around the data's scale."""
    spec = model.parameter_specs()[name]
    raw = float(spec.to_raw(model.parameters()[name]))
    lo, hi = default_raw_range(spec.kind, scale)
    return raw <= lo + 1e-6 or raw >= hi - 1e-6


def identifiability(model, free, bounds, cov, scale: float, negligible=()) -> list[str]:
    """Warnings for the free parameters the data cannot determine: pushed to the edge of
    the default range (or `negligible`: their term contributes nothing), with infinite
    Laplace variance, or with a standard error over a factor e² on the value."""
    warnings, flagged = [], set()
    for name in free:
        if name not in bounds and (name in negligible or at_default_limit(model, name, scale)):
            flagged.add(name)
            warnings.append(
                f"{name} is not identifiable: the fit pushed it to the edge of its "
                "range, so the data cannot tell this term's size (it is negligible or "
                "indistinguishable from another term)"
            )
    if cov is None:
        return warnings
    sd = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    for name, s in zip(free, sd):
        if name in flagged:
            continue
        if not np.isfinite(s):
            warnings.append(
                f"{name} is not identifiable: other parameters can compensate any "
                "change in it exactly; fix it from another measurement"
            )
        elif s > 2.0:
            warnings.append(
                f"{name} is poorly determined: its Laplace standard error is a "
                f"factor of {math.exp(min(s, 50.0)):.3g} on its value"
            )
    return warnings


def flat_names(model: AbstractScalingModel, free) -> tuple[str, ...]:
    """The free parameter names in the order `ravel_pytree` lays out their leaves."""
    marked = model
    for i, name in enumerate(free):
        marked = eqx.tree_at(model.leaf_getter(name), marked, np.float64(i))
    params, _ = eqx.partition(marked, model.raw_leaf_mask(set(free)))
    # `ravel_pytree`'s order is that of the leaves (read here without a JAX operation).
    leaves = [np.ravel(np.asarray(x)) for x in jax.tree_util.tree_leaves(params)]
    return tuple(free[int(i)] for i in (np.concatenate(leaves) if leaves else ()))


def data_notes(
    data: Benchmarks, predicted_q: np.ndarray, model: AbstractScalingModel | None = None
) -> list[str]:
    """What the measurements themselves say: a quantity that does not change with the
    GPU count (no scaling), or rows at one GPU count of different workloads that `model`
    does not read (`mixed_workloads`)."""
    notes = []
    measured = data.measured
    if len(np.unique(data.gpus)) > 1 and np.ptp(measured) <= 1e-12 * np.abs(measured).max():
        notes.append("the measured quantity is the same at every GPU count: no scaling")
    mixed = mixed_workloads(data, model)
    notes += [mixed] if mixed else []
    return notes + [note for note in (repeats_apart(data), nodes_disagree(data)) if note]


def assemble(
    params,
    static,
    data: Benchmarks,
    value: float,
    gnorm: float,
    steps: int,
    options: FitOptions,
    groups: Groups | None = None,
    sens=None,
) -> FitResult:
    """The `FitResult` of stored parameters `params` found by an optimiser: quality on
    the measured quantity, Laplace covariance, identifiability and convergence (call
    inside x64). `sens` (predictions and sensitivities at the groups' configurations)
    is computed when not given."""
    fitted = as_float64(eqx.combine(params, static))
    groups = groups if groups is not None else reduce(data, options.loss)
    free = [name for name in fitted.parameter_specs() if name not in options.fix]
    predicted, jac = sens if sens is not None else sensitivities(params, static, groups.config)
    rows = predicted[groups.index]
    measured = data.measured
    predicted_q = data.as_measured(rows)
    r2, mape = fit_quality(measured, predicted_q)
    cov = covariance(predicted, jac, groups, data, options.loss) if jac.size else None
    order = flat_names(fitted, free)
    if cov is not None and order != tuple(free):
        permutation = [order.index(name) for name in free]
        cov = cov[np.ix_(permutation, permutation)]
    share = np.abs(jac) / predicted[:, None]
    negligible = {order[j] for j in range(len(order)) if share[:, j].max(initial=0.0) < 1e-9}
    warnings = data_notes(data, predicted_q, fitted)
    warnings += identifiability(
        fitted, free, options.bounds, cov, data_scale(data), negligible=negligible
    )
    converged, message = convergence(value, gnorm, steps, warnings)
    return FitResult(
        model=to_numpy_leaves(fitted),
        data=data,
        loss_kind=options.loss,
        loss=value,
        converged=converged,
        message=message,
        num_steps=steps,
        r2=r2,
        mape=mape,
        residuals=np.log(predicted_q / measured),
        free=tuple(free),
        fixed={k: float(v) for k, v in options.fix.items()},
        bounds={k: tuple(v) for k, v in options.bounds.items()},
        raw_covariance=cov,
        warnings=tuple(warnings),
        config_defaults=config_defaults(data),
    )
