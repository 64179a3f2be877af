"""`perfmodel fit` on the logs users have: which paths are logs, the reader options its
flags give, and the runs or `Benchmarks` read from them (with a line on stderr saying
what was read and the warm-up dropped)."""

import os
import sys

from .._errors import InputError
from .._readers import (
    AUTO_MIN_INTERVALS,
    AUTO_RULE,
    detect_format,
    header_columns,
    log_files,
    LOG_SUFFIXES,
    read_log_runs,
    read_training_runs,
    same_runs,
    STEP_COLUMNS,
)


def _paths(args) -> list[str]:
    return [args.csv, *getattr(args, "more", [])]


def input_files(args) -> list[str]:
    """Every file `perfmodel fit` reads: the paths given and the log files of the folders
    among them (an output naming one of those would replace a run)."""
    paths = [p for p in _paths(args) if p is not None and os.path.exists(p)]
    try:
        return [*paths, *log_files(paths)]
    except InputError:  # the reader says what is wrong, in its own words, later
        return paths


def check_outside_log_folders(outputs: dict[str, str | None], args) -> None:
    """Refuse a new output named like a log (``.csv``, ``.txt``, …) inside a folder of
    logs given: the next fit of that folder would read it as one of its runs."""
    folders = [p for p in _paths(args) if p is not None and os.path.isdir(p)]
    for flag, path in outputs.items():
        if path is None or os.path.splitext(path)[1] not in LOG_SUFFIXES:
            continue
        for folder in folders:
            real, inside = os.path.realpath(path), os.path.realpath(folder)
            if os.path.commonpath([real, inside]) == inside:
                raise InputError(
                    f"{path}: {flag} is inside the log folder {folder}, and the next fit "
                    "of that folder would read it as a run; write it elsewhere"
                )


def _is_log(path: str, args) -> bool:
    if os.path.isdir(path):
        return True
    if not os.path.isfile(path):
        return False
    try:
        kind = detect_format(path)
    except InputError:
        return False
    if kind in ("mllog", "megatron"):
        return True
    with open(path, encoding="latin-1") as stream:
        header = header_columns(stream.readline())
    if (args.gpus_column or "gpus") not in header:
        return True
    # A tracker export with a gpus column (W&B's history) is a log: a step column and no
    # measured column of a benchmark CSV.
    steps = (args.step_column,) if args.step_column else STEP_COLUMNS
    measured = ("time_s", "time_ms", "time_us", "throughput")
    named = (getattr(args, "time_column", None), getattr(args, "throughput_column", None))
    measured += tuple(c for c in named if c)  # named by a flag (--throughput-column)
    return any(c in header for c in steps) and not any(c in header for c in measured)


def reads_logs(args) -> bool:
    """Whether `perfmodel fit` reads training logs rather than one benchmark CSV."""
    paths = _paths(args)
    return args.format is not None or len(paths) > 1 or _is_log(paths[0], args)


def is_time_to_train(args) -> bool:
    """Whether `perfmodel fit` fits time to train: asked, or MLPerf logs read for their
    default quantity."""
    if args.time_to_train:
        return True
    if args.quantity is not None or not reads_logs(args):
        return False
    first = _paths(args)[0]
    if args.format is not None:
        return args.format == "mllog"
    try:
        if os.path.isdir(first):
            first = log_files(first)[0]
        return detect_format(first) == "mllog"
    except InputError:
        return False


def _warmup(text: str):
    if text == "auto":
        return "auto"
    try:
        value = int(text)
    except ValueError:
        raise InputError(f"--warmup: expected 'auto' or a step count, got {text!r}")
    if value < 0:
        raise InputError(f"--warmup: expected a step count ≥ 0, got {value}")
    return value


# The reader options each log format takes (`read_runs`), as `fit`'s flags set them.
_VALID = {
    "mllog": {"gpus", "gpus_per_node", "warmup"},
    "megatron": {"gpus", "global_batch", "warmup"},
}
_CSV = {"gpus", "global_batch", "warmup", "step_column", "time_column", "time_unit"}
_CSV |= {"timestamp_column", "batch_column", "gpus_column"}


def _log_options(args, kind: str, extra: frozenset = frozenset()) -> dict:
    """The reader options `fit`'s flags give; a flag the format does not take is an
    error naming it."""
    given = {
        "gpus": args.gpus,
        "gpus_per_node": args.gpus_per_node,
        "global_batch": args.global_batch,
        "step_column": args.step_column,
        "timestamp_column": args.timestamp_column,
        "batch_column": args.batch_column,
        "gpus_column": args.gpus_column,
        "time_column": args.time_column,
    }
    given = {k: v for k, v in given.items() if v is not None}
    if args.warmup != "auto":
        given["warmup"] = _warmup(args.warmup)
    if args.time_column:
        given["time_unit"] = args.time_unit
    bad = sorted(set(given) - _VALID.get(kind, _CSV) - extra)
    if bad:
        flags = ", ".join("--" + b.replace("_", "-") for b in bad)
        raise InputError(f"{flags}: not an option of {kind} logs")
    return given


def _kind(args) -> str:
    if args.format is not None:
        return args.format
    return detect_format(log_files(_paths(args))[0])


def read_data(args):
    """The `Benchmarks` of the logs `perfmodel fit` was given (one row per run), with a
    line on stderr saying what was read and the warm-up dropped."""
    kind = _kind(args)
    options = _log_options(args, kind)
    status = None if args.all_runs else "success"
    data, runs, left_out = read_log_runs(
        _paths(args), args.format, quantity=args.quantity, status=status, **options
    )
    print(runs_line(runs, kind, data.gpus.size, left_out), file=sys.stderr)
    copied = same_runs(runs)
    if copied:
        print(f"warning: {copied}", file=sys.stderr)
    return data


def runs_line(runs, kind: str, kept: int, out=()) -> str:
    """What was read, for stderr; `out`: the MLPerf runs the status filter left out."""
    names = {"mllog": "MLPerf result", "megatron": "Megatron-LM", "lightning": "Lightning"}
    files = len({run.source for run in [*runs, *out]})
    line = f"read {kept} run(s) from {files} {names.get(kind, 'CSV')} log(s)"
    if kind == "mllog":
        if out:
            states = ", ".join(sorted({run.status or "none" for run in out}))
            line += f"; {len(out)} run(s) not successful ({states}) left out: --all-runs keeps them"
        return line + " (time to train: run_stop − run_start)"
    dropped = [run.warmup_dropped for run in runs]
    steps = [run.warmup_steps for run in runs]
    line += ": median seconds per step after warm-up; warm-up dropped "
    line += f"{_span(dropped)} logged interval(s) ({_span(steps)} steps) per run"
    line += f" ({runs[0].warmup_rule})"
    # "auto" tells the warm-up apart from three logged intervals on; below that the first
    # interval, compilation and data-loader start included, is in the median.
    short = sum(
        1
        for run in runs
        if run.warmup_rule == AUTO_RULE and run.steps_used + run.warmup_dropped < AUTO_MIN_INTERVALS
    )
    if short:
        line += (
            f"; {short} run(s) logged fewer than {AUTO_MIN_INTERVALS} intervals, so their "
            "warm-up is in the median: log more steps, or give --warmup STEPS"
        )
    return line


def _span(values) -> str:
    return f"{min(values)}" if min(values) == max(values) else f"{min(values)}–{max(values)}"


def training_runs(args):
    """The runs trained to a target that `perfmodel fit --time-to-train` was given."""
    kind = "csv" if not reads_logs(args) else _kind(args)
    options = {}
    if kind == "mllog":
        options = _log_options(args, kind, frozenset({"global_batch"}))
        options.pop("warmup", None)
    else:
        for key in ("gpus_column", "time_column", "series"):
            if getattr(args, key, None):
                options[key] = getattr(args, key)
        if args.time_column:
            options["time_unit"] = args.time_unit
    return read_training_runs(
        _paths(args),
        None if kind not in ("mllog", "csv") else kind,
        work=args.work,
        samples_per_unit=args.samples_per_epoch,
        status=None if args.all_runs else "success",
        **options,
    )
