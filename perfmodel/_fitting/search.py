"""Fits of one model structure under many weights at once, in one compiled `vmap`.

Used for the PMNF hypothesis search (`fit_pmnf`: every hypothesis is an array leaf of
one structure) and for leave-one-GPU-count-out cross-validation (every fold is a row of
weights, 0 on the held-out count), so neither recompiles per hypothesis or fold.
"""

import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._data import Benchmarks
from .._errors import InputError
from .._model import ScalingModel
from .._terms.empirical import formula, hypotheses_of, pmnf, with_exponents
from .fit import (
    _check_options,
    _raw_bounds,
    _result,
    _start_values,
    as_float64,
    FitResult,
    objective,
)
from .optimise import multistart_adam, project, refine_lbfgs

SEARCH_STARTS = 16  # starts per PMNF hypothesis: two positive coefficients need few
FIT_DEFAULTS = dict(
    loss="log", fix=None, bounds=None, n_starts=64, adam_steps=600, lbfgs_steps=500, seed=0
)


@eqx.filter_jit
def _batched_adam(starts, statics, weights, lower, upper, config, time_s, kind, target, steps):
    """Multi-start Adam for each row of `statics` and `weights`, in one `vmap`.

    Returns the best end point of each row and its weighted loss. (No L-BFGS polish:
    ranking hypotheses and scoring folds need no more digits, and a `vmap`ped line
    search takes seconds to compile.)
    """

    def one(start, static, w):
        args = (static, config, time_s, w, kind, target)
        ends, values = multistart_adam(objective, start, lower, upper, steps, args)
        best = jnp.argmin(values)
        return jax.tree_util.tree_map(lambda x: x[best], ends), values[best]

    return jax.vmap(one)(starts, statics, weights)


def _term_scale(model: ScalingModel, data: Benchmarks) -> float:
    # `fit` draws starts of a time around the data's work per GPU; N^i·log2(N)^j moves
    # the PMNF coefficient away from that by orders of magnitude for large |i|.
    term = model.terms[1]
    n = data.gpus
    size = n ** float(term.exponent) * np.log2(n) ** float(term.log_exponent)
    typical = float(np.median(size[size > 0])) if np.any(size > 0) else 1.0
    return 1.0 / (float(np.median(n)) * typical)


def weighted_fits(
    models: list[ScalingModel],
    data: Benchmarks,
    weights: np.ndarray,
    *,
    free: list[str],
    loss: str,
    fix: dict[str, float],
    bounds: dict,
    n_starts: int,
    adam_steps: int,
    seed: int,
    **_,
):
    """Fit each of `models` (one structure, different array leaves) to `data` under each
    row of `weights` (weight 0 drops a measurement), all in one compiled `vmap`.

    Call inside ``jax.enable_x64(True)``.

    Returns:
        ``(fitted, values)``: the fitted models stacked on a leading axis of size
        ``len(models)·len(weights)`` (model-major) and their losses.
    """
    models = [as_float64(m).with_parameters(fix) for m in models]
    mask = models[0].raw_leaf_mask(set(free))
    lower, upper = _raw_bounds(models[0], free, bounds)
    starts, statics = [], []
    for index, model in enumerate(models):
        values = _start_values(model, free, data, n_starts, seed + index)
        if model.family == "pmnf" and "scaling.time" in values:
            values["scaling.time"] = values["scaling.time"] * _term_scale(model, data)
        start, _ = eqx.partition(model.with_parameters(values), mask)
        _, static = eqx.partition(model, mask)
        starts += [project(start, lower, upper)] * len(weights)
        statics += [static] * len(weights)

    def stack(trees):
        return jax.tree_util.tree_map(lambda *x: jnp.stack(x), *trees)

    params, values = _batched_adam(
        stack(starts),
        stack(statics),
        jnp.asarray(np.tile(weights, (len(models), 1)), dtype=jnp.float64),
        lower,
        upper,
        data.to_config(),
        jnp.asarray(data.time_s),
        loss,
        data.target,
        adam_steps,
    )
    return eqx.combine(params, stack(statics)), np.asarray(values)


def folds(data: Benchmarks) -> tuple[np.ndarray, list[np.ndarray]]:
    """Leave-one-GPU-count-out: a weight row per distinct count with its rows at 0, and
    the held-out mask of each."""
    held = [data.gpus == n for n in np.unique(data.gpus)]
    return np.array([~h for h in held], dtype=float), held


def held_out_errors(fitted, data: Benchmarks, held: list[np.ndarray]) -> np.ndarray:
    """Squared log errors of fold fits on their held-out rows: ``(models, rows)``, each
    row ordered fold by fold (`fitted` stacks ``len(held)`` folds per model)."""
    predicted = np.asarray(jax.vmap(lambda m: m(data.to_config()))(fitted))
    errors = np.log(predicted / data.time_s) ** 2
    k = len(held)
    return np.array(
        [
            np.concatenate([row[h] for row, h in zip(errors[s : s + k], held)])
            for s in range(0, len(errors), k)
        ]
    )


def fit_options_with_defaults(fit_options: dict) -> dict:
    """`fit`'s keyword arguments with its defaults filled in (a TypeError for others)."""
    unknown = set(fit_options) - set(FIT_DEFAULTS)
    if unknown:
        raise TypeError(f"unexpected fit options: {', '.join(sorted(unknown))}")
    options = {**FIT_DEFAULTS, **fit_options}
    options["fix"], options["bounds"] = dict(options["fix"] or {}), dict(options["bounds"] or {})
    return options


def fit_pmnf(
    model: ScalingModel,
    data: Benchmarks,
    *,
    criterion: str = "loss",
    **fit_options,
) -> FitResult:
    """Search the PMNF hypotheses left open in `model` and fit the best.

    Every hypothesis is fitted at once. ``criterion="loo"`` keeps the one with the
    smallest leave-one-GPU-count-out error (Extra-P's cross-validation); otherwise the
    smallest loss (all hypotheses have the same parameter count, so AICc and BIC rank
    them by loss too). `fit` calls this for a `pmnf` model left unsearched.
    """
    options = fit_options_with_defaults(fit_options)
    free = _check_options(model, data, options["loss"], options["fix"], options["bounds"])
    pairs = hypotheses_of(model)
    models = [with_exponents(model, i, j) for i, j in pairs]
    search = options | dict(free=free, n_starts=min(options["n_starts"], SEARCH_STARTS))
    with jax.enable_x64(True):
        fitted, values = weighted_fits(models, data, np.ones((1, len(data.gpus))), **search)
        score, how = values, "loss"
        if criterion == "loo" and len(np.unique(data.gpus)) - 1 >= len(free):
            weights, held = folds(data)
            fold_fits, _ = weighted_fits(models, data, weights, **search)
            score = held_out_errors(fold_fits, data, held).mean(axis=1)
            how = "leave-one-out error"
        score = np.where(np.isfinite(score) & np.isfinite(values), score, np.inf)
        best = int(np.argmin(score))
        if not np.isfinite(score[best]):
            raise InputError(f"{data.source}: every pmnf hypothesis gave a non-finite loss")
        i, j = pairs[best]
        # Polish the chosen hypothesis with L-BFGS in the search's structure (compiled
        # once for all hypotheses), then give it its own exponents as options.
        chosen = as_float64(jax.tree_util.tree_map(lambda x: x[best], fitted))
        mask = chosen.raw_leaf_mask(set(free))
        start, static = eqx.partition(chosen, mask)
        lower, upper = _raw_bounds(chosen, free, options["bounds"])
        args = (static, data.to_config(), jnp.asarray(data.time_s), jnp.ones(len(data.gpus)))
        args = (*args, options["loss"], data.target)
        params, value, gnorm, iterations = refine_lbfgs(
            objective, start, lower, upper, options["lbfgs_steps"], args
        )
        if not float(value) <= float(values[best]):
            params, value = start, values[best]
        polished = eqx.combine(params, static)
        final = as_float64(pmnf(i, j).with_parameters(polished.parameters()))
        params, static = eqx.partition(final, final.raw_leaf_mask(set(free)))
        result = _result(
            params,
            static,
            data,
            options["loss"],
            float(value),
            float(gnorm),
            options["adam_steps"] + int(iterations),
            options["fix"],
            options["bounds"],
        )
    note = f"{formula(i, j)}, best of {len(pairs)} hypotheses by {how}"
    return dataclasses.replace(result, message=f"{note}; {result.message}")
