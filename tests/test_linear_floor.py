"""The default's intervals and draws stop at perfect scaling (`_closed.linear_floor`):
no speedup of N GPUs above N (or N times the best efficiency measured, for superlinear
data), whatever the extrapolation; measured in the JAX and the NumPy (fit file) paths."""

import numpy as np
import pytest

import perfmodel as pm
from perfmodel import _closed
from perfmodel._questions.curves import JaxCurves
from perfmodel._saved import read_saved

FAR = np.array([1.0, 8.0, 64.0, 512.0, 4096.0])


@pytest.fixture(scope="module")
def near_linear():
    """ResNet-152 on one DGX-1, 1–8 GPUs at 96–99% efficiency: the default extrapolates
    it to 4096 GPUs at 95%, and its 90% band reached 162% efficiency there."""
    return pm.fit_auto(pm.load_dataset("tf_dgx1_p100_resnet152_synthetic")).best


def _efficiency(fit) -> float:
    one = float(fit.predict([1.0])["time_s"][0])
    return max(1.0, _closed.best_efficiency(fit.data.gpus, fit.data.time_s, one))


def test_floor_closed_form():
    one, centre = np.array([2.0, 2.0, 2.0]), np.array([1.5, 0.5, 0.2])
    gpus = np.array([2.0, 4.0, 16.0])
    # T(1)/(N·max(1, E, Ê(N))), Ê = û(1)/(N·û) = 2/3, 1, 0.625 here: 1, 0.5, 0.125
    floor = _closed.linear_floor(np, gpus, one, 0.9, centre, 2.0)
    np.testing.assert_allclose(floor, [1.0, 0.5, 0.125])
    np.testing.assert_allclose(
        _closed.linear_floor(np, gpus, one, 1.25, centre, 2.0), [0.8, 0.4, 0.1]
    )  # superlinear data: the best efficiency measured, 1.25, is allowed
    # A curve past perfect scaling (û(1) = 4, û(4) = 0.8: Ê = 1.25) allows its own
    # efficiency, no more: a draw with a slow T(1) = 6 stops at 6/(4·1.25) = 1.2, not at
    # the curve's 0.8 (a speedup of 7.5 on 4 GPUs).
    slow = _closed.linear_floor(np, np.array([4.0]), 6.0, 1.0, np.array([0.8]), 4.0)
    np.testing.assert_allclose(slow, [1.2])
    assert _closed.best_efficiency([1, 2, 4], [1.0, 0.5, 0.2], 1.0) == pytest.approx(1.25)


def test_prediction_band_stops_at_perfect_scaling(near_linear):
    band = pm.predict_interval(near_linear, FAR, 0.9)
    e = _efficiency(near_linear)
    top = band["throughput_hi"][0] * FAR * e
    assert np.all(band["throughput_hi"] <= top * (1 + 1e-9))
    assert band["throughput_hi"][-1] == pytest.approx(top[-1], rel=1e-9)  # it binds far out
    assert np.all(band["throughput_lo"] < band["throughput"])  # the other end is untouched
    assert np.all(band["throughput"] < band["throughput_hi"])


@pytest.mark.slow
def test_every_draw_and_the_recommendation_stay_at_or_below_n(near_linear):
    draws = pm.ensemble(near_linear)
    times, speedups, *_ = JaxCurves(near_linear).ensemble_curves(FAR, {}, None, draws)
    assert np.all(speedups <= FAR * _efficiency(near_linear) * (1 + 1e-9))
    answer = pm.recommend(near_linear)
    low, high = answer.speedup_interval
    assert high <= answer.gpus * _efficiency(near_linear) * (1 + 1e-9)
    assert low < answer.speedup < high


@pytest.mark.slow
def test_the_fit_file_path_agrees(near_linear, tmp_path):
    path = tmp_path / "fit.json"
    pm.save_fit(near_linear, path)
    saved = read_saved(path, None)
    ours = saved.predict_interval(FAR, 0.9, None, "prediction")
    theirs = pm.predict_interval(pm.load_fit(path), FAR, 0.9)
    np.testing.assert_allclose(ours["throughput_hi"], theirs["throughput_hi"], rtol=1e-9)
    times, speedups, *_ = saved.ensemble_curves(FAR, {}, None, None)
    assert np.all(speedups <= FAR * _efficiency(near_linear) * (1 + 1e-9))


@pytest.mark.slow
def test_superlinear_measurements_keep_their_curve():
    """Efficiency 104% at 8 GPUs: the curve carries it on and the band keeps the centre."""
    data = pm.from_arrays([1, 2, 4, 8], throughput=[100.0, 205.0, 412.0, 832.0])
    fit = pm.fit_auto(data).best
    band = pm.predict_interval(fit, FAR, 0.9)
    assert np.all(band["throughput_hi"] >= band["throughput"])
    assert _efficiency(fit) > 1.0
