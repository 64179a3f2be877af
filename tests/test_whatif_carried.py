"""A what-if of the default blend carries a changed member's change past the measurements
(`Blend.carrying`, review H2 of 2026-12-07): halving the serial time of Amdahl's law and
the USL lowered the count worth buying, since past two doublings the blend weighs
neither and the change moved only the one-GPU time."""

import json

import jax
import numpy as np
import pytest

import perfmodel as pm
from perfmodel import _closed
from perfmodel._cli import main
from perfmodel._fitting.twin import numpy_model
from perfmodel._saved import read_saved
from perfmodel._saved.fit import _model, _positive_values

MINE = "gpus,throughput\n1,410\n2,790\n4,1480\n8,2650\n"  # the review's table
COUNTS = np.array([1.0, 2, 4, 8, 12, 16, 24, 32, 64, 256, 4096])


@pytest.fixture(scope="module")
def mine(tmp_path_factory):
    path = tmp_path_factory.mktemp("carried") / "mine.csv"
    path.write_text(MINE)
    return pm.fit_auto(pm.load_benchmarks(path)).best


def test_up_to_the_largest_count_nothing_differs_and_past_it_the_change_is_carried(mine):
    blend = mine.model
    name = "amdahl.serial.time"
    value = 0.5 * float(mine.parameters()[name])
    plain = blend.with_parameters({name: value})  # the change at each count's weights
    carried = blend.carrying([name]).with_parameters({name: value})
    with jax.enable_x64(True):
        config, one = mine.config(COUNTS), mine.config(np.ones_like(COUNTS))
        before, old, new = (np.asarray(m._mixed(config)) for m in (blend, plain, carried))
        before_one = np.asarray(blend._mixed(one))
        here = np.asarray(blend.weights(config)["amdahl"])
        there = float(np.ravel(blend.weights(mine.config(np.array([8.0])))["amdahl"])[0])
        b, b1, a, a1 = (
            np.asarray(m.members[0](c)) for m in (blend, carried) for c in (config, one)
        )
    assert blend.names[0] == "amdahl" and there > 0
    inside = COUNTS <= 8
    np.testing.assert_allclose(new[inside], old[inside], rtol=1e-13)
    # Past it, in closed form: the curve with the change at its weights, times Amdahl's
    # factor with the weight it loses past the largest count: the fitted curve's perfect
    # scaling moved as Amdahl's one-GPU time, its loss to it as Amdahl's overhead.
    extra = np.where(COUNTS > 8, np.maximum(there - here, 0.0), 0.0)
    with np.errstate(invalid="ignore"):  # 0/0 at one GPU, where nothing is carried
        moved = np.where(extra > 0, (a - a1 / COUNTS) / (b - b1 / COUNTS), 1.0)
    perfect = before_one / COUNTS
    overhead = np.maximum(before - perfect, 0.0)
    factor = (perfect * a1 / b1 + overhead * moved) / (perfect + overhead)
    np.testing.assert_allclose(new, old * factor**extra, rtol=1e-12)
    assert np.all(new[COUNTS >= 32] < old[COUNTS >= 32]) and np.all(extra[COUNTS >= 32] > 0)
    assert np.all(new <= before)


def test_carried_shares_in_closed_form():
    n = np.array([4.0, 8.0, 16.0, 64.0])
    (one,) = _closed.carried_shares(np, n, 8.0, [np.array([0.4, 0.4, 0.3, 0.0])], [0.4])
    np.testing.assert_allclose(one, [0.4, 0.4, 0.4, 0.4])
    # Each member's share is its own: none is scaled by what else is carried.
    a, b = _closed.carried_shares(np, n, 8.0, [np.zeros(4), np.full(4, 0.9)], [0.6, 0.9])
    np.testing.assert_allclose(a, [0.0, 0.0, 0.6, 0.6])
    np.testing.assert_allclose(b, [0.9] * 4)


def test_a_change_that_does_nothing_moves_nothing_and_weights_are_a_members_own(mine):
    # Review of the carry: shares scaled to a sum of 1 made a no-op power.time=x1 move a
    # halved serial time's −15.4% at 64 GPUs to −14.1%, and explain's elasticity of the
    # power law that weighs 50% there read 0.3125 (÷1.6) instead of 0.5.
    counts = [8.0, 64.0, 512.0]
    alone = pm.what_if(mine, {"serial.time": "x0.5"}).predict(counts)["time_s"]
    both = pm.what_if(mine, {"serial.time": "x0.5", "power.time": "x1"}).predict(counts)
    np.testing.assert_allclose(both["time_s"], alone, rtol=1e-13)
    report = pm.sensitivity(mine, 64)
    elasticity = {p.name: p.elasticity for p in report.parameters}
    weights = {k: float(v) for k, v in mine.model.weights(mine.config(64.0)).items()}
    assert weights["power_law_flat"] == 0.5  # a power law's time is ∝ its c: elasticity 1
    assert elasticity["power_law_flat.power.time"] == pytest.approx(0.5, rel=1e-9)


@pytest.mark.slow  # 15 s: compare_fits' searches and require's scan
def test_halving_the_serial_time_never_slows_a_count_nor_lowers_the_count_to_buy(mine):
    faster = pm.what_if(mine, {"serial.time": "x0.5"})
    comparison = pm.compare_fits(mine, faster, gpus=list(COUNTS))
    assert np.all(comparison.time_ratio < 1.0)
    speedup = comparison.after["speedup"] / comparison.before["speedup"]
    assert np.all(speedup[COUNTS > 8] >= speedup[COUNTS == 8])  # the gain grows with N
    assert "carried on there with the weight its members have at 8 GPUs" in comparison.note
    assert "amdahl 40%" in comparison.note and not comparison.partial
    knee = comparison.knee_after.gpus
    assert knee is not None and knee >= comparison.knee_before.gpus
    # `require` asks for a smaller serial time, not a 5× larger one.
    needed = pm.require(mine, parameter="serial.time", target=("efficiency", 0.55), gpus=64)
    assert needed.value < 1.0
    # The sensitivity at 64 GPUs, where Amdahl's law and the USL weigh 0, moves the time.
    report = pm.sensitivity(mine, 64)
    (serial,) = [g for g in report.groups if g.name == "serial.time"]
    assert serial.change.time_change < -0.05


def test_a_carried_what_if_survives_save_and_load_on_both_paths(mine, tmp_path):
    once = pm.what_if(mine, {"serial.time": "x0.5"})
    twice = pm.what_if(once, {"amdahl.compute.time": "x0.8"})
    # The second change keeps the serial time's fitted value as its baseline.
    carried = twice.model.carried_values()
    fitted = mine.parameters()
    assert set(carried) == {"amdahl.serial.time", "usl.serial.time", "amdahl.compute.time"}
    assert all(carried[k] == pytest.approx(float(fitted[k]), rel=1e-15) for k in carried)
    path = tmp_path / "twice.json"
    pm.save_fit(twice, path)
    loaded = pm.load_fit(path)
    expected = np.asarray(twice.predict(COUNTS)["time_s"])
    np.testing.assert_allclose(loaded.predict(COUNTS)["time_s"], expected, rtol=1e-12)
    # The NumPy twin and the NumPy reader of fit files (which leaves fits with fixed
    # parameters to the JAX path, but reads the blend's options alike) agree.
    np.testing.assert_allclose(numpy_model(twice.model).seconds(COUNTS, {}), expected, rtol=1e-12)
    document = json.loads(path.read_text())
    saved = _model(document, _positive_values(document["parameters"]))
    assert saved.baseline and read_saved(path) is None
    np.testing.assert_allclose(saved.seconds(COUNTS, {}), expected, rtol=1e-12)


def test_an_edited_carried_value_is_refused_in_one_line(mine, tmp_path, capsys):
    path = tmp_path / "changed.json"
    pm.save_fit(pm.what_if(mine, {"serial.time": "x0.5"}), path)
    document = json.loads(path.read_text())
    for bad, field in (
        ({"amdahl.serial.time": -1.0}, "model.options.carried.amdahl.serial.time"),
        ({"amdahl.nothing": 1.0}, "model.options.carried.amdahl.nothing"),
        ("x", "model.options.carried"),
    ):
        document["model"]["options"]["carried"] = bad
        path.write_text(json.dumps(document))
        assert main(["predict", str(path), "--gpus", "64"]) != 0
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and field in err and "Traceback" not in err
