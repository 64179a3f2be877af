"""The entry points: which format a log is in, and logs (files or folders) to runs and to
`Benchmarks`."""

import csv
import hashlib
import math
import os
from pathlib import Path
import warnings

import numpy as np

from .._csvtext import unix_newlines
from .._data import Benchmarks, MAX_GPUS
from .._errors import InputError
from .lightning import read_tracker_csv, STEP_COLUMNS
from .megatron_log import ITERATION_RE, read_megatron
from .mllog import read_mllog, TOKEN
from .summary import QUANTITIES, RunSummary, to_benchmarks

FORMATS = ("mllog", "megatron", "lightning", "csv")
DEFAULT_QUANTITY = {
    "mllog": "time_to_train",
    "megatron": "step_time",
    "lightning": "step_time",
    "csv": "step_time",
}
# Files a folder contributes; others (hparams.yaml, checkpoints) are not logs.
LOG_SUFFIXES = (".txt", ".log", ".out", ".csv")
_OPTIONS = {
    "mllog": {"gpus", "gpus_per_node", "warmup"},
    "megatron": {"gpus", "global_batch", "warmup"},
    "lightning": {
        "step_column",
        "time_column",
        "time_unit",
        "timestamp_column",
        "batch_column",
        "gpus_column",
        "gpus",
        "global_batch",
        "warmup",
    },
}
_OPTIONS["csv"] = _OPTIONS["lightning"]
_SCAN_BYTES = 8 << 20
# The banner of Megatron-LM's argument dump (megatron/training/arguments.py, _print_args).
MEGATRON_ARGUMENTS = "------------------------ arguments ------------------------"


def _read_text(path: str) -> str:
    try:
        # latin-1 as mlperf_logging's parser: any byte decodes, nothing is dropped.
        return Path(path).read_text(encoding="latin-1")
    except FileNotFoundError:
        raise InputError(f"{path}: no such file")
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, expected a log file")
    except OSError as error:
        raise InputError(f"{path}: cannot read the file ({error.strerror})")


def header_columns(text: str) -> list[str]:
    """The column names of a CSV's first line, as the CSV readers see them: a byte-order
    mark dropped (also read as latin-1, ``ï»¿``) and quotes removed."""
    first = unix_newlines(text[:65536]).split("\n", 1)[0]
    for mark in ("\ufeff", "\u00ef\u00bb\u00bf"):
        first = first.removeprefix(mark)
    try:
        return [c.strip() for c in next(csv.reader([first]), [])]
    except csv.Error:
        return [c.strip() for c in first.split(",")]


def _detect_text(text: str, source: str) -> str:
    head = text[:_SCAN_BYTES]
    if TOKEN in head:
        return "mllog"
    if "elapsed time per iteration" in head and ITERATION_RE.search(head):
        return "megatron"
    if MEGATRON_ARGUMENTS in head or head.lstrip().startswith("using world size:"):
        return "megatron"  # a job that stopped before its first logged iteration
    columns = header_columns(head)
    if len(columns) > 1:
        if "step" in columns and "epoch" in columns:
            return "lightning"
        if any(c in columns for c in STEP_COLUMNS):
            return "csv"
        if "gpus" in columns:  # a benchmark CSV among logs: `fit` reads one at a time
            raise InputError(
                f"{source}: a benchmark CSV (a gpus column, no step column), not a training "
                "log: fit one benchmark CSV at a time, or put the rows in one CSV with a "
                "series column to fit each series"
            )
    raise InputError(
        f"{source}: cannot tell the log format: no ':::MLLOG' line, no Megatron-LM "
        "'iteration N/M | ... elapsed time per iteration (ms): ...' line and no CSV header "
        f"with a step column ({', '.join(STEP_COLUMNS)}); give {{arg:format}} (one of "
        f"{', '.join(FORMATS)})"
    )


def detect_format(path: str | os.PathLike) -> str:
    """The format of the log at `path`: ``"mllog"``, ``"megatron"``, ``"lightning"`` or
    ``"csv"`` (a tracker export), from its content (the first 8 MiB).

    Raises:
        InputError: a missing or unreadable file, or none of the formats.
    """
    source = os.fspath(path)
    return _detect_text(_read_text(source), source)


MAX_FOLDER_ENTRIES = 100_000
"""The most entries a folder of logs may hold, subfolders included: `perfmodel fit /tmp`
walked a 22 GB tree for minutes without a word (bad-input review of 2026-12-06)."""


def _folder_logs(folder: Path) -> list[Path]:
    """The log files under `folder` (`LOG_SUFFIXES`, hidden files and folders left out,
    hidden folders not entered), sorted.

    Raises:
        InputError: a link among them whose target is gone (a run lost, fuzz round 10),
            or more than `MAX_FOLDER_ENTRIES` entries.
    """
    found, seen = [], 0
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        seen += len(dirs) + len(names)
        if seen > MAX_FOLDER_ENTRIES:
            raise InputError(
                f"{folder}: more than {MAX_FOLDER_ENTRIES:,} files and folders; give the "
                "folder that holds the logs, or the log files themselves"
            )
        for name in names:
            p = Path(root) / name
            if name.startswith(".") or p.suffix not in LOG_SUFFIXES:
                continue
            if p.is_symlink() and not p.exists():
                raise InputError(
                    f"{p}: a link to {os.readlink(p)}, which does not exist: its run cannot "
                    "be read; restore the target or remove the link"
                )
            if p.is_file():
                found.append(p)
    return sorted(found)


def _listed(paths):
    """`paths` as a list: one path, or any iterable of them (a generator such as
    ``Path.glob``, read once); anything else as given, for the caller to name."""
    if isinstance(paths, (str, os.PathLike)):
        return [paths]
    if not isinstance(paths, (bytes, dict)) and hasattr(paths, "__iter__"):
        return list(paths)
    return paths


def log_files(paths) -> list[str]:
    """The files `paths` name: files as given, folders as their ``*.txt``, ``*.log``,
    ``*.out`` and ``*.csv`` files (recursively, sorted; hidden ones left out).

    Raises:
        InputError: a path that does not exist, or a folder without such files.
    """
    paths = _listed(paths)
    if not isinstance(paths, list) or not all(isinstance(p, (str, os.PathLike)) for p in paths):
        raise InputError(f"paths: expected a path or a list of paths, got {paths!r}")
    files = []
    for path in map(Path, paths):
        if path.is_dir():
            found = _folder_logs(path)
            if not found:
                raise InputError(
                    f"{path}: a folder without log files (expected {', '.join(LOG_SUFFIXES)})"
                )
            files += [str(p) for p in found]
        elif path.is_file():
            files.append(str(path))
        else:
            raise InputError(f"{path}: no such file or folder")
    seen: dict[str, str] = {}
    for name in files:  # a run given twice (a file and its folder) was counted twice
        real = os.path.realpath(name)
        if real in seen:
            also = "" if seen[real] == name else f" (also as {seen[real]})"
            raise InputError(f"{name}: given twice{also}; each run counts once")
        seen[real] = name
    if not files:
        raise InputError("no log files given")
    return files


def read_runs(paths, format: str | None = None, **options) -> list[RunSummary]:
    """Every run in the logs at `paths` (files, or folders of them), one `RunSummary` each
    (a Megatron-LM log with a batch ramp-up gives one per global batch).

    Args:
        paths: a path or a list of paths.
        format: one of `FORMATS`; detected per file (`detect_format`) when None. All files
            must be in one format.
        options: passed to the format's reader: ``gpus`` (one count, or a list of one
            per log file in the order of `log_files`), ``gpus_per_node`` (MLLOG),
            ``global_batch``, ``warmup`` and, for CSVs, ``step_column``, ``time_column``,
            ``time_unit``, ``timestamp_column``, ``batch_column``, ``gpus_column``.

    Raises:
        InputError: an unknown format or option, files in several formats, or a malformed
            log (its message names the file and the line).
    """
    if format is not None and format not in FORMATS:
        raise InputError(f"unknown log format {format!r}; expected one of {', '.join(FORMATS)}")
    files = log_files(paths)
    per_file = _per_file_counts(options, files)
    _check_options({k: v for k, v in options.items() if not (k == "gpus" and per_file)})
    runs, formats, seen = [], {}, {}
    for path in files:
        if per_file:  # one GPU count per log, in the order given
            options = {**options, "gpus": per_file[path]}
        text = _read_text(path)
        kind = format or _detect_text(text, path)
        formats.setdefault(kind, path)
        if len(formats) > 1:
            (a, first), (b, _) = list(formats.items())[:2]
            raise InputError(
                f"{path}: a {b} log, while {first} is a {a} log; read one format at a time"
            )
        unknown = sorted(set(options) - _OPTIONS[kind])
        if unknown:
            raise InputError(
                f"unknown option(s) for {kind} logs: {', '.join(unknown)}; valid: "
                + ", ".join(sorted(_OPTIONS[kind]))
            )
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
        if digest in seen:  # a copy under another name counted as a second run
            raise InputError(f"{path}: the same contents as {seen[digest]}; give each log once")
        seen[digest] = path
        if kind == "mllog":
            runs.append(read_mllog(text, path, **options))
            _one_benchmark(runs)
        elif kind == "megatron":
            runs += read_megatron(text, path, **options)
        else:
            runs.append(read_tracker_csv(text, path, format=kind, **options))
    return runs


# Options a reader takes as counts (whole, ≥ 1) and as a positive number; the command
# line checks its flags, Python callers met ZeroDivisionError, truncation (2.5 GPUs read
# as 2) and a global batch of -1 fitted without a word (fuzz round 10).
_COUNT_OPTIONS = ("gpus", "gpus_per_node")
_POSITIVE_OPTIONS = ("global_batch",)


def _per_file_counts(options: dict, files: list) -> dict:
    """``{file: count}`` when ``gpus`` is a list, one count per log file in the order
    given (runs of 8 and 16 GPUs, each logged without its count, needed a gpus column
    edited into each file); {} when it is one count for every run.

    Raises:
        InputError: a count that is not a whole number ≥ 1, or not one per file.
    """
    counts = options.get("gpus")
    if not isinstance(counts, (list, tuple)):
        return {}
    for count in counts:
        _check_options({"gpus": count})
    if len(counts) != len(files):
        shown = ", ".join(os.fspath(f) for f in files[:4]) + (", …" if len(files) > 4 else "")
        raise InputError(
            f"{{arg:gpus}}: {len(counts)} GPU counts for {len(files)} log file(s) ({shown}): "
            "give one count for every run, or one per file in the order given"
        )
    return {f: int(c) for f, c in zip(files, counts)}


def _check_options(options: dict) -> None:
    for name in (*_COUNT_OPTIONS, *_POSITIVE_OPTIONS):
        value = options.get(name)
        if value is None:
            continue
        number = not isinstance(value, bool) and isinstance(value, (int, float, np.number))
        ok = number and math.isfinite(value) and value > 0
        if name in _COUNT_OPTIONS:
            ok = ok and value >= 1 and float(value).is_integer()
            expected = "a whole number ≥ 1"
        else:
            expected = "a finite number > 0"
        if not ok:
            raise InputError(f"{name}: expected {expected}, got {value!r}")
        if name == "gpus" and value > MAX_GPUS:  # 1e300 was blamed on the log's line 3
            raise InputError(
                f"{{arg:gpus}}: expected a whole GPU count of 1 to {MAX_GPUS:,}, got {value:g}"
            )


def _one_benchmark(runs: list[RunSummary]) -> None:
    """Refuse MLPerf results of different benchmarks (SSD and BERT were fitted as one
    series): the last run against the first that names one."""
    named = [run for run in runs if run.benchmark]
    if len(named) > 1 and named[-1].benchmark != named[0].benchmark:
        raise InputError(
            f"{named[-1].source}: a {named[-1].benchmark!r} result, while {named[0].source} "
            f"is {named[0].benchmark!r}; fit one benchmark at a time"
        )


def _source(paths) -> str:
    if isinstance(paths, (str, os.PathLike)):
        return os.fspath(paths)
    paths = [os.fspath(p) for p in paths]
    return paths[0] if len(paths) == 1 else f"{paths[0]} and {len(paths) - 1} more"


def read_log(
    paths,
    format: str | None = None,
    *,
    quantity: str | None = None,
    status: str | None = "success",
    **options,
) -> Benchmarks:
    """`Benchmarks` from training logs: one row per run, ``gpus`` and ``time_s``.

    ``time_s`` is the median seconds per step after warm-up for per-step logs
    (Megatron-LM, Lightning, tracker CSVs) and the time to train (run_stop − run_start)
    for MLPerf result files; ``quantity`` picks ``"step_time"``, ``"time_to_train"`` or
    ``"epoch_time"`` (MLLOG: median epoch). ``global_batch`` (and ``tp``, ``pp``,
    ``microbatches``, ``seq_len``, ``gpus_per_node`` where the log gives them) are carried
    into the configuration. `read_runs` gives the per-run details (warm-up dropped and by
    which rule, epochs and samples to the target, status).

    Args:
        paths: log files, or folders of them (one MLPerf result file per run).
        format: one of `FORMATS`, or None to detect it.
        quantity: the measured quantity (default: per format, see above).
        status: keep only MLLOG runs whose run_stop status is this (``"success"``, the
            default, as MLPerf scores; aborted runs are left out); None keeps all.
        options: passed to `read_runs`.

    Warns:
        UserWarning: two logs give the same run to the last digit (`same_runs`).

    Raises:
        InputError: as `read_runs`, or when no run is left.
    """
    data, runs, _ = read_log_runs(paths, format, quantity=quantity, status=status, **options)
    copied = same_runs(runs)
    if copied:
        warnings.warn(copied, stacklevel=2)
    return data


def read_log_runs(
    paths,
    format: str | None = None,
    *,
    quantity: str | None = None,
    status: str | None = "success",
    **options,
) -> tuple[Benchmarks, list[RunSummary], list[RunSummary]]:
    """`read_log`'s `Benchmarks`, the runs they were made of (after the status filter)
    and the runs the filter left out, read once."""
    if quantity is not None and quantity not in QUANTITIES:
        raise InputError(f"quantity: expected one of {', '.join(QUANTITIES)}, got {quantity!r}")
    paths = _listed(paths)  # read twice below (the runs, then the source's name)
    runs = read_runs(paths, format, **options)
    kind = runs[0].format
    left_out = []
    if status is not None and kind == "mllog":
        kept = [run for run in runs if run.status == status]
        if not kept:
            found = sorted({run.status or "none" for run in runs})
            raise InputError(
                f"{_source(paths)}: no run with status {status!r} (found: {', '.join(found)}); "
                "keep every run with --all-runs (status=None from Python)"
            )
        left_out = [run for run in runs if run.status != status]
        runs = kept
    data = to_benchmarks(runs, quantity or DEFAULT_QUANTITY[kind], _source(paths))
    return data, runs, left_out


# What a run's summary says of it, apart from where it was read: two logs that agree on
# all of it to the last digit are most likely one run copied (one byte changed, a line
# added), which the check of identical contents in `read_runs` does not see.
_SAME_RUN = (
    "format", "gpus", "global_batch", "step_time_s", "steps_used", "warmup_dropped",
    "time_to_train_s", "epochs", "samples", "epoch_time_s", "status", "benchmark",
)  # fmt: skip


def same_runs(runs: list[RunSummary]) -> str:
    """One line naming the first two runs of different logs whose summaries agree on
    every number (`_SAME_RUN`, and the config), else ``""``: a copy of a log with one byte
    changed was fitted as a second run, doubling its weight, without a word (review round
    10b)."""
    seen = {}
    for run in runs:
        key = tuple(getattr(run, name) for name in _SAME_RUN) + tuple(sorted(run.config.items()))
        first = seen.setdefault(key, run)
        if first.source != run.source:
            what = "time to train, epochs and samples"
            if run.time_to_train_s is None:
                what = "median step time and steps"
            return (
                f"{run.source}: the same run as {first.source}, to the last digit ({run.gpus} "
                f"GPUs, {what} alike): a copy read twice counts twice in the fit; "
                "give each log once (two runs that really agree: ignore this)"
            )
    return ""


def run_table(runs: list[RunSummary]):
    """The runs as a pandas DataFrame, one row each (`RunSummary.as_dict`)."""
    import pandas as pd

    return pd.DataFrame([run.as_dict() for run in runs])
