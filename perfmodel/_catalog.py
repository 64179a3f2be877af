"""The table of shipped series in ``datasets/SOURCES.md``: what each measures, and in
which unit a throughput is counted (read by `load_benchmarks` for a shipped path, so
that a path and a name read alike)."""

import dataclasses
import functools
from pathlib import Path

from ._files import datasets_dir


@dataclasses.dataclass(frozen=True)
class DatasetInfo:
    """One shipped series: its name, size and what it measures (from SOURCES.md)."""

    name: str
    rows: int
    distinct_gpus: int
    quantity: str
    scaling: str


def list_datasets() -> list[DatasetInfo]:
    """Every shipped series, in the order of the table in ``datasets/SOURCES.md``."""
    return list(_table())


@functools.cache
def _table() -> tuple[DatasetInfo, ...]:
    # Read once per process: every load of a shipped path asks it (`shipped_info`).
    infos = []
    sources = datasets_dir() / "SOURCES.md"
    for line in sources.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0].endswith(".csv"):
            name = cells[0].removesuffix(".csv")
            infos.append(DatasetInfo(name, int(cells[1]), int(cells[2]), cells[3], cells[4]))
    return tuple(infos)


def shipped_info(path) -> DatasetInfo | None:
    """The row of SOURCES.md when `path` is one of the shipped CSVs, else None."""
    path = Path(path).resolve()
    if path.parent != datasets_dir().resolve():
        return None
    return next((info for info in _table() if info.name == path.stem), None)


def dataset_unit(path) -> str:
    """The work per second a shipped series' throughput is counted in ("images/s"), from
    SOURCES.md, when `path` is one of the shipped CSVs; else ``"work/s"``."""
    info = shipped_info(path)
    if info is not None and info.quantity.startswith("throughput ("):
        return info.quantity.removeprefix("throughput (").split(")")[0]
    return "work/s"


def dataset_note(path) -> str:
    """What a shipped series' time column holds when it is not a step: ``""``, or for
    MLPerf's times to train a clause saying that each "step" of the answers is one run."""
    info = shipped_info(path)
    if info is None or "time-to-train" not in info.scaling:
        return ""
    return (
        'each a time to train, datasets/SOURCES.md: a "step" below is one whole '
        "training run (docs/time-to-train.md models runs from their logs)"
    )


def run_note(source) -> str:
    """`dataset_note`'s short form for the headers of `predict`, `explain`, `whatif` and
    `report` of a fit file: ``'; a "step" here is one whole training run'`` for MLPerf's
    times to train, else ``""`` (only `fit` said so: newcomer review of 2026-12-07)."""
    if not dataset_note(source):  # "<arrays>" or a folder of logs is no shipped path: ""
        return ""
    return '; a "step" here is one whole training run (time_s is a time to train)'


@dataclasses.dataclass(frozen=True)
class NcclLogInfo:
    """One shipped nccl-tests log (``datasets/nccl/``), from its row in SOURCES.md."""

    name: str
    collective: str
    n_ranks: int
    rows: int
    hardware: str
    source: str


def list_nccl_logs() -> list[NcclLogInfo]:
    """Every shipped nccl-tests log, in the order of its table in ``datasets/SOURCES.md``."""
    infos = []
    for line in (datasets_dir() / "SOURCES.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and cells[0].endswith(".log"):
            name = cells[0].removesuffix(".log")
            infos.append(NcclLogInfo(name, cells[1], int(cells[2]), int(cells[3]), *cells[4:]))
    return infos
