"""The default blend (`perfmodel._fitting.blend`) against its NumPy reference, its closed
forms, and the promise that the column name does not change the answer."""

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest

import perfmodel as pm
from perfmodel._fitting import (
    fit_blend,
    INTERVAL_Q,
    KAPPA,
    MIN_DOUBLINGS,
    MIXTURE,
    per_unit_of_work,
)

ROOT = Path(__file__).resolve().parent.parent
# The members as the NumPy reference fits them (benchmarks/make_blend_vectors.py).
CASES = json.loads((ROOT / "tests/data/blend_vectors.json").read_text())["cases"]


def _data(case):
    kw = {}
    if case["gpus_per_node"] is not None:
        kw["gpus_per_node"] = [case["gpus_per_node"]] * len(case["gpus"])
    if case["target"] == "throughput":
        data = pm.from_arrays(case["gpus"], throughput=case["measured"], **kw)
    else:
        data = pm.from_arrays(case["gpus"], case["measured"], **kw)
    return dataclasses.replace(data, scaling=case["scaling"])


@pytest.fixture(scope="module")
def vgg():
    return pm.fit_auto(pm.load_dataset("tf_dgx1_p100_vgg16_real"))


@pytest.mark.parametrize("case", CASES[::12], ids=lambda c: f"{c['series']}-{c['protocol']}")
def test_members_match_the_reference_and_the_blend_is_their_weighted_sum(case):
    data, how = per_unit_of_work(_data(case))
    fit = fit_blend(data)
    ask = np.asarray(case["ask"], float)
    config = fit.config(ask)
    members = {c.family: np.asarray(c.model(config)) for c in fit.components}
    assert set(members) == set(case["members"])
    for family, expected in case["members"].items():
        np.testing.assert_allclose(members[family], expected, rtol=1e-6, err_msg=family)
    weights = {c.family: c.weight for c in fit.components}
    blended = sum(weights[f] * members[f] for f in weights) / sum(weights.values())
    np.testing.assert_allclose(np.asarray(fit.model(config)), blended, rtol=1e-9)


def test_the_column_name_does_not_change_the_answer():
    data = pm.load_dataset("tf_dgx1_p100_resnet50_real")  # a fixed batch per GPU
    per_unit = dataclasses.replace(data, target="time")  # seconds per unit of work
    per_step = dataclasses.replace(per_unit, time_s=per_unit.time_s * per_unit.gpus)
    gpus = [8, 64, 512]
    throughput = pm.fit_auto(data).best.predict(gpus)
    seconds = pm.fit_auto(per_unit).best.predict(gpus)
    steps = pm.fit_auto(per_step).best
    assert steps.data.per_gpu and "per-GPU batch" in steps.assumed
    np.testing.assert_allclose(1.0 / throughput["throughput"], seconds["time_s"], rtol=1e-9)
    np.testing.assert_allclose(seconds["time_s"] * gpus, steps.predict(gpus)["time_s"], rtol=1e-9)
    np.testing.assert_allclose(throughput["speedup"], steps.predict(gpus)["speedup"], rtol=1e-9)


def test_straddling_counts_use_the_two_level_family_alone():
    data = pm.from_arrays(
        [1, 2, 4, 8, 16, 32],
        throughput=[100, 190, 370, 700, 1250, 2450],
        gpus_per_node=[8] * 6,
    )
    fit = pm.fit_auto(data).best
    weights = {c.family: c.weight for c in fit.components}
    assert weights["weak_hierarchical"] == 1.0 and fit.family == "weak_hierarchical"
    assert all(weights[f] == 0.0 for f in MIXTURE)


def test_conformal_interval_is_q_times_doublings_plus_kappa_spread(vgg):
    fit = vgg.best
    gpus = np.array([4.0, 16.0, 128.0])
    config = fit.config(gpus)
    members = [np.log(np.asarray(c.model(config))) for c in fit.components]
    spread = np.max(members, axis=0) - np.min(members, axis=0)
    doublings = np.maximum(np.log2(gpus / fit.data.gpus.max()), MIN_DOUBLINGS)
    for level, q in INTERVAL_Q.items():
        band = pm.predict_interval(fit, gpus, level)
        half = np.log(band["time_s_hi"] / band["time_s_lo"]) / 2
        np.testing.assert_allclose(half, q * (doublings + KAPPA * spread), rtol=1e-9)
    with pytest.raises(pm.InputError, match="new measurements"):
        pm.predict_interval(fit, gpus, 0.9, kind="confidence")


def test_optimum_interval_from_conformal_members(vgg):
    best = pm.optimal_gpus(vgg.best, max_gpus=256, interval=0.9)
    lo, hi = best.gpus_interval
    assert lo is not None and lo <= best.gpus and (hi is None or hi >= best.gpus)


def test_blend_is_listed_first_and_round_trips(vgg, tmp_path):
    assert vgg.candidates[0].family == "blend" and vgg.candidates[0].fit is vgg.best
    fit = vgg.best
    assert fit.intervals == "conformal" and len(fit.components) == 3
    assert "work per second" in fit.assumed
    path = tmp_path / "fit.json"
    pm.save_fit(fit, path)
    back = pm.load_fit(path)
    assert back.intervals == "conformal" and back.assumed == fit.assumed
    gpus = [2, 32, 1024]
    np.testing.assert_allclose(back.predict(gpus)["time_s"], fit.predict(gpus)["time_s"])
    np.testing.assert_allclose(
        pm.predict_interval(back, gpus)["time_s_hi"], pm.predict_interval(fit, gpus)["time_s_hi"]
    )


def test_blend_never_misses_its_points_by_more_than_its_worst_member(vgg):
    fit = vgg.best
    config = fit.data.to_config()
    measured = np.log(fit.data.time_s)
    worst = max(
        float(np.max(np.abs(np.log(np.asarray(c.model(config))) - measured)))
        for c in fit.components
        if c.weight
    )
    assert float(np.max(np.abs(fit.residuals))) <= worst + 1e-12
    assert math.isfinite(fit.r2) and fit.mape < 5
