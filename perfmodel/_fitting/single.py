"""Fitting one model to benchmarks: exactly when it is linear, else with Optax.

Every fit runs in float64: relative errors of a few percent on times that span decades
need more than float32's 7 digits once squared and summed. The measurements are first
reduced to one row per distinct configuration (`groups`), which leaves the minimiser
unchanged and makes per-step logs of 10⁶ rows as cheap as a table of ten.
"""

import dataclasses

import jax

from .._data import Benchmarks
from .._errors import InputError
from .._keywords import did_you_mean
from .._model import ScalingModel
from .._presets import build, FAMILIES, power_law
from .._terms import is_searched
from .canonical import log_log_slope
from .engine import fit_prepared
from .exact import evaluate
from .problem import check_options, data_scale, DEFAULTS, FitOptions
from .result import FitResult
from .search import fit_pmnf


def fittable_family(name: str) -> str:
    """`name` when it is a family `fit` takes, else an InputError with the families it
    takes and the closest of them: "valid: …, blend, …" listed the one name `fit`
    refuses, and "Amdahl" got no suggestion (review of 2026-12-06)."""
    if name in FAMILIES and name != "blend":
        return name
    fittable = [f for f in FAMILIES if f != "blend"]
    if name == "blend":
        raise InputError(
            "the blend is the default fit, made by fit_auto (perfmodel fit --model auto); "
            f"fit takes one of its families: {', '.join(fittable)}"
        )
    hint = did_you_mean(name.lower(), fittable)
    raise InputError(
        f"unknown model {name!r}{hint}; valid: {', '.join(fittable)}; the default blend is "
        "fit_auto's (perfmodel fit --model auto)"
    )


def _power_law_of(data: Benchmarks) -> ScalingModel:
    """The `power_law` family with its exponent fitted: the least-squares slope of log time
    on log GPUs, which with the coefficient is the exact optimum of the log loss with equal
    weights (the default; other losses and weights refit the coefficient alone). The preset
    keeps the exponent as an option (so a fit file rebuilds it), and ``--model
    power_law`` fitted the coefficient of −1 alone: "speedup 64×, efficiency 100%" of a
    table measured at 57% (fuzz round 11)."""
    return power_law(exponent=log_log_slope(data))


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
    weight_power: float = DEFAULTS.weight_power,
    method: str = DEFAULTS.method,
) -> FitResult:
    """Fit `model` (a `ScalingModel` or a family name) to `data`.

    A model linear in its parameters (every preset but `hybrid` with overlap, see
    `linear`) is fitted exactly, by non-negative least squares: no starting points, no
    compilation of an optimiser. Any other model, or the Huber loss, or finite bounds,
    goes to Optax: many starting points, drawn log-uniformly over decades around the
    data's scale, run through Adam together under `vmap`; the best one is refined with
    L-BFGS. A model with a `PowerLogTerm` whose exponents are left open searches them
    (`fit_pmnf`).

    Args:
        model: the model or preset family to fit.
        data: validated benchmarks (`load_benchmarks`).
        loss: ``"log"`` (mean squared log error, the default), ``"squared"`` (least
            squares on the measured quantity), ``"relative"`` (squared relative error)
            or ``"huber"`` (log errors, robust to outliers).
        fix: parameters held at given physical values, e.g. ``{"allreduce.bandwidth":
            50e9}``.
        bounds: ``(lo, hi)`` in physical units per parameter; None leaves a side open.
        n_starts: starting points for the multi-start phase (Optax only).
        adam_steps: Adam steps per start (Optax only).
        lbfgs_steps: maximum L-BFGS iterations of the refinement (Optax only).
        seed: seed of the starting points.
        weight_power: weights ``(N/max N)^weight_power`` on the measurements.
        method: ``"auto"``, ``"exact"`` (an InputError when the model is not linear)
            or ``"optax"``.

    Raises:
        InputError: unknown loss, method or parameter names, or too few distinct
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
        weight_power=weight_power,
        method=method,
    )
    if model == "power_law":
        result = fit(
            _power_law_of(data), data, loss=loss, fix=fix, bounds=bounds, n_starts=n_starts,
            adam_steps=adam_steps, lbfgs_steps=lbfgs_steps, seed=seed,
            weight_power=weight_power, method=method,
        )  # fmt: skip
        exponent = float(result.model.terms[0].exponent)
        held = (
            f"power_law: exponent {exponent:.4g} fitted by least squares in log-log and held "
            "as the family's option, so no interval counts its uncertainty (the speedup's "
            "is 0 wide inside the measured counts); the default fit's power-law members do"
        )
        return dataclasses.replace(result, warnings=(*result.warnings, held))
    if isinstance(model, str):
        model = build(fittable_family(model))
    if not isinstance(model, ScalingModel):
        raise InputError(
            "the blend is the default fit, made by fit_auto (perfmodel fit --model auto); "
            "choose one of its families to fit alone"
        )
    data_scale(data)  # times a fit cannot hold (subnormal ones broke the exact solver)
    if is_searched(model):
        return fit_pmnf(model, data, options=options)
    free = check_options(model, data, options)
    if not free:  # every parameter fixed: nothing to fit, the model is evaluated as given
        return evaluate(model, data, options)
    with jax.enable_x64(True):
        return fit_prepared(model, data, free, options)
