"""Choosing among model families: fit every one the data can determine, rank them."""

import dataclasses
import math

import numpy as np

from ._data import Benchmarks
from ._errors import InputError
from ._fit import fit, FitResult
from ._model import ScalingModel
from ._presets import amdahl, data_parallel, usl

CRITERIA = ("aicc", "bic", "loo")


@dataclasses.dataclass(frozen=True)
class Candidate:
    """One family tried by `fit_auto`.

    Attributes:
        family: the family name.
        parameters: number of free parameters k.
        fit: its fit, or None when skipped.
        score: the criterion's value (lower is better), or inf when skipped.
        reason: why it was skipped, or an empty string.
    """

    family: str
    parameters: int
    fit: FitResult | None
    score: float
    reason: str = ""


@dataclasses.dataclass(frozen=True)
class Selection:
    """The chosen fit and every candidate, best first."""

    best: FitResult
    criterion: str
    candidates: tuple[Candidate, ...]


def candidate_models(data: Benchmarks, *, weak: bool = False) -> list[ScalingModel]:
    """The families worth trying on `data`, most capable first.

    The data-parallel family gets the node boundary when `gpus_per_node` is known and
    the measurements cross it; without it (or a varying message size) its all-reduce
    has the shape of the USL's terms and cannot be told apart from them.
    """
    models = []
    per_node = data.config.get("gpus_per_node")
    crosses_nodes = per_node is not None and bool(np.any(data.gpus > per_node))
    varying_message = len(np.unique(data.config.get("message_bytes", [1.0]))) > 1
    if crosses_nodes:
        models.append(data_parallel(weak=weak, hierarchical=True))
    elif varying_message:
        models.append(data_parallel(weak=weak))
    models += [usl(weak=weak), amdahl(weak=weak)]
    return models


def information_criterion(residuals: np.ndarray, parameters: int, criterion: str) -> float:
    """AICc or BIC of a least-squares fit with Gaussian log-errors; inf when undefined.

    ``AICc = n·log(RSS/n) + 2k + 2k(k+1)/(n−k−1)``, ``BIC = n·log(RSS/n) + k·log n``.
    """
    n = residuals.size
    rss = max(float(np.sum(residuals**2)), 1e-300)
    base = n * math.log(rss / n)
    if criterion == "bic":
        return base + parameters * math.log(n)
    if n - parameters - 1 <= 0:
        return math.inf
    return base + 2 * parameters + 2 * parameters * (parameters + 1) / (n - parameters - 1)


def leave_one_out(model: ScalingModel, data: Benchmarks, **fit_options) -> float:
    """Mean squared log error predicting each held-out GPU count from the others."""
    errors = []
    for n in np.unique(data.gpus):
        keep = data.gpus != n
        train = dataclasses.replace(
            data,
            gpus=data.gpus[keep],
            time_s=data.time_s[keep],
            config={k: v[keep] for k, v in data.config.items()},
            lines=None if data.lines is None else data.lines[keep],
        )
        result = fit(model, train, **fit_options)
        held = ~keep
        predicted = result.predict(data.gpus[held], **{k: v[held] for k, v in data.config.items()})
        errors.append(np.log(predicted["time_s"] / data.time_s[held]))
    return float(np.mean(np.concatenate(errors) ** 2))


def fit_auto(
    data: Benchmarks,
    *,
    criterion: str = "aicc",
    weak: bool = False,
    models: list[ScalingModel] | None = None,
    **fit_options,
) -> Selection:
    """Fit each candidate family and keep the best by `criterion`.

    Args:
        data: the benchmarks.
        criterion: ``"aicc"`` (default), ``"bic"`` or ``"loo"`` (leave-one-GPU-count-out
            cross-validation, in mean squared log error).
        weak: weak scaling for every family.
        models: candidates to try instead of `candidate_models(data)`.
        fit_options: passed to `fit` (loss, fix, bounds, ...).
    """
    if criterion not in CRITERIA:
        raise InputError(f"unknown criterion {criterion!r}; valid: {', '.join(CRITERIA)}")
    fixed = set(fit_options.get("fix") or ())
    distinct = data.distinct_configs()
    candidates = []
    for model in models or candidate_models(data, weak=weak):
        k = len([n for n in model.parameter_specs() if n not in fixed])
        if k > distinct:
            candidates.append(
                Candidate(
                    model.family,
                    k,
                    None,
                    math.inf,
                    f"needs {k} distinct configurations, data have {distinct}",
                )
            )
            continue
        try:
            result = fit(model, data, **fit_options)
        except InputError as error:
            candidates.append(Candidate(model.family, k, None, math.inf, str(error)))
            continue
        if criterion == "loo":
            if len(np.unique(data.gpus)) - 1 < k:
                score = math.inf
            else:
                score = leave_one_out(model, data, **fit_options)
        else:
            score = information_criterion(result.residuals, k, criterion)
        candidates.append(Candidate(model.family, k, result, score))
    fitted = [c for c in candidates if c.fit is not None]
    if not fitted:
        reasons = "; ".join(f"{c.family}: {c.reason}" for c in candidates)
        raise InputError(f"{data.source}: no model family can be fitted ({reasons})")
    # Undefined scores (too few points for the criterion) fall back to the smallest model.
    if all(math.isinf(c.score) for c in fitted):
        best = min(fitted, key=lambda c: c.parameters)
    else:
        best = min(fitted, key=lambda c: c.score)
    ordered = sorted(candidates, key=lambda c: (c.fit is None, c.score, c.parameters))
    return Selection(best.fit, criterion, tuple(ordered))
