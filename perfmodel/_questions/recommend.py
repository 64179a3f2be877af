"""The one answer: how many GPUs are worth buying, why it stops there, and the others.

`recommend` puts together what `optimal_gpus` and `diminishing_returns` find. The count
worth buying is the last count before returns diminish: every GPU up to it adds at least
`threshold` of speedup (dS/dN by autodiff), or with whole nodes, every node up to it
adds at least `threshold` per GPU it brings. The reason is the term that grows: the
largest part of the step other than parallel compute, where returns diminish. Then one
line each: the fastest count within the search (or that the model still speeds up at
its end, so measure further), the cheapest per unit of work, the cheapest within a
deadline and the fastest within a budget.
"""

import dataclasses
import math

import numpy as np

from .._errors import InputError
from .._levels import check_gpu_list, check_level
from .._text import counted
from .measured import (
    CHECKED_AHEAD,
    measured_speeds,
    measured_superlinear,
    past_largest,
    peak_note,
)
from .query import (
    _candidates,
    _count_interval,
    amdahl_bound,
    batch_limit,
    crossing_within,
    diminishing_returns,
    evaluator,
    MAX_GPUS,
    node_size,
    optimal_gpus,
    Optimum,
    refuse_layout_fit,
    sampled_ahead,
    seconds_unit,
)
from .recommendation import (
    Alternative,
    Recommendation,
    term_phrase,
)


def _limiting(fit, gpus: float, overrides) -> tuple[dict[str, float], float]:
    """Every term that is not parallel compute at `gpus` and its share of the step,
    largest first, and their total share."""
    parts, total, roles = evaluator(fit).parts(gpus, overrides)
    growing = {k: v for k, v in parts.items() if roles.get(k, "overlap") != "compute" and v > 0}
    shares = {k: growing[k] / total for k in sorted(growing, key=growing.get, reverse=True)}
    return shares, sum(shares.values())


# A cost named in the reason: at least this share of the step (the rest are left out).
NAMED_SHARE = 0.005
# The largest named costs in a reason with several.
MOST_NAMED = 3


def _because(shares: dict[str, float], total: float, blend: bool = False) -> str:
    """``"as the serial part reaches 13% of the step"``, or with several costs that do
    not shrink with more GPUs their total and the largest. In a `blend` these are one
    overhead that each member names its own way (Amdahl's serial part, data parallel's
    all-reduce, the power laws' loss), split by the members' weights: said so, lest they
    read as separate costs that add up."""
    named = [(k, v) for k, v in shares.items() if v >= NAMED_SHARE][:MOST_NAMED]
    if len(named) <= 1:
        name, share = next(iter(shares.items()))
        return f"as {term_phrase(name)} reaches {share:.0%} of the step"
    parts = ", ".join(f"{term_phrase(k)} {v:.0%}" for k, v in named)
    head = f"as costs that do not shrink with more GPUs reach {total:.0%} of the step"
    if blend:
        return f"{head}, which the blended families name differently (by weight: {parts})"
    return f"{head}: {parts}"


def _reason(fit, rec_gpus, knee, threshold, overrides) -> tuple[str, str | None, float, float]:
    if knee.gpus is None:
        still = (
            f"each GPU still adds at least {threshold:g}× speedup at "
            f"{counted(knee.searched, 'GPU')}, the end of the search"
        )
        if knee.past_search is not None and knee.marginal_speedup < threshold:
            still = (  # review H1: the gain dips under the threshold and recovers
                f"{knee.last_gain_words()}, the end of the search, but the gain per GPU "
                f"rises again past it: returns diminish for good from "
                f"{counted(knee.past_search, 'GPU')}"
            )
        return (
            f"{still}: measure larger counts before buying more",
            None,
            0.0,
            0.0,
        )
    shares, total = _limiting(fit, knee.gpus, overrides)
    if knee.criterion.startswith("efficiency"):
        what = (
            f"past {counted(rec_gpus, 'GPU')} efficiency falls below "
            f"{knee.criterion.split('< ')[1]}"
        )
    elif knee.multiple_of > 1:
        added = f"{knee.marginal_speedup:.3g}× speedup per GPU (under {threshold:g}×)"
        if float(f"{knee.marginal_speedup:.3g}") >= threshold:  # "0.5× (under 0.5×)"
            added = f"just under {threshold:g}× speedup per GPU"
        what = f"the next {knee.multiple_of} GPUs would add {added}"
    else:
        what = (
            f"past {rec_gpus} GPU{'s' if rec_gpus != 1 else ''} one more adds under "
            f"{threshold:g}× speedup"
        )
    if not shares:
        return what, None, 0.0, 0.0
    name = next(iter(shares))
    blend = getattr(fit, "family", None) == "blend"
    return f"{what}, {_because(shares, total, blend)}", name, shares[name], total


LEVEL_OFF = 0.95  # the fastest count "levels off" within 5% of the Amdahl bound
FLOOR_REACHED = 1e-9  # relative: at the bound, as a floor holds it (not a law's limit)


def _cost_text(cost: float | None, unit: str, per: str) -> str:
    if cost is None:
        return ""
    amount = counted(cost, "GPU-hour", ".3g") if unit == "GPU-hours" else f"{cost:.3g} {unit}"
    return f", {amount} per {per}"


def _how_far(gpus: int, largest: int | None) -> str:
    """``"; extrapolated 512× past the 8 GPUs measured"`` (`past_largest`), else ``""``."""
    words = "" if largest is None else past_largest(gpus, largest)
    return f"; {words}" if words else ""


def _alternative(
    kind, label, best: Optimum, cost_unit, per, per_gpu_s, bound=None, largest=None
) -> Alternative:
    cost = best.gpu_seconds * per_gpu_s
    levels_off = bound is not None and math.isfinite(bound) and best.speedup >= LEVEL_OFF * bound
    if kind == "fastest" and best.at_limit and levels_off:
        sentence = (
            f"fastest: none within the search: the speedup levels off at the Amdahl bound "
            f"{bound:.3g}× ({best.speedup:.3g}× at {counted(best.gpus, 'GPU')}, efficiency "
            f"{best.efficiency:.1%}): more GPUs add almost nothing"
        )
    elif kind == "fastest" and levels_off and best.speedup >= bound * (1.0 - FLOOR_REACHED):
        # The blend under a fixed global batch is held at Amdahl's serial time
        # (`_closed.serial_floor`) and reaches it at a finite count; "reaches the Amdahl
        # bound" read as a law approached only in the limit (review of 2026-12-06).
        sentence = (
            f"fastest: {counted(best.gpus, 'GPU')}, where the forecast reaches the serial "
            f"time of Amdahl's law fitted to the measurements, a floor it is held at (speedup "
            f"{best.speedup:.3g}×, the Amdahl bound; efficiency {best.efficiency:.1%}"
            f"{_cost_text(cost, cost_unit, per)}{_how_far(best.gpus, largest)}): more GPUs "
            "add nothing"
        )
    elif kind == "fastest" and levels_off:
        sentence = (
            f"fastest: {counted(best.gpus, 'GPU')}, within {1 - LEVEL_OFF:.0%} of the Amdahl "
            f"bound {bound:.3g}× (speedup {best.speedup:.3g}×, efficiency "
            f"{best.efficiency:.1%}{_cost_text(cost, cost_unit, per)}"
            f"{_how_far(best.gpus, largest)}): more GPUs add almost nothing"
        )
    elif kind == "fastest" and best.at_limit:
        limit = "" if bound is None else f", Amdahl bound {bound:.3g}×"
        sentence = (
            f"fastest: still speeding up at {best.gpus} GPUs, the end of the search "
            f"(speedup {best.speedup:.3g}×, efficiency {best.efficiency:.1%}{limit}"
            f"{_how_far(best.gpus, largest)}): measure further"
        )
    elif best.gpus == 1:
        sentence = f"{label}: 1 GPU{_cost_text(cost, cost_unit, per)}"
    else:
        sentence = (
            f"{label}: {counted(best.gpus, 'GPU')}, speedup {best.speedup:.3g}×, efficiency "
            f"{best.efficiency:.1%}{_cost_text(cost, cost_unit, per)}"
        )
    return Alternative(
        kind, best.gpus, best.time_s, best.speedup, best.efficiency, cost, cost_unit, sentence
    )


def recommend(
    fit,
    *,
    max_gpus: int = 4096,
    multiple_of: int | None = None,
    threshold: float = 0.5,
    efficiency_floor: float | None = None,
    price_per_gpu_hour: float | None = None,
    currency: str = "",
    deadline_s: float | None = None,
    budget_per_hour: float | None = None,
    objective: str = "time",
    level: float | None = 0.9,
    method: str | None = None,
    ensemble=None,
    **overrides,
) -> Recommendation:
    """How many GPUs are worth buying, why it stops there, and the alternatives.

    Args:
        fit: a fitted model.
        max_gpus: the largest count considered.
        multiple_of: consider only 1 and multiples of this; default: the data's
            ``gpus_per_node`` when known (whole nodes), else 1.
        threshold: returns diminish once one more GPU (or, in whole nodes, each GPU of
            the next node) adds less than this much speedup.
        efficiency_floor: returns diminish too where speedup/N falls below it.
        price_per_gpu_hour: price of one GPU for an hour, in `currency`; costs are in
            GPU-hours without it.
        currency: the price's currency, e.g. ``"USD"``, for the sentences.
        deadline_s: also report the cheapest count whose step takes at most this long
            (seconds per step, or per unit of work for throughput fits).
        budget_per_hour: also report the fastest count costing at most this much per
            hour (in `currency`; needs `price_per_gpu_hour`).
        objective: what the fastest alternative optimises (passed to `optimal_gpus`).
        level: probability of the intervals (None: none, no ensemble is drawn).
        method: ``"laplace"``, ``"bootstrap"`` or ``"conformal"`` (None: the fit's own,
            `FitResult.intervals`); ensemble: draws to reuse instead.
        overrides: other `Config` fields for the prediction.

    Returns:
        A `Recommendation`; ``print(rec.summary())`` prints what `perfmodel optimal`
        does, `rec.to_dict()` its JSON ``recommendation``.

    Example:
        >>> fit = pm.fit("amdahl", pm.load_dataset("tf_dgx1_p100_vgg16_real"))  # doctest: +SKIP
        >>> print(pm.recommend(fit).sentence)  # doctest: +SKIP
    """
    refuse_layout_fit(fit, "recommend")
    if level is not None:
        level = check_level(level)
    if max_gpus < 1:
        raise InputError(f"max_gpus must be ≥ 1, got {max_gpus}")
    if budget_per_hour is not None and price_per_gpu_hour is None:
        raise InputError("{arg:budget_per_hour} needs {arg:price_per_gpu_hour}")
    if not isinstance(currency, str) or not currency.isprintable() or len(currency) > 16:
        # A newline in it split the answer's lines; a number (5) was printed as "5".
        raise InputError(
            f"{{arg:currency}}: expected a currency name such as USD (printable, at most 16 "
            f"characters), got {currency!r}"
        )
    for name, value in (
        ("price_per_gpu_hour", price_per_gpu_hour),
        ("deadline_s", deadline_s),
        ("budget_per_hour", budget_per_hour),
    ):
        if value is not None and not (math.isfinite(value) and 1e-307 <= value <= 1e307):
            raise InputError(
                f"{{arg:{name}}} must be a positive number from 1e-307 to 1e+307, got {value:g}"
            )
    batch = batch_limit(fit, overrides)
    if batch is not None and max_gpus > batch:
        max_gpus = batch  # past it a GPU would get less than one sample of the batch
    per_node = node_size(fit, overrides)
    if multiple_of is not None and multiple_of > max_gpus:  # it was reset to 1, silently
        raise InputError(
            f"{{arg:multiple_of}} {multiple_of:g} exceeds {{arg:max_gpus}} {max_gpus:g}: no "
            "multiple of it is searched; give a smaller step or a larger search"
        )
    step = int(multiple_of) if multiple_of is not None else (per_node or 1)
    if step > max_gpus:  # the node size, larger than the search: single GPUs
        step = 1
    draws = None if level is None else evaluator(fit).get_ensemble(method, ensemble)
    shared = dict(max_gpus=max_gpus, multiple_of=step, **overrides)
    # The step as given (None: the node, or single GPUs under it, as here): a knee named
    # past the search is counted as a search that reaches it counts (`knee_past_search`).
    knee = diminishing_returns(
        fit,
        threshold=threshold,
        efficiency_floor=efficiency_floor,
        **{**shared, "multiple_of": multiple_of},
    )
    counts = _candidates(int(max_gpus), step)
    still = knee.gpus is None
    if still:
        rec = int(counts[-1])
    else:
        index = int(np.searchsorted(counts, knee.gpus))
        rec = int(counts[max(index - 1, 0)])
    # Measured within one node and answered past it: the network between nodes is a
    # guess (the blind tables: every method 8–17% off at 2 and 4 nodes), so the count to
    # buy is the node, and the model's count past it is said as what to measure for.
    beyond_node = None
    largest = int(np.max(fit.data.gpus))
    if per_node and largest <= per_node < rec:
        beyond_node, rec = rec, per_node
    # Past how far forecasts were checked: the count to buy is the largest within it.
    beyond_checked, horizon = None, CHECKED_AHEAD * largest
    if beyond_node is None and rec > horizon and counts[0] <= horizon:
        beyond_checked, rec = rec, int(counts[counts <= horizon][-1])
    point = fit.predict([rec], **overrides)
    speedup_band, gpus_band = None, None
    if draws is not None:
        speedup_band, gpus_band, knee_band = _bands(
            fit, draws, counts, rec, step, threshold, efficiency_floor, level, overrides, method
        )
        knee = dataclasses.replace(knee, gpus_interval=knee_band, level=level)
    reason, limiting, share, overhead = _reason(fit, rec, knee, threshold, overrides)
    if beyond_node is not None:
        holds = _what_holds(knee, threshold, "further node")
        reason = _past_node_reason(per_node, beyond_node, still, holds)
    if beyond_checked is not None:
        holds = _what_holds(knee, threshold, "GPU")
        reason = _past_checked_reason(largest, rec, beyond_checked, still, holds)
    chosen = {} if objective == "time" else {"deadline_s": deadline_s}
    fastest = optimal_gpus(
        fit, objective=objective, price_per_gpu_hour=price_per_gpu_hour, **chosen, **shared
    )
    unit = _work(fit)
    money = currency or "currency units"
    cost_unit = money if price_per_gpu_hour is not None else "GPU-hours"
    per_gpu_s = (price_per_gpu_hour or 1.0) / 3600.0
    price = (
        ""
        if price_per_gpu_hour is None
        else f" at {price_per_gpu_hour:g} {_money(price_per_gpu_hour, currency)} per GPU-hour"
    )
    label = "fastest" if objective == "time" else f"best by {objective}"
    if objective == "cost":  # the cheapest, within the deadline when one is given
        label = f"cheapest per {unit}{price}"
        if deadline_s is not None:
            label = (
                f"cheapest within the deadline of {deadline_s:g} s per {unit}{price}{_among(step)}"
            )
    kind = "fastest" if objective == "time" else objective
    bound = amdahl_bound(fit, **overrides)
    alternatives = [_alternative(kind, label, fastest, cost_unit, unit, per_gpu_s, bound, largest)]
    if batch is not None and max_gpus == batch and fastest.at_limit:
        # Nothing further to measure at this batch: the search stopped at one sample per GPU.
        first = alternatives[0]
        sentence = first.sentence.replace(
            ": measure further", f": the fixed global batch of {batch} allows no more GPUs"
        )
        alternatives[0] = dataclasses.replace(first, sentence=sentence)
    if kind == "fastest":
        alternatives[0] = _peak_inside(fit, alternatives[0], fastest, shared)
    if objective != "cost" or deadline_s is not None:  # else the line above says it
        cheapest = optimal_gpus(fit, objective="cost", **shared)
        alternatives.append(
            _alternative(
                "cheapest", f"cheapest per {unit}{price}", cheapest, cost_unit, unit, per_gpu_s
            )
        )
    assumptions = {"max_gpus": max_gpus, "multiple_of": step, "threshold": threshold}
    if efficiency_floor is not None:
        assumptions["efficiency_floor"] = efficiency_floor
    if batch is not None and max_gpus == batch:
        assumptions["max_gpus_is_global_batch"] = True
    if price_per_gpu_hour is not None:
        assumptions.update(price_per_gpu_hour=price_per_gpu_hour, currency=currency or None)
    if deadline_s is not None:
        assumptions["deadline_s"] = deadline_s
        if objective != "cost":  # the cost objective's own line is this one
            alternatives.append(_deadline(fit, deadline_s, shared, cost_unit, unit, per_gpu_s))
    if budget_per_hour is not None:
        assumptions["budget_per_hour"] = budget_per_hour
        alternatives.append(
            _budget(
                fit, budget_per_hour, price_per_gpu_hour, money, shared, cost_unit, unit, per_gpu_s
            )
        )
    lowest = int(np.min(fit.data.gpus))
    alternatives = [_below_the_data(a, lowest) for a in alternatives]
    return Recommendation(
        gpus=rec,
        # Per the `unit` of the alternatives (the prediction is per step as measured).
        time_s=float(point["time_s"][0]) / (rec if fit.data.per_gpu else 1),
        speedup=float(point["speedup"][0]),
        efficiency=float(point["efficiency"][0]),
        level=level,
        gpus_interval=gpus_band,
        speedup_interval=speedup_band,
        reason=reason,
        limiting=limiting,
        limiting_share=share,
        overhead_share=overhead,
        still_speeding_up=still,
        multiple_of=step,
        gpus_per_node=per_node,
        searched=int(counts[-1]),
        optimum=fastest,
        knee=knee,
        amdahl_bound=bound,
        alternatives=tuple(alternatives),
        assumptions=assumptions,
        unit=unit,
        measured_up_to=largest,
        measured_from=lowest,
        superlinear=measured_superlinear(fit),
        one_gpu_gap=one_gpu_gap(fit),
        one_gpu_runs=int(np.sum(fit.data.gpus == 1)),
        beyond_node=beyond_node,
        beyond_checked=beyond_checked,
    )


def _what_holds(knee, threshold: float, per: str) -> str:
    """What the model says holds up to its count: the criterion that ended the returns
    (`--efficiency-floor` or `--threshold`), not always the threshold."""
    if knee.gpus is not None and knee.criterion.startswith("efficiency"):
        return f"efficiency stays at {knee.criterion.split('< ')[1]} or more"
    return f"each {per} adds at least {threshold:g}× speedup" + (" per GPU" if per != "GPU" else "")


def _past_node_reason(node: int, beyond: int, still: bool, holds: str) -> str:
    """Why the answer stops at one node that every measurement fits in."""
    end = ", the end of the search" if still else ""
    return (
        f"every measurement fits in one node, and past it the network between nodes was "
        f"never measured: the model's guess is that {holds} up to {beyond} GPUs{end}, but "
        f"from one node to two "
        f"and four every method missed published tables by 8–17%; measure 2 nodes "
        f"({2 * node} GPUs) before buying more"
    )


def _past_checked_reason(largest: int, rec: int, beyond: int, still: bool, holds: str) -> str:
    """Why the answer stops at `CHECKED_AHEAD` × the largest count measured."""
    end = "the end of the search, " if still else ""
    return (
        f"the model's guess is that {holds} up to "
        f"{beyond} GPUs ({end}{beyond / largest:.3g}× the {largest} measured), but its "
        f"forecasts were checked against published tables only up to {CHECKED_AHEAD:g}× the "
        f"largest count measured; measure {rec} GPUs before buying more"
    )


ONE_GPU_GAP = 0.02  # the model's one-GPU time this far from the measured one is said


def one_gpu_gap(fit) -> float | None:
    """The model's one-GPU time over the measured one, less 1, when one GPU was measured
    and they differ by more than `ONE_GPU_GAP`; else None. Every speedup is against the
    model's T(1): on DeepLearningExamples' Transformer-XL base fp32 table it is 11.9%
    longer than the one measured, and 7.76× at 8 GPUs was 6.94× measured."""
    measured = fit.data.time_s[fit.data.gpus == 1]
    if measured.size == 0:
        return None
    gap = float(fit.predict([1])["time_s"][0]) / float(np.median(measured)) - 1.0
    return gap if abs(gap) > ONE_GPU_GAP else None


def speedup_interval(
    fit,
    gpus,
    level: float = 0.9,
    method: str | None = None,
    *,
    ensemble=None,
    **overrides,
) -> dict[str, np.ndarray]:
    """The speedup (and efficiency) at `gpus` with the central `level` confidence interval
    of the curve's speedup, as ``perfmodel predict --interval`` gives it (`speedup_lo`,
    `speedup_hi`).

    Each draw of the ensemble (`perfmodel.ensemble`: parameters and, past the measured
    counts, model-form drift; no measurement noise) is taken against its own one-GPU time,
    a conformal member against the curve's; the interval stops at `speedup_cap` (N times
    the best efficiency measured, or the curve's own), and is 1 at one GPU by definition.

    Args:
        fit: a fitted model (`FitResult`, or a fit file read by `load_fit`).
        gpus: GPU counts.
        level: probability inside the interval, in (0, 1).
        method: ``"laplace"``, ``"bootstrap"`` or ``"conformal"`` (default the fit's own).
        ensemble: draws to reuse (then `method` is ignored).
        overrides: other `Config` fields for the prediction.

    Returns:
        NumPy arrays ``gpus``, ``speedup``, ``speedup_lo``, ``speedup_hi`` and
        ``efficiency``; where the data leave a parameter undetermined the bounds are 0
        and inf.

    Example:
        >>> band = pm.speedup_interval(fit, [16, 32, 64], 0.9)  # doctest: +SKIP
        >>> band["speedup_lo"], band["speedup_hi"]  # doctest: +SKIP
    """
    level = check_level(level)
    refuse_layout_fit(fit, "speedup_interval")
    counts = np.atleast_1d(check_gpu_list(gpus))
    point = fit.predict(counts, **overrides)
    _, speedups, _, undetermined = evaluator(fit).ensemble_curves(
        counts, overrides, method, ensemble
    )
    if undetermined:
        lo, hi = np.zeros(counts.size), np.full(counts.size, math.inf)
    else:
        tail = (1.0 - level) / 2.0
        cap = speedup_cap(fit, counts, point["speedup"])
        lo, hi = (np.minimum(np.quantile(speedups, q, axis=0), cap) for q in (tail, 1.0 - tail))
        one = counts == 1.0  # 1 by definition (a conformal member's T(1) is not the curve's)
        lo, hi = np.where(one, 1.0, lo), np.where(one, 1.0, hi)
    out = {
        "gpus": counts,
        "speedup": np.asarray(point["speedup"], dtype=np.float64),
        "speedup_lo": lo,
        "speedup_hi": hi,
        "efficiency": np.asarray(point["efficiency"], dtype=np.float64),
    }
    if np.ndim(gpus) == 0:  # one count: the same columns, each a 0-d array
        return {k: v[0, ...] for k, v in out.items()}
    return out


def speedup_cap(fit, counts, centre) -> np.ndarray:
    """The most speedup an interval may give at `counts`: N times the larger of 1, the
    best efficiency measured (against the fewest GPUs measured) and the curve's own
    (`centre`/N). The conformal draws stop at perfect scaling from their own one-GPU
    time; Laplace draws of a single family did not (a 90% interval up to 66× on 64
    GPUs of a table measured at 93% efficiency), nor did a conformal draw whose best
    efficiency was counted against the model's one-GPU time."""
    counts = np.asarray(counts, dtype=np.float64)
    measured, speed = measured_speeds(fit)
    best = float(np.max((speed / measured) / (speed[0] / measured[0])))
    own = np.asarray(centre, dtype=np.float64) / counts
    return counts * np.maximum(max(1.0, best), own)


def _peak_inside(fit, alternative: Alternative, fastest: Optimum, shared) -> Alternative:
    """The fastest `alternative` with `peak_note` (not on a grid coarser than the
    measurements, where no count inside them is offered)."""
    if shared["multiple_of"] > int(np.max(fit.data.gpus)):
        return alternative
    note = peak_note(fit, fastest.gpus)
    return dataclasses.replace(alternative, sentence=alternative.sentence + note)


def _below_the_data(alternative: Alternative, lowest: int) -> Alternative:
    """`alternative` with its sentence saying so when its count is below every measured
    one (speedups there rest on the model's curve, not on a measurement)."""
    if alternative.gpus is None or alternative.gpus >= lowest:
        return alternative
    note = f" (extrapolated: no count below {lowest} GPUs was measured)"
    return dataclasses.replace(alternative, sentence=alternative.sentence + note)


def _work(fit) -> str:
    """What the model's seconds are per (`seconds_unit`)."""
    return seconds_unit(fit)


def _among(step: int) -> str:
    """The counts a cost answer chose among, when not every count: 4 GPUs met a deadline
    more cheaply than the 8 named, but only 1 and whole nodes were searched (review round
    10)."""
    return f" (of 1 GPU and whole nodes of {step})" if step > 1 else ""


def _deadline(fit, deadline_s, shared, cost_unit, unit, per_gpu_s) -> Alternative:
    among = _among(int(shared["multiple_of"]))
    what = f"cheapest within the deadline of {deadline_s:g} s per {unit}{among}"
    try:
        best = optimal_gpus(fit, objective="cost", deadline_s=deadline_s, **shared)
    except InputError:
        fastest = optimal_gpus(fit, **shared)
        sentence = (
            f"{what}: none up to {fastest.searched} GPUs; the fastest takes "
            f"{fastest.time_s:.4g} s per {unit}"
        )
        return Alternative(
            "deadline", None, math.nan, math.nan, math.nan, None, cost_unit, sentence
        )
    return _alternative("deadline", what, best, cost_unit, unit, per_gpu_s)


def _money(value: float, currency: str) -> str:
    """`currency`, or "currency unit(s)" for `value` when none was given ("1 currency
    units per hour", review round 11b)."""
    if currency and currency != "currency units":
        return currency
    return "currency unit" if f"{value:g}" == "1" else "currency units"


def _budget(fit, budget, price, money, shared, cost_unit, unit, per_gpu_s) -> Alternative:
    # A float (1e300 / 1e-300 is inf, past any int), rounded down after a relative
    # tolerance: 69.6 // 2.9 is 23 in binary (and 3.3 // 1.1 is 2), and 24 GPUs at 2.90
    # cost 69.60 exactly (review round 11b: the answer fell to 16 GPUs).
    affordable = (
        math.floor(budget / price * (1.0 + 1e-12)) if budget / price < 2**53 else budget / price
    )
    most = int(min(affordable, MAX_GPUS + 1))  # more than any count searched
    bound = f"at most {counted(most, 'GPU')}" if affordable <= MAX_GPUS else f"over {MAX_GPUS} GPUs"
    what = f"fastest within a budget of {budget:g} {_money(budget, money)} per hour ({bound})"
    step = shared["multiple_of"]
    if most < 1:
        sentence = f"{what}: not even one GPU"
        return Alternative("budget", None, math.nan, math.nan, math.nan, None, cost_unit, sentence)
    if step > 1 and most >= step:
        most -= most % step
    elif step > 1:
        step = 1
    limited = {**shared, "max_gpus": min(most, shared["max_gpus"]), "multiple_of": step}
    best = optimal_gpus(fit, **limited)
    return _alternative("budget", what, best, cost_unit, unit, per_gpu_s)


def _bands(fit, draws, counts, rec, step, threshold, floor, level, overrides, method):
    """Confidence intervals of the speedup at `rec`, of the recommended count and of the
    knee, over the draws of the ensemble (the same draws as every other interval)."""
    limit = counts[-1]
    counts, speedups, gains, undetermined = sampled_ahead(
        fit, counts, step, overrides, method, draws, extra=[float(rec)]
    )
    column = int(np.searchsorted(counts, rec))
    tail = (1.0 - level) / 2.0
    at = speedups[:, column]
    cap = float(speedup_cap(fit, [rec], fit.predict([rec], **overrides)["speedup"])[0])
    lo, hi = (min(float(np.quantile(at, q)), cap) for q in (tail, 1.0 - tail))
    # 1 at one GPU by definition, as `speedup_interval` has it (a conformal draw's T(1)
    # is not the curve's: "Buy 1 GPU: speedup 1× (0.809–1×)", review round 13).
    speedup_band = (1.0, 1.0) if rec == 1 else (lo, hi)
    index, _ = crossing_within(counts, speedups, gains, threshold, floor, limit)
    picked = np.where(index >= 0, counts[np.maximum(index - 1, 0)], np.inf)
    gpus_band = _count_interval(picked, level)
    knee_band = _count_interval(np.where(index >= 0, counts[index], np.inf), level)
    if undetermined:
        gpus_band = knee_band = (int(counts[0]), None)
        speedup_band = (0.0, math.inf)
    return speedup_band, gpus_band, knee_band
