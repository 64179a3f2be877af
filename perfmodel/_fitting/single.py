"""Fitting a ScalingModel to benchmarks with Optax: multi-start Adam, then L-BFGS.

Every fit runs in float64: relative errors of a few percent on times that span decades
need more than float32's 7 digits once squared and summed.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import optax

from .._data import Benchmarks
from .._errors import FitError
from .._model import ScalingModel
from .._presets import build
from .._terms import is_searched
from .loss import objective
from .optimise import minimise
from .problem import as_float64, assemble, check_options, DEFAULTS, FitOptions, setup
from .result import FitResult
from .search import fit_pmnf


def fit(
    model: ScalingModel | str,
    data: Benchmarks,
    *,
    loss: str = DEFAULTS.loss,
    fix: dict[str, float] | None = None,
    bounds: dict[str, tuple[float | None, float | None]] | None = None,
    n_starts: int = DEFAULTS.n_starts,
    adam_steps: int = DEFAULTS.adam_steps,
    lbfgs_steps: int = DEFAULTS.lbfgs_steps,
    seed: int = DEFAULTS.seed,
) -> FitResult:
    """Fit `model` (a `ScalingModel` or a family name) to `data`.

    Many starting points, drawn log-uniformly over decades around the data's scale, run
    through Adam together under `vmap`; the best one is refined with L-BFGS. A model
    with a `PowerLogTerm` whose exponents are left open searches them (`fit_pmnf`).

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
        FitError: every start gave a non-finite loss.
    """
    options = FitOptions.of(
        loss=loss,
        fix=fix,
        bounds=bounds,
        n_starts=n_starts,
        adam_steps=adam_steps,
        lbfgs_steps=lbfgs_steps,
        seed=seed,
    )
    if isinstance(model, str):
        model = build(model)
    if is_searched(model):
        return fit_pmnf(model, data, options=options)
    free = check_options(model, data, options)
    if not free:  # every parameter fixed: nothing to fit, the model is evaluated as given
        return _evaluate(model, data, options)
    with jax.enable_x64(True):
        ready = setup(model, data, free, options)
        time_s = jnp.asarray(data.time_s)
        args = (ready.static, data.to_config(), time_s, jnp.ones_like(time_s))
        args = (*args, options.loss, data.target)
        found = minimise(
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
        params, value, gnorm, steps = found
        return assemble(params, ready.static, data, value, gnorm, steps, options)


def _evaluate(model: ScalingModel, data: Benchmarks, options: FitOptions) -> FitResult:
    """The `FitResult` of `model` with every parameter fixed by `options` (no optimiser)."""
    with jax.enable_x64(True):
        model = as_float64(model).with_parameters(options.fix)
        params, static = eqx.partition(model, model.raw_leaf_mask(set()))
        time_s = jnp.asarray(data.time_s)
        args = (static, data.to_config(), time_s, jnp.ones_like(time_s), options.loss, data.target)
        value = float(objective(params, *args))
        return assemble(params, static, data, value, 0.0, 0, options)


def fit_at(model: ScalingModel, data: Benchmarks, loss: str = DEFAULTS.loss) -> FitResult:
    """A `FitResult` for `model` exactly as given, without optimising it.

    Residuals, R², MAPE and the Gauss-Newton covariance are evaluated at the model's
    parameters (a point built from other fits, such as an average of two of them).
    `converged` and the message report whether that point is stationary for `loss`.
    """
    options = FitOptions.of(loss=loss)
    free = check_options(model, data, options)
    with jax.enable_x64(True):
        model = as_float64(model)
        params, static = eqx.partition(model, model.raw_leaf_mask(set(free)))
        time_s = jnp.asarray(data.time_s)
        args = (static, data.to_config(), time_s, jnp.ones_like(time_s), loss, data.target)
        value, gradient = jax.value_and_grad(objective)(params, *args)
        gnorm = optax.tree_utils.tree_norm(gradient)
        return assemble(params, static, data, float(value), float(gnorm), 0, options)
