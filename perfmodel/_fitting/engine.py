"""One fit of one model, the path chosen by the model: exact when it is linear in its
parameters (`exact`), multi-start Adam then L-BFGS otherwise (compiled Optax loops, or
stepwise for the families of `STEPWISE_FAMILIES`)."""

import jax.numpy as jnp

from .._data import Benchmarks
from .._errors import FitError, InputError
from .._model import ScalingModel
from .assemble import assemble, sensitivities
from .exact import fit_exact
from .groups import Groups, measurement_weights, reduce
from .loss import loss_value, objective
from .optimise import minimise, minimise_stepwise
from .problem import FitOptions, setup
from .result import FitResult

# Families whose graph is too large to inline into the optimisers' loops: the hybrid
# model's gradient, four times over in L-BFGS's line search, took 15–20 s to compile.
STEPWISE_FAMILIES = frozenset({"hybrid"})


def fit_prepared(model: ScalingModel, data: Benchmarks, free, options: FitOptions) -> FitResult:
    """`fit` after its checks: `free` are the free parameters (call inside x64)."""
    weights = measurement_weights(data, options.weight_power)
    groups = reduce(data, options.loss, weights)
    if options.method != "optax":
        result = fit_exact(model, data, free, options, groups, weights)
        if result is not None:
            return result
        if options.method == "exact":
            raise InputError(
                f"model {model.family!r} is not linear in its free parameters (or the "
                "loss is huber, or a bound is finite), so it has no exact fit; use "
                "method='optax'"
            )
    return fit_optax(model, data, free, options, groups, weights)


def fit_optax(model, data, free, options, groups: Groups, weights) -> FitResult:
    """Multi-start Adam from starts around the data's scale, then L-BFGS from the best."""
    ready = setup(model, data, free, options)
    args = (ready.static, groups.config, jnp.asarray(groups.time_s), jnp.asarray(groups.weights))
    args = (*args, options.loss, data.target)
    search = minimise_stepwise if model.family in STEPWISE_FAMILIES else minimise
    found = search(
        objective,
        ready.starts,
        ready.lower,
        ready.upper,
        options.adam_steps,
        options.lbfgs_steps,
        args,
    )
    if found is None:
        raise FitError(f"{data.source}: every start gave a non-finite loss")
    params, _, gnorm, steps = found
    sens = sensitivities(params, ready.static, groups.config)
    value = loss_value(sens[0], data.time_s, weights, options.loss, data.target, groups.index)
    return assemble(params, ready.static, data, value, gnorm, steps, options, groups, sens)
