"""The table of shipped series in ``datasets/SOURCES.md``: what each measures, and in
which unit a throughput is counted (read by `load_benchmarks` for a shipped path, so
that a path and a name read alike)."""

import dataclasses
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
    infos = []
    sources = datasets_dir() / "SOURCES.md"
    for line in sources.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0].endswith(".csv"):
            name = cells[0].removesuffix(".csv")
            infos.append(DatasetInfo(name, int(cells[1]), int(cells[2]), cells[3], cells[4]))
    return infos


def dataset_unit(path) -> str:
    """The work per second a shipped series' throughput is counted in ("images/s"), from
    SOURCES.md, when `path` is one of the shipped CSVs; else ``"work/s"``."""
    path = Path(path).resolve()
    if path.parent != datasets_dir().resolve():
        return "work/s"
    for info in list_datasets():
        if info.name == path.stem and info.quantity.startswith("throughput ("):
            return info.quantity.removeprefix("throughput (").split(")")[0]
    return "work/s"


def dataset_note(path) -> str:
    """What a shipped series' time column holds when it is not a step: ``""``, or for
    MLPerf's times to train a clause saying that each "step" of the answers is one run."""
    path = Path(path).resolve()
    if path.parent != datasets_dir().resolve():
        return ""
    for info in list_datasets():
        if info.name == path.stem and "time-to-train" in info.scaling:
            return (
                'each a time to train, datasets/SOURCES.md: a "step" below is one whole '
                "training run (docs/time-to-train.md models runs from their logs)"
            )
    return ""
