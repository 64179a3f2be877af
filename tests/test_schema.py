"""The fit file's schema (perfmodel/_schema.py): strict JSON out, every field checked in.

The reliability corpus (tests/reliability) attacks the commands with edited fit files;
these are the field-by-field checks of the schema itself and the strict round trip of
every family and every shipped fit.
"""

import copy
import dataclasses
import json
import math
from pathlib import Path

from helpers import exact_fit
import jax
import numpy as np
import pytest

import perfmodel as pm
from perfmodel._io import fit_json, fit_to_dict, read_document
from perfmodel._presets import build, FAMILIES
from perfmodel._schema import check_document, check_options

ROOT = Path(__file__).resolve().parent.parent
BASE = ROOT / "tests" / "reliability" / "files" / "fit.json"


def strict(text: str):
    """Parse `text` as strict readers do: NaN and Infinity are not JSON."""

    def refuse(constant):
        raise ValueError(f"non-strict JSON constant {constant}")

    return json.loads(text, parse_constant=refuse)


def _family_fit(family: str) -> pm.FitResult:
    """A fit of `family` at its default parameters, to data it predicts exactly, with an
    undetermined direction in its covariance (infinite entries)."""
    options = {
        "pmnf": {"exponent": -0.5, "log_exponent": 1},
        "blend": {"largest": 32.0},  # the data's largest count, as a fit file must say
    }
    model = build(family, **options.get(family, {}))
    gpus = np.array([1.0, 2.0, 4.0, 8.0, 16.0, 32.0])
    config = {"gpus_per_node": np.full(6, 8.0)}
    with jax.enable_x64(True):
        time_s = np.asarray(model(pm.Config(gpus=gpus, **config)), dtype=np.float64)
    data = pm.from_arrays(gpus, time_s, gpus_per_node=config["gpus_per_node"])
    free = tuple(model.parameter_specs())
    covariance = np.eye(len(free)) * 0.01
    covariance[0, :] = covariance[:, 0] = math.inf
    return dataclasses.replace(
        exact_fit(model, data), free=free, raw_covariance=covariance, r2=math.nan
    )


@pytest.mark.parametrize("family", list(FAMILIES))
def test_every_family_round_trips_through_a_strict_parser(tmp_path, family):
    fit = _family_fit(family)
    path = tmp_path / "fit.json"
    pm.save_fit(fit, path)
    document = strict(path.read_text())
    assert document["raw_covariance"][0][0] is None  # the documented null: infinite
    assert document["quality"]["r2"] is None
    loaded = pm.load_fit(path)
    assert loaded.family == family and loaded.free == fit.free
    assert np.all(loaded.raw_covariance[0, :] == math.inf)  # one free parameter: [0, 0]
    np.testing.assert_allclose(loaded.raw_covariance[1:, 1:], fit.raw_covariance[1:, 1:])
    for name, value in fit.parameters().items():
        assert loaded.parameters()[name] == pytest.approx(value, rel=1e-12), name


def test_every_shipped_fit_is_strict_json_and_valid():
    files = sorted((ROOT / "fit").glob("*.json"))
    files = [f for f in files if f.name != "INDEX.json"]
    assert files, "fit/ holds no fits"
    for path in files:
        document = strict(path.read_text())
        check_document(document, str(path))
    loaded = pm.load_fit(files[0])  # one through the whole loader, model and all
    assert np.all(np.isfinite(loaded.residuals))


def test_save_refuses_what_load_would_refuse(tmp_path):
    fit = exact_fit(pm.amdahl().with_parameters({"serial.time": 1e-320, "compute.time": 1.0}))
    with pytest.raises(pm.InputError, match=r"parameters.serial.time.value: expected"):
        pm.save_fit(fit, tmp_path / "fit.json")
    assert not list(tmp_path.iterdir())


def test_json_output_is_complete_or_absent(capsys):
    """print_json serialises first: a fit with infinite variances prints one document."""
    from perfmodel._cli.common import print_json

    print_json({**fit_to_dict(_family_fit("amdahl")), "extra": [math.nan, np.float64(math.inf)]})
    document = strict(capsys.readouterr().out)
    assert document["extra"] == [None, None]


def _edited(edit):
    document = json.loads(BASE.read_text())
    edit(document)
    return document


def _set(*keys, value):
    def edit(document):
        target = document
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = value

    return edit


EDITS = [
    (_set("target", value="speed"), "target: expected one of time, throughput"),
    (_set("precision", value="float16"), "precision: expected one of"),
    (_set("loss", "kind", value="l1"), "loss.kind: expected one of log"),
    (_set("parameters", "serial.time", "fixed", value="yes"), "serial.time.fixed: expected true"),
    (_set("parameters", "serial.time", "log_stderr", value=-1), "log_stderr: expected a finite"),
    (_set("parameters", "nope", value={"value": 1.0}), "parameters.nope: not a parameter"),
    (_set("free", value=["serial.time", "serial.time"]), r"free\[1\]: 'serial.time' is listed"),
    (_set("bounds", value={"serial.time": [2.0, 1.0]}), "bounds.serial.time: expected lo < hi"),
    (_set("bounds", value={"serial.time": [-1, None]}), "bounds.serial.time.lo: expected a pos"),
    (_set("bounds", value={"x": [None, None]}), "bounds.x: not a parameter"),
    (_set("raw_covariance", value=[[1.0, 0.0], [0.0, math.nan]]), r"raw_covariance\[1\]\[1\]"),
    (_set("raw_covariance", value=[[-1.0, 0.0], [0.0, 1.0]]), "a variance ≥ 0"),
    (_set("config_defaults", value={"speed": 1.0}), "config_defaults.speed: not a Config"),
    (_set("config_defaults", value={"gpus_per_node": 0}), "config_defaults.gpus_per_node"),
    (_set("data", "lines", value=[1, 2]), "data.lines: expected 6 line numbers"),
    (_set("data", "gpus", value=[1, 2, 4, 8, 16, 0.5]), r"data.gpus\[5\]: expected a GPU"),
    (_set("data", "gpus", value=[1, 2, 4, 8, 10**400, 32]), r"data.gpus\[4\]: expected a GPU"),
    (_set("data", "gpus", value=[1, 2, 4, True, 16, 32]), r"data.gpus\[3\]: expected a GPU"),
    (_set("data", "time_s", value=[1.0, 0.5, 0.3, 0.0, 0.1, 0.1]), r"data.time_s\[3\]: expected"),
    (_set("data", "lines", value=[2, 3, 4, 5, 0, 7]), r"data.lines\[4\]: expected a whole"),
    (_set("parameters", "serial.time", "value", value=10**400), "serial.time.value: expected"),
    (_set("data", "config", value={"tp": [1] * 5}), "data.config.tp: expected 6 values"),
    (_set("quality", "num_steps", value=1.5), "quality.num_steps: expected a whole"),
    # A key perfmodel does not read: a misspelt edit (model.interval) was silently ignored.
    (_set("model", "interval", value="bootstrap"), "model.interval: not a field of model"),
    (_set("parameters", "serial.time", "valeu", value=0.5), "serial.time.valeu: not a field"),
    (_set("data", "gpu_per_node", value=8), "data.gpu_per_node: not a field of data"),
    (_set("loss", "kindd", value="log"), "loss.kindd: not a field of loss"),
    (_set("quality", "rsquared", value=1.0), "quality.rsquared: not a field of quality"),
    # Fuzzing round 6: each was taken and answered.
    (_set("bounds", value={"serial.time": [1, 2]}), "serial.time.value: expected a value within"),
    (_set("quality", "r2", value=5), "quality.r2: expected a finite number"),
    (_set("loss", "value", value=-1.0), "loss.value: expected a finite number"),
    (_set("target", value="throughput"), "data.unit: expected work per second"),
    (_set("data", "unit", value="furlongs"), "data.unit: expected s"),
    (_set("data", "gpus", value=[1]), "data.gpus: expected at least two measurements"),
    (_set("data", "time_s", value=[1.0, 0.5, 0.3, 1e-320, 0.1, 0.1]), "orders of magnitude"),
    (_set("model", "options", value={"weak": 1}), "model.options.weak: expected true or false"),
    (_set("parameters", "compute.time", "value", value=-math.inf), "got -Infinity"),
    (lambda d: d["quality"].pop("converged"), "quality.converged: missing"),
    (lambda d: d["loss"].pop("value"), "loss.value: missing"),  # was a KeyError traceback
    (_set("model", "components", value=[{}] * 10**6), "model.components: expected at most 0"),
    # Found by fuzzing hybrid fit files: a code outside its codes was answered, and
    # layers = 1e308 hung `optimal` (its pp axis tried every divisor up to 1e308).
    (_set("config_defaults", value={"recompute": 7}), "config_defaults.recompute: expected one"),
    (_set("config_defaults", value={"layers": 1e308}), "config_defaults.layers: expected a whol"),
    (_set("config_defaults", value={"interleave": 0.5}), "config_defaults.interleave: expected"),
    (_set("data", "config", value={"tp": [1, 1, 1, 1, 1, 1.5]}), r"data.config.tp\[5\]: expect"),
    (_set("data", "config", value={"zero": [0, 0, 0, 0, 0, 5]}), r"data.config.zero\[5\]: exp"),
    (_set("data", "config", value={"hidden": [1e300] * 6}), r"data.config.hidden\[0\]: exp"),
]


def test_the_pp_axis_of_the_layout_search_stops_at_the_gpus():
    from perfmodel._cli.layout import _divisors

    assert _divisors(96.0, 64) == [1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 24.0, 32.0, 48.0]
    assert _divisors(1e308, 4) == [1.0, 2.0, 4.0]  # was a loop of 1e308 steps


@pytest.mark.parametrize("edit, message", EDITS)
def test_each_field_is_checked_and_named(edit, message):
    with pytest.raises(pm.InputError, match=message) as caught:
        check_document(_edited(edit), "fit.json")
    assert str(caught.value).startswith("fit.json: ") and "\n" not in str(caught.value)


def test_a_blend_has_at_most_one_component_per_member():
    """10⁶ copies of the members were each checked (over a minute) and then ignored."""
    document = json.loads((ROOT / "fit" / "dle_mxnet_rn50_dgx1_fp32.json").read_text())
    document["model"]["components"] *= 3
    with pytest.raises(pm.InputError, match=r"model.components: expected at most 5 comp"):
        check_document(document, "fit.json")


def test_the_unedited_file_passes():
    model = check_document(_edited(lambda d: None), "fit.json")
    assert model.family == "amdahl"


@pytest.mark.parametrize(
    "family, options, message",
    [
        ("hybrid", {"flops": -4e14}, "model.options.flops: expected a positive finite"),
        ("hybrid", {"flops": "fast"}, "model.options.flops: expected a positive finite"),
        ("pmnf", {"exponent": "half"}, "model.options.exponent: expected a finite number or"),
        ("pmnf", {"log_exponent": 1.5}, "model.options.log_exponent: expected a whole"),
        ("data_parallel", {"algorithm": "star"}, "model.options: algorithm must be"),
        ("data_parallel", {"overlap": "no"}, "model.options.overlap: expected true or false"),
        ("amdahl2", {}, "model.family: unknown 'amdahl2'"),
    ],
)
def test_family_options_are_typed(family, options, message):
    with pytest.raises(pm.InputError, match=message):
        check_options(family, options)


def test_legacy_infinity_in_the_covariance_still_loads(tmp_path):
    """Files written before strict JSON hold Infinity for an infinite variance."""
    document = copy.deepcopy(json.loads(BASE.read_text()))
    document["raw_covariance"][0][0] = math.inf
    path = tmp_path / "old.json"
    path.write_text(json.dumps(document, allow_nan=True))
    assert "Infinity" in path.read_text()
    assert pm.load_fit(path).raw_covariance[0, 0] == math.inf
    assert read_document(path)["raw_covariance"][0][0] == math.inf


def test_fit_json_is_what_save_writes(tmp_path):
    fit = _family_fit("usl")
    pm.save_fit(fit, tmp_path / "a.json")
    first, second = (tmp_path / "a.json").read_text(), fit_json(fit)
    drop = lambda text: {k: v for k, v in strict(text).items() if k != "created"}  # noqa: E731
    assert drop(first) == drop(second)
