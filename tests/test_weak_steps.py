"""Step times of a fixed per-GPU batch (weak scaling): the model's seconds are per GPU
batch, a step at N GPUs does N of them, and every answer in seconds says the step, as
`predict` does (explain said "4.16 ms" where predict said 0.2993 s at 72 GPUs; require
read "--time 0.003" as met from 114 GPUs while every measured step took 200 ms)."""

import dataclasses

import numpy as np
import pytest

import perfmodel as pm
from perfmodel._fitting import per_unit_of_work
from perfmodel._text import seconds as format_seconds

CSV = "gpus,time_s,gpus_per_node\n1,0.200,8\n2,0.205,8\n4,0.210,8\n8,0.220,8\n16,0.30,8\n"


@pytest.fixture(scope="module")
def weak(tmp_path_factory):
    path = tmp_path_factory.mktemp("weak") / "weak.csv"
    path.write_text(CSV)
    fit = pm.fit_auto(pm.load_benchmarks(path, scaling="weak"), models=["amdahl"]).best
    assert fit.data.per_gpu
    return fit


def _step(fit, n: int) -> float:
    return float(fit.predict([n])["time_s"][0])


def test_explain_gives_the_step_and_its_parts(weak):
    report = pm.sensitivity(weak, 32)
    assert report.time_s == pytest.approx(_step(weak, 32), rel=1e-9)
    assert sum(report.breakdown.values()) == pytest.approx(report.time_s, rel=1e-9)
    half = next(p for p in report.parameters if p.name == "serial.time")
    changed = pm.what_if(weak, {"serial.time": half.change.value})
    assert half.change.time_s == pytest.approx(_step(changed, 32), rel=1e-9)


def test_require_reads_a_time_as_a_step(weak):
    goal = 0.26
    answer = pm.require(weak, parameter="gpus", target=("time", goal))
    assert answer.reachable and answer.side == "≤"
    n = int(answer.value)
    assert _step(weak, n) <= goal < _step(weak, n + 1)
    below = pm.require(weak, parameter="gpus", target=("time", 0.003))
    assert not below.reachable  # no step of 200 ms or more gets there


def test_whatif_counts_whole_nodes_and_says_steps(weak):
    after = pm.what_if(weak, {"serial.time": "x0.5"})
    comparison = pm.compare_fits(weak, after, max_gpus=256)
    assert comparison.per_gpu
    for knee in (comparison.knee_before, comparison.knee_after):
        assert knee.gpus is None or knee.gpus % 8 == 0
    best = comparison.optimum_before
    assert best.gpus % 8 == 0 or best.gpus == 1
    step = format_seconds(_step(weak, best.gpus))
    assert f"(time there {step} →" in comparison.optimum_line()
    np.testing.assert_allclose(comparison.before["time_s"], weak.predict(comparison.gpus)["time_s"])


def test_strong_scaling_stated_over_growing_steps_is_questioned():
    growing = pm.from_arrays([1, 2, 4, 8], [0.200, 0.205, 0.210, 0.220])
    _, assumed = per_unit_of_work(pm.from_arrays([1, 2, 4, 8], [1.0, 0.52, 0.28, 0.16]))
    assert "check that the global batch" not in assumed
    stated = dataclasses.replace(growing, scaling="strong")
    _, assumed = per_unit_of_work(stated)
    assert assumed.startswith("a fixed global batch (stated)")
    assert "but the step time grows with the GPUs (log-log slope +0.04)" in assumed
    assert assumed.endswith("check that the global batch was fixed")
