"""Benchmark CSVs in, validated arrays in SI units out. The only module that reads CSV."""

from collections.abc import Mapping
import dataclasses
import os

import numpy as np
import pandas as pd

from ._config import CODED_FIELDS, Config, CONFIG_FIELDS, FIELD_NAMES, NONNEGATIVE_FIELDS
from ._errors import InputError

TIME_COLUMNS: dict[str, float] = {"time_s": 1.0, "time_ms": 1e-3, "time_us": 1e-6}
THROUGHPUT_COLUMN = "throughput"
SERIES_COLUMN = "series"
_INTEGER_FIELDS = ("gpus", "gpus_per_node", "gpus_per_link", "tp", "pp", "microbatches")


@dataclasses.dataclass(frozen=True)
class Benchmarks:
    """Validated measurements of one series.

    Attributes:
        source: where they came from (a file name), used in messages.
        gpus: GPU count of each measurement.
        time_s: seconds per step, or per unit of work when `target` is throughput.
        target: ``"time"`` or ``"throughput"``, the quantity the CSV gave.
        config: other `Config` fields found in the CSV, one array each.
        lines: the CSV line each measurement came from (1 is the header).
        unit: unit of the measured quantity as given: ``"s"`` for times (read in SI
            seconds), the work per second for throughput (``"work/s"`` unless known,
            e.g. ``"images/s"`` for a shipped series).
    """

    source: str
    gpus: np.ndarray
    time_s: np.ndarray
    target: str = "time"
    config: Mapping[str, np.ndarray] = dataclasses.field(default_factory=dict)
    lines: np.ndarray | None = None
    unit: str = ""

    def __post_init__(self):
        if not self.unit:
            object.__setattr__(self, "unit", "work/s" if self.target == "throughput" else "s")

    @property
    def measured(self) -> np.ndarray:
        """The quantity as measured: seconds, or work per second for throughput."""
        return 1.0 / self.time_s if self.target == "throughput" else self.time_s

    def to_config(self) -> Config:
        """The measurements' configurations as one batched `Config`."""
        return Config(gpus=self.gpus, **self.config)

    def distinct_configs(self) -> int:
        """Number of distinct configurations (rows that differ in some config value)."""
        columns = [self.gpus, *self.config.values()]
        return len(np.unique(np.stack(columns, axis=1), axis=0))


def from_arrays(
    gpus, time_s=None, *, throughput=None, source: str = "<arrays>", **config
) -> Benchmarks:
    """Benchmarks from Python sequences; give exactly one of `time_s` and `throughput`."""
    if (time_s is None) == (throughput is None):
        raise InputError(f"{source}: give exactly one of time_s and throughput")
    name = "time_s" if throughput is None else THROUGHPUT_COLUMN
    frame = pd.DataFrame({"gpus": gpus, name: time_s if throughput is None else throughput})
    for key, value in config.items():
        frame[key] = value
    return _validate(frame.astype(str), source)


def load_benchmarks(
    path: str | os.PathLike,
    *,
    gpus_column: str | None = None,
    time_column: str | None = None,
    time_unit: str = "s",
    throughput_column: str | None = None,
    throughput_unit: str = "work/s",
    series: str | None = None,
) -> Benchmarks:
    """Read a benchmark CSV: a `gpus` column and one time or throughput column.

    Time columns are ``time_s``, ``time_ms`` or ``time_us`` (or any column given as
    `time_column`, in `time_unit`); ``throughput`` is work per second. Columns named like
    `Config` fields (``gpus_per_node``, ``message_bytes``, ``global_batch``, …) are carried
    into the configuration. A ``series`` column selects one series with `series`.
    Repeated measurements are kept. `throughput_unit` names the work per second a
    throughput is counted in (``"images/s"``), for labels and reports.

    Raises:
        InputError: naming the file, row, column and what was expected.
    """
    source = os.fspath(path)
    frame = _read_csv(source)
    renames = {}
    if gpus_column is not None:
        renames[_require(frame, gpus_column, source)] = "gpus"
    if time_column is not None:
        if time_unit not in ("s", "ms", "us"):
            raise InputError(f"time unit must be s, ms or us, got {time_unit!r}")
        renames[_require(frame, time_column, source)] = f"time_{time_unit}"
    if throughput_column is not None:
        renames[_require(frame, throughput_column, source)] = THROUGHPUT_COLUMN
    if renames:
        frame = frame.drop(columns=[c for c in renames.values() if c in frame.columns])
        frame = frame.rename(columns=renames)
    frame = _select_series(frame, series, source)
    data = _validate(frame, source)
    if data.target == "throughput":
        data = dataclasses.replace(data, unit=throughput_unit)
    return data


def _read_csv(source: str) -> pd.DataFrame:
    if not os.path.exists(source):
        raise InputError(f"{source}: no such file")
    if os.path.isdir(source):
        raise InputError(f"{source}: is a directory, expected a CSV file")
    try:
        frame = pd.read_csv(source, dtype=str, keep_default_na=False, skipinitialspace=True)
    except pd.errors.EmptyDataError:
        raise InputError(f"{source}: empty file, expected a header line and data rows")
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as error:
        first = str(error).strip().splitlines()[0]
        raise InputError(f"{source}: not readable as CSV text ({first})")
    frame.columns = [str(c).strip() for c in frame.columns]
    if frame.empty:
        raise InputError(f"{source}: header but no data rows")
    return frame


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
    names = list(dict.fromkeys(frame[SERIES_COLUMN]))
    if series is None:
        if len(names) == 1:
            return frame
        raise InputError(
            f"{source}: {len(names)} series in column 'series'; pick one with {{arg:series}}: "
            + ", ".join(names)
        )
    if series not in names:
        raise InputError(f"{source}: no series {series!r}; found: " + ", ".join(names))
    return frame[frame[SERIES_COLUMN] == series]


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


def _numeric(frame: pd.DataFrame, column: str, source: str, *, integer: bool) -> np.ndarray:
    """The column as float64, refusing empty, non-numeric, non-finite and ≤ 0 cells (< 0
    for `NONNEGATIVE_FIELDS`; codes outside `CODED_FIELDS`; names per `FIELD_NAMES`)."""
    text = frame[column].astype(str).str.strip()
    names = FIELD_NAMES.get(column, {})
    coded = text.str.lower().map(lambda cell: str(names.get(cell, cell)))
    values = pd.to_numeric(coded, errors="coerce").to_numpy(dtype=np.float64)
    for position, (cell, value) in enumerate(zip(text, values)):
        row = int(frame.index[position]) + 1
        where = f"{source} row {row} (line {row + 1}), column {column!r}"
        if cell == "":
            raise InputError(f"{where}: empty cell, expected a number")
        if not np.isfinite(value):
            raise InputError(f"{where}: expected a finite number, got {cell!r}")
        if column in CODED_FIELDS and value not in CODED_FIELDS[column]:
            codes = ", ".join(f"{c:g}" for c in CODED_FIELDS[column])
            named = f" or {', '.join(names)}" if names else ""
            raise InputError(f"{where}: expected one of {codes}{named}, got {cell!r}")
        if value < 0 or (value == 0 and column not in NONNEGATIVE_FIELDS):
            what = "a GPU count ≥ 1" if column == "gpus" else "a positive number"
            raise InputError(f"{where}: expected {what}, got {cell!r}")
        if integer and (value != np.round(value) or (column == "gpus" and value < 1)):
            raise InputError(f"{where}: expected a whole number ≥ 1, got {cell!r}")
    return values


def _validate(frame: pd.DataFrame, source: str) -> Benchmarks:
    if frame.empty:
        raise InputError(f"{source}: no data rows")
    if "gpus" not in frame.columns:
        found = ", ".join(frame.columns)
        raise InputError(
            f"{source}: missing column 'gpus' (or name it with {{arg:gpus_column}}); "
            f"columns found: {found}"
        )
    measured = _measured_column(frame, source)
    gpus = _numeric(frame, "gpus", source, integer=True)
    values = _numeric(frame, measured, source, integer=False)
    config = {
        name: _numeric(frame, name, source, integer=name in _INTEGER_FIELDS)
        for name in CONFIG_FIELDS
        if name != "gpus" and name in frame.columns
    }
    if measured == THROUGHPUT_COLUMN:
        time_s, target = 1.0 / values, "throughput"
    else:
        time_s, target = values * TIME_COLUMNS[measured], "time"
    return Benchmarks(
        source=source,
        gpus=gpus,
        time_s=time_s,
        target=target,
        config=config,
        lines=frame.index.to_numpy() + 2,
    )
