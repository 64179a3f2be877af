"""The series the accuracy and calibration benchmarks run on: the shipped datasets, or a
user's own benchmark CSVs (``--csv``), as ``(name, load)`` pairs loaded one at a time.

perfmodel is imported where it is used: accuracy.py also runs in Extra-P's environment,
which lacks it."""

import argparse
from collections.abc import Callable
import functools
from pathlib import Path


def shipped_series() -> list[tuple[str, Callable]]:
    """``(name, load)`` of every shipped dataset."""
    import perfmodel as pm

    names = [info.name for info in pm.list_datasets()]
    return [(name, functools.partial(pm.load_dataset, name)) for name in names]


def csv_series(paths: list[str]) -> list[tuple[str, Callable]]:
    """``(name, load)`` of every series in the CSV files given, or in the ``*.csv`` files
    of the folders given: one per file, or one per name of its ``series`` column.

    Raises:
        perfmodel.InputError: a path that is neither, or a file that does not load.
    """
    import perfmodel as pm

    files = []
    for path in map(Path, paths):
        if path.is_dir():
            found = sorted(path.glob("*.csv"))
            if not found:
                raise pm.InputError(f"{path}: a folder without *.csv files")
            files += found
        elif path.is_file():
            files.append(path)
        else:
            raise pm.InputError(f"{path}: no such file or folder")
    series = []
    for file in files:
        for name in _series_names(file):
            load = functools.partial(pm.load_benchmarks, file, series=name)
            load()  # a bad file stops the run before any fitting, with load's error
            series.append((file.stem if name is None else f"{file.stem}:{name}", load))
    return series


def _series_names(file: Path) -> list[str | None]:
    """The names in the ``series`` column of `file`, or ``[None]`` without one (or when
    the file is unreadable: loading it then says why)."""
    import pandas as pd

    try:
        frame = pd.read_csv(file, dtype=str, keep_default_na=False, skipinitialspace=True)
    except ValueError:
        return [None]
    columns = [str(c).strip() for c in frame.columns]
    if "series" not in columns:
        return [None]
    return list(dict.fromkeys(frame.iloc[:, columns.index("series")]))


def add_csv_option(parser: argparse.ArgumentParser) -> None:
    """``--csv PATH ...``: a user's series instead of the shipped ones."""
    parser.add_argument(
        "--csv",
        nargs="+",
        metavar="PATH",
        help="your own series instead of the shipped ones: benchmark CSV files (one series "
        "each, or one per name in a 'series' column) or folders of them",
    )
