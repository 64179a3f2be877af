"""`perfmodel fit`, `predict`, `optimal`, `demo` and `datasets`."""

import dataclasses
import os
import sys

import numpy as np

from .._data import load_benchmarks
from .._datasets import dataset_path, list_datasets, load_dataset
from .._errors import FitError, InputError
from .._files import all_or_nothing, shipped_csv, shipped_file
from .._fitting import (
    DEFAULT_CRITERION,
    fit,
    fit_auto,
    fit_blend,
    fit_hybrid,
    FitResult,
    fittable_family,
    log_log_slope,
    per_unit_of_work,
    Selection,
)
from .._io import finite_or_null, fit_to_dict, save_fit
from .._presets import build, FAMILIES, hybrid_kind, is_hybrid
from .._questions import (
    recommend,
    Recommendation,
)
from .._readers import header_columns
from .._saved import from_document, SAVED_FAMILIES
from .._text import counted, wrap
from . import common, train
from .analysis import apply_changes, load_with_changes
from .answers import (
    answer_optimal,
    prediction_rows,
    print_predictions,
    refuse_global_batch,
    text_row,
)
from .cache import mark_checked
from .collective import (
    fit_with_collectives,
    print_collective_extra,
    uses_collectives,
)
from .common import (
    check_outputs,
    format_table,
    input_paths,
    message,
    parse_assignments,
    print_json,
    to_float,
    warn_not_converged,
)
from .draws import draws_or_none
from .layout import (
    optimal_layout,
    print_optimal_layout,
)
from .layout import run_predict as predict_layouts
from .plot import check_report_path, report_outputs
from .quick import ensembles


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
        gpu=getattr(args, "gpu", None),
        **fit_options(args),
    )


def fit_model(
    data, model: str, *, weak: bool, criterion: str, average: bool, gpu=None, **options
) -> tuple[FitResult, Selection | None]:
    """Fit the family `model` (or ``"auto"``: the default blend and every candidate, by
    `criterion`). Measurements are read as seconds per unit of work (`per_unit_of_work`),
    except by the families that read global_batch (batch_linear and the hybrid ones),
    which fit the step times measured."""
    if weak and data.scaling is None:
        data = dataclasses.replace(data, scaling="weak")
    if model == "auto":
        selection = fit_auto(data, criterion=criterion, average=average, **options)
        return selection.best, selection
    if model not in FAMILIES or model == "blend":
        fittable_family(model)  # refuses it, naming the families and the closest one
    if model == "hybrid":
        return fit_hybrid(data, weak=weak, gpu=gpu, **options), None
    options["loss"] = options.get("loss") or "log"
    family = build(model)
    # Seconds per step for the families that read global_batch (batch_linear,
    # hybrid_basic): they share the batch over the GPUs themselves.
    data, assumed = per_unit_of_work(data, family)
    # A power law by name: `fit` fits its exponent (the preset holds it as an option).
    result = fit(model if model == "power_law" else family, data, **options)
    return dataclasses.replace(result, assumed=assumed), None


def _print_fit(result: FitResult, selection: Selection | None) -> None:
    print(result.summary(common.TABLE_WIDTH))
    if selection is not None:
        print()
        print(selection.table(common.TABLE_WIDTH))
    warn_not_converged(result.converged, result.message, options="--bound or --fix")
    for warning in collapsed_warnings(result.warnings):
        print(f"warning: {warning}", file=sys.stderr)
    # NaN (one distinct count) says nothing either way; nor does R² of measurements that
    # all agree within 0.1%: an exact fit of 1000 + 1e-9·i read "R² -3.9e+11 … MAPE 0.0%"
    # (review of 2026-12-07).
    if result.r2 < 0.0 and result.mape >= 0.1:
        # "R² -0.35 … converged" read as a fit to trust (newcomer review, 2026-12-06).
        print(
            f"warning: the fit misses its own measurements: R² {result.r2:.2f} (worse than "
            f"their mean), MAPE {result.mape:.1f}%; check the data"
            + (" and how they were read (the line 'assumed:' above)" if result.assumed else ""),
            file=sys.stderr,
        )


ZEROED = " is not identifiable: its family's exact fit set it to 0 (the data show no such term)"


def collapsed_warnings(warnings) -> list[str]:
    """The fit's warnings with the blend's "set to 0" ones in one line: a default fit
    printed one line per member term its data do not show (three or four on most
    tables), each repeating the same words."""
    zeroed = [w.removesuffix(ZEROED) for w in warnings if w.endswith(ZEROED)]
    rest = [w for w in warnings if not w.endswith(ZEROED)]
    if len(zeroed) > 1:
        return [
            *rest,
            f"not identifiable, their families' exact fits set them to 0 (the "
            f"data show no such term): {', '.join(zeroed)}",
        ]
    return list(warnings)


# `fit`'s options for training logs, which a benchmark CSV gives as columns instead.
_LOG_OPTIONS = (
    "gpus",
    "global_batch",
    "step_column",
    "timestamp_column",
    "batch_column",
    "quantity",
    "all_runs",
)


def _refuse_log_options(args) -> None:
    """One line naming the log options given with a benchmark CSV (they were ignored)."""
    given = [f"--{name.replace('_', '-')}" for name in _LOG_OPTIONS if getattr(args, name, None)]
    if getattr(args, "warmup", "auto") != "auto":
        given.append("--warmup")
    if given:
        raise InputError(
            f"{', '.join(given)}: an option of training logs; {args.csv} is a benchmark "
            "CSV (a gpus column and a measured one), which gives the GPU count and the "
            "global batch as columns (gpus, global_batch)"
        )


def _load_csv(args):
    _refuse_log_options(args)
    data = _read_csv(args)
    if data.target == "time" and "global_batch" in data.config:
        # A CSV of runs to a target read as step times: "Buy 59 GPUs" of times to train,
        # the samples column ignored without a word (review round 11b).
        work = [c for c in ("samples", "epochs") if c in _csv_header(args.csv)]
        if work:
            message(
                f"warning: {args.csv} has a {work[0]!r} column beside global_batch, as runs "
                "trained to a target have: this fit reads time_s as seconds per step; for "
                "time to train, fit with --time-to-train"
            )
    return data


def _csv_header(path: str) -> list[str]:
    """The columns of the CSV at `path` (none for standard input, read once)."""
    if path == "-" or not os.path.isfile(path):
        return []
    with open(path, encoding="utf-8", errors="replace") as stream:
        return header_columns(stream.read(65536))


def _read_csv(args):
    return load_benchmarks(
        args.csv,
        gpus_column=args.gpus_column,
        time_column=args.time_column,
        time_unit=args.time_unit,
        throughput_column=args.throughput_column,
        throughput_unit=args.throughput_unit,
        series=args.series,
        gpus_per_node=args.gpus_per_node,
    )


def shipped_or_path(text: str) -> str:
    """`text` as given when it names a file or folder; else the shipped dataset of that
    name, when there is one (``fit tf_dgx1_p100_resnet50_real``), or the shipped file a
    missing ``datasets/…`` path names (the docs' paths, run outside a checkout)."""
    if os.path.exists(text) or text == "-":
        return text
    if os.sep in text:  # the docs' `datasets/NAME.csv`, outside a checkout
        found = shipped_file(text)
        return text if found is None else str(found)
    shipped = shipped_csv(text)
    return text if shipped is None else str(shipped)


def _refuse_unread_options(args) -> None:
    """Options the fit asked for would not read: refused, not ignored (`--gpu H100` on a
    data-parallel fit, `--collective-weight` without collectives, `--work` of a step-time
    CSV were accepted and changed nothing)."""
    if getattr(args, "gpu", None) is not None and args.model != "hybrid":
        raise InputError("--gpu is read by --model hybrid only (its GPU's published numbers)")
    collective = getattr(args, "with_collective", None) or getattr(args, "collective_fit", None)
    for flag, key, default in (
        ("--collective-weight", "collective_weight", 1.0),
        ("--collective-ranks", "collective_ranks", None),
    ):
        if getattr(args, key, default) != default and not collective:
            raise InputError(f"{flag} is read with --with-collective only")


def run_fit(args) -> int:
    _refuse_unread_options(args)
    args.csv = shipped_or_path(args.csv)
    if train.is_time_to_train(args):
        return train.run_fit(args, fit_options(args))
    inputs = input_paths(train.input_files(args), args.with_collective, args.collective_fit)
    reports = {} if args.report is None else report_outputs(args.report, "--report")
    check_outputs({"-o": args.output, **reports}, inputs)
    train.check_outside_log_folders({"-o": args.output, **reports}, args)
    if args.report is not None:
        check_report_path(args.report)
        if args.model == "hybrid":
            raise InputError(
                "--report: a hybrid fit answers per layout, which the report's GPU-count "
                "curves cannot show; fit without --report, then perfmodel optimal FIT"
            )
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
        # JSON numbers only: a score the criterion cannot give (the blend's "—", a
        # family's "undefined") is null, its note says why.
        rows = [
            {
                k: (None if k == selection.criterion and isinstance(v, str) else v)
                for k, v in r.items()
            }
            for r in selection.rows()
        ]
        extra["selection"] = {"criterion": selection.criterion, "candidates": rows}
    # A Megatron-LM hybrid fit answers with a layout search (`optimal`'s): the GPU-count
    # recommendation varies gpus alone at the fit's default layout, which is invalid at
    # most counts (1 GPU for a tp=8, pp=64 run).
    layouts = hybrid_kind(result.model) == "hybrid"
    answer = _layout_answer(result) if layouts else _recommend(result)
    other = None if layouts or selection is None else _other_scaling(args, data, result, answer)
    if other is not None:
        extra["scaling_alternative"] = other
    with all_or_nothing():  # the fit and its report, or neither
        if args.output is not None:
            args.written_fit = save_fit(result, args.output, extra)  # for `replay`
        if args.report is not None:
            from .._show import write_report

            written = write_report(result, args.report, selection=selection)
    if args.output is not None:
        mark_checked(args.output)  # save_fit checked it against the schema
        message(f"wrote {args.output}")
    if args.report is not None:
        message("wrote " + ", ".join(written))
    if args.json:
        opening = {"optimal": answer} if layouts else {"recommendation": answer.to_dict()}
        print_json({**fit_to_dict(result), **extra, **opening})
    else:
        if not layouts:
            print(answer.summary(common.TABLE_WIDTH))
            if other is not None:
                print(wrap("  " + other["note"], common.TABLE_WIDTH))
        elif "error" in answer:
            print(f"no layout search: {answer['error']}")
        else:
            print_optimal_layout(answer)
        print()
        _print_fit(result, selection)
        print_collective_extra(extra)
    return 0


# An answer this many times apart under the other reading of unstated step times is
# worth a line beside it.
SCALING_APART = 1.5


def _other_scaling(args, data, result: FitResult, answer: Recommendation) -> dict | None:
    """The count worth buying had the step times been read as one global batch for every
    run (strong scaling), when the runs do not say how the batch grew, the answer lies
    past the counts measured (inside them the data decide, whatever the reading) and
    that count is `SCALING_APART` or more times the answer's; else None. A 1–32 GPU
    table of step times of a fixed global batch, given without saying so, was answered
    "Buy 96 GPUs" where `--strong-scaling` answers 16 (review round 11). The other
    reading is the default blend alone (`fit_blend`, closed forms), not every family.
    Step times that the slope rule read as a fixed batch per GPU (`per_unit_of_work`) get
    the other reading too while they fall at all: 10, 7, 6, 5.8, 5.9 s on 1–16 GPUs was
    answered "Buy 64 GPUs" where a shared batch answers 1 GPU (newcomer review, 2026-12-06)."""
    if data.target != "time" or data.scaling is not None or data.per_gpu:
        return None
    if args.weak_scaling or getattr(args, "strong_scaling", False):
        return None
    if result.family != "blend" or result.model.regime == "strong":
        return None
    slope = log_log_slope(data)
    if result.data.per_gpu and slope >= 0.0:  # steps that never shorten: weak, clearly
        return None
    if answer.gpus <= float(np.max(result.data.gpus)):
        return None
    try:
        strong, _ = per_unit_of_work(dataclasses.replace(data, scaling="strong"))
        alternative = fit_blend(strong)
        # In NumPy, as `_recommend` answers (JAX would compile the curves again: 1.5 s).
        document = finite_or_null(fit_to_dict(alternative))
        count = recommend(from_document(data.source, document, ensembles()), level=None).gpus
    except (InputError, FitError):  # the answer stands without the other reading
        return None
    if max(count, answer.gpus) < SCALING_APART * min(count, answer.gpus):
        return None
    read = (
        f"read as steps of a fixed batch per GPU (weak scaling), since the step time falls "
        f"slower than a shared batch's would (log-log slope {slope:.2f})"
        if result.data.per_gpu
        else "read as a fixed batch per GPU (weak scaling), the usual benchmark"
    )
    note = (
        f"the runs do not say whether the global batch was fixed: {read}. Read as one "
        f"global batch shared by every run, the count worth buying is "
        f"{counted(count, 'GPU')}, not {answer.gpus}: say which (--strong-scaling or "
        "--weak-scaling; a global_batch or batch_per_gpu column)"
    )
    return {"scaling": "strong", "gpus": count, "note": note}


def _layout_answer(result: FitResult) -> dict:
    """`optimal_layout` of a hybrid fit at its defaults, or ``{"error": why}`` when no
    layout can be searched (the fit itself stands)."""
    try:
        return optimal_layout(result)
    except InputError as error:
        return {"error": str(error)}


def run_predict(args) -> int:
    if train.has_time_to_train(args.fit):
        return train.run_predict(args)
    result = load_with_changes(args.fit, args.set)
    refuse_global_batch(args, result)
    if predict_layouts(args, result, print_json, format_table):  # hybrid fits: layouts
        return 0
    if not args.gpus:
        raise InputError("--gpus: give GPU counts, e.g. --gpus 1,8,64")
    return print_predictions(args, result)


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


def _recommend(result: FitResult) -> Recommendation:
    """The recommendation `fit` and `demo` open with, on the fit's shared draws: in NumPy
    when `perfmodel._saved` evaluates the family (the same answer as JAX's, without
    compiling the curves of every draw), else with JAX."""
    saved = None
    if result.family in SAVED_FAMILIES:
        # The fit's own document, as its file would read back (without writing and
        # parsing 10⁶ measurements as text).
        document = finite_or_null(fit_to_dict(result))
        saved = from_document(result.data.source, document, ensembles())
    draws = None if saved is not None and saved.intervals == "conformal" else draws_or_none(result)
    if saved is not None and (draws is not None or saved.intervals == "conformal"):
        try:
            return recommend(saved, level=0.9)
        except KeyError:  # the Laplace draws could not be cached (PERFMODEL_NO_CACHE)
            pass
    return recommend(result, ensemble=draws, level=None if draws is None else 0.9)


# What each kind of `optimal` reads, of the options the other reads: given to the wrong
# one they were ignored, silently (`--budget 5` beside an answer of 4096 GPUs).
_TRAIN_ONLY = {"global_batch": ("--global-batch", None), "min_gain": ("--min-gain", 0.1)}
_STEP_ONLY = {
    "budget": ("--budget", None),
    "threshold": ("--threshold", 0.5),
    "efficiency_floor": ("--efficiency-floor", None),
}


# Read by a hybrid fit's layout search alone: the best layout at one GPU count.
_LAYOUT_ONLY = {"gpus": ("--gpus", None)}
# What a hybrid fit's layout search does not read, of `optimal`'s options: it answered
# 512 GPUs beside --budget 1 at 2 per GPU-hour, without a word (fuzz round 11).
_STEP_COUNT_ONLY = {
    "budget": ("--budget", None),
    "interval": ("--interval", None),
    "method": ("--method", None),
}


def _refuse_unread(args, options: dict, what: str) -> None:
    for name, (flag, default) in options.items():
        if getattr(args, name, default) != default:
            raise InputError(f"{flag} is not read by {what}; leave it out")


def run_optimal(args) -> int:
    chosen = f"--objective {args.objective}"
    if args.objective is None:
        # A time-to-train fit answers time to the target: the step fit's answer (per step
        # at one global batch, a --deadline read per step) was given to a user who asked
        # "train within 60 s" and read 1 GPU (review round 11b).
        args.objective = "time"
        if train.has_time_to_train(args.fit):
            args.objective = "cost-to-train" if args.deadline is not None else "time-to-train"
            chosen = (
                f"--objective {args.objective}, the default of a time-to-train fit "
                "(--objective time asks its step fit)"
            )
    if args.objective in train.OBJECTIVES:
        _refuse_unread(args, _STEP_ONLY, chosen)
        _refuse_unread(args, _LAYOUT_ONLY, chosen)
        return train.run_optimal(args)
    _refuse_unread(args, _TRAIN_ONLY, f"--objective {args.objective} (time-to-train fits read it)")
    run_fit = load_with_changes(args.fit, None)  # as fitted: its run's recipe, for notes
    result = apply_changes(run_fit, args.set)
    if is_hybrid(result.model):  # a layout search (`optimal_layout`)
        _refuse_unread(args, _STEP_COUNT_ONLY, "a hybrid fit's layout search")
        if args.deadline is not None and args.objective != "cost":
            raise InputError(
                "--deadline is read with --objective cost by a hybrid fit's layout search "
                "(the cheapest layout that fast); add it or leave --deadline out"
            )
        if args.currency and args.price_per_gpu_hour is None:
            raise InputError("--currency names the currency of --price-per-gpu-hour; give both")
        pinned = tuple(parse_assignments(args.set, "--set")) if args.set else ()
        document = optimal_layout(
            result,
            **optimal_options(args),
            pinned=pinned,
            at_gpus=args.gpus,
            run_fit=run_fit if args.set else None,
        )
        document["currency"] = args.currency or None
        print_json(document) if args.json else print_optimal_layout(document)
        return 0
    _refuse_unread(args, _LAYOUT_ONLY, f"a {result.family} fit (it answers every count)")
    return answer_optimal(args, result)


def run_demo(args) -> int:
    path = dataset_path(args.dataset)
    data = load_dataset(args.dataset)
    result, selection = fit_model(  # before any output: a bad --model prints nothing
        data, args.model, weak=False, criterion=DEFAULT_CRITERION, average=True
    )
    gpus = sorted({1, 2, 4, 8, 16, 32, 64, 128, 256, *map(int, data.gpus)})
    rows = prediction_rows(result, gpus)
    answer = _recommend(result)
    if args.json:  # as `fit --json`, with the predictions the table shows
        document = {"recommendation": answer.to_dict(), "predictions": rows}
        print_json({**fit_to_dict(result), **document})
        return 0
    print(f"perfmodel demo: how many GPUs are worth it for {path.stem}?\n")
    print(answer.summary(common.TABLE_WIDTH))
    print()
    _print_fit(result, selection)
    print("\npredictions:")
    print(format_table([text_row(row) for row in rows]))  # efficiency as `predict` prints
    return 0


def run_datasets(args) -> int:
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
