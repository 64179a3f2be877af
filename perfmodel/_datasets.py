"""The real benchmark series shipped with perfmodel (`datasets/` in the repository)."""

import dataclasses
from importlib import resources
import os
from pathlib import Path

from ._data import Benchmarks, load_benchmarks
from ._errors import InputError


@dataclasses.dataclass(frozen=True)
class DatasetInfo:
    """One shipped series: its name, size and what it measures (from SOURCES.md)."""

    name: str
    rows: int
    distinct_gpus: int
    quantity: str
    scaling: str


def datasets_dir() -> Path:
    """The folder of shipped CSVs: inside the installed wheel, else the source tree's."""
    packaged = Path(str(resources.files("perfmodel"))) / "datasets"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent / "datasets"


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


def dataset_path(name: str) -> Path:
    """Path of the shipped CSV `name` (with or without ``.csv``)."""
    path = datasets_dir() / f"{name.removesuffix('.csv')}.csv"
    if not path.is_file():
        known = [info.name for info in list_datasets()]
        close = [k for k in known if name.split("_")[0] in k][:8] or known[:8]
        raise InputError(
            f"no shipped dataset {name!r}; `perfmodel datasets` lists all {len(known)}, "
            f"e.g. {', '.join(close)}"
        )
    return path


def load_dataset(name: str) -> Benchmarks:
    """Load a shipped series by name, e.g. ``load_dataset("usl_specsdm91")``."""
    path = dataset_path(name)
    data = load_benchmarks(path)
    return dataclasses.replace(data, source=os.path.basename(path))
