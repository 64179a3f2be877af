"""Benchmark CSVs in, validated arrays in SI units out. The only module that reads CSV."""

from collections.abc import Mapping
import csv
import dataclasses
import functools
import io
import math
import os
import warnings

import numpy as np
import pandas as pd

from ._catalog import dataset_note, dataset_unit
from ._config import (
    check_memory_unit,
    CODED_FIELDS,
    Config,
    CONFIG_FIELDS,
    COUNT_FIELDS,
    FIELD_NAMES,
    LARGEST_VALUE,
    NONNEGATIVE_FIELDS,
)
from ._csvtext import csv_error, header_columns, not_utf8, unix_newlines
from ._errors import InputError
from ._files import read_bytes
from ._levels import has_none, LARGEST_COUNT
from ._text import brief, counted
from ._units import (
    names_a_time,
    throughput_seconds,
    throughput_unit_of,
    time_unit_of,
    TIME_UNITS,
)

TIME_COLUMNS: dict[str, float] = {"time_s": 1.0, "time_ms": 1e-3, "time_us": 1e-6}
THROUGHPUT_COLUMN = "throughput"
SERIES_COLUMN = "series"
BATCH_PER_GPU_COLUMN = "batch_per_gpu"


@dataclasses.dataclass(frozen=True)
class Benchmarks:
    """Validated measurements of one series.

    Attributes:
        source: where they came from (a file name), used in messages.
        gpus: GPU count of each measurement.
        time_s: seconds per step, or per unit of work when `target` is throughput or
            `per_gpu` is True.
        target: ``"time"`` or ``"throughput"``, the quantity the CSV gave.
        config: other `Config` fields found in the CSV, one array each.
        lines: the CSV line each measurement came from (1 is the header).
        unit: unit of the measured quantity as given: ``"s"`` for times (read in SI
            seconds), the work per second for throughput (``"work/s"`` unless known,
            e.g. ``"images/s"`` for a shipped series).
        scaling: how the work grows with the GPU count, when stated: ``"weak"`` (a
            fixed batch per GPU), ``"strong"`` (a fixed global batch) or None.
        per_gpu: True when the times measured were steps of a fixed per-GPU batch and
            `time_s` holds them divided by `gpus` (seconds per unit of work, up to the
            batch); `measured` gives the step times back (`per_unit_of_work`).
        read_as: what was assumed reading the file, e.g. ``"read Time_ms as
            milliseconds"``; fits print it in their first line.
        files: for measurements read from several logs, the log each came from (its
            `lines` are that log's lines); None for one file.
    """

    source: str
    gpus: np.ndarray
    time_s: np.ndarray
    target: str = "time"
    config: Mapping[str, np.ndarray] = dataclasses.field(default_factory=dict)
    lines: np.ndarray | None = None
    unit: str = ""
    scaling: str | None = None
    per_gpu: bool = False
    read_as: str = ""
    files: tuple[str, ...] | None = None

    def where(self, row: int) -> str:
        """Where measurement `row` (0-based) was read: ``"line 5"``, ``"row 5"`` (arrays)
        or ``"dgxa100_n2_result_1.txt line 44"`` (one of several logs)."""
        if self.lines is None:
            return f"row {row + 1}"
        line = f"line {int(self.lines[row])}"
        if self.files is None or len(self.files) != len(self.gpus):
            return line
        return f"{self.files[row]} {line}"

    def __repr__(self) -> str:
        counts = np.unique(self.gpus)
        shown = ", ".join(f"{c:g}" for c in counts[:8]) + (", …" if counts.size > 8 else "")
        parts = [
            f"{self.source}: {counted(len(self.gpus), 'measurement')} of {self.target} "
            f"({self.unit})",
            f"GPUs {shown}",
            f"config {', '.join(self.config)}" if self.config else "",
            self.read_as,
        ]
        return brief("Benchmarks", *parts)

    def summary(self) -> str:
        """What was read, as `perfmodel fit` opens with it: the source, the measurements
        and distinct configurations, the target and how it was read; then the GPU
        counts and the config fields."""
        head = (
            f"{self.source}: {counted(len(self.gpus), 'measurement')}, "
            f"{counted(self.distinct_configs(), 'distinct configuration')}, target "
            f"{self.target} ({self.unit})" + (f", {self.read_as}" if self.read_as else "")
        )
        counts = ", ".join(f"{c:g}" for c in np.unique(self.gpus))
        fields = f"; config {', '.join(self.config)}" if self.config else ""
        return f"{head}\nGPUs {counts}{fields}"

    def __post_init__(self):
        if not self.unit:
            object.__setattr__(self, "unit", "work/s" if self.target == "throughput" else "s")

    @property
    def measured(self) -> np.ndarray:
        """The quantity as measured: seconds (per step), or work per second."""
        if self.target == "throughput":
            return 1.0 / self.time_s
        return self.time_s * self.gpus if self.per_gpu else self.time_s

    def as_measured(self, time_s, gpus=None) -> np.ndarray:
        """Model seconds `time_s` (per step or per unit of work, as `time_s` is) at `gpus`
        (default: the measurements') as the quantity measured: throughput, or seconds
        per step."""
        time_s = np.asarray(time_s)
        if self.target == "throughput":
            return 1.0 / time_s
        if self.per_gpu:
            return time_s * (self.gpus if gpus is None else np.asarray(gpus))
        return time_s

    def to_config(self) -> Config:
        """The measurements' configurations as one batched `Config`."""
        return Config(gpus=self.gpus, **self.config)

    def distinct_configs(self) -> int:
        """Number of distinct configurations (rows that differ in some config value)."""
        return len(self.distinct()[0])

    def distinct(self) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, index)``: the distinct configurations, one row each of ``gpus`` and the
        `config` values (in their order), sorted; and for every measurement the row of its
        configuration. Computed once per `Benchmarks` (whose arrays are not to be changed
        in place): a per-step log of 10⁶ measurements asks for it many times."""
        return self._distinct

    @functools.cached_property
    def _distinct(self) -> tuple[np.ndarray, np.ndarray]:
        columns = np.stack([self.gpus, *self.config.values()], axis=1).astype(np.float64)
        return unique_rows(columns)


def unique_rows(columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(columns, axis=0, return_inverse=True)``, by sorting each column once
    (np.unique on rows compares them as byte strings: seconds for 10⁶ rows)."""
    if columns.shape[1] == 1:
        unique, index = np.unique(columns[:, 0], return_inverse=True)
        return unique[:, None], index.ravel()
    order = np.lexsort(columns.T[::-1])
    ordered = columns[order]
    starts = np.concatenate([[True], np.any(ordered[1:] != ordered[:-1], axis=1)])
    index = np.empty(columns.shape[0], dtype=np.intp)
    index[order] = np.cumsum(starts) - 1
    return ordered[starts], index


def from_arrays(
    gpus,
    time_s=None,
    *,
    throughput=None,
    source: str = "<arrays>",
    scaling: str | None = None,
    **config,
) -> Benchmarks:
    """Benchmarks from Python sequences; give exactly one of `time_s` (seconds per step)
    and `throughput` (work per second), and `config` fields as one value for every
    measurement or one per measurement. `scaling` (``"weak"`` or ``"strong"``) states
    how the work grows with the GPU count, as for `load_benchmarks`."""
    if (time_s is None) == (throughput is None):
        raise InputError(f"{source}: give exactly one of time_s and throughput")
    check_scaling(scaling)
    name = "time_s" if throughput is None else THROUGHPUT_COLUMN
    measured = time_s if throughput is None else throughput
    columns = {"gpus": np.atleast_1d(gpus), name: np.atleast_1d(measured)}
    columns |= {key: np.atleast_1d(value) for key, value in config.items() if np.ndim(value)}
    _refuse_none(source, {"gpus": gpus, name: measured, **config})  # before NumPy reads NaN
    for key, value in columns.items():  # pandas said "Per-column arrays must each be 1-D"
        if np.ndim(value) > 1:
            raise InputError(
                f"{source}, column {key!r}: expected one value per measurement (a flat "
                f"list), got an array of shape {np.shape(value)}"
            )
    lengths = {key: len(value) for key, value in columns.items()}
    if len(set(lengths.values())) > 1:
        given = ", ".join(f"{key} {length}" for key, length in lengths.items())
        raise InputError(
            f"{source}: the columns differ in length ({given}); give one value per measurement"
        )
    frame = pd.DataFrame(columns)
    for key, value in config.items():
        if not np.ndim(value):
            frame[key] = value
    frame.attrs["lines"] = np.arange(len(frame)) + 2
    frame.attrs["arrays"] = True
    data = _validate(frame, source)
    return data if scaling is None else dataclasses.replace(data, scaling=scaling)


def check_scaling(scaling: str | None) -> str | None:
    """`scaling` when it is None, ``"weak"`` or ``"strong"``; an InputError otherwise."""
    if scaling not in (None, "weak", "strong"):
        raise InputError(f"scaling must be 'weak' or 'strong', got {scaling!r}")
    return scaling


def _refuse_none(source: str, given: dict) -> None:
    """An InputError naming the first None among `given`'s values (NumPy and pandas read
    it as NaN, which the checks would then report as ``'nan'``)."""
    for key, value in given.items():
        if value is None:
            raise InputError(
                f"{source}, column {key!r}: expected a number or one per measurement, got None"
            )
        if not has_none(value):
            continue
        row = next(i for i, v in enumerate(np.ravel(np.asarray(value, dtype=object))) if v is None)
        raise InputError(f"{source} row {row + 1}, column {key!r}: expected a number, got None")


def load_benchmarks(
    path: str | os.PathLike,
    *,
    gpus_column: str | None = None,
    time_column: str | None = None,
    time_unit: str | None = None,
    throughput_column: str | None = None,
    throughput_unit: str | None = None,
    series: str | None = None,
    scaling: str | None = None,
    gpus_per_node: float | None = None,
) -> Benchmarks:
    """Read a benchmark CSV: a `gpus` column and one time or throughput column.

    Time columns are ``time_s``, ``time_ms`` or ``time_us``, or any column given as
    `time_column`: in `time_unit` (``"s"``, ``"ms"`` or ``"us"``) when given, else in the
    unit its name ends in (``Time_ms``, ``step time (us)``), else seconds; a name and a
    `time_unit` that disagree are refused. ``throughput`` is work per second unless
    `throughput_unit` says otherwise; a `throughput_column` whose name states a rate
    (``images_per_min``, ``tokens/s``, ``samples per hour``) is read in it, and a
    `throughput_unit` whose time disagrees with the name is refused. What was assumed is
    in `Benchmarks.read_as` (``"read Time_ms as milliseconds, from its name"``), which
    fits print. Columns named like
    `Config` fields (``gpus_per_node``, ``message_bytes``, ``global_batch``, …) are carried
    into the configuration. A ``series`` column selects one series with `series`.
    Repeated measurements are kept. `throughput_unit` names the work a
    throughput is counted in (``"images/s"``, ``"scripts/hour"``; a shipped dataset's
    path reads in the unit datasets/SOURCES.md gives, as `load_dataset`): a throughput per
    minute, hour or day is read as work per second (``÷ 60``, ``÷ 3600``, ``÷ 86400``)
    and labelled so (``"scripts/s"``). A
    ``batch_per_gpu`` column, or a ``global_batch`` that grows as the GPU count, states
    weak scaling; a ``global_batch`` equal at every count states strong scaling
    (`Benchmarks.scaling`); `scaling` (``"weak"`` or ``"strong"``) says it instead.
    `gpus_per_node` gives every row that node size, for a CSV without the column (one
    with it must agree): fits then know where the network between nodes starts.

    Raises:
        InputError: naming the file, row, column and what was expected.
    """
    source = os.fspath(path)
    frame = _read_csv(source)
    renames, roles, read_as = {}, {}, ""

    def role(column: str, argument: str, name: str) -> None:
        column = _require(frame, column, source)
        if column in renames:
            raise InputError(
                f"{source}: {{arg:{roles[column]}}} and {{arg:{argument}}} both name column "
                f"{column!r}; one column cannot be two quantities"
            )
        renames[column], roles[column] = name, argument

    if gpus_column is not None:
        role(gpus_column, "gpus_column", "gpus")
    for given, argument in ((time_column, "time_column"), (throughput_column, "throughput_column")):
        if gpus_column is None and given is not None and given.strip() == "gpus":
            raise InputError(  # it said "missing column 'gpus'", once renamed away
                f"{source}: {{arg:{argument}}} names column 'gpus', the GPU count; one column "
                "cannot be two quantities"
            )
    if time_column is not None:
        unit, read_as = time_unit_of(time_column, time_unit, source)
        role(time_column, "time_column", f"time_{unit}")
    elif time_unit is not None and time_unit not in TIME_UNITS:
        raise InputError(f"time unit must be s, ms or us, got {time_unit!r}")
    given_rate = throughput_unit
    if throughput_unit is None and throughput_column is None:
        throughput_unit = _shipped_unit(path)
    throughput_unit, named_unit = throughput_unit_of(throughput_column, throughput_unit, source)
    if throughput_column is not None:
        if names_a_time(throughput_column):
            # `time_s` fitted as a throughput answered "buy 1 GPU" (times fall, work/s).
            raise InputError(
                f"{source}: column {throughput_column!r} is a time by its name, not a "
                "throughput; give it with {arg:time_column}"
            )
        role(throughput_column, "throughput_column", THROUGHPUT_COLUMN)
    if renames:
        frame = frame.drop(columns=[c for c in renames.values() if c in frame.columns])
        frame = frame.rename(columns=renames)
    frame = _select_series(frame, series, source)
    if gpus_per_node is not None:
        frame = _with_node_size(frame, gpus_per_node, source)
    seconds, per_second = throughput_seconds(throughput_unit, source)
    if time_column is None and time_unit is not None:  # it was ignored, silently
        _check_time_unit(_measured_column(frame, source), time_unit, source)
    # Messages name the column as the file does (--time-column iter_time_s), not as read.
    frame.attrs["given_names"] = {name: column for column, name in renames.items()}
    data = _validate(frame, source)
    if given_rate is not None and data.target == "time":
        raise InputError(
            f"{source}: {{arg:throughput_unit}} is for a throughput column; this CSV "
            "measures time (give its unit with {arg:time_unit})"
        )
    if data.target == "throughput":
        # Work per `seconds` seconds: seconds per unit of work are seconds/value.
        data = dataclasses.replace(data, time_s=data.time_s * seconds, unit=per_second)
    if check_scaling(scaling) is not None:
        data = dataclasses.replace(data, scaling=scaling)
    if not read_as:
        column = _measured_column(frame, source)
        if column == THROUGHPUT_COLUMN:
            read_as = f"read {throughput_column or column} as {throughput_unit}"
            read_as += ", from its name" if named_unit else ""
            if seconds != 1.0:
                read_as += f", ÷ {seconds:g} for {per_second}"
        else:
            read_as = f"read {column} as {TIME_UNITS[column.split('_')[1]]}"
    note = dataset_note(path) if data.target == "time" else ""
    read_as = f"{read_as}, {note}" if note else read_as
    labelled = _labelled_workloads(frame, data)
    read_as = f"{read_as}; {labelled}" if labelled else read_as
    return dataclasses.replace(data, read_as=read_as)


# Groups whose measurements at the counts they share differ by more than this (median
# ratio) are different workloads; repeats labelled by day or host differ by less.
LABELLED_APART = 1.5


def _apart(data: Benchmarks, labels: np.ndarray, shared: list) -> bool:
    """Whether the labelled groups differ by `LABELLED_APART` or more at the `shared`
    counts: the median over them of the largest group's median over the smallest's."""
    ratios = []
    for n in shared:
        at = data.gpus == n
        medians = [np.median(data.time_s[at & (labels == g)]) for g in np.unique(labels[at])]
        ratios.append(max(medians) / min(medians))
    return float(np.median(ratios)) >= LABELLED_APART


def _labelled_workloads(frame: pd.DataFrame, data: Benchmarks) -> str:
    """A note when a text column the fit does not read labels groups of rows that each
    measure the same GPU counts (``model``: resnet at 1, 8, 16 GPUs and bert at 1, 8, 16):
    two workloads in one file, fitted as one series with R² 0.28 and no word but a pair
    of rows "5.95× apart" (review round 11). Else ``""``. Each group must hold two or
    more rows, so a column of per-run timestamps or host names is no such label."""
    for name in frame.columns:
        if name == SERIES_COLUMN or pd.api.types.is_numeric_dtype(frame[name]):
            continue
        labels = frame[name].astype(str).str.strip().to_numpy()
        names = list(dict.fromkeys(labels))
        if not 2 <= len(names) <= 20:
            continue
        counts = [set(data.gpus[labels == label]) for label in names]
        shared = sorted(set.intersection(*counts))
        if min(len(c) for c in counts) >= 2 and len(shared) >= 2 and _apart(data, labels, shared):
            shown = ", ".join(names[:4]) + (", …" if len(names) > 4 else "")
            return (
                f"column {name!r} (not read) labels {len(names)} groups that each measure the "
                f"same GPU counts ({shown}): fitted as one series; for several workloads, "
                "fit one at a time (name the column 'series' and pick one with --series, "
                "series= in Python)"
            )
    return ""


def _shipped_unit(path) -> str | None:
    """A shipped dataset's throughput unit (``"scripts/hour"``, from datasets/SOURCES.md),
    so that its path reads as its name does (`load_dataset`); None for other files."""
    unit = dataset_unit(path)
    return None if unit == "work/s" else unit


def _check_time_unit(column: str, time_unit: str, source: str) -> None:
    """`time_unit` given without `time_column`: the measured column must be a time in
    that unit (``time_ms`` with ``"s"`` is refused, as a name and a unit that disagree)."""
    if column == THROUGHPUT_COLUMN:
        raise InputError(
            f"{source}: {{arg:time_unit}} is for a time column; this CSV measures throughput "
            "(give its unit with {arg:throughput_unit})"
        )
    named = column.split("_")[1]
    if time_unit != named:
        raise InputError(
            f"{source}: column {column!r} is in {TIME_UNITS[named]}, but {{arg:time_unit}} "
            f"says {TIME_UNITS.get(time_unit, time_unit)}; rename the column or leave "
            "{arg:time_unit} out"
        )


def _with_node_size(frame: pd.DataFrame, gpus_per_node, source: str) -> pd.DataFrame:
    """`frame` with a ``gpus_per_node`` column of `gpus_per_node` (a whole number ≥ 1);
    a column already there must hold that value in every row."""
    value = gpus_per_node
    whole = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    if not (whole and math.isfinite(value) and value >= 1 and value == round(value)):
        raise InputError(f"{{arg:gpus_per_node}}: expected a whole number ≥ 1, got {value!r}")
    if "gpus_per_node" in frame.columns:
        cells = pd.to_numeric(frame["gpus_per_node"], errors="coerce").to_numpy()
        differ = np.flatnonzero(cells != value)
        if differ.size:
            line = frame.attrs["lines"][differ[0]]
            raise InputError(
                f"{source}: line {line}: gpus_per_node is {frame['gpus_per_node'].iloc[differ[0]]}"
                f", but {{arg:gpus_per_node}} says {value:g}; give one of them"
            )
        return frame
    with_column = frame.assign(gpus_per_node=float(value))
    with_column.attrs = dict(frame.attrs)  # the line numbers the errors name
    return with_column


_EXTRA = "\0extra"  # one spare column: catches rows with a cell more than the header


def _header(content: bytes, source: str) -> list[str]:
    """The column names of the first line, stripped (`unique_columns`)."""
    first = content.split(b"\n", 1)[0]
    try:
        text = first.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(not_utf8(content, source)) from None
    if not text.strip():
        raise InputError(f"{source}: the first line is empty, expected a header line")
    names = header_columns(text, source)
    return [name or f"Unnamed: {i}" for i, name in enumerate(names)]


def _read_csv(source: str) -> pd.DataFrame:
    """Every data row, with the physical line it came from in ``frame.attrs["lines"]``
    (blank lines skipped but counted). pandas parses numbers in C; a column with any
    cell that is not a number stays text, for `_numeric` to name that cell."""
    content = unix_newlines(read_bytes(source, "CSV file"))
    if not content.strip():
        raise InputError(f"{source}: empty file, expected a header line and data rows")
    names = _header(content, source)
    text_columns = {name: str for name in names if name == SERIES_COLUMN}
    try:
        with warnings.catch_warnings():
            # Mixed chunks of a large file (numbers, then a bad cell): the column stays
            # text and `_numeric` names the cell; pandas' warning would only repeat it.
            warnings.simplefilter("ignore", pd.errors.DtypeWarning)
            frame = pd.read_csv(
                io.BytesIO(content),
                header=None,
                skiprows=1,
                names=[*names, _EXTRA],
                index_col=False,
                dtype=text_columns or None,
                keep_default_na=False,
                na_values=[""],
                skipinitialspace=True,
                skip_blank_lines=False,
                encoding="utf-8-sig",
            )
    except pd.errors.EmptyDataError:
        frame = pd.DataFrame(columns=[*names, _EXTRA])
    except pd.errors.ParserError as error:
        raise csv_error(error, content, source, len(names)) from None
    except UnicodeDecodeError:
        raise InputError(not_utf8(content, source)) from None
    except ValueError as error:
        first = str(error).strip().splitlines()[0]
        raise InputError(f"{source}: not readable as CSV text ({first})") from None
    lines = np.arange(len(frame)) + 2
    extra = frame.pop(_EXTRA).isna().to_numpy()
    blank = frame.isna().all(axis=1).to_numpy() & extra
    _refuse_hidden_rows(content, source, names, lines, blank)
    stray = ~blank & ~extra
    if stray.any():
        line = int(lines[np.argmax(stray)])
        separator = next((s for s in (";", "\t", "|") if s in names[0]), "")
        hint = (  # "gpus";"time_s" then 1;1,0: a decimal comma splits the row in two
            f"; the header holds {separator!r}: columns are separated by commas"
            if separator and len(names) == 1
            else ""
        )
        raise InputError(
            f"{source} line {line}: {len(names) + 1} cells, but the header has "
            f"{len(names)} column{'s' if len(names) != 1 else ''} ({', '.join(names)}){hint}"
        )
    if blank.any():
        frame, lines = frame[~blank], lines[~blank]
    for name in text_columns:  # an empty series name is a name, not a missing value
        frame[name] = frame[name].fillna("")
    frame.attrs["lines"] = lines
    if frame.empty:
        raise InputError(f"{source}: header but no data rows")
    return frame


def _refuse_hidden_rows(content: bytes, source: str, names, lines, empty) -> None:
    """Refuse the rows pandas reads as nothing though they hold something: a row of
    separators alone (``,``), which was dropped as a blank line without a word, and a
    trailing comma on some rows but not all (``2,5.5,``), read as if it were absent.
    Blank lines are skipped, as the docs say (bad-input review of 2026-12-06)."""
    raw = content.split(b"\n")

    def text(line: int) -> bytes:
        return raw[line - 1].strip() if line - 1 < len(raw) else b""

    for line in np.asarray(lines)[np.asarray(empty, bool)]:
        if text(int(line)):
            raise InputError(
                f"{source} line {line}: no value in any cell "
                f"({text(int(line)).decode(errors='replace')!r}); remove the line or fill its cells"
            )
    if b",\n" not in content and not content.rstrip().endswith(b","):
        return  # no line ends in a comma: nothing trails

    def cells(row: bytes) -> int:
        if b'"' not in row:
            return row.count(b",") + 1
        return len(next(csv.reader([row.decode("utf-8", errors="replace")]), []))

    trailing = np.array(
        [r.endswith(b",") and cells(r) == len(names) + 1 for r in (text(int(n)) for n in lines)],
        bool,
    )
    rows = trailing[~np.asarray(empty, bool)]
    if rows.any() and not rows.all():
        line = int(lines[np.flatnonzero(trailing)[0]])
        raise InputError(
            f"{source} line {line}: {len(names) + 1} cells (the last empty: a trailing comma), "
            f"but the header has {len(names)} column{'s' if len(names) != 1 else ''} "
            f"({', '.join(names)}); a trailing comma is read only when every row has one"
        )


def _require(frame: pd.DataFrame, column: str, source: str) -> str:
    if column not in frame.columns:
        found = ", ".join(frame.columns)
        raise InputError(f"{source}: no column {column!r}; columns found: {found}")
    return column


def _select_series(frame: pd.DataFrame, series: str | None, source: str) -> pd.DataFrame:
    if SERIES_COLUMN not in frame.columns:
        if series is not None:
            raise InputError(f"{source}: {{arg:series}} given but the file has no 'series' column")
        return frame
    # Stripped as every other cell: " a " and "a" were two series, and --series a
    # silently dropped the rows written " a ".
    labels = frame[SERIES_COLUMN].astype(str).str.strip()
    names = list(dict.fromkeys(labels))
    series = None if series is None else series.strip()
    if series is None:
        if len(names) == 1:
            return frame
        raise InputError(
            f"{source}: {len(names)} series in column 'series'; pick one with {{arg:series}}: "
            + ", ".join(map(repr, names))
        )
    if series not in names:
        raise InputError(f"{source}: no series {series!r}; found: " + ", ".join(map(repr, names)))
    keep = (labels == series).to_numpy()
    lines = frame.attrs.get("lines")
    frame = frame[keep]
    if lines is not None:
        frame.attrs["lines"] = np.asarray(lines)[keep]
    return frame


def _measured_column(frame: pd.DataFrame, source: str) -> str:
    present = [c for c in (*TIME_COLUMNS, THROUGHPUT_COLUMN) if c in frame.columns]
    if len(present) == 1:
        return present[0]
    found = ", ".join(frame.columns)
    if not present:
        raise InputError(
            f"{source}: missing a time or throughput column; expected one of time_s, "
            f"time_ms, time_us, throughput (or name one with {{arg:time_column}} or "
            f"{{arg:throughput_column}}); columns found: {found}"
        )
    raise InputError(
        f"{source}: several measured columns ({', '.join(present)}); name the one to fit "
        "with {arg:time_column} or {arg:throughput_column}"
    )


def _lines(frame: pd.DataFrame) -> np.ndarray:
    lines = frame.attrs.get("lines")
    return np.arange(len(frame)) + 2 if lines is None else np.asarray(lines)


def _cell(cells: pd.Series, position: int, arrays: bool) -> str:
    """The text of a cell, as written when pandas kept it as text; "" for an empty cell
    of a CSV (NaN from Python arrays is shown as nan)."""
    value = cells.iloc[position]
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, (bool, np.bool_)):
        return str(value)
    if pd.isna(value):
        return "nan" if arrays else ""
    try:
        value = float(value)
    except OverflowError:  # a 400-digit integer: as written, cut
        text = str(value)
        return text if len(text) <= 40 else f"{text[:37]}..."
    return str(int(value)) if value.is_integer() and abs(value) < 1e16 else repr(value)


def _numeric(frame: pd.DataFrame, column: str, source: str, *, integer: bool) -> np.ndarray:
    """The column as float64, refusing empty, non-numeric, non-finite and ≤ 0 cells (< 0
    for `NONNEGATIVE_FIELDS`; codes outside `CODED_FIELDS`; names per `FIELD_NAMES`),
    and fractions where a whole number is needed. The checks are vectorised; the
    message names the first bad cell, its data row and its line in the file."""
    cells = frame[column]
    names = FIELD_NAMES.get(column, {})
    if pd.api.types.is_numeric_dtype(cells.dtype) and not pd.api.types.is_bool_dtype(cells):
        values = cells.to_numpy(dtype=np.float64)
    else:  # some cell is not a number: find it (strip "1.0 " and such first)
        text = cells.astype(str).str.strip()
        if names:  # "selective" for recompute's code 1
            text = text.str.lower().map(lambda cell: str(names.get(cell, cell)))
        values = pd.to_numeric(text, errors="coerce").to_numpy(dtype=np.float64)
    floor = 0.0 if column in NONNEGATIVE_FIELDS else None
    with np.errstate(invalid="ignore"):
        bad = ~np.isfinite(values) | ((values < 0) if floor is not None else (values <= 0))
        if column in CODED_FIELDS:
            bad |= ~np.isin(values, CODED_FIELDS[column])
        if integer:
            bad |= values != np.round(values)
            if column == "gpus":
                bad |= (values < 1) | (values > MAX_GPUS)
        if column in CONFIG_FIELDS and column != "gpus":
            bad |= values > LARGEST_VALUE  # layers = 1e300 failed in an SVD
    if not bad.any():
        return values
    position = int(np.argmax(bad))
    cell, value = _cell(cells, position, bool(frame.attrs.get("arrays"))), values[position]
    given = frame.attrs.get("given_names", {}).get(column, column)
    where = f"{source} row {position + 1} (line {_lines(frame)[position]}), column {given!r}"
    if cell == "":
        raise InputError(f"{where}: empty cell, expected a number")
    if not np.isfinite(value) and not names:
        raise InputError(f"{where}: expected a finite number, got {cell!r}")
    if column in CODED_FIELDS and value not in CODED_FIELDS[column]:
        codes = ", ".join(f"{c:g}" for c in CODED_FIELDS[column])
        named = f" or {', '.join(names)}" if names else ""
        raise InputError(f"{where}: expected one of {codes}{named}, got {cell!r}")
    if value < 0 or (value == 0 and column not in NONNEGATIVE_FIELDS):
        what = "a GPU count ≥ 1" if column == "gpus" else "a positive number"
        raise InputError(f"{where}: expected {what}, got {cell!r}")
    if column == "gpus" and value > MAX_GPUS:
        raise InputError(f"{where}: expected a GPU count of at most {MAX_GPUS:,}, got {cell!r}")
    if value > LARGEST_VALUE:
        raise InputError(f"{where}: expected at most {LARGEST_VALUE:g}, got {cell!r}")
    raise InputError(f"{where}: expected a whole number ≥ 1, got {cell!r}")


MAX_DECADES = 50.0
"""The most orders of magnitude one measured column may span: timings of one workload
differ by far less (a collective from 8 B to 8 GB spans about 6); more is a typo or a
wrong unit, and no fit in float64 is meaningful across it."""


def _check_span(frame: pd.DataFrame, column: str, values: np.ndarray, source: str) -> None:
    low, high = int(np.argmin(values)), int(np.argmax(values))
    decades = float(np.log10(values[high]) - np.log10(values[low]))
    if decades > MAX_DECADES:
        lines = _lines(frame)
        raise InputError(
            f"{source}: column {column!r} spans {decades:.0f} orders of magnitude (line "
            f"{lines[low]}: {values[low]:.3g}, line {lines[high]}: {values[high]:.3g}); "
            f"expected at most {MAX_DECADES:.0f}: check the units and typos of those rows"
        )


MAX_GPUS = LARGEST_COUNT
"""The largest GPU count a measurement may have (`_levels.LARGEST_COUNT`): ten times the
largest machines built; a larger count is a typo (1e300 would overflow every term that
grows with it)."""


def _validate(frame: pd.DataFrame, source: str) -> Benchmarks:
    if frame.empty:
        raise InputError(f"{source}: no data rows")
    if "gpus" not in frame.columns:
        found = ", ".join(frame.columns)
        separator = next((s for s in (";", "\t", "|") if any(s in c for c in frame.columns)), "")
        hint = (
            f" (the header holds {separator!r}: columns are separated by commas)"
            if separator
            else ""
        )
        raise InputError(
            f"{source}: missing column 'gpus' (or name it with {{arg:gpus_column}}); "
            f"columns found: {found}{hint}"
        )
    measured = _measured_column(frame, source)
    gpus = _numeric(frame, "gpus", source, integer=True)
    values = _numeric(frame, measured, source, integer=False)
    _check_span(frame, measured, values, source)
    config = {
        name: _numeric(frame, name, source, integer=name in COUNT_FIELDS)
        for name in CONFIG_FIELDS
        if name != "gpus" and name in frame.columns
    }
    if "gpu_memory_bytes" in config:  # as --set and a space's field: a unit slip (80 for GB)
        small = int(np.argmin(config["gpu_memory_bytes"]))
        where = f"{source} row {small + 1} (line {_lines(frame)[small]}), column 'gpu_memory_bytes'"
        check_memory_unit(where, "gpu_memory_bytes", float(config["gpu_memory_bytes"][small]))
    _check_samples_per_gpu(frame, gpus, config, source)
    if measured == THROUGHPUT_COLUMN:
        time_s, target = 1.0 / values, "throughput"
    else:
        time_s, target = values * TIME_COLUMNS[measured], "time"
    per_gpu_batch = None
    if BATCH_PER_GPU_COLUMN in frame.columns:
        per_gpu_batch = _numeric(frame, BATCH_PER_GPU_COLUMN, source, integer=False)
    return Benchmarks(
        source=source,
        gpus=gpus,
        time_s=time_s,
        target=target,
        config=config,
        lines=_lines(frame),
        scaling=stated_scaling(gpus, config.get("global_batch"), per_gpu_batch),
    )


def _check_samples_per_gpu(frame, gpus, config: dict, source: str) -> None:
    """Refuse a data-parallel row with more GPUs than samples in its global batch: each
    data-parallel GPU needs one. Such a row was fitted, then the search for the count to
    buy stopped at the batch, below the counts measured ("buy 8 GPUs" from a CSV that
    measured 16). Rows with tensor or pipeline parallelism split the model, not the
    batch, across GPUs, so they are left to the layout's own checks."""
    batch = config.get("global_batch")
    if batch is None or "tp" in config or "pp" in config:
        return
    over = np.flatnonzero(gpus > batch)
    if over.size:
        i = int(over[0])
        given = frame.attrs.get("given_names", {}).get("gpus", "gpus")
        raise InputError(
            f"{source} row {i + 1} (line {_lines(frame)[i]}), column {given!r}: {gpus[i]:g} "
            f"GPUs with a global batch of {batch[i]:g}: fewer than one sample per GPU; "
            "expected at most as many data-parallel GPUs as samples in the batch"
        )


def stated_scaling(gpus, global_batch=None, batch_per_gpu=None) -> str | None:
    """How the work grows with the GPUs, as the columns say: ``"weak"`` when a
    ``batch_per_gpu`` column is given or ``global_batch`` grows as the GPU count,
    ``"strong"`` when ``global_batch`` is the same at every count, else None."""
    if batch_per_gpu is not None:
        return "weak"
    if global_batch is None or len(np.unique(gpus)) < 2:
        return None
    batch = np.asarray(global_batch, dtype=np.float64)
    if np.allclose(batch, batch[0]):
        return "strong"
    per_gpu = batch / gpus
    return "weak" if np.allclose(per_gpu, per_gpu[0], rtol=1e-6) else None
