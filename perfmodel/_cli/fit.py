"""`perfmodel fit`, `predict`, `optimal`, `demo` and `datasets`."""

import dataclasses
import math
import sys

from .._data import load_benchmarks
from .._datasets import dataset_path, dataset_unit, list_datasets, load_dataset
from .._errors import InputError
from .._files import all_or_nothing
from .._fitting import (
    CRITERIA,
    DEFAULT_CRITERION,
    DEFAULTS,
    fit,
    fit_auto,
    FitResult,
    LOSSES,
    per_unit_of_work,
    Selection,
)
from .._io import fit_to_dict, save_fit
from .._presets import build, FAMILIES, hybrid_kind, is_hybrid
from .._questions import (
    MAX_GPUS,
    optimal_gpus,
    recommend,
    Recommendation,
)
from .._text import wrap
from .._uncertainty import Ensemble, KINDS, METHODS, predict_interval
from . import common, train
from .analysis import load_with_changes, SET_HELP
from .collective import (
    add_collective_options,
    fit_with_collectives,
    print_collective_extra,
    uses_collectives,
)
from .common import (
    check_outputs,
    format_table,
    input_paths,
    MAX_SEED,
    MAX_STARTS,
    message,
    number,
    parse_assignments,
    parse_list,
    POSITIVE,
    print_json,
    PROBABILITY,
    to_float,
    whole,
)
from .draws import draws_or_none, shared_ensemble
from .layout import (
    add_fit_options,
    add_layout_options,
    fit_hybrid,
    optimal_layout,
    print_optimal_layout,
    run_predict,
)
from .plot import check_report_path, report_outputs

DEMO_DATASET = "tf_dgx1_p100_vgg16_real"


def register(subparsers) -> None:
    p = subparsers.add_parser("fit", help="fit a model to a benchmark CSV")
    p.add_argument("csv", help="benchmark CSV: gpus and time_s/time_ms/time_us/throughput")
    train.add_log_options(p)
    p.add_argument("-o", "--output", help="write the fit here as JSON")
    _add_fit_options(p)
    add_fit_options(p)
    add_collective_options(p)
    p.add_argument("--json", action="store_true", help="print the fit as JSON")
    p.add_argument(
        "--report", metavar="PATH", help="also write a report: .html (self-contained) or .md"
    )
    p.set_defaults(run=_run_fit)

    p = subparsers.add_parser("predict", help="predict step time at GPU counts")
    p.add_argument("fit", help="fit JSON written by `perfmodel fit -o`")
    p.add_argument("--gpus", help="comma-separated GPU counts, e.g. 1,8,64")
    add_layout_options(p)
    p.add_argument("--set", action="append", metavar="NAME=VALUE", help=SET_HELP)
    _add_interval_options(p, "adds time_s_lo/time_s_hi (throughput_lo/_hi) per row")
    p.add_argument(
        "--kind",
        default="prediction",
        choices=KINDS,
        help="prediction: where a new measurement would fall (default); confidence: the "
        "curve itself, the same draws `next` and `optimal` use",
    )
    train.add_predict_options(p)
    p.add_argument("--json", action="store_true", help="print a JSON list of rows")
    p.set_defaults(run=_run_predict)

    p = subparsers.add_parser(
        "optimal", help="the GPU count worth buying, the fastest and the cheapest"
    )
    p.add_argument("fit", help="fit JSON written by `perfmodel fit -o`")
    _add_optimal_options(p)
    p.add_argument("--set", action="append", metavar="NAME=VALUE", help=SET_HELP)
    _add_interval_options(
        p,
        "the recommendation's confidence intervals (default 0.9); also adds one on the "
        "optimum and the knee to --json",
    )
    train.add_optimal_options(p)
    p.add_argument("--json", action="store_true", help="print a JSON object")
    p.set_defaults(run=_run_optimal)

    p = subparsers.add_parser("demo", help="the main job on a dataset shipped with perfmodel")
    p.add_argument("--dataset", default=DEMO_DATASET, help="a name from `perfmodel datasets`")
    p.add_argument("--model", default="auto", help="auto or " + ", ".join(FAMILIES))
    p.set_defaults(run=_run_demo)

    p = subparsers.add_parser("datasets", help="list the datasets shipped with perfmodel")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=_run_datasets)


def _add_fit_options(p) -> None:
    p.add_argument(
        "--model",
        default="auto",
        help="auto (default: every family the data determine, best by "
        "--criterion) or one of " + ", ".join(FAMILIES),
    )
    p.add_argument(
        "--criterion",
        default=DEFAULT_CRITERION,
        choices=CRITERIA,
        help=f"model selection criterion for --model auto (default {DEFAULT_CRITERION}); "
        "the first candidate is kept unless another scores clearly better",
    )
    p.add_argument(
        "--no-blend",
        "--no-average",
        dest="average",
        action="store_false",
        help="with --model auto, answer with the single family the criterion prefers "
        "instead of the default blend (a geometric mean of amdahl, weak_data_parallel, "
        "power laws and usl whose weights depend on the regime and on how far ahead), "
        "which extrapolates published series better",
    )
    p.add_argument(
        "--loss",
        default=None,
        choices=LOSSES,
        help="log (relative error, default), squared (least squares on the "
        "measured quantity), relative or huber (robust to outliers); giving it "
        "turns off --model auto's blend",
    )
    scaling = p.add_mutually_exclusive_group()
    scaling.add_argument(
        "--weak-scaling",
        action="store_true",
        help="each GPU keeps its batch as GPUs are added: a time column is the step time "
        "of more work (default: inferred from the data, and said)",
    )
    scaling.add_argument(
        "--strong-scaling",
        action="store_true",
        help="the global batch is fixed: a time column is the time of a fixed amount of work",
    )
    p.add_argument(
        "--fix",
        action="append",
        metavar="NAME=VALUE",
        help="hold a parameter at a known value (repeatable)",
    )
    p.add_argument(
        "--bound",
        action="append",
        metavar="NAME=LO:HI",
        help="keep a parameter inside [LO, HI]; leave a side empty (repeatable)",
    )
    p.add_argument("--gpus-column", help="name of the GPU-count column")
    p.add_argument("--time-column", help="name of the time column")
    p.add_argument(
        "--time-unit",
        default=None,
        choices=("s", "ms", "us"),
        help="unit of --time-column (default: the unit its name ends in, as in Time_ms, "
        "else s); a name and a unit that disagree are refused",
    )
    p.add_argument("--throughput-column", help="name of the throughput column (work/s)")
    p.add_argument("--series", help="the series to fit when the CSV has a 'series' column")
    p.add_argument(
        "--starts",
        type=whole(1, MAX_STARTS),
        default=DEFAULTS.n_starts,
        help=f"multi-start points (default {DEFAULTS.n_starts}, at most {MAX_STARTS})",
    )
    p.add_argument("--seed", type=whole(0, MAX_SEED), default=0, help="seed of the starting points")


def _add_optimal_options(p) -> None:
    p.add_argument(
        "--max-gpus",
        type=whole(1, MAX_GPUS, "every GPU count up to it is evaluated"),
        default=4096,
        help=f"largest GPU count (4096; at most {MAX_GPUS})",
    )
    p.add_argument(
        "--objective",
        default="time",
        choices=("time", "cost", *train.OBJECTIVES),
        help="time: fastest; cost: fewest GPU-hours per unit of work; with a time-to-train "
        "fit, time-to-train or cost-to-train: the GPU count and global batch that reach "
        "the target fastest or cheapest",
    )
    p.add_argument(
        "--price-per-gpu-hour", type=POSITIVE, help="price of a GPU for an hour, in --currency"
    )
    p.add_argument("--currency", default="", help="currency of the prices, e.g. USD")
    p.add_argument(
        "--deadline",
        type=POSITIVE,
        help="seconds per step (per unit of work for throughput): also the cheapest count "
        "meeting it; with --objective cost, the optimum",
    )
    p.add_argument(
        "--budget",
        type=POSITIVE,
        help="currency per hour: also the fastest count within it (needs --price-per-gpu-hour)",
    )
    p.add_argument(
        "--multiple-of",
        type=whole(1),
        default=None,
        help="only 1 and multiples of this, for the recommendation, the knee and the optimum "
        "(default: gpus_per_node when the fit's data give it, else 1)",
    )
    p.add_argument(
        "--threshold",
        type=POSITIVE,
        default=0.5,
        help="diminishing returns once one more GPU adds less speedup (0.5)",
    )
    p.add_argument(
        "--efficiency-floor",
        type=number(above=0, at_most=1),
        help="diminishing returns once efficiency falls below this",
    )


def _add_interval_options(p, what: str) -> None:
    p.add_argument(
        "--interval",
        type=PROBABILITY,
        metavar="LEVEL",
        help=f"probability of a central interval, e.g. 0.9; {what}",
    )
    p.add_argument(
        "--method",
        default=None,
        choices=METHODS,
        help="conformal (the default blend's intervals, calibrated on published series), "
        "laplace (a single family's default) or a vmapped bootstrap",
    )


def _parse_fix(items) -> dict[str, float]:
    return {k: to_float(v, f"--fix {k}") for k, v in parse_assignments(items, "--fix").items()}


def _parse_bounds(items) -> dict[str, tuple[float | None, float | None]]:
    bounds = {}
    for name, text in parse_assignments(items, "--bound").items():
        lo, sep, hi = text.partition(":")
        if not sep:
            raise InputError(f"--bound {name}: expected LO:HI, got {text!r}")
        bounds[name] = (
            to_float(lo, f"--bound {name} LO") if lo.strip() else None,
            to_float(hi, f"--bound {name} HI") if hi.strip() else None,
        )
    return bounds


def fixes_and_bounds(args) -> tuple[dict, dict]:
    """``(fix, bounds)`` from --fix and --bound, refusing a fix outside its own bound."""
    fix, bounds = _parse_fix(args.fix), _parse_bounds(args.bound)
    for name, value in fix.items():
        lo, hi = bounds.get(name, (None, None))
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            span = f"{'' if lo is None else f'{lo:g}'}:{'' if hi is None else f'{hi:g}'}"
            raise InputError(
                f"--fix {name}={value:g} lies outside --bound {name}={span}; "
                "a fixed parameter is not fitted: drop one of the two"
            )
    return fix, bounds


def check_target(args, data) -> None:
    """Refuse a scaling flag that contradicts what the CSV's batch columns state."""
    for flag, scaling in (("--weak-scaling", "weak"), ("--strong-scaling", "strong")):
        if getattr(args, flag[2:].replace("-", "_"), False) and data.scaling not in (
            None,
            scaling,
        ):
            raise InputError(
                f"{data.source}: {flag} contradicts the CSV, whose batch columns say "
                f"{data.scaling} scaling (global_batch or batch_per_gpu); drop one of them"
            )


def fit_options(args) -> dict:
    """`fit`'s keyword arguments from the fit flags (--loss, --fix, --bound, ...)."""
    fix, bounds = fixes_and_bounds(args)
    return dict(loss=args.loss, fix=fix, bounds=bounds, n_starts=args.starts, seed=args.seed)


def fit_from_args(args, data) -> tuple[FitResult, Selection | None]:
    check_target(args, data)
    if getattr(args, "strong_scaling", False):
        data = dataclasses.replace(data, scaling="strong")
    return fit_model(
        data,
        args.model,
        weak=args.weak_scaling,
        criterion=args.criterion,
        average=args.average,
        gpu=getattr(args, "gpu", "A100-80GB"),
        **fit_options(args),
    )


def fit_model(
    data, model: str, *, weak: bool, criterion: str, average: bool, gpu=None, **options
) -> tuple[FitResult, Selection | None]:
    """Fit the family `model` (or ``"auto"``: the default blend and every candidate, by
    `criterion`). Measurements are read as seconds per unit of work (`per_unit_of_work`),
    except for the hybrid family, whose step times are of the layouts measured."""
    if weak and data.scaling is None:
        data = dataclasses.replace(data, scaling="weak")
    if model == "auto":
        selection = fit_auto(data, criterion=criterion, average=average, **options)
        return selection.best, selection
    if model not in FAMILIES:
        raise InputError(f"unknown model {model!r}; valid: auto, {', '.join(FAMILIES)}")
    if model == "hybrid":
        return fit_hybrid(data, weak=weak, gpu=gpu or "A100-80GB", **options), None
    options["loss"] = options.get("loss") or "log"
    assumed = ""
    if model != "hybrid_basic":  # its step times are those of the layouts measured
        data, assumed = per_unit_of_work(data)
    result = fit(build(model), data, **options)
    return dataclasses.replace(result, assumed=assumed), None


def _print_fit(result: FitResult, selection: Selection | None) -> None:
    print(result.summary(common.TABLE_WIDTH))
    if selection is not None:
        print()
        print(selection.table(common.TABLE_WIDTH))
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)


def _load_csv(args):
    return load_benchmarks(
        args.csv,
        gpus_column=args.gpus_column,
        time_column=args.time_column,
        time_unit=args.time_unit,
        throughput_column=args.throughput_column,
        throughput_unit=dataset_unit(args.csv),
        series=args.series,
    )


def _run_fit(args) -> int:
    if train.is_time_to_train(args):
        return train.run_fit(args, fit_options(args))
    inputs = input_paths(args.csv, args.with_collective, args.collective_fit)
    reports = {} if args.report is None else report_outputs(args.report, "--report")
    check_outputs({"-o": args.output, **reports}, inputs)
    if args.report is not None:
        check_report_path(args.report)
    data = train.read_data(args) if train.reads_logs(args) else _load_csv(args)
    extra = {}
    if uses_collectives(args):
        selection = None
        check_target(args, data)
        fix, bounds = fixes_and_bounds(args)
        result, extra = fit_with_collectives(args, data, fix, bounds)
    else:
        result, selection = fit_from_args(args, data)
    if selection is not None:
        extra["selection"] = {
            "criterion": selection.criterion,
            "candidates": selection.rows(),
        }
    # A Megatron-LM hybrid fit answers with a layout search (`optimal`'s): the GPU-count
    # recommendation varies gpus alone at the fit's default layout, which is invalid at
    # most counts (1 GPU for a tp=8, pp=64 run).
    layouts = hybrid_kind(result.model) == "hybrid"
    answer = _layout_answer(result) if layouts else _recommend(result)
    with all_or_nothing():  # the fit and its report, or neither
        if args.output is not None:
            save_fit(result, args.output, extra)
        if args.report is not None:
            from .._show import write_report

            written = write_report(result, args.report, selection=selection)
    if args.output is not None:
        message(f"wrote {args.output}")
    if args.report is not None:
        message("wrote " + ", ".join(written))
    if args.json:
        opening = {"optimal": answer} if layouts else {"recommendation": answer.to_dict()}
        print_json({**fit_to_dict(result), **extra, **opening})
    else:
        if not layouts:
            print(answer.summary(common.TABLE_WIDTH))
        elif "error" in answer:
            print(f"no layout search: {answer['error']}")
        else:
            print_optimal_layout(answer)
        print()
        _print_fit(result, selection)
        print_collective_extra(extra)
    return 0


def _layout_answer(result: FitResult) -> dict:
    """`optimal_layout` of a hybrid fit at its defaults, or ``{"error": why}`` when no
    layout can be searched (the fit itself stands)."""
    try:
        return optimal_layout(result)
    except InputError as error:
        return {"error": str(error)}


def _bound(value) -> float | None:
    # JSON has no inf: an unbounded end (parameters the data leave open) is null.
    return float(value) if math.isfinite(value) else None


def prediction_rows(
    result: FitResult,
    gpus,
    interval: float | None = None,
    method: str | None = None,
    kind: str = "prediction",
) -> list[dict]:
    """Rows of `predict`; with `interval`, ``_lo``/``_hi`` bounds of that `kind`
    (``"prediction"``: a new measurement; ``"confidence"``: the curve) named per row."""
    predicted = result.predict(gpus)
    band = None
    if interval is not None:
        draws = shared_ensemble(result, method)
        band = predict_interval(result, gpus, interval, method, kind=kind, ensemble=draws)
    rows = []
    for i, n in enumerate(gpus):
        row = {"gpus": int(n), "time_s": float(predicted["time_s"][i])}
        if band is not None:
            row["time_s_lo"] = _bound(band["time_s_lo"][i])
            row["time_s_hi"] = _bound(band["time_s_hi"][i])
        if "throughput" in predicted:
            row["throughput"] = float(predicted["throughput"][i])
            if band is not None:
                row["throughput_lo"] = _bound(band["throughput_lo"][i])
                row["throughput_hi"] = _bound(band["throughput_hi"][i])
        row["speedup"] = float(predicted["speedup"][i])
        row["efficiency"] = float(predicted["efficiency"][i])
        if band is not None:
            row["interval"] = f"{interval:.0%} {kind}"
        rows.append(row)
    return rows


INTERVAL_MEANING = {
    "prediction": "prediction interval: where a new measurement would fall (parameters, "
    "measurement noise and, outside the measured counts, model-form drift)",
    "confidence": "confidence interval of the curve: the mean step time (parameters and, "
    "outside the measured counts, model-form drift; no measurement noise)",
    "conformal": "prediction interval: where a new measurement would fall (conformal: the "
    "default blend's errors on published series, widening with the doublings beyond the "
    "measured counts, where its families disagree and where it misses its own points)",
}


def _run_predict(args) -> int:
    if train.has_time_to_train(args.fit):
        return train.run_predict(args)
    result = load_with_changes(args.fit, args.set)
    if run_predict(args, result, print_json, format_table):  # hybrid fits: layouts
        return 0
    if not args.gpus:
        raise InputError("--gpus: give GPU counts, e.g. --gpus 1,8,64")
    gpus = parse_list(args.gpus, "--gpus", cast=int)
    rows = prediction_rows(result, gpus, args.interval, args.method, args.kind)
    if args.json:
        print_json(rows)
        return 0
    unit = "s per unit of work" if result.target == "throughput" else "s per step"
    print(
        f"{result.label} fit of {result.data.source} (time_s in {unit}, "
        f"speedup vs 1 GPU, {result.precision})"
    )
    if args.interval is not None:
        method = args.method or result.intervals
        meaning = INTERVAL_MEANING["conformal" if method == "conformal" else args.kind]
        text = f"_lo/_hi: {args.interval:.0%} {meaning}; {method}"
        print(wrap(text + ", empty: unbounded", common.TABLE_WIDTH))
        for row in rows:
            del row["interval"]
    print(format_table(rows))
    return 0


def optimal_options(args) -> dict:
    """`optimal_layout`'s keyword arguments from the optimal flags (hybrid fits)."""
    return dict(
        max_gpus=args.max_gpus,
        objective=args.objective,
        price_per_gpu_hour=args.price_per_gpu_hour,
        deadline=args.deadline,
        multiple_of=args.multiple_of or 1,
        threshold=args.threshold,
        efficiency_floor=args.efficiency_floor,
    )


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


def optimal_document(
    answer: Recommendation, interval: float | None = None, method: str | None = None
) -> dict:
    """The JSON of `perfmodel optimal`: the best count by the objective, the point of
    diminishing returns and, under ``recommendation``, the count worth buying."""
    best, knee = answer.optimum, answer.knee
    document = {
        "gpus": best.gpus,
        "time_s": best.time_s,
        "speedup": best.speedup,
        "efficiency": best.efficiency,
        "gpu_seconds_per_step": best.gpu_seconds,
        "cost_per_step": best.cost,
        "cost_unit": answer.alternatives[0].cost_unit if best.cost is not None else None,
        "objective": best.objective,
        "searched_up_to": best.searched,
        "at_search_limit": best.at_limit,
        "diminishing_returns": {
            "gpus": knee.gpus,
            "criterion": knee.criterion,
            "marginal_speedup": knee.marginal_speedup,
            "efficiency": knee.efficiency,
            "speedup": knee.speedup,
        },
        "amdahl_bound": answer.amdahl_bound,
        "recommendation": answer.to_dict(),
    }
    if answer.unit != "step":
        document["throughput"] = 1.0 / best.time_s
    if interval is not None:
        document["interval"] = {"level": interval, "kind": "confidence", "method": method}
        document["gpus_interval"] = list(best.gpus_interval or (None, None))
        document["diminishing_returns"]["gpus_interval"] = list(knee.gpus_interval)
    return document


def _print_optimal(answer: Recommendation) -> None:
    print(answer.summary(common.TABLE_WIDTH))
    print(wrap(f"  {answer.knee.summary()}", common.TABLE_WIDTH))
    if answer.amdahl_bound is not None:
        print(f"  Amdahl bound on speedup: {answer.amdahl_bound:.4g}×")


def answer_for(result: FitResult, options: dict) -> tuple[Recommendation, Ensemble | None]:
    """The recommendation, with the optimum's interval from the same draws when asked."""
    draws = draws_or_none(result, options.get("method"))
    if draws is None:
        options = {**options, "level": None}
    answer = recommend(result, **options, ensemble=draws)
    return answer, draws


def _recommend(result: FitResult) -> Recommendation:
    """The recommendation `fit` and `demo` open with, on the fit's shared draws."""
    draws = draws_or_none(result)
    return recommend(result, ensemble=draws, level=None if draws is None else 0.9)


def _run_optimal(args) -> int:
    if args.objective in train.OBJECTIVES:
        return train.run_optimal(args)
    result = load_with_changes(args.fit, args.set)
    if is_hybrid(result.model):  # a layout search (`optimal_layout`)
        document = optimal_layout(result, **optimal_options(args))
        print_json(document) if args.json else print_optimal_layout(document)
        return 0
    answer, draws = answer_for(result, recommend_options(args))
    if args.interval is not None:
        best = optimal_gpus(
            result,
            max_gpus=args.max_gpus,
            objective=args.objective,
            price_per_gpu_hour=args.price_per_gpu_hour,
            deadline_s=args.deadline if args.objective != "time" else None,
            multiple_of=answer.multiple_of,
            interval=args.interval,
            ensemble=draws,
        )
        answer = dataclasses.replace(answer, optimum=best)
    if args.json:
        print_json(optimal_document(answer, args.interval, args.method or result.intervals))
    else:
        _print_optimal(answer)
    return 0


def _run_demo(args) -> int:
    path = dataset_path(args.dataset)
    data = load_dataset(args.dataset)
    print(f"perfmodel demo: how many GPUs are worth it for {path.stem}?\n")
    result, selection = fit_model(
        data, args.model, weak=False, criterion=DEFAULT_CRITERION, average=True
    )
    print(_recommend(result).summary(common.TABLE_WIDTH))
    print()
    _print_fit(result, selection)
    gpus = sorted({1, 2, 4, 8, 16, 32, 64, 128, 256, *map(int, data.gpus)})
    print("\npredictions:")
    print(format_table(prediction_rows(result, gpus)))
    return 0


def _run_datasets(args) -> int:
    infos = list_datasets()
    rows = [
        {
            "name": i.name,
            "rows": i.rows,
            "gpu_counts": i.distinct_gpus,
            "quantity": i.quantity,
            "scaling": i.scaling,
        }
        for i in infos
    ]
    if args.json:
        print_json(rows)
    else:
        print(format_table(rows))
    return 0
