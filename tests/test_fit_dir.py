"""fit/ holds a current fit (JSON) and plot (PNG) of every shipped dataset.

When a test here fails after a change to the datasets or the fitting, regenerate the
folder with ``python fit/regenerate.py``.
"""

import hashlib
import importlib.util
import json
import math
from pathlib import Path

import numpy as np
from PIL import Image
import pytest

import perfmodel as pm
from perfmodel._io import SCHEMA_VERSION

ROOT = Path(__file__).resolve().parent.parent
FIT = ROOT / "fit"
HINT = "; regenerate fit/ with `python fit/regenerate.py`"
# Refitted here: a 4-point throughput series (fast), then (slow) a USL load series and a
# time series with repeats across nodes.
SAMPLE = (
    "tf_dgx1_p100_vgg16_real",
    pytest.param("usl_specsdm91", marks=pytest.mark.slow),
    pytest.param("mlperf07_dgxa100_resnet", marks=pytest.mark.slow),
)

pytestmark = pytest.mark.skipif(
    not (FIT / "INDEX.json").is_file(), reason="fit/ is not part of this source tree"
)


@pytest.fixture(scope="module")
def index():
    return json.loads((FIT / "INDEX.json").read_text())


@pytest.fixture(scope="module")
def regenerate():
    spec = importlib.util.spec_from_file_location("regenerate", FIT / "regenerate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_dataset_has_its_fit_and_plot(index):
    names = [info.name for info in pm.list_datasets()]
    assert list(index["datasets"]) == names, "fit/INDEX.json lists other datasets" + HINT
    expected = {"INDEX.json", "README.md", "regenerate.py"}
    for name in names:
        entry = index["datasets"][name]
        csv = ROOT / "datasets" / f"{name}.csv"
        digest = hashlib.sha256(csv.read_bytes()).hexdigest()
        assert entry["csv_sha256"] == digest, f"{csv.name} changed since its fit" + HINT
        expected |= {entry["fit"], entry["plot"]}
        assert (FIT / entry["fit"]).is_file() and (FIT / entry["plot"]).is_file(), name + HINT
    present = {p.name for p in FIT.iterdir() if not p.name.startswith((".", "__"))}
    assert present == expected, f"stray or missing files in fit/: {present ^ expected}"


def test_fit_files_are_current_and_match_their_csv(index):
    for name, entry in index["datasets"].items():
        document = json.loads((FIT / entry["fit"]).read_text())
        assert document["schema_version"] == SCHEMA_VERSION, name + HINT
        assert document["data"]["source"] == f"datasets/{name}.csv"
        assert document["model"]["family"] == entry["family"]
        data = pm.load_dataset(name)
        np.testing.assert_allclose(document["data"]["gpus"], data.gpus, err_msg=name + HINT)
        np.testing.assert_allclose(document["data"]["time_s"], data.time_s, err_msg=name + HINT)


def test_plots_are_modest_pngs(index):
    sizes = []
    for entry in index["datasets"].values():
        path = FIT / entry["plot"]
        with Image.open(path) as image:
            assert image.format == "PNG" and image.size == (1100, 800)
        sizes.append(path.stat().st_size)
    assert max(sizes) < 100_000


def test_index_and_readme_say_how_to_regenerate(index, regenerate):
    assert index["command"] == regenerate.COMMAND == "python fit/regenerate.py"
    assert index["seed"] == regenerate.SEED
    assert regenerate.COMMAND in (FIT / "README.md").read_text()


@pytest.mark.parametrize("name", SAMPLE)
def test_refit_reproduces_the_stored_fit(tmp_path, index, regenerate, name):
    entry = regenerate.fit_dataset(name, folder=str(tmp_path), plot=False)
    assert "error" not in entry, entry.get("error")
    stored = pm.load_fit(FIT / index["datasets"][name]["fit"])
    fresh = pm.load_fit(tmp_path / f"{name}.json")
    assert fresh.family == stored.family, name + HINT
    for key in ("optimal_gpus", "diminishing_returns_gpus", "csv_sha256"):
        assert entry[key] == index["datasets"][name][key], f"{name}: {key}" + HINT
    # The predictions pin the fit down even where a parameter is not identifiable.
    np.testing.assert_allclose(
        fresh.predict(fresh.data.gpus)["time_s"],
        stored.predict(stored.data.gpus)["time_s"],
        rtol=1e-4,
        err_msg=name + HINT,
    )
    errors = stored.standard_errors()
    for parameter, value in stored.parameters().items():
        if math.isfinite(errors.get(parameter, math.nan)) and errors[parameter] < 1.0:
            assert fresh.parameters()[parameter] == pytest.approx(value, rel=1e-3), parameter
