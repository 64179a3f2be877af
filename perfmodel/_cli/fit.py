"""`perfmodel fit`, `predict`, `optimal`, `demo` and `datasets`."""

import math
import sys

from .._data import load_benchmarks
from .._datasets import dataset_path, dataset_unit, list_datasets, load_dataset
from .._errors import InputError
from .._fitting import (
    AVERAGED_FAMILY,
    CRITERIA,
    DEFAULT_CRITERION,
    DEFAULTS,
    fit,
    fit_auto,
    FitResult,
    LOSSES,
    MARGIN,
    Selection,
)
from .._io import fit_to_dict, save_fit
from .._presets import build, FAMILIES, is_hybrid
from .._questions import amdahl_bound, diminishing_returns, optimal_gpus
from .._uncertainty import METHODS, predict_interval
from .analysis import load_with_changes, SET_HELP
from .collective import (
    add_collective_options,
    fit_with_collectives,
    print_collective_extra,
    uses_collectives,
)
from .common import format_table, parse_assignments, parse_list, print_json, to_float
from .layout import (
    add_fit_options,
    add_layout_options,
    fit_hybrid,
    optimal_layout,
    print_optimal_layout,
    run_predict,
)
from .plot import check_report_path

DEMO_DATASET = "tf_dgx1_p100_vgg16_real"


def register(subparsers) -> None:
    p = subparsers.add_parser("fit", help="fit a model to a benchmark CSV")
    p.add_argument("csv", help="benchmark CSV: gpus and time_s/time_ms/time_us/throughput")
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
    p.add_argument("--json", action="store_true", help="print a JSON list of rows")
    p.set_defaults(run=_run_predict)

    p = subparsers.add_parser("optimal", help="best GPU count and diminishing returns")
    p.add_argument("fit", help="fit JSON written by `perfmodel fit -o`")
    _add_optimal_options(p)
    p.add_argument("--set", action="append", metavar="NAME=VALUE", help=SET_HELP)
    _add_interval_options(p, "adds an interval on both GPU counts")
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
        "--no-average",
        dest="average",
        action="store_false",
        help="with --model auto, keep the chosen weak_data_parallel fit instead of its "
        "average with Amdahl's law (both least squares on throughput), which "
        "extrapolates more safely from few GPU counts",
    )
    p.add_argument(
        "--loss",
        default=None,
        choices=LOSSES,
        help="log (relative error, default), squared (least squares on the "
        "measured quantity) or huber (robust to outliers); giving it turns off "
        "--model auto's average with Amdahl's law",
    )
    p.add_argument(
        "--weak-scaling",
        action="store_true",
        help="per-GPU work stays fixed as GPUs are added (time_s data only)",
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
        default="s",
        choices=("s", "ms", "us"),
        help="unit of --time-column",
    )
    p.add_argument("--throughput-column", help="name of the throughput column (work/s)")
    p.add_argument("--series", help="the series to fit when the CSV has a 'series' column")
    p.add_argument(
        "--starts",
        type=int,
        default=DEFAULTS.n_starts,
        help=f"multi-start points (default {DEFAULTS.n_starts})",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the starting points")


def _add_optimal_options(p) -> None:
    p.add_argument("--max-gpus", type=int, default=4096, help="largest GPU count (4096)")
    p.add_argument(
        "--objective",
        default="time",
        choices=("time", "cost"),
        help="time: fastest; cost: fewest GPU-hours per unit of work",
    )
    p.add_argument("--price-per-gpu-hour", type=float, help="currency per GPU-hour")
    p.add_argument("--deadline", type=float, help="with --objective cost: max seconds/step")
    p.add_argument("--multiple-of", type=int, default=1, help="only multiples (whole nodes)")
    p.add_argument(
        "--threshold",
        type=float,
        default=0.5,
        help="diminishing returns once one more GPU adds less speedup (0.5)",
    )
    p.add_argument(
        "--efficiency-floor",
        type=float,
        help="diminishing returns once efficiency falls below this",
    )


def _add_interval_options(p, what: str) -> None:
    p.add_argument(
        "--interval",
        type=float,
        metavar="LEVEL",
        help=f"probability of a central interval, e.g. 0.9; {what}",
    )
    p.add_argument(
        "--method",
        default="laplace",
        choices=METHODS,
        help="interval by the Laplace approximation (default) or a vmapped bootstrap",
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


def fit_options(args) -> dict:
    """`fit`'s keyword arguments from the fit flags (--loss, --fix, --bound, ...)."""
    if args.starts < 1:
        raise InputError(f"--starts must be ≥ 1, got {args.starts}")
    return dict(
        loss=args.loss,
        fix=_parse_fix(args.fix),
        bounds=_parse_bounds(args.bound),
        n_starts=args.starts,
        seed=args.seed,
    )


def fit_from_args(args, data) -> tuple[FitResult, Selection | None]:
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
    """Fit the family `model` (or ``"auto"``: every candidate, by `criterion`); `gpu` is
    the hybrid family's hardware (`fit_hybrid`)."""
    if model == "auto":
        selection = fit_auto(data, criterion=criterion, weak=weak, average=average, **options)
        return selection.best, selection
    if model not in FAMILIES:
        raise InputError(f"unknown model {model!r}; valid: auto, {', '.join(FAMILIES)}")
    if model == "hybrid":
        return fit_hybrid(data, weak=weak, gpu=gpu or "A100-80GB", **options), None
    options["loss"] = options.get("loss") or "log"
    weakless = model in ("hybrid_basic",)  # families without a weak-scaling variant
    if weakless and weak:
        raise InputError(f"--weak-scaling: the {model} family has no weak-scaling variant")
    return fit(build(model, **({} if weakless else {"weak": weak})), data, **options), None


def _averaged(selection: Selection) -> bool:
    return selection.candidates[0].family == AVERAGED_FAMILY


def _print_fit(result: FitResult, selection: Selection | None) -> None:
    errors = result.standard_errors()
    rows = []
    for name, value in result.parameters().items():
        spec = result.model.parameter_specs()[name]
        sd = errors.get(name, math.nan)
        rows.append(
            {
                "parameter": name,
                "value": value,
                "unit": spec.unit,
                "± (x)": "fixed"
                if name in result.fixed
                else ("?" if not math.isfinite(sd) else f"{math.exp(min(sd, 50.0)):.3g}"),
                "meaning": spec.description,
            }
        )
    print(
        f"{result.data.source}: {len(result.data.gpus)} measurements, "
        f"{result.data.distinct_configs()} distinct configurations, target {result.target}"
    )
    print(
        f"model {result.family} ({result.loss_kind} loss, {result.precision}): "
        f"R² {result.r2:.4f}, MAPE {result.mape:.2f}%, {result.message}"
    )
    print(format_table(rows))
    if selection is not None:
        print(
            f"\ncandidates (by {selection.criterion}, lower is better; the first, physical "
            "family is kept unless another is lower by more than "
            f"{MARGIN[selection.criterion]:g}"
            + ("; the chosen one is then averaged with amdahl" if _averaged(selection) else "")
            + "):"
        )
        print(format_table(selection.rows()))
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
    if args.report:
        check_report_path(args.report)
    data = _load_csv(args)
    extra = {}
    if uses_collectives(args):
        selection = None
        fix, bounds = _parse_fix(args.fix), _parse_bounds(args.bound)
        result, extra = fit_with_collectives(args, data, fix, bounds)
    else:
        result, selection = fit_from_args(args, data)
    if selection is not None:
        extra["selection"] = {
            "criterion": selection.criterion,
            "candidates": selection.rows(),
        }
    if args.output:
        save_fit(result, args.output, extra)
    if args.report:
        from .._show import write_report

        written = write_report(result, args.report, selection=selection)
        print("wrote " + ", ".join(written), file=sys.stderr)
    if args.json:
        print_json({**fit_to_dict(result), **extra})
    else:
        _print_fit(result, selection)
        print_collective_extra(extra)
        if args.output:
            print(f"\nwrote {args.output}")
    return 0


def _bound(value) -> float | None:
    # JSON has no inf: an unbounded end (parameters the data leave open) is null.
    return float(value) if math.isfinite(value) else None


def prediction_rows(
    result: FitResult, gpus, interval: float | None = None, method: str = "laplace"
) -> list[dict]:
    predicted = result.predict(gpus)
    band = None if interval is None else predict_interval(result, gpus, interval, method)
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
        rows.append(row)
    return rows


def _run_predict(args) -> int:
    result = load_with_changes(args.fit, args.set)
    if run_predict(args, result, print_json, format_table):  # hybrid fits: layouts
        return 0
    if not args.gpus:
        raise InputError("--gpus: give GPU counts, e.g. --gpus 1,8,64")
    gpus = parse_list(args.gpus, "--gpus", cast=int)
    rows = prediction_rows(result, gpus, args.interval, args.method)
    if args.json:
        print_json(rows)
    else:
        unit = "s per unit of work" if result.target == "throughput" else "s per step"
        print(
            f"{result.label} fit of {result.data.source} (time_s in {unit}, "
            f"speedup vs 1 GPU, {result.precision})"
        )
        if args.interval is not None:
            print(
                f"_lo/_hi: {args.interval:.0%} prediction interval for a new measurement "
                f"({args.method}; empty: unbounded)"
            )
        print(format_table(rows))
    return 0


def optimal_options(args) -> dict:
    """`optimal_document`'s keyword arguments from the optimal flags."""
    return dict(
        max_gpus=args.max_gpus,
        objective=args.objective,
        price_per_gpu_hour=args.price_per_gpu_hour,
        deadline=args.deadline,
        multiple_of=args.multiple_of,
        threshold=args.threshold,
        efficiency_floor=args.efficiency_floor,
        interval=args.interval,
        method=args.method,
    )


def optimal_document(
    result: FitResult,
    *,
    max_gpus: int = 4096,
    objective: str = "time",
    price_per_gpu_hour: float | None = None,
    deadline: float | None = None,
    multiple_of: int = 1,
    threshold: float = 0.5,
    efficiency_floor: float | None = None,
    interval: float | None = None,
    method: str = "laplace",
) -> dict:
    if max_gpus < 1:
        raise InputError(f"--max-gpus must be ≥ 1, got {max_gpus}")
    interval = dict(interval=interval, method=method)
    best = optimal_gpus(
        result,
        max_gpus=max_gpus,
        objective=objective,
        price_per_gpu_hour=price_per_gpu_hour,
        deadline_s=deadline,
        multiple_of=multiple_of,
        **interval,
    )
    knee = diminishing_returns(
        result,
        threshold=threshold,
        efficiency_floor=efficiency_floor,
        max_gpus=max_gpus,
        **interval,
    )
    document = {
        "gpus": best.gpus,
        "time_s": best.time_s,
        "speedup": best.speedup,
        "efficiency": best.efficiency,
        "gpu_seconds_per_step": best.gpu_seconds,
        "cost_per_step": best.cost,
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
        "amdahl_bound": amdahl_bound(result),
        "family": result.family,
        "precision": result.precision,
    }
    if result.target == "throughput":
        document["throughput"] = 1.0 / best.time_s
    if interval["interval"] is not None:
        document["interval"] = {"level": interval["interval"], "method": interval["method"]}
        document["gpus_interval"] = list(best.gpus_interval)
        document["diminishing_returns"]["gpus_interval"] = list(knee.gpus_interval)
    return document


def _interval_text(document: dict, counts) -> str:
    if counts is None:
        return ""
    lo, hi = counts
    upper = "beyond the search" if hi is None else str(hi)
    lower = "none" if lo is None else str(lo)
    return f" ({document['interval']['level']:.0%} interval {lower} to {upper})"


def _print_optimal(document: dict) -> None:
    knee = document["diminishing_returns"]
    limit = " (the search limit: more GPUs may still help)" if document["at_search_limit"] else ""
    spread = _interval_text(document, document.get("gpus_interval"))
    print(f"optimal ({document['objective']}): {document['gpus']} GPUs{spread}{limit}")
    print(
        f"  step time {document['time_s']:.4g} s, speedup {document['speedup']:.3g}x, "
        f"efficiency {document['efficiency']:.1%}"
    )
    if document["cost_per_step"] is not None:
        print(f"  cost per step {document['cost_per_step']:.4g}")
    spread = _interval_text(document, knee.get("gpus_interval"))
    if knee["gpus"] is None:
        print(f"diminishing returns: not reached up to {document['searched_up_to']} GPUs{spread}")
    else:
        print(
            f"diminishing returns from {knee['gpus']} GPUs{spread} ({knee['criterion']}): "
            f"one more GPU adds {knee['marginal_speedup']:.3g}x, "
            f"efficiency {knee['efficiency']:.1%}"
        )
    if document["amdahl_bound"] is not None:
        print(f"Amdahl bound on speedup: {document['amdahl_bound']:.4g}x")


def _run_optimal(args) -> int:
    result = load_with_changes(args.fit, args.set)
    if is_hybrid(result.model):  # a layout search (`optimal_layout`)
        document = optimal_layout(result, **optimal_options(args))
        print_json(document) if args.json else print_optimal_layout(document)
        return 0
    document = optimal_document(result, **optimal_options(args))
    if args.json:
        print_json(document)
    else:
        _print_optimal(document)
    return 0


def _run_demo(args) -> int:
    path = dataset_path(args.dataset)
    print(f"perfmodel demo: fitting the shipped dataset {args.dataset} ({path.name})\n")
    data = load_dataset(args.dataset)
    result, selection = fit_model(
        data, args.model, weak=False, criterion=DEFAULT_CRITERION, average=True
    )
    _print_fit(result, selection)
    gpus = sorted({1, 2, 4, 8, 16, 32, 64, 128, 256, *map(int, data.gpus)})
    print("\npredictions:")
    print(format_table(prediction_rows(result, gpus)))
    print()
    _print_optimal(optimal_document(result))
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
