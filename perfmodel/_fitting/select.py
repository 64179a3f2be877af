"""Choosing among model families: fit every one the data can determine, rank them."""

import dataclasses
import math

import jax
import numpy as np

from .._data import Benchmarks
from .._errors import FitError, InputError
from .._model import ScalingModel
from .._presets import (
    amdahl,
    batch_linear,
    build,
    data_parallel,
    pmnf,
    usl,
    weak_data_parallel,
)
from .._terms import hypotheses_of, is_searched, with_exponents
from .blend import BLEND_FAMILY, DESCRIPTION, fit_blend
from .canonical import batches_at_one_count, per_unit_of_work
from .describe import undetermined
from .exact import exact_refits
from .problem import check_options, data_scale, FitOptions
from .result import FitResult
from .search import fit_pmnf, folds, held_out_errors, SEARCH_STARTS, weighted_fits
from .single import fit

CRITERIA = ("bic", "aicc", "loo")
DEFAULT_CRITERION = "bic"
# How much lower another family's score must be to replace the preferred one.
MARGIN = {"bic": 2.0, "aicc": 2.0, "loo": 0.0}
# Where the blend misses its own measurements by more than BLEND_MISS_PERCENT (MAPE) and
# BLEND_MISS_RATIO times the closest single family, the fit says so and names that
# family (issue #9: report how well what is returned fits the data it was given). The
# blend stays the answer: its (N/N_max)² weights trade the smallest counts for the
# largest, and answering with the closer family instead extrapolated worse on every
# series where this happens (2 shipped, 5 of `benchmarks/blind`: RESULTS.md).
BLEND_MISS_PERCENT = 10.0
BLEND_MISS_RATIO = 3.0
# Measurements that one family fits to within EXACT_MAPE_PERCENT (MAPE), at least two GPU
# counts more than it has parameters, follow that family exactly (synthetic data, or a
# model's output): the answer is that family, not the blend, whose hedge between laws is
# for measured series. No published series of the corpus comes within 10× of it (the
# closest: 0.116% over 496 training sets, `benchmarks/extrapolation_research/
# exact_family.py`), and rounding to four significant digits alone costs ~0.01%.
EXACT_MAPE_PERCENT = 0.01
EXACT_EXTRA_COUNTS = 2


@dataclasses.dataclass(frozen=True)
class Candidate:
    """One family tried by `fit_auto`.

    Attributes:
        family: the family name.
        parameters: number of free parameters k (a searched `pmnf` counts its exponent
            pair as one more).
        fit: its fit, or None when skipped.
        score: the criterion's value (lower is better), or inf when skipped.
        reason: why it was skipped, or a note on the fit (the PMNF hypothesis chosen).
    """

    family: str
    parameters: int
    fit: FitResult | None
    score: float
    reason: str = ""

    def __repr__(self) -> str:
        score = f"score {self.score:.4g}" if math.isfinite(self.score) else self.reason
        return f"<Candidate: {self.family}, {self.parameters} parameters, {score}>"


@dataclasses.dataclass(frozen=True)
class Selection:
    """The chosen fit and every candidate, best first."""

    best: FitResult
    criterion: str
    candidates: tuple[Candidate, ...]

    def __repr__(self) -> str:
        from .describe import selection_repr

        return selection_repr(self)

    def table(self, width: int | None = 100) -> str:
        """The candidates table `perfmodel fit` prints, with its title."""
        from .describe import selection_summary

        blended = self.candidates[0].family == BLEND_FAMILY
        return selection_summary(self, blended, MARGIN[self.criterion], width)

    def summary(self, width: int | None = 100) -> str:
        """The chosen fit's summary, then the candidates table."""
        return f"{self.best.summary(width)}\n\n{self.table(width)}"

    def rows(self) -> list[dict]:
        """One row per candidate: family, parameters, score under the criterion (or why
        it has none), MAPE in percent, whether it was chosen, and a note."""
        out = []
        for c in self.candidates:
            if math.isfinite(c.score):
                score = c.score
            else:
                score = "—" if c.family == BLEND_FAMILY else "undefined"
            note = c.reason
            if not note and c.fit is not None and not math.isfinite(c.score):
                note = "too few points for the criterion"
            out.append(
                {
                    "family": c.family,
                    "parameters": c.parameters,
                    self.criterion: score,
                    "mape_percent": None if c.fit is None else c.fit.mape,
                    "chosen": c.fit is self.best,
                    "note": note,
                }
            )
        return out


def candidate_models(data: Benchmarks, *, weak: bool = False) -> list[ScalingModel]:
    """The single families worth trying on `data` (seconds per unit of work), the
    preferred one first.

    `fit_auto` keeps the first family unless the criterion favours another clearly. When
    each GPU keeps its batch (throughput, step times of a fixed per-GPU batch, or weak
    scaling stated) it is `weak_data_parallel`, which has Amdahl's law as a special case
    and extrapolates published data-parallel tables best of the single families
    (`benchmarks/accuracy.py`); for times of a fixed amount of work it is Amdahl's law.
    `weak_hierarchical` is not offered: its per-GPU throughput levels off and never
    falls again, so on throughput that keeps falling across nodes it can fit nearly as
    well yet extrapolates far too high (the
    default blend uses it where the counts straddle the node). The data-parallel family
    gets the node boundary when `gpus_per_node` is known and the measurements cross it;
    without it (or a varying message size) its all-reduce has the shape of the USL's
    terms and cannot be told apart from them. The PMNF family (its exponents searched)
    covers weak and strong scaling alike. `weak` builds the families' weak-scaling
    variants (a compute time per GPU that stays constant), for data left as step times.
    """
    per_gpu_batch = data.target == "throughput" or data.per_gpu or data.scaling == "weak"
    models = [weak_data_parallel()] if per_gpu_batch and not weak else []
    models += [amdahl(weak=weak), usl(weak=weak), pmnf()]
    per_node = data.config.get("gpus_per_node")
    crosses_nodes = per_node is not None and bool(np.any(data.gpus > per_node))
    varying_message = len(np.unique(data.config.get("message_bytes", [1.0]))) > 1
    if crosses_nodes:
        models.append(data_parallel(weak=weak, hierarchical=True))
    elif varying_message:
        models.append(data_parallel(weak=weak))
    return models


def information_criterion(residuals: np.ndarray, parameters: int, criterion: str) -> float:
    """AICc or BIC of a least-squares fit with Gaussian log-errors; inf when undefined.

    ``AICc = n·log(RSS/n) + 2k + 2k(k+1)/(n−k−1)`` (undefined for n ≤ k + 1) and
    ``BIC = n·log(RSS/n) + k·log n`` (undefined for n ≤ k, where the fit interpolates).
    """
    n = residuals.size
    rss = max(float(np.sum(residuals**2)), 1e-300)
    base = n * math.log(rss / n)
    if criterion == "bic":
        return base + parameters * math.log(n) if n > parameters else math.inf
    if n - parameters - 1 <= 0:
        return math.inf
    return base + 2 * parameters + 2 * parameters * (parameters + 1) / (n - parameters - 1)


def leave_one_out(model: ScalingModel, data: Benchmarks, **fit_options) -> float:
    """Mean squared log error predicting each held-out GPU count from the others.

    Every fold is fitted exactly when the model is linear, else in one `vmap` (weights 0
    on the held-out count). For a `pmnf`
    model whose exponents are searched, each fold runs its own search (the hypothesis
    with the smallest loss on that fold), so the score includes the search's freedom.
    """
    options = FitOptions.of(**fit_options)
    free = check_options(model, data, options)
    if len(np.unique(data.gpus)) - 1 < len(free):
        return math.inf
    weights, held = folds(data)
    searched = is_searched(model)
    if searched:
        pairs = hypotheses_of(model)
        models = [with_exponents(model, i, j) for i, j in pairs]
        options = options.replace(n_starts=min(options.n_starts, SEARCH_STARTS))
    else:
        models = [model]
    with jax.enable_x64(True):
        found = None
        if options.method != "optax" and not options.bounds:
            found = exact_refits(models, data, free, options, weights)
        if found is not None:
            predicted, values = found
            # (models, folds, rows)
            squared = np.log(predicted[..., data.distinct()[1]] / data.time_s) ** 2
            errors = np.array([np.concatenate([e[h] for e, h in zip(m, held)]) for m in squared])
            values = values.reshape(-1)
        else:
            fitted, values = weighted_fits(models, data, weights, free, options)
            errors = held_out_errors(fitted, data, held)
    if searched:
        # Per fold, the hypothesis with the smallest loss on the fold's own data.
        values = values.reshape(len(models), len(held))
        best = np.argmin(np.where(np.isfinite(values), values, np.inf), axis=0)
        sizes = [int(h.sum()) for h in held]
        bounds = np.cumsum([0, *sizes])
        chosen = [errors[b, bounds[f] : bounds[f + 1]] for f, b in enumerate(best)]
        return float(np.mean(np.concatenate(chosen)))
    return float(np.mean(errors[0]))


# Choosing the family ----------------------------------------------------------------


def fit_auto(
    data: Benchmarks,
    *,
    criterion: str = DEFAULT_CRITERION,
    weak: bool = False,
    strong: bool = False,
    models: list[ScalingModel | str] | None = None,
    average: bool | None = None,
    **fit_options,
) -> Selection:
    """The default fit: the blend of fitted families (`fit_blend`, a `Blend`), and every
    single family the data can determine beside it, ranked by `criterion`.

    The measurements are first read as seconds per unit of work
    (`per_unit_of_work`: throughput, seconds per unit, or step times of a fixed global
    batch as they are; step times of a fixed per-GPU batch divided by the GPU count), so
    the same measurements give the same answer whatever column they came in; the fit
    says what it assumed (`FitResult.assumed`). Runs that differ in ``global_batch`` at
    one GPU count are fitted with `batch_linear` alone, which reads the batch.

    Among the single families the first candidate is preferred: another replaces it
    only when its score is lower by more than `MARGIN` (AICc, BIC: 2, "positive
    evidence"; LOO: any amount), and it stays when the data are too few to score it. A
    searched `pmnf` counts its exponent pair as one more parameter in AICc and BIC.

    Args:
        data: the benchmarks.
        criterion: ``"bic"`` (default), ``"aicc"`` or ``"loo"`` (leave-one-GPU-count-out
            cross-validation, in mean squared log error).
        weak: state that the per-GPU batch is fixed (weak scaling), for time data whose
            `scaling` the CSV does not say.
        strong: state that every run shared one global batch (strong scaling), as
            ``--strong-scaling`` does; unstated step times are weighed as weak scaling,
            and the answer can move several-fold (docs/your-own-csv.md).
        models: candidates to try instead of `candidate_models(data)`, preferred first:
            models or family names (``["usl", "amdahl"]``).
        average: return the blend (listed first among the candidates) when no loss is
            given and nothing is fixed or bounded; False returns the single family the
            criterion prefers. Default: True, but False when `models` is given (the
            answer is then one of the candidates asked for).
        fit_options: passed to `fit` (loss, fix, bounds, ...).
    """
    if criterion not in CRITERIA:
        raise InputError(f"unknown criterion {criterion!r}; valid: {', '.join(CRITERIA)}")
    if average is None:
        average = models is None
    if weak and strong:
        raise InputError("{arg:weak} and {arg:strong} contradict each other; give one")
    for stated, scaling in ((weak, "weak"), (strong, "strong")):
        if stated and data.scaling not in (None, scaling):
            raise InputError(
                f"{data.source}: {{arg:{scaling}}} contradicts the data, whose batch columns "
                f"say {data.scaling} scaling (global_batch or batch_per_gpu); drop one"
            )
        if stated:
            data = dataclasses.replace(data, scaling=scaling)
    if models is None and average and batches_at_one_count(data) is not None:
        return _batch_linear_default(data, criterion, fit_options)
    data, assumed = per_unit_of_work(data)
    data_scale(data)  # times too small or large for float64: refused once, not per family
    loss_given = fit_options.get("loss") is not None
    fit_options = {**fit_options, "loss": fit_options.get("loss") or "log"}
    fixed = set(fit_options.get("fix") or ())
    distinct = data.distinct_configs()
    candidates = []
    for model in models or candidate_models(data):
        if isinstance(model, str):  # a family name, as `fit` takes
            model = build(model)
        if not isinstance(model, ScalingModel):  # a Blend is `average`'s, not a candidate
            kind = type(model).__name__
            raise InputError(
                "{arg:models}: expected single families (ScalingModels or names such as "
                f"'usl'), got {kind}" + ("; average=True adds it" if kind == "Blend" else "")
            )
        k = len([n for n in model.parameter_specs() if n not in fixed])
        if k > distinct:
            reason = f"needs {k} distinct configurations, data have {distinct}"
            candidates.append(Candidate(model.family, k, None, math.inf, reason))
            continue
        searched = is_searched(model)
        try:
            if searched:
                result = fit_pmnf(model, data, criterion=criterion, **fit_options)
            else:
                result = fit(model, data, **fit_options)
        except (InputError, FitError) as error:
            candidates.append(Candidate(model.family, k, None, math.inf, str(error)))
            continue
        note = ""
        if searched:
            k += 1
            note = result.message.split(";")[0] + " (+1 parameter for the search)"
        if criterion == "loo":
            score = leave_one_out(model, data, **fit_options)
        else:
            score = information_criterion(result.residuals, k, criterion)
        result = dataclasses.replace(result, assumed=assumed)
        candidates.append(Candidate(model.family, k, result, score, note))
    fitted = [c for c in candidates if c.fit is not None]
    if not fitted:
        reasons = "; ".join(f"{c.family}: {c.reason}" for c in candidates)
        raise InputError(f"{data.source}: no model family can be fitted ({reasons})")
    best = fitted[0]
    lowest = min(c.score for c in fitted)
    # Scores equal up to rounding (the same curve, e.g. pmnf with i = −1 and Amdahl)
    # go to the family with fewer parameters.
    ties = [c for c in fitted if c.score <= lowest + 1e-9 * max(1.0, abs(lowest))]
    challenger = min(ties, key=lambda c: c.parameters)
    if math.isfinite(best.score) and challenger.score < best.score - MARGIN[criterion]:
        if challenger.score < best.score - 1e-9 * max(1.0, abs(best.score)):
            best = challenger
    ordered = sorted(candidates, key=lambda c: (c.fit is None, c is not best, c.score))
    customised = fit_options.get("fix") or fit_options.get("bounds")
    counts = len(np.unique(data.gpus))
    exact = exact_family(fitted, counts) if average and not customised and not loss_given else None
    if exact is not None:
        warning = (
            f"the measurements follow {exact.family} exactly (MAPE {exact.fit.mape:.2g}% at "
            f"{counts} GPU counts, {exact.parameters} parameters): the answer is that family, "
            "not the default blend, which hedges between laws for measured series"
        )
        chosen = dataclasses.replace(
            exact, fit=dataclasses.replace(exact.fit, warnings=(*exact.fit.warnings, warning))
        )
        ordered = [chosen, *(c for c in ordered if c is not exact)]
        return Selection(chosen.fit, criterion, tuple(ordered))
    if average and not customised and not loss_given and counts >= 2:
        blended = fit_blend(data, assumed=assumed)
        k = sum(
            len(c.model.parameter_specs())
            for c in blended.components
            if c.weight or c.far or c.anchor
        )
        closer = closer_family(blended, best, fitted)
        if closer is not None:
            warning = (
                f"the default blend misses its own measurements by {blended.mape:.3g}% "
                f"(MAPE) where {closer.family} fits them within {closer.fit.mape:.3g}%: the "
                "blend weighs the largest counts, for extrapolation; for answers inside the "
                f"measured range use --model {closer.family}"
            )
            blended = dataclasses.replace(blended, warnings=(*blended.warnings, warning))
        chosen = Candidate(BLEND_FAMILY, k, blended, math.nan, DESCRIPTION)
        # The single family the criterion keeps is listed next, before lower scores
        # (the margin rule): its note says why it leads and what answers with it.
        kept = f"kept of the single families: the answer of --no-blend{'; ' if best.reason else ''}"
        ordered = [dataclasses.replace(best, reason=kept + best.reason), *ordered[1:]]
        return Selection(blended, criterion, (chosen, *ordered))
    return Selection(best.fit, criterion, tuple(ordered))


def _batch_linear_default(data: Benchmarks, criterion: str, fit_options: dict) -> Selection:
    """The default fit of runs that differ in ``global_batch`` at one GPU count (a
    ramp-up, logs of two batch sizes): `batch_linear`, ``T = a + c·B/N``, the family that
    reads the batch. The blend took the two batches for scatter: Megatron-LM logs of 8
    and 16 GPUs at batches 128 and 256 answered "Buy 2 GPUs" with R² −0.08 (newcomer
    review, 2026-12-07); batch_linear fits them with R² 0.99."""
    count, batches = batches_at_one_count(data)
    family = batch_linear()
    steps, assumed = per_unit_of_work(data, family)
    data_scale(steps)
    options = {**fit_options, "loss": fit_options.get("loss") or "log"}
    result = fit(family, steps, **options)
    shown = ", ".join(f"{b:g}" for b in batches)
    why = (
        f"the rows at {count:g} GPUs differ in global_batch ({shown}): fitted with "
        "batch_linear (T = a + c·B/N), the family that reads the batch, instead of the "
        f"default blend, which would take the difference for scatter; {assumed}"
    )
    result = dataclasses.replace(result, assumed=why)
    k = len([n for n in family.parameter_specs() if n not in set(fit_options.get("fix") or ())])
    if criterion == "loo":
        score = leave_one_out(family, steps, **options)
    else:
        score = information_criterion(result.residuals, k, criterion)
    note = "the default when rows at one GPU count differ in global_batch"
    return Selection(result, criterion, (Candidate(family.family, k, result, score, note),))


def exact_family(fitted: list[Candidate], counts: int) -> Candidate | None:
    """The single family that the measurements follow exactly, or None: its MAPE is at
    most `EXACT_MAPE_PERCENT` at `counts` distinct GPU counts, at least
    `EXACT_EXTRA_COUNTS` more than its parameters, every one of them determined (a
    constant time is followed exactly by Amdahl's law with no serial part, whose
    interval is then 0 to inf: the blend answers it); the one with fewest parameters
    (then the closest) when several do."""
    exact = [
        c
        for c in fitted
        if c.parameters + EXACT_EXTRA_COUNTS <= counts
        and np.isfinite(c.fit.mape)
        and c.fit.mape <= EXACT_MAPE_PERCENT
        and not undetermined(c.fit)  # a term the data do not show: a smaller law
    ]
    return min(exact, key=lambda c: (c.parameters, c.fit.mape), default=None)


def closer_family(blended: FitResult, best: Candidate, fitted: list[Candidate]):
    """The single family that fits the measurements far better than the blend, or None:
    the blend misses them by more than `BLEND_MISS_PERCENT` and more than
    `BLEND_MISS_RATIO` × the closest single family; the criterion's choice when it fits
    within `BLEND_MISS_PERCENT`, else the closest family."""
    singles = [c for c in fitted if np.isfinite(c.fit.mape)]
    if not singles or not np.isfinite(blended.mape):
        return None
    closest = min(singles, key=lambda c: c.fit.mape)
    if blended.mape <= max(BLEND_MISS_PERCENT, BLEND_MISS_RATIO * closest.fit.mape):
        return None
    return best if best.fit.mape <= BLEND_MISS_PERCENT else closest
