"""What `perfmodel predict` and `optimal` print, without JAX: the options they share,
the rows of a prediction, the recommendation and its JSON.

Both commands run on a `FitResult` (the JAX path, `perfmodel._cli.fit`) or on a fit file
read without JAX (`perfmodel._saved.SavedFit`, `perfmodel._cli.quick`); this module
imports JAX only when given a `FitResult`, so both print the same from the same code.
"""

import dataclasses

import numpy as np

from .. import _closed
from .._catalog import run_note
from .._errors import FitError, InputError
from .._levels import level_text, refuse_blend_draws
from .._questions import (
    check_finite_times,
    count_interval_words,
    GPU_BATCH,
    measured_peak,
    one_gpu_gap,
    one_gpu_words,
    optimal_gpus,
    recommend,
    Recommendation,
    speedup_interval,
    step_seconds,
)
from .._saved import SavedFit
from .._text import counted, wrap
from .._units import work_name
from . import common
from .common import (
    finite_or_none,
    format_table,
    parse_list,
    percent_text,
    print_json,
)


def _band(result, gpus, interval: float, method: str | None, kind: str) -> dict:
    """`predict_interval` on the fit's shared draws (NumPy's conformal band for a
    `SavedFit`)."""
    if isinstance(result, SavedFit):
        return result.predict_interval(gpus, interval, method, kind)
    from .._uncertainty import predict_interval
    from .draws import shared_ensemble

    draws = shared_ensemble(result, method)
    return predict_interval(result, gpus, interval, method, kind=kind, ensemble=draws)


def speedup_band(result, gpus, interval: float, method: str | None):
    """``(lo, hi)`` arrays: the `interval` confidence interval of the curve's speedup at
    `gpus` (`perfmodel.speedup_interval`), over the same draws as `optimal`'s; None when
    no draws can be made. `optimal` gave one at its own count only, and `predict --kind
    confidence` is not offered for the default blend."""
    draws = draws_for(result, method)
    if draws is None:
        return None
    band = speedup_interval(result, np.asarray(gpus, dtype=np.float64), interval, method,
                            ensemble=draws)  # fmt: skip
    return band["speedup_lo"], band["speedup_hi"]


def draws_for(result, method: str | None = None):
    """The fit's shared draws (`perfmodel._cli.draws.draws_or_none`), or None when none
    can be drawn (answers then come without intervals)."""
    if not isinstance(result, SavedFit):
        from .draws import draws_or_none

        return draws_or_none(result, method)
    try:
        return result.get_ensemble(method, None)
    except (InputError, FitError):
        return None


def prediction_rows(
    result,
    gpus,
    interval: float | None = None,
    method: str | None = None,
    kind: str = "prediction",
) -> list[dict]:
    """Rows of `predict`; with `interval`, ``_lo``/``_hi`` bounds of that `kind`
    (``"prediction"``: a new measurement; ``"confidence"``: the curve) named per row."""
    predicted = result.predict(gpus)
    check_finite_times(np.asarray(predicted["time_s"], dtype=float), np.asarray(gpus))
    band = speedups = None
    if interval is not None:
        band = _band(result, gpus, interval, method, kind)
        speedups = speedup_band(result, gpus, interval, method)
    rows = []
    for i, n in enumerate(gpus):
        row = {"gpus": int(n), "time_s": float(predicted["time_s"][i])}
        if band is not None:
            row["time_s_lo"] = finite_or_none(band["time_s_lo"][i])
            row["time_s_hi"] = finite_or_none(band["time_s_hi"][i])
        if "throughput" in predicted:
            row["throughput"] = float(predicted["throughput"][i])
            if band is not None:
                row["throughput_lo"] = finite_or_none(band["throughput_lo"][i])
                row["throughput_hi"] = finite_or_none(band["throughput_hi"][i])
        row["speedup"] = float(predicted["speedup"][i])
        if speedups is not None:
            row["speedup_lo"], row["speedup_hi"] = (finite_or_none(v[i]) for v in speedups)
            row["speedup_interval"] = f"{level_text(interval)} confidence (of the curve)"
        row["efficiency"] = float(predicted["efficiency"][i])
        if band is not None:
            row["interval"] = f"{level_text(interval)} {kind}"
        rows.append(row)
    return rows


INTERVAL_MEANING = {
    "prediction": "prediction interval: where a new measurement would fall (parameters, "
    "measurement noise and, outside the measured counts, model-form drift)",
    "confidence": "confidence interval of the curve: the mean step time (parameters and, "
    "outside the measured counts, model-form drift; no measurement noise)",
    # One line a newcomer can read; the terms of the width are in docs/intervals.md (six
    # lines of them came before the table: newcomer review of 2026-12-06).
    "conformal": "prediction interval: where a new measurement would fall, from the default "
    "blend's errors on published tables{repeats} (wider away from the largest measured "
    "count{node}; docs/intervals.md)",
}
PAST_NODE = " and past one node of {node:g} GPUs, whose network was never measured"


def refuse_global_batch(args, result) -> None:
    """``--global-batch`` is read by time-to-train fits only: refuse it for the others
    (it was ignored), saying whether the model reads the batch at all."""
    if getattr(args, "global_batch", None) is None:
        return
    model = getattr(result, "model", None)  # None for a saved fit: its families read N only
    reads = False
    if model is not None:
        from .._fitting import workload_read  # here: the NumPy path imports no JAX

        reads = "global_batch" in workload_read(model)
    then = (
        "predicts every row at one batch: give it with --set global_batch=N"
        if reads
        else "does not read the batch"
    )
    raise InputError(f"--global-batch is for time-to-train fits; this {result.family} fit {then}")


def speedup_reference(result) -> str:
    """What the speedups are against: the model's one-GPU time, and how far it is from
    the one measured when that is more than 2% (`one_gpu_gap`)."""
    if not np.any(result.data.gpus == 1):
        return "speedup vs the model's 1 GPU"
    gap = one_gpu_gap(result)
    if gap is None:
        return "speedup vs 1 GPU"
    runs = int(np.sum(result.data.gpus == 1))
    return f"speedup vs the model's 1 GPU, whose time is {one_gpu_words(gap, runs)}"


def text_row(row: dict) -> dict:
    """A row of `predict`'s table: the interval's name is said above it, and the
    speedup's interval is one column (``7.31–7.57``), so that 80 columns keep efficiency,
    printed as a percentage like every other command's (``--json`` keeps the fraction)."""
    out = {}
    for key, value in row.items():
        if key in ("interval", "speedup_interval", "speedup_hi"):
            continue
        if key == "speedup_lo":
            hi = row["speedup_hi"]
            lo = "" if value is None else f"{value:.3g}"
            # Both ends open: empty, as the legend says ("–inf" read as a bound)
            both = value is None and hi is None
            out["speedup CI"] = "" if both else f"{lo}–{'inf' if hi is None else f'{hi:.3g}'}"
            continue
        if key == "efficiency":
            value = percent_text(value)
        out[key] = value
    return out


def print_predictions(args, result) -> int:
    """`perfmodel predict` of `result` at ``--gpus``: a table, or ``--json`` rows."""
    if args.interval is None and (args.method is not None or args.kind != "prediction"):
        flag = "--method" if args.method is not None else "--kind"  # it was ignored
        raise InputError(f"{flag} says how to draw intervals; add --interval 0.9 to ask for them")
    gpus = parse_list(args.gpus, "--gpus", cast=int)
    rows = prediction_rows(result, gpus, args.interval, args.method, args.kind)
    if args.json:
        print_json(rows)
        return 0
    # A time column is predicted as it was measured: per step, or (MLPerf) to train.
    unit = "s, as measured"
    if result.target == "throughput":
        unit = f"s per {work_name(result.data.unit)}, throughput in {result.data.unit or 'work/s'}"
    print(
        wrap(
            f"{result.label} fit of {result.data.source} (time_s in {unit}, "
            f"{speedup_reference(result)}, {result.precision}{run_note(result.data.source)})"
        )
    )
    if args.interval is not None:
        method = args.method or result.intervals
        meaning = INTERVAL_MEANING["conformal" if method == "conformal" else args.kind]
        node = _closed.data_node(result.data) if method == "conformal" else 0.0
        past = PAST_NODE.format(node=node) if node and max(gpus) > node else ""
        if method == "conformal":
            # The repeats' own scatter widens it too (`_closed.noise_half_width`).
            repeated = _closed.replicate_noise(result.data)[1] > 0
            said = " and the scatter of the runs it repeats"
            meaning = meaning.format(node=past, repeats=said if repeated else "")
        text = f"_lo/_hi: {level_text(args.interval)} {meaning}; {method}"
        print(wrap(text + ", empty: unbounded", common.TABLE_WIDTH))
        if any(row.get("speedup_lo") is not None for row in rows):
            # As `speedup_interval` takes them: a conformal member against the curve's
            # one-GPU time (its own where no single GPU was measured), a Laplace or
            # bootstrap draw against its own.
            smallest = int(min(result.data.gpus))
            own = method != "conformal" or smallest > 1
            against = "each draw's own" if own else "the curve's"
            unmeasured = ""
            if smallest > 1:
                # Two runs at 8 and 16 GPUs read "speedup 5.61–5.81" beside a 1-GPU time
                # of 1.18–2.73 s (newcomer review, 2026-12-07): each conformal draw now
                # takes its own one-GPU time too (`Calibrated.speedup`).
                # ±1% parameters beside a speedup CI of ±25% read as a contradiction
                # (review of 2026-12-06): the draws' 1-GPU times are extrapolated.
                unmeasured = (
                    f", extrapolated (no run below {smallest} GPUs was measured), which widens it"
                )
            print(
                wrap(
                    f"speedup CI: {level_text(args.interval)} confidence interval of the "
                    f"curve's speedup, against {against} 1-GPU time{unmeasured}",
                    common.TABLE_WIDTH,
                )
            )
    print(format_table([text_row(row) for row in rows]))
    batch = _closed.fixed_global_batch(result.data.config.get("global_batch"))
    past = [n for n in gpus if batch is not None and n > batch]
    if past:
        counts = ", ".join(f"{n:g}" for n in past)
        print(
            wrap(
                f"note: {counts} GPUs exceed the fixed global batch of {batch} measured: a GPU "
                "would get less than one sample, which no run can do (the model's curve goes on)",
                common.TABLE_WIDTH,
            )
        )
    peak, largest = measured_peak(result), int(max(result.data.gpus))
    beyond = [row["speedup"] for row in rows if row["gpus"] > largest]
    if peak is not None and beyond and max(beyond) > result.predict([largest])["speedup"][0]:
        print(
            wrap(
                f"note: the measurements are fastest at {peak[0]} GPUs and {peak[1]:.0%} slower "
                f"at {largest}; the rise past {largest} GPUs is the fitted families' "
                "extrapolation, not measured",
                common.TABLE_WIDTH,
            )
        )
    return 0


def recommend_options(args) -> dict:
    """`recommend`'s keyword arguments from the optimal flags."""
    if args.max_gpus < 1:
        raise InputError(f"--max-gpus must be ≥ 1, got {args.max_gpus}")
    return dict(
        max_gpus=args.max_gpus,
        objective=args.objective,
        price_per_gpu_hour=args.price_per_gpu_hour,
        currency=args.currency,
        deadline_s=args.deadline,
        budget_per_hour=args.budget,
        multiple_of=args.multiple_of,
        threshold=args.threshold,
        efficiency_floor=args.efficiency_floor,
        level=0.9 if args.interval is None else args.interval,
        method=args.method,
    )


def optimum_fields(best) -> dict:
    """An `Optimum` under the JSON names of `perfmodel optimal` (``whatif --json`` named
    them as the Python fields, ``searched``/``at_limit``/``gpu_seconds``: one answer, two
    spellings, review of 2026-12-07). For a fit per GPU batch, per step as measured too,
    as `predict` gives it: a step on N GPUs does N GPU batches (``gpu_seconds`` and
    ``cost`` are per GPU batch), and ``step_time_s``."""
    fields = {
        "gpus": best.gpus,
        "time_s": best.time_s,
        "speedup": best.speedup,
        "efficiency": best.efficiency,
        "gpu_seconds_per_step": best.gpu_seconds,
        "cost_per_step": best.cost,
        "objective": best.objective,
        "searched_up_to": best.searched,
        "at_search_limit": best.at_limit,
    }
    if best.unit == GPU_BATCH:
        fields["step_time_s"] = step_seconds(best.time_s, best.gpus)
        fields["gpu_seconds_per_step"] = best.gpu_seconds * best.gpus
        if best.cost is not None:
            fields["cost_per_step"] = best.cost * best.gpus
    return fields


def knee_fields(knee) -> dict:
    """A `DiminishingReturns` under the JSON names of `perfmodel optimal`
    (``gpus_past_search``: where ``gpus`` is null, the knee past the search, or null)."""
    return {
        "gpus": knee.gpus,
        "criterion": knee.criterion,
        "marginal_speedup": knee.marginal_speedup,
        "efficiency": knee.efficiency,
        "speedup": knee.speedup,
        "gpus_past_search": knee.past_search,
    }


def optimal_document(
    answer: Recommendation, interval: float | None = None, method: str | None = None
) -> dict:
    """The JSON of `perfmodel optimal`: the count worth buying (``worth_buying``, the
    answer the text opens with; ``recommendation`` has the rest of it), the best count by
    the objective (``gpus``, the fastest for time: a script that read ``gpus`` as the
    answer booked 1024 GPUs, the search limit, where the text said "Buy 8 GPUs") and the
    point of diminishing returns."""
    best, knee = answer.optimum, answer.knee
    fields = optimum_fields(best)
    document = {
        "worth_buying": answer.gpus,
        **{k: fields[k] for k in ("gpus", "time_s", "speedup", "efficiency")},
        "gpu_seconds_per_step": fields["gpu_seconds_per_step"],
        "cost_per_step": fields["cost_per_step"],
        "cost_unit": answer.alternatives[0].cost_unit if best.cost is not None else None,
        **{k: fields[k] for k in ("objective", "searched_up_to", "at_search_limit")},
        "diminishing_returns": knee_fields(knee),
        "amdahl_bound": answer.amdahl_bound,
        "recommendation": answer.to_dict(),
    }
    document["unit"] = answer.unit  # what time_s and cost are per
    if answer.unit != "step":
        document["throughput"] = 1.0 / best.time_s
    if "step_time_s" in fields:  # per GPU batch: the step as measured (`optimum_fields`)
        document["step_time_s"] = fields["step_time_s"]
    if interval is not None:
        document["interval"] = {"level": interval, "kind": "confidence", "method": method}
        document["gpus_interval"] = list(best.gpus_interval or (None, None))
        document["diminishing_returns"]["gpus_interval"] = list(knee.gpus_interval)
    return document


def print_optimal(answer: Recommendation) -> None:
    print(answer.summary(common.TABLE_WIDTH))
    print(wrap(f"  {answer.knee.summary()}", common.TABLE_WIDTH))
    if answer.amdahl_bound is not None:
        fastest = [a.speedup for a in answer.alternatives if a.kind == "fastest" and a.gpus]
        # A USL curve peaks far below it: "74.34×" beside a best of 28.9× read as reachable.
        below = (
            f" (the serial time's limit; this curve's other costs stop it at {fastest[0]:.3g}×)"
            if fastest and fastest[0] < 0.9 * answer.amdahl_bound
            else ""
        )
        print(
            wrap(
                f"  Amdahl bound on speedup: {answer.amdahl_bound:.4g}×{below}", common.TABLE_WIDTH
            )
        )


def answer_for(result, options: dict) -> tuple:
    """The recommendation, with the optimum's interval from the same draws when asked."""
    if options.get("method") == "conformal" and result.intervals != "conformal":
        # Drawn for no one, it answered with no interval at all, silently.
        raise InputError(
            f"--method conformal: conformal intervals are calibrated for the default blend; "
            f"this {result.family} fit has --method laplace or bootstrap"
        )
    draws = draws_for(result, options.get("method"))
    if draws is None:
        options = {**options, "level": None}
    answer = recommend(result, **options, ensemble=draws)
    return answer, draws


def _with_count_interval(answer: Recommendation) -> Recommendation:
    """The first alternative (the fastest, or the best by the objective) with the
    interval of its count, as ``--json``'s ``gpus_interval``: the text gave the count
    worth buying's and the knee's, never this one's (review of 2026-12-07)."""
    best, first = answer.optimum, answer.alternatives[0] if answer.alternatives else None
    words = count_interval_words(best.gpus_interval, "confidence", best.level)
    if first is None or first.gpus != best.gpus or not words:
        return answer
    count = counted(best.gpus, "GPU")  # the interval beside the count, not the cost
    sentence = first.sentence.replace(count, f"{count} ({words})", 1)
    first = dataclasses.replace(first, sentence=sentence)
    return dataclasses.replace(answer, alternatives=(first, *answer.alternatives[1:]))


def answer_optimal(args, result) -> int:
    """`perfmodel optimal` of `result`: the recommendation, or ``--json``."""
    refuse_blend_draws(result.family, args.method, "intervals")
    answer, draws = answer_for(result, recommend_options(args))
    if args.interval is not None:
        best = optimal_gpus(
            result,
            max_gpus=answer.assumptions["max_gpus"],  # the global batch's limit, if lower
            objective=args.objective,
            price_per_gpu_hour=args.price_per_gpu_hour,
            deadline_s=args.deadline if args.objective != "time" else None,
            multiple_of=answer.multiple_of,
            interval=args.interval,
            ensemble=draws,
        )
        answer = dataclasses.replace(answer, optimum=best)
        answer = _with_count_interval(answer)
    if args.json:
        print_json(optimal_document(answer, args.interval, args.method or result.intervals))
    else:
        print_optimal(answer)
    return 0
