from helpers import ring_allreduce
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import perfmodel as pm

TRUTH = {"compute.time": 1e-3, "allreduce.latency": 2e-6, "allreduce.transfer": 1e-4}


def test_weak_data_parallel_is_a_weak_step_per_unit_of_work():
    # A per-GPU batch b, a step of t + ring all-reduce(α, β, S), shared by b·N samples.
    b, t, alpha, beta, size = 32.0, 0.032, 3.2e-5, 1e10, 1.6e7
    n = np.array([1.0, 2.0, 3.0, 8.0, 512.0])
    step = t + ring_allreduce(n, size, alpha, beta)
    truth = {
        "compute.time": t / b,
        "allreduce.latency": 2 * alpha / b,
        "allreduce.transfer": 2 * size / (beta * b),
    }
    model = pm.weak_data_parallel().with_parameters(truth)
    np.testing.assert_allclose(model(pm.Config(gpus=n)), step / (b * n), rtol=1e-12)


def test_amdahl_is_the_special_case_without_transfer():
    n = np.array([1.0, 4.0, 64.0])
    weak = pm.weak_data_parallel().with_parameters(
        {"compute.time": 1.0, "allreduce.latency": 0.05, "allreduce.transfer": 1e-300}
    )
    amdahl = pm.amdahl().with_parameters({"serial.time": 0.05, "compute.time": 0.95})
    np.testing.assert_allclose(weak(pm.Config(gpus=n)), amdahl(pm.Config(gpus=n)), rtol=1e-12)


def test_gradient_in_gpus_is_finite_and_exact():
    model = pm.weak_data_parallel().with_parameters(TRUTH)

    def value(n):
        return model(pm.Config(gpus=n))

    n = 3.0
    t_c, t_l, t_b = TRUTH.values()
    exact = -t_c / n**2 + t_l / n**2 + t_b * (2 - n) / n**3
    np.testing.assert_allclose(float(jax.grad(value)(jnp.asarray(n))), exact, rtol=1e-10)
    assert np.isfinite(float(jax.grad(value)(jnp.asarray(1.0))))


def test_fit_recovers_parameters_from_throughput(rng):
    gpus = np.repeat([1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0], 3)
    with jax.enable_x64(True):
        per_unit = np.asarray(pm.weak_data_parallel().with_parameters(TRUTH)(pm.Config(gpus=gpus)))
    data = pm.from_arrays(gpus, throughput=np.exp(rng.normal(0, 0.003, gpus.shape)) / per_unit)
    result = pm.fit("weak_data_parallel", data)
    assert result.converged, result.message
    for name, value in TRUTH.items():
        assert result.parameters()[name] == pytest.approx(value, rel=0.1), name


def test_a_negligible_term_is_reported_as_such(rng):
    truth = {**TRUTH, "allreduce.latency": 1e-12}
    gpus = np.repeat([1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0], 3)
    with jax.enable_x64(True):
        per_unit = np.asarray(pm.weak_data_parallel().with_parameters(truth)(pm.Config(gpus=gpus)))
    data = pm.from_arrays(gpus, throughput=np.exp(rng.normal(0, 0.003, gpus.shape)) / per_unit)
    result = pm.fit("weak_data_parallel", data)
    (warning,) = [w for w in result.warnings if w.startswith("allreduce.latency")]
    assert "edge of its range" in warning and "negligible" in warning


def test_tree_latency_grows_with_log2_of_the_gpu_count():
    n = np.array([1.0, 2.0, 8.0, 1024.0])
    tree = pm.weak_data_parallel(algorithm="tree").with_parameters(TRUTH)
    t_c, t_l, t_b = TRUTH.values()
    expected = t_c / n + t_l * np.log2(n) / n + t_b * (n - 1) / n**2
    np.testing.assert_allclose(tree(pm.Config(gpus=n)), expected, rtol=1e-12)
    with pytest.raises(pm.InputError, match="'ring' or 'tree'"):
        pm.weak_data_parallel(algorithm="butterfly")
