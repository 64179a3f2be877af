"""The series `benchmarks/accuracy.py` and `calibration.py` run on with ``--csv``."""

import importlib.util
from pathlib import Path

from helpers import load_benchmark
import pytest

import perfmodel as pm

ROOT = Path(__file__).resolve().parent.parent
EXTERNAL = ROOT / "benchmarks" / "external"


@pytest.fixture(scope="module")
def series_module():
    return load_benchmark("_series")


def test_a_folder_gives_one_series_per_file_and_a_series_column_one_per_name(
    series_module, tmp_path
):
    (tmp_path / "a.csv").write_text("gpus,throughput\n1,10\n2,19\n4,36\n")
    (tmp_path / "b.csv").write_text(
        "series,gpus,time_s\nx,1,1.0\nx,2,0.6\ny,1,2.0\ny,2,1.1\ny,4,0.7\n"
    )
    (tmp_path / "notes.txt").write_text("not a series")
    found = series_module.csv_series([str(tmp_path)])
    assert [name for name, _ in found] == ["a", "b:x", "b:y"]
    loaded = {name: load() for name, load in found}
    assert list(loaded["a"].gpus) == [1, 2, 4] and loaded["a"].target == "throughput"
    assert list(loaded["b:y"].time_s) == [2.0, 1.1, 0.7]


def test_a_bad_path_or_file_is_an_input_error_naming_it(series_module, tmp_path):
    with pytest.raises(pm.InputError, match="nope.csv: no such file or folder"):
        series_module.csv_series([str(tmp_path / "nope.csv")])
    with pytest.raises(pm.InputError, match="without \\*.csv"):
        series_module.csv_series([str(tmp_path)])
    bad = tmp_path / "bad.csv"
    bad.write_text("gpus,throughput\n1,10\n0,19\n")
    with pytest.raises(pm.InputError, match="bad.csv row 2 \\(line 3\\), column 'gpus'"):
        series_module.csv_series([str(bad)])


def test_the_external_check_series_load_with_their_sources(series_module):
    found = series_module.csv_series([str(EXTERNAL)])
    assert len(found) == 49
    sources = (EXTERNAL / "SOURCES.md").read_text()
    for name, load in found:
        data = load()
        assert data.target == "throughput" and len(set(data.gpus)) >= 4, name
        source = name.split("_")[1]  # dle, csc, servergear
        assert f"`{source}_" in sources, name


@pytest.mark.parametrize("folder, count", [("fresh", 18), ("unseen", 26), ("blind", 68)])
def test_the_later_check_sets_load_and_each_table_is_in_its_sources(series_module, folder, count):
    where = ROOT / "benchmarks" / folder
    found = series_module.csv_series([str(where)])
    assert len(found) == count
    sources = (where / "SOURCES.md").read_text()
    for name, load in found:
        data = load()
        assert data.target == "throughput" and len(set(data.gpus)) >= 4, name
        source = "_".join(name.split("_")[2:4])  # pyt_ncf, tf1_biobert, ec2_k80, ...
        assert f"`{source}_" in sources, name


def test_the_held_out_set_loads_and_each_file_is_in_its_sources(series_module):
    # benchmarks/heldout (2026-12-04): 76 tables, 55 of them at three counts.
    where = ROOT / "benchmarks" / "heldout"
    found = series_module.csv_series([str(where)])
    assert len(found) == 76
    sources = (where / "SOURCES.md").read_text()
    counts = []
    for name, load in found:
        data = load()
        assert data.target == "throughput" and name in sources, name
        counts.append(len(set(data.gpus)))
    assert min(counts) == 3 and sum(c >= 4 for c in counts) == 21


def test_the_vendor_set_is_its_source_under_the_rules_fixed_before_scoring(series_module):
    # benchmarks/vendor: every committed CSV is what make_series.py derives from the
    # copied source tables, and nothing else is there.
    where = ROOT / "benchmarks" / "vendor"
    spec = importlib.util.spec_from_file_location("make_series", where / "make_series.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    written, left = module.build()
    assert len(written) == 141 and len(left) == 19
    assert {p.name for p in where.glob("*.csv")} == set(written)
    for name, text in written.items():
        assert (where / name).read_text() == text, name
    found = series_module.csv_series([str(where)])
    assert len(found) == 141
    assert all(len(set(load().gpus)) == 4 for _, load in found)
