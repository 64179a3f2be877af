"""Repeats of a measured run widen the default's prediction intervals by their own
scatter (`_closed.replicate_noise`, `_closed.noise_half_width`). A table measured twice
at each count, scattering by ±13%, had a 90% interval of ±9% at 8 GPUs that held neither
of its two measurements there (review of 2026-12-07): the conformal scores were learned
on published tables that repeat no run."""

import dataclasses
import math

import equinox as eqx
from helpers import exact_fit as fitted
import numpy as np
import pytest

import perfmodel as pm
from perfmodel import _closed
from perfmodel._presets import build
from perfmodel._saved import read_saved
from perfmodel._uncertainty.intervals import t_quantile

GPUS = [1, 1, 2, 2, 4, 4, 8, 8]
TIMES = [10.0, 12.5, 5.2, 6.6, 2.9, 3.7, 1.6, 2.1]


def test_the_pooled_scatter_of_repeats_is_the_pure_error():
    sigma, dof = _closed.replicate_noise(pm.from_arrays(GPUS, TIMES))
    pairs = np.log(np.reshape(TIMES, (4, 2)))
    expected = math.sqrt(np.sum((pairs - pairs.mean(axis=1, keepdims=True)) ** 2) / 4)
    assert dof == 4 and sigma == pytest.approx(expected, rel=1e-12)
    # One measurement per configuration: nothing to pool.
    assert _closed.replicate_noise(pm.from_arrays([1, 2, 4, 8], [1.0, 0.6, 0.4, 0.3])) == (0, 0)
    # Another global batch is another configuration, not a repeat.
    other = pm.from_arrays([8, 8, 8], [1.0, 2.0, 2.2], global_batch=[256, 512, 512])
    sigma, dof = _closed.replicate_noise(other)
    assert dof == 1 and sigma == pytest.approx(math.log(2.2 / 2.0) / math.sqrt(2), rel=1e-12)


@pytest.mark.parametrize("dof", [1, 2, 3, 4, 7, 30, 999])
def test_the_t_quantile_without_jax_is_students(dof):
    for p in (0.6, 0.75, 0.9, 0.95, 0.975):
        assert _closed.student_t_quantile(p, dof) == pytest.approx(t_quantile(p, dof), rel=1e-9)
    assert _closed.student_t_quantile(0.95, 1) == pytest.approx(math.tan(0.45 * math.pi))
    assert _closed.student_t_quantile(0.975, 4) == pytest.approx(2.7764451051977987, rel=1e-12)


def _blend_fit(gpus, times):
    """The default blend's curve (no fit) over these measurements, up to 8 GPUs."""
    fit = fitted(
        eqx.tree_at(lambda blend: blend.largest, build("blend"), 8.0),
        pm.from_arrays(gpus, times),
    )
    return dataclasses.replace(fit, intervals="conformal")


@pytest.mark.slow  # 6 s: two fit files through both paths; the default run stays < 4 min
def test_repeats_widen_the_interval_in_quadrature_on_both_paths(tmp_path):
    once = _blend_fit([1, 2, 4, 8], [11.0, 5.9, 3.3, 1.8])
    twice = _blend_fit(GPUS, TIMES)
    sigma, dof = _closed.replicate_noise(twice.data)
    ask = np.array([1.0, 4.0, 8.0, 32.0])
    for level in (0.5, 0.9):
        noise = t_quantile(0.5 * (1 + level), dof) * sigma
        plain = pm.predict_interval(once, ask, level)
        widened = pm.predict_interval(twice, ask, level)
        centre = widened["time_s"]
        np.testing.assert_allclose(centre, plain["time_s"], rtol=1e-12)  # the same curve
        half = np.log(plain["time_s_hi"] / centre)
        np.testing.assert_allclose(
            np.log(widened["time_s_hi"] / centre), np.hypot(half, noise), rtol=1e-9
        )
        # The fit file's path, without JAX, says the same.
        path = tmp_path / f"twice{level}.json"
        pm.save_fit(twice, path)
        saved = read_saved(path).predict_interval(ask, level, None, "prediction")
        loaded = pm.predict_interval(pm.load_fit(path), ask, level)
        np.testing.assert_allclose(saved["time_s_hi"], loaded["time_s_hi"], rtol=1e-9)
        np.testing.assert_allclose(saved["time_s_lo"], loaded["time_s_lo"], rtol=1e-9)
    band = pm.predict_interval(twice, np.array([8.0]), 0.9)
    assert band["time_s_lo"][0] < 1.6 and 2.1 < band["time_s_hi"][0]  # both repeats inside
