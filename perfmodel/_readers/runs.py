"""Training runs to a target: each run's GPU count, global batch, time to train and work
to the target (samples or epochs), from MLPerf result files or from a CSV of runs."""

import dataclasses
import io

import numpy as np
import pandas as pd

from .._csvtext import csv_error, unix_newlines
from .._data import Benchmarks, load_benchmarks
from .._errors import InputError
from .._files import read_bytes
from .mllog import TOKEN
from .read import _read_text, _source, detect_format, log_files, read_runs, same_runs
from .summary import RunSummary, to_benchmarks

WORK_UNITS = ("samples", "epochs")


@dataclasses.dataclass(frozen=True)
class TrainingRuns:
    """Runs trained to a target, ready for `perfmodel.fit_time_to_train`.

    Attributes:
        data: one row per run: ``gpus``, ``time_s`` the seconds to the target (MLLOG
            run_stop − run_start, or the CSV's time), and ``global_batch`` (samples per
            step) in ``config``, with the other config fields the runs give.
        work: the work each run needed to reach the target, in `work_unit`.
        work_unit: ``"samples"`` or ``"epochs"``.
        samples_per_unit: samples per unit of work: 1 for samples, the dataset size
            (samples per epoch) for epochs, or None when not known.
        runs: the per-run details when read from logs (`RunSummary`), else empty.
        left_out: the logged runs the status filter left out (aborted, …).
    """

    data: Benchmarks
    work: np.ndarray
    work_unit: str
    samples_per_unit: float | None
    runs: tuple[RunSummary, ...] = ()
    left_out: tuple[RunSummary, ...] = ()

    @property
    def warnings(self) -> tuple[str, ...]:
        """A line when two logs give the same run to the last digit (`same_runs`), and
        one per run whose work to the target is under one global batch: it
        reached the target in less than one optimizer step, almost surely a unit slip
        (steps, samples per GPU or epochs given as samples; a batch in tokens). Naming
        the file, row and fields, and the unit it probably is."""
        copied = same_runs(list(self.runs))
        copies = (copied,) if copied else ()
        batch = self.data.config.get("global_batch")
        if batch is None or self.samples_per_unit is None:
            return copies
        samples = self.work * self.samples_per_unit
        steps = samples / batch
        short = np.flatnonzero(steps < 1.0)
        whole = samples[steps >= 1.0]
        typical = float(np.median(whole)) if whole.size >= 2 else None
        return copies + tuple(self._under_one_step(int(i), samples, typical) for i in short)

    def _under_one_step(self, i: int, samples: np.ndarray, typical: float | None) -> str:
        data = self.data
        batch, gpus = float(data.config["global_batch"][i]), float(data.gpus[i])
        if self.runs:
            where = f"{self.runs[i].source} line {self.runs[i].line}"
        elif data.lines is not None and not data.source.startswith("<"):
            where = f"{data.source} row {i + 1} (line {int(data.lines[i])})"
        else:
            where = f"{data.source} run {i + 1}"
        if self.work_unit == "samples":
            given = f"samples {samples[i]:g}"
        else:
            given = f"epochs {self.work[i]:g} × {self.samples_per_unit:g} samples per epoch"
        text = (
            f"{where}: {given} is less than global_batch {batch:g}, so the run reached the "
            f"target in under one step ({samples[i] / batch:.3g})"
        )
        if self.work_unit != "samples":
            return text + (
                "; is the dataset size (samples per epoch) or the global batch in another "
                "unit? It is fitted as given"
            )
        # The reading that brings it within 3× of the other runs' samples, if one does.
        meant = [
            ("steps", "global_batch", samples[i] * batch),
            ("samples per GPU", f"{gpus:g} GPUs", samples[i] * gpus),
        ]
        for name, factor, value in meant if typical is not None else ():
            if abs(np.log(value / typical)) <= np.log(3.0):
                return text + (
                    f"; probably {name}, not samples: × {factor} gives {value:.4g} samples, "
                    f"near the other runs' median {typical:.4g}. It is fitted as given"
                )
        return text + (
            "; probably steps, samples per GPU or epochs, not samples, or a global batch "
            "in other units (tokens). It is fitted as given"
        )


def _check_unit(work: str | None) -> None:
    if work is not None and work not in WORK_UNITS:
        raise InputError(f"work: expected one of {', '.join(WORK_UNITS)}, got {work!r}")


def _from_summaries(runs: list[RunSummary], source: str, work: str | None) -> TrainingRuns:
    data = to_benchmarks(runs, "time_to_train", source)
    if "global_batch" not in data.config:
        raise InputError(
            f"{runs[0].source}: no global_batch_size in the log; time to train needs each "
            "run's global batch (pass {arg:global_batch} if it is the same for every run)"
        )
    samples = [run.samples for run in runs]
    epochs = [run.epochs for run in runs]
    if work is None:
        work = "samples" if all(s is not None for s in samples) else "epochs"
    values = samples if work == "samples" else epochs
    for run, value in zip(runs, values):
        if value is None or not value > 0:
            where = f"{run.source} line {run.line}" if run.line else run.source
            raise InputError(f"{where}: the log gives no {work} to the target for this run")
    per_unit = None
    if work == "samples":
        per_unit = 1.0
    elif all(s is not None for s in samples):
        ratios = np.asarray(samples, float) / np.asarray(epochs, float)
        per_unit = float(np.median(ratios))
    return TrainingRuns(data, np.asarray(values, float), work, per_unit, tuple(runs))


def _work_column(path: str, data: Benchmarks, work: str | None) -> tuple[np.ndarray, str]:
    # Blank lines kept as rows: `data.lines` counts them, and picks the rows by them.
    content = unix_newlines(read_bytes(path, "CSV file"))
    try:
        frame = pd.read_csv(
            io.BytesIO(content),
            dtype=str,
            keep_default_na=False,
            skipinitialspace=True,
            skip_blank_lines=False,
        )
    except (pd.errors.ParserError, ValueError) as error:
        raise csv_error(error, content, path) from None
    frame.columns = [str(c).strip() for c in frame.columns]
    present = [unit for unit in WORK_UNITS if unit in frame.columns]
    if work is None:
        if not present:
            raise InputError(
                f"{path}: no 'samples' or 'epochs' column: time to train needs the work each "
                f"run needed to reach the target; columns found: {', '.join(frame.columns)}"
            )
        work = present[0]
    elif work not in frame.columns:
        raise InputError(f"{path}: no column {work!r}; columns found: {', '.join(frame.columns)}")
    rows = np.asarray(data.lines) - 2
    text = frame[work].astype(str).str.strip().to_numpy()[rows]
    values = pd.to_numeric(pd.Series(text), errors="coerce").to_numpy(dtype=float)
    for row, (line, cell, value) in enumerate(zip(data.lines, text, values), start=1):
        if not (np.isfinite(value) and 0 < value <= LARGEST_WORK):  # 1e300 was taken
            raise InputError(
                f"{path} row {row} (line {line}), column {work!r}: expected a positive "
                f"number of at most {LARGEST_WORK:g}, got {cell!r}"
            )
    return values, work


LARGEST_WORK = 1e16
"""The most samples (or epochs) one run may need to reach its target: a thousand times
the tokens of the largest published training runs; more is a typo."""


def read_training_runs(
    paths,
    format: str | None = None,
    *,
    work: str | None = None,
    samples_per_unit: float | None = None,
    status: str | None = "success",
    **options,
) -> TrainingRuns:
    """Runs trained to a target, from MLPerf result files or a CSV with one row per run.

    MLPerf (MLLOG) result files, or folders of them: one run per file, its time to train,
    global batch and samples (else epochs) to the target (`read_runs`). A CSV: the
    columns `load_benchmarks` reads (``gpus``, ``time_s`` seconds to the target,
    ``global_batch``), and ``samples`` or ``epochs`` per run (as in the shipped
    ``datasets/time_to_train/*.csv``).

    Args:
        paths: a path or a list of paths (files or folders).
        format: ``"mllog"`` or ``"csv"``; detected when None.
        work: ``"samples"`` or ``"epochs"``: which work to the target to use (default:
            samples where every run gives them, else epochs).
        samples_per_unit: samples per epoch (the dataset size), when the work is in
            epochs and the runs do not give both.
        status: keep only MLLOG runs whose run_stop status is this (None: all).
        options: passed to `read_runs` for logs (``gpus``, ``gpus_per_node``,
            ``global_batch``) or to `load_benchmarks` for a CSV (``series``,
            ``gpus_column``, ``time_column``, ``time_unit``).

    Raises:
        InputError: a per-step log (it gives no time to train), a missing batch or work,
            or any error of the readers, naming the file and line.
    """
    _check_unit(work)
    if samples_per_unit is not None and not samples_per_unit > 0:
        raise InputError(f"samples_per_unit: expected a positive number, got {samples_per_unit}")
    if format not in (None, "mllog", "csv"):
        raise InputError(f"format: expected mllog or csv for runs, got {format!r}")
    files = log_files(paths)
    kind = format or _detect_runs(files[0], options.get("gpus_column"))
    if kind == "mllog":
        global_batch = options.pop("global_batch", None)
        runs = read_runs(files, "mllog", **options)
        left_out = []
        if status is not None:
            left_out = [run for run in runs if run.status != status]
            runs = [run for run in runs if run.status == status]
            if not runs:
                raise InputError(
                    f"{_source(paths)}: no run with status {status!r}; keep every run with "
                    "--all-runs (status=None from Python)"
                )
        if global_batch is not None:
            runs = [dataclasses.replace(run, global_batch=float(global_batch)) for run in runs]
        out = dataclasses.replace(
            _from_summaries(runs, _source(paths), work), left_out=tuple(left_out)
        )
    elif kind == "csv":
        if len(files) != 1:
            raise InputError(f"{_source(paths)}: read one CSV of runs at a time")
        unknown = sorted(set(options) - {"series", "gpus_column", "time_column", "time_unit"})
        if unknown:
            raise InputError(f"unknown option(s) for a CSV of runs: {', '.join(unknown)}")
        data = load_benchmarks(files[0], **options)
        if data.target != "time":
            raise InputError(
                f"{files[0]}: a throughput column; a CSV of runs gives each run's time to "
                "the target (time_s, time_ms or time_us)"
            )
        if "global_batch" not in data.config:
            raise InputError(
                f"{files[0]}: no 'global_batch' column: time to train needs each run's "
                "global batch (samples per step)"
            )
        values, unit = _work_column(files[0], data, work)
        per_unit = 1.0 if unit == "samples" else None
        out = TrainingRuns(data, values, unit, per_unit)
    else:
        raise InputError(
            f"{files[0]}: a {kind} log gives step times, not the time and work to a target; "
            "fit its step time with `perfmodel fit`, or give the runs' time to train in "
            "MLPerf result files or a CSV (gpus, time_s, global_batch, samples or epochs)"
        )
    if samples_per_unit is not None:
        out = dataclasses.replace(out, samples_per_unit=float(samples_per_unit))
    return out


def _detect_runs(path: str, gpus_column: str | None) -> str:
    """``"mllog"``, ``"csv"`` (a CSV with a GPU-count column: one row per run) or the
    per-step format `detect_format` finds."""
    text = _read_text(path)
    if TOKEN in text[: 8 << 20]:
        return "mllog"
    header = unix_newlines(text[: 8 << 20]).lstrip("\ufeff").split("\n", 1)[0]
    if (gpus_column or "gpus") in [c.strip() for c in header.split(",")]:
        return "csv"
    return detect_format(path)
