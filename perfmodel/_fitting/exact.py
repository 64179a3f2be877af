"""The exact path of a fit: a model linear in its parameters (`linear`) solved by NNLS,
its result assembled as any other; and exact refits under many weightings (the PMNF
hypotheses, leave-one-out folds) without an optimiser."""

import dataclasses

import equinox as eqx
import jax
import numpy as np

from .._data import Benchmarks
from .._model import AbstractScalingModel
from .assemble import assemble, flat_names, sensitivities
from .groups import Groups, measurement_weights, reduce
from .linear import Linear, linear_form, solve
from .loss import HUBER_DELTA, loss_value
from .problem import as_float64, check_options, data_scale, DEFAULTS, FitOptions, raw_bounds
from .result import FitResult


def fit_exact(model, data, free, options, groups: Groups, weights) -> FitResult | None:
    """The exact fit of a linear model (`linear`), or None when it has none: the model
    is not linear, the loss is Huber, or a user bound is finite. Call inside x64."""
    if options.loss == "huber" or any(
        lo is not None or hi is not None for lo, hi in options.bounds.values()
    ):
        return None
    model = as_float64(model).with_parameters(options.fix)
    form = linear_form(model, groups.config, free)
    if form is None:
        return None
    scale = time_scale(data)
    g, steps = solve(form, groups.time_s, groups.weights, options.loss, data.target, scale=scale)
    lower, upper = raw_bounds(model, free, {}, data_scale(data))
    with np.errstate(divide="ignore"):
        raw = {
            name: float(
                np.clip(np.log(value), _leaf(lower, model, name), _leaf(upper, model, name))
            )
            for name, value in form.physical(g).items()
        }
    fitted = model.with_raw(raw)
    params, static = eqx.partition(fitted, fitted.raw_leaf_mask(set(free)))
    sens = linear_sensitivities(form, fitted, free)
    predicted, jac = sens
    value = loss_value(predicted, data.time_s, weights, options.loss, data.target, groups.index)
    gnorm = float(np.linalg.norm(_gradient(predicted, jac, groups, data, options.loss, weights)))
    return assemble(params, static, data, value, gnorm, steps, options, groups, sens)


def time_scale(data: Benchmarks) -> float:
    """The median time at the smallest GPU count: the scale of the ridge (`solve`)."""
    return float(np.median(data.time_s[data.gpus == data.gpus.min()]))


def _leaf(tree, model, name) -> float:
    return float(model.leaf_getter(name)(tree))


def linear_sensitivities(
    form: Linear, model: AbstractScalingModel, free
) -> tuple[np.ndarray, np.ndarray]:
    """``(T̂, ∂T̂/∂θ)`` of a linear model at its form's configurations, in closed form:
    ``∂T̂/∂log θ_j = ±Φ_j·g_j`` (+ for times, − for rates), columns in the order of the
    stored parameters (`flat_names`), as `sensitivities` gives them."""
    g = form.coefficients({k: float(v) for k, v in model.parameters().items()})
    g = np.where(np.isfinite(g), g, 0.0)
    predicted = form.offset + form.design @ g
    signed = form.design * (np.where(form.inverse, -1.0, 1.0) * g)[None, :]
    order = [list(form.names).index(name) for name in flat_names(model, free)]
    return predicted, signed[:, order]


def fit_at(
    model: AbstractScalingModel,
    data: Benchmarks,
    loss: str = DEFAULTS.loss,
    weight_power: float = 0.0,
) -> FitResult:
    """A `FitResult` for `model` exactly as given, without optimising it.

    Residuals, R², MAPE and the Gauss-Newton covariance are evaluated at the model's
    parameters (a point built from other fits, such as the blend of several).
    `converged` and the message report whether that point is stationary for `loss`.
    """
    options = FitOptions.of(loss=loss, weight_power=weight_power)
    free = check_options(model, data, options, determined=False)
    weights = measurement_weights(data, weight_power)
    with jax.enable_x64(True):
        groups = reduce(data, loss, weights)
        model = as_float64(model)
        params, static = eqx.partition(model, model.raw_leaf_mask(set(free)))
        form = linear_form(model, groups.config, free)
        if form is None:
            sens = sensitivities(params, static, groups.config)
        else:
            sens = linear_sensitivities(form, model, free)
        predicted, jac = sens
        value = loss_value(predicted, data.time_s, weights, loss, data.target, groups.index)
        gnorm = float(np.linalg.norm(_gradient(predicted, jac, groups, data, loss, weights)))
        return assemble(params, static, data, value, gnorm, 0, options, groups, sens)


def evaluate(model: AbstractScalingModel, data: Benchmarks, options: FitOptions) -> FitResult:
    """The `FitResult` of `model` with every parameter fixed by `options` (nothing to
    fit: the model is evaluated as given)."""
    weights = measurement_weights(data, options.weight_power)
    with jax.enable_x64(True):
        groups = reduce(data, options.loss, weights)
        model = as_float64(model).with_parameters(options.fix)
        params, static = eqx.partition(model, model.raw_leaf_mask(set()))
        predicted = np.asarray(model(groups.config), dtype=np.float64)
        sens = (predicted, np.zeros((predicted.size, 0)))
        value = loss_value(predicted, data.time_s, weights, options.loss, data.target, groups.index)
        return assemble(params, static, data, value, 0.0, 0, options, groups, sens)


def _gradient(predicted, jac, groups: Groups, data, kind, weights) -> np.ndarray:
    """∂objective/∂θ (stored parameters) from the sensitivities at the groups, with the
    objective's normalisation by the total weight of the measurements."""
    t = groups.time_s
    if kind == "relative":
        slope = 2.0 * (predicted / t - 1.0) / t
    elif kind == "squared":
        measured = 1.0 / data.time_s if data.target == "throughput" else data.time_s
        mean = float(np.sum(weights * measured) / np.sum(weights))
        if data.target == "throughput":
            slope = -2.0 * (1.0 / predicted - 1.0 / t) / (predicted**2 * mean**2)
        else:
            slope = 2.0 * (predicted - t) / mean**2
    elif kind == "huber":
        r = np.log(predicted) - np.log(t)
        slope = np.clip(r, -HUBER_DELTA, HUBER_DELTA) / predicted
    else:
        slope = 2.0 * (np.log(predicted) - np.log(t)) / predicted
    return (groups.weights * slope) @ jac / float(np.sum(weights))


def exact_refits(models, data: Benchmarks, free, options: FitOptions, fold_weights):
    """Exact fits of each linear model under each row of `fold_weights` (0 drops a
    measurement): ``(predicted, values)``, predictions at the distinct configurations
    ``(models, folds, g)`` (rows of `Benchmarks.distinct`; index them with its second
    array for every measurement's) and the losses on the kept measurements
    ``(models, folds)``; or None when a model is not linear (call inside x64)."""
    if options.loss == "huber":
        return None
    base = measurement_weights(data, options.weight_power)
    groups_all = reduce(data, "log")
    predicted = np.empty((len(models), len(fold_weights), groups_all.size))
    values = np.empty((len(models), len(fold_weights)))
    forms = []
    for model in models:
        form = linear_form(as_float64(model).with_parameters(options.fix), groups_all.config, free)
        if form is None:
            return None
        forms.append(form)
    scale = time_scale(data)
    for f, row in enumerate(fold_weights):
        weights = base * row
        keep = weights > 0
        index, time_s, w = groups_all.index[keep], data.time_s[keep], weights[keep]
        groups = reduce(data, options.loss, weights)
        used = groups.weights > 0
        for m, form in enumerate(forms):
            sub = dataclasses.replace(form, design=form.design[used], offset=form.offset[used])
            g, _ = solve(
                sub,
                groups.time_s[used],
                groups.weights[used],
                options.loss,
                data.target,
                scale=scale,
            )
            at_groups = (form.offset + form.design @ g)[: groups_all.size]
            predicted[m, f] = at_groups
            values[m, f] = loss_value(at_groups, time_s, w, options.loss, data.target, index)
    return predicted, values
