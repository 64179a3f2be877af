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
from .._errors import FitError
from .._model import ScalingModel
from .._presets import pmnf
from .._terms import formula, hypotheses_of, PowerLogTerm, with_exponents
from .engine import fit_prepared
from .exact import exact_refits
from .loss import objective
from .optimise import multistart_adam
from .problem import check_options, FitOptions, setup
from .result import FitResult

SEARCH_STARTS = 16  # starts per PMNF hypothesis: two positive coefficients need few


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


def _power_log_scale(model: ScalingModel, data: Benchmarks) -> tuple[str, float] | None:
    """``(parameter, factor)`` for a `PowerLogTerm`'s coefficient: starts of a time are
    drawn around the data's work per GPU, and N^i·log2(N)^j moves the coefficient away
    from that by orders of magnitude for large |i|."""
    for term in model.terms:
        if isinstance(term, PowerLogTerm):
            n = data.gpus
            size = n ** float(term.exponent) * np.log2(n) ** float(term.log_exponent)
            typical = float(np.median(size[size > 0])) if np.any(size > 0) else 1.0
            return f"{term.name}.time", 1.0 / (float(np.median(n)) * typical)
    return None


def weighted_fits(
    models: list[ScalingModel],
    data: Benchmarks,
    weights: np.ndarray,
    free: list[str],
    options: FitOptions,
):
    """Fit each of `models` (one structure, different array leaves) to `data` under each
    row of `weights` (weight 0 drops a measurement), all in one compiled `vmap`.

    Call inside ``jax.enable_x64(True)``.

    Returns:
        ``(fitted, values)``: the fitted models stacked on a leading axis of size
        ``len(models)·len(weights)`` (model-major) and their losses.
    """
    starts, statics = [], []
    for index, model in enumerate(models):
        scale = _power_log_scale(model, data)
        ready = setup(model, data, free, options.replace(seed=options.seed + index))
        start = ready.starts
        if scale is not None and scale[0] in free:
            # Shift the coefficient's starts by the term's typical size (in log space).
            getter = ready.model.leaf_getter(scale[0])
            start = eqx.tree_at(getter, start, getter(start) + np.log(scale[1]))
            start = jax.tree_util.tree_map(jnp.clip, start, ready.lower, ready.upper)
        starts += [start] * len(weights)
        statics += [ready.static] * len(weights)

    def stack(trees):
        return jax.tree_util.tree_map(lambda *x: jnp.stack(x), *trees)

    params, values = _batched_adam(
        stack(starts),
        stack(statics),
        jnp.asarray(np.tile(weights, (len(models), 1)), dtype=jnp.float64),
        ready.lower,
        ready.upper,
        data.to_config(),
        jnp.asarray(data.time_s),
        options.loss,
        data.target,
        options.adam_steps,
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


def fit_pmnf(
    model: ScalingModel,
    data: Benchmarks,
    *,
    criterion: str = "loss",
    options: FitOptions | None = None,
    **fit_options,
) -> FitResult:
    """Search the PMNF hypotheses left open in `model` and fit the best.

    Every hypothesis is fitted, exactly (each is linear in its two coefficients) or, for
    the Huber loss or with bounds, all at once by Adam in one `vmap`.
    ``criterion="loo"`` keeps the one with the smallest leave-one-GPU-count-out error
    (Extra-P's cross-validation); otherwise the smallest loss (all hypotheses have the
    same parameter count, so AICc and BIC rank them by loss too). `fit` calls this for a
    model whose exponents are left open.
    """
    options = options or FitOptions.of(**fit_options)
    free = check_options(model, data, options)
    pairs = hypotheses_of(model)
    models = [with_exponents(model, i, j) for i, j in pairs]
    loo = criterion == "loo" and len(np.unique(data.gpus)) - 1 >= len(free)
    with jax.enable_x64(True):
        score, values = _scores(models, data, free, options, loo)
        score = np.where(np.isfinite(score) & np.isfinite(values), score, np.inf)
        best = int(np.argmin(score))
        if not np.isfinite(score[best]):
            raise FitError(f"{data.source}: every pmnf hypothesis gave a non-finite loss")
        i, j = pairs[best]
        chosen = pmnf(i, j)
        result = fit_prepared(chosen, data, free, options)
    how = "leave-one-out error" if loo else "loss"
    note = f"{formula(i, j)}, best of {len(pairs)} hypotheses by {how}"
    return dataclasses.replace(result, message=f"{note}; {result.message}")


def _scores(models, data, free, options, loo: bool):
    """``(score, loss)`` of every hypothesis: the score is the loss, or the mean squared
    log error on the held-out counts with `loo`."""
    exact = options.method != "optax" and not any(
        lo is not None or hi is not None for lo, hi in options.bounds.values()
    )
    found = exact_refits(models, data, free, options, np.ones((1, data.gpus.size)))
    if exact and found is not None:
        values = found[1][:, 0]
        if not loo:
            return values, values
        weights, held = folds(data)
        predicted, _ = exact_refits(models, data, free, options, weights)
        errors = np.log(predicted[..., data.distinct()[1]] / data.time_s) ** 2
        score = np.array([np.mean(np.concatenate([e[h] for e, h in zip(m, held)])) for m in errors])
        return score, values
    search = options.replace(n_starts=min(options.n_starts, SEARCH_STARTS))
    fitted, values = weighted_fits(models, data, np.ones((1, len(data.gpus))), free, search)
    if not loo:
        return values, values
    weights, held = folds(data)
    fold_fits, _ = weighted_fits(models, data, weights, free, search)
    return held_out_errors(fold_fits, data, held).mean(axis=1), values
