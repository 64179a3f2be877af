"""The real benchmark series shipped with perfmodel (`datasets/` in the repository)."""

import dataclasses
import os
from pathlib import Path

from ._catalog import dataset_unit as dataset_unit
from ._catalog import DatasetInfo as DatasetInfo
from ._catalog import list_datasets
from ._catalog import list_nccl_logs as list_nccl_logs
from ._catalog import NcclLogInfo as NcclLogInfo
from ._data import Benchmarks, load_benchmarks
from ._errors import InputError
from ._files import datasets_dir, shipped_csv


def dataset_path(name: str) -> Path:
    """Path of the shipped CSV `name` (with or without ``.csv``)."""
    path = shipped_csv(name)
    if path is None:
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
    data = load_benchmarks(path)  # in the unit SOURCES.md gives (`_catalog.dataset_unit`)
    return dataclasses.replace(data, source=os.path.basename(path))


def nccl_log_info(name: str) -> NcclLogInfo:
    """The shipped log `name` (with or without ``.log``); a clear error for others."""
    infos = {i.name: i for i in list_nccl_logs()}
    info = infos.get(name.removesuffix(".log"))
    if info is None or not (datasets_dir() / "nccl" / f"{info.name}.log").is_file():
        raise InputError(f"no shipped nccl-tests log {name!r}; shipped: {', '.join(infos)}")
    return info


def load_nccl_log(name: str):
    """Parse a shipped nccl-tests log with its collective and rank count (a DataFrame as
    `parse_nccl_tests` returns), e.g. ``load_nccl_log("nccl_tests_44_2x2080ti")``."""
    from ._collective import parse_nccl_tests

    info = nccl_log_info(name)
    path = datasets_dir() / "nccl" / f"{info.name}.log"
    frame = parse_nccl_tests(path, collective=info.collective, n_ranks=info.n_ranks)
    frame.attrs["source"] = path.name
    return frame
