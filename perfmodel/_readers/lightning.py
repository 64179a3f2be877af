"""Per-step CSV exports: PyTorch Lightning's CSVLogger ``metrics.csv`` and the CSVs of
experiment trackers (Weights & Biases, TensorBoard, MLflow exports), one run per file.

Lightning's CSVLogger writes one row per ``log_metrics`` call with a ``step`` column (and
``epoch`` when the Trainer logs it); a metric not logged in that call leaves its cell
empty, so a row without a value in the time column (a validation row, say) belongs to
another metric and is skipped. Lightning logs no time by itself: the run must log either

* a duration per step (`time_column`, e.g. ``self.log("step_time", seconds)``) in
  `time_unit`, or
* a wall-clock time (`timestamp_column`, seconds: W&B's ``_runtime``/``_timestamp``,
  TensorBoard's ``Wall time``), from which each row's step time is
  Δtime / Δstep since the previous row with a time.

Without a column named, the first one present among `STEP_COLUMNS`, `DURATION_COLUMNS`
and `TIMESTAMP_COLUMNS` is used. The global batch and the GPU count come from a column
(`BATCH_COLUMNS`, `GPU_COLUMNS`; constant within the run) or from the caller.
"""

import csv
import io
import math
import warnings

import numpy as np
import pandas as pd

from .._csvtext import csv_error, header_columns, unix_newlines
from .._errors import InputError
from .._units import time_unit_of
from .summary import RunSummary, steady_median

STEP_COLUMNS = ("step", "global_step", "trainer/global_step", "_step", "Step", "iteration")
DURATION_COLUMNS = (
    "step_time",
    "step_time_s",
    "train/step_time",
    "time/step",
    "batch_time",
    "iteration_time",
    "time_per_step",
)
TIMESTAMP_COLUMNS = ("_runtime", "_timestamp", "Wall time", "wall_time", "timestamp", "time")
BATCH_COLUMNS = ("global_batch", "global_batch_size", "batch_size")
GPU_COLUMNS = ("gpus", "world_size", "num_gpus")
UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6}


def _pick(frame: pd.DataFrame, given: str | None, candidates, what: str, source: str):
    if given is not None:
        if given not in frame.columns:
            raise InputError(
                f"{source}: no column {given!r} ({what}); columns found: "
                + ", ".join(frame.columns)
            )
        return given
    return next((c for c in candidates if c in frame.columns), None)


def _record_lines(text: str, width: int, source: str) -> np.ndarray:
    """The line each data row of CSV `text` starts on (1-based; the header is line 1),
    after refusing a row with more non-empty cells than the header's `width` (an empty
    last cell, a trailing comma, is read as the header says). A quoted cell may span
    lines: "row + 2" named line 7 for a cell on line 8."""
    reader = csv.reader(io.StringIO(text))
    starts, previous = [], 0
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as error:  # a cell over the csv module's 128 KiB, say
            raise InputError(
                f"{source} line {previous + 1}: {error}; expected a metrics CSV of numbers"
            ) from None
        if len(row) > width and any(cell.strip() for cell in row[width:]):
            raise InputError(
                f"{source} line {previous + 1}: {len(row)} cells, but the header has {width} "
                "columns; expected one cell per column"
            )
        starts.append(previous + 1)
        previous = reader.line_num
    return np.asarray(starts[1:], dtype=np.int64)


def _line(frame, row: int) -> int:
    """The file line of `frame`'s row (`_record_lines`, kept in ``frame.attrs``)."""
    lines = frame.attrs.get("lines")
    return int(lines[row]) if lines is not None and row < len(lines) else int(row) + 2


def _cells(frame, column: str, rows, source: str, *, positive=True) -> np.ndarray:
    """The column's values at `rows` (frame positions) as floats; each must be a number
    (> 0 when `positive`). Parsed at once (10⁶ rows took minutes cell by cell); a cell
    that pandas does not read as a number is read again as Python's `float` would, so
    that the first one that is no number is named."""
    cells = frame[column].to_numpy()[np.asarray(rows, dtype=np.int64)]
    parsed = pd.to_numeric(pd.Series(cells).str.strip(), errors="coerce")
    values = np.array(parsed, dtype=np.float64)  # a copy: pandas' may be read-only
    for k in np.flatnonzero(~np.isfinite(values) | (positive & (values <= 0))):
        cell = str(cells[k]).strip()
        try:
            value = float(cell)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or (positive and value <= 0):
            kind = "a positive number" if positive else "a finite number"
            where = f"{source} line {_line(frame, rows[k])}, column {column!r}"
            raise InputError(f"{where}: expected {kind}, got {cell!r}")
        values[k] = value
    return values


def _constant(frame, column, rows, source, given, name, option) -> float | None:
    """The one value of `column` over `rows` (a run has one GPU count, one global batch),
    or `given` (the keyword argument `option`); a column that disagrees with `given` is
    refused rather than silently overridden."""
    values = None if column is None else _cells(frame, column, rows, source)
    if given is not None:
        if values is not None and np.any(values != float(given)):
            k = int(np.argmax(values != float(given)))
            raise InputError(
                f"{source} line {_line(frame, rows[k])}, column {column!r}: {name} "
                f"{values[k]:g} disagrees with the {{arg:{option}}} given ({float(given):g}); "
                f"give {{arg:{option}}} only for a log without a {name} column"
            )
        return float(given)
    if values is None:
        return None
    if np.any(values != values[0]):
        k = int(np.argmax(values != values[0]))
        raise InputError(
            f"{source} line {_line(frame, rows[k])}, column {column!r}: {name} "
            f"{values[k]:g} differs from {values[0]:g} at line {_line(frame, rows[0])}; "
            f"expected one {name} per run"
        )
    if name == "GPU count" and not (values[0] >= 1 and values[0] == int(values[0])):
        raise InputError(
            f"{source} line {_line(frame, rows[0])}, column {column!r}: expected a whole GPU count "
            f"≥ 1, got {values[0]:g}"
        )
    return float(values[0])


# A wall clock past this many seconds is no clock of seconds (1e11 s is 3000 years): an
# export in milliseconds since 1970 (1.7e12) read as seconds made each step 1000× longer.
CLOCK_LIMIT = 1e11


def read_tracker_csv(
    text: str,
    source: str,
    *,
    format: str = "csv",
    step_column: str | None = None,
    time_column: str | None = None,
    time_unit: str | None = None,
    timestamp_column: str | None = None,
    batch_column: str | None = None,
    gpus_column: str | None = None,
    gpus: int | None = None,
    global_batch: float | None = None,
    warmup: int | str = "auto",
) -> RunSummary:
    """The run of one per-step CSV (its text), as a `RunSummary`.

    Args:
        text: the file's text.
        source: its name, for messages.
        format: ``"lightning"`` or ``"csv"``, recorded in the summary.
        step_column: the optimizer-step column (default: the first of `STEP_COLUMNS`).
        time_column: a per-step duration column, in `time_unit`.
        time_unit: ``"s"``, ``"ms"`` or ``"us"``, of `time_column`; None: the unit its
            name states (``step_time_ms``), else seconds.
        timestamp_column: a wall-clock column, seconds; used when no duration column.
        batch_column, gpus_column: columns giving the global batch and the GPU count.
        gpus, global_batch: the values, when no column gives them.
        warmup: leading rows left out of the median (`steady_median`).

    Raises:
        InputError: naming the file, the line and column and what was expected.
    """
    if time_unit is not None and time_unit not in UNITS:
        raise InputError(f"{{arg:time_unit}}: expected s, ms or us, got {time_unit!r}")
    # A UTF-8 byte-order mark is no column (read as latin-1, as logs are, it is "ï»¿").
    text = unix_newlines(text).removeprefix("\ufeff").removeprefix("\xef\xbb\xbf")
    header = header_columns(text.split("\n", 1)[0], source)
    starts = _record_lines(text, len(header), source)
    try:
        # index_col=False: a trailing comma on every row made the first column the index
        # and shifted every other by one (a step time of 1.0 s instead of 0.21 s).
        with warnings.catch_warnings():  # the empty last cells dropped: nothing is lost
            warnings.simplefilter("ignore", pd.errors.ParserWarning)
            # Blank lines kept as empty rows (skipped below like any empty cell), so that
            # a row's position is its line: after two blank lines an error named line 4
            # for a cell on line 6.
            frame = pd.read_csv(
                io.StringIO(text),
                dtype=str,
                keep_default_na=False,
                index_col=False,
                skip_blank_lines=False,
            )
    except pd.errors.EmptyDataError:
        raise InputError(f"{source}: empty file, expected a CSV header and rows")
    except (pd.errors.ParserError, ValueError) as error:
        raise csv_error(error, text, source) from None
    frame.columns = [str(c).strip() for c in frame.columns]
    frame.attrs["lines"] = starts
    found = ", ".join(frame.columns)
    step = _pick(frame, step_column, STEP_COLUMNS, "step", source)
    if step is None:
        raise InputError(
            f"{source}: no step column; expected one of {', '.join(STEP_COLUMNS)} (or name it "
            f"with {{arg:step_column}}); columns found: {found}"
        )
    duration = _pick(frame, time_column, DURATION_COLUMNS, "time per step", source)
    stamp = None
    if duration is None:
        stamp = _pick(frame, timestamp_column, TIMESTAMP_COLUMNS, "wall-clock time", source)
    if duration is None and stamp is None:
        raise InputError(
            f"{source}: no time column; expected a per-step duration ("
            + ", ".join(DURATION_COLUMNS)
            + ", or {arg:time_column}) or a wall-clock time ("
            + ", ".join(TIMESTAMP_COLUMNS)
            + f", or {{arg:timestamp_column}}); columns found: {found}"
        )
    timed = duration or stamp
    rows = np.flatnonzero(frame[timed].str.strip().to_numpy() != "").tolist()
    if len(rows) < (1 if duration else 2):
        need = "a row" if duration else "two rows"
        raise InputError(f"{source}: column {timed!r}: expected {need} with a value")
    steps = _cells(frame, step, rows, source, positive=False)
    for k in np.flatnonzero(np.diff(steps) <= 0)[:1] + 1:
        raise InputError(
            f"{source} line {_line(frame, rows[k])}, column {step!r}: step {steps[k]:g} after step "
            f"{steps[k - 1]:g} at line {_line(frame, rows[k - 1])}; expected increasing steps (a "
            "restarted or second run: give each as its own file)"
        )
    if duration:
        unit = time_unit_of(duration, time_unit, source)[0]  # --time-column step_time_ms
        seconds = _cells(frame, duration, rows, source) * UNITS[unit]
        ends, lines = steps, rows
    else:
        clock = _cells(frame, stamp, rows, source, positive=False)
        if np.max(np.abs(clock)) > CLOCK_LIMIT:
            k = int(np.argmax(np.abs(clock) > CLOCK_LIMIT))
            raise InputError(
                f"{source} line {_line(frame, rows[k])}, column {stamp!r}: time "
                f"{clock[k]:g} is past any clock in seconds (milliseconds since 1970?); "
                "expected seconds: convert the column, or give per-step durations with "
                "--time-column"
            )
        gaps = np.diff(clock)
        if np.any(gaps <= 0):
            k = int(np.argmax(gaps <= 0)) + 1
            raise InputError(
                f"{source} line {_line(frame, rows[k])}, column {stamp!r}: time "
                f"{clock[k]:g} s is not after {clock[k - 1]:g} s at line "
                f"{_line(frame, rows[k - 1])}; expected increasing wall-clock times"
                + (
                    f" (if {stamp!r} holds each step's duration, pass {{arg:time_column}} {stamp})"
                    if timestamp_column is None and np.all(clock > 0)
                    else ""
                )
            )
        seconds, ends, lines = gaps / np.diff(steps), steps[1:], rows[1:]
    batch = _constant(
        frame,
        _pick(frame, batch_column, BATCH_COLUMNS, "global batch", source),
        rows,
        source,
        global_batch,
        "global batch",
        "global_batch",
    )
    count = _constant(
        frame,
        _pick(frame, gpus_column, GPU_COLUMNS, "GPU count", source),
        rows,
        source,
        gpus,
        "GPU count",
        "gpus",
    )
    median, dropped, warm, rule = steady_median(ends, seconds, warmup)
    return RunSummary(
        source=source,
        line=_line(frame, lines[dropped]),
        format=format,
        gpus=None if count is None else int(count),
        global_batch=batch,
        step_time_s=median,
        steps_used=len(seconds) - dropped,
        warmup_dropped=dropped,
        warmup_steps=warm,
        warmup_rule=rule,
    )
