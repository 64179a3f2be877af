import jax
import numpy as np
import pytest

import perfmodel as pm

COUNTS = np.array([1, 2, 4, 8, 16, 32, 64, 128], dtype=float)


def synthetic(model, rng, noise=0.01, repeats=3, **config):
    gpus = np.repeat(COUNTS, repeats)
    with jax.enable_x64(True):
        clean = np.asarray(model(pm.Config(gpus=gpus, **config)))
    noisy = clean * np.exp(rng.normal(0.0, noise, gpus.shape))
    return pm.from_arrays(gpus, noisy, **{k: np.full(gpus.shape, v) for k, v in config.items()})


@pytest.fixture(scope="module")
def usl_truth():
    return {"serial.time": 0.05, "compute.time": 2.0, "coherency.time": 2e-4}


@pytest.fixture(scope="module")
def usl_fit(usl_truth):
    rng = np.random.default_rng(1)
    data = synthetic(pm.usl().with_parameters(usl_truth), rng)
    return pm.fit("usl", data)


def test_usl_recovers_known_parameters(usl_fit, usl_truth):
    assert usl_fit.converged, usl_fit.message
    for name, value in usl_truth.items():
        assert usl_fit.parameters()[name] == pytest.approx(value, rel=0.15), name
    assert usl_fit.mape < 2.0
    assert usl_fit.r2 > 0.99
    assert usl_fit.precision == "float64"
    # Laplace errors are relative (log scale) and small for well-determined parameters.
    assert all(0 < e < 0.2 for e in usl_fit.standard_errors().values())


def test_amdahl_recovers_known_parameters(rng):
    truth = {"serial.time": 0.2, "compute.time": 0.8}
    data = synthetic(pm.amdahl().with_parameters(truth), rng, noise=0.02)
    result = pm.fit("amdahl", data)
    for name, value in truth.items():
        assert result.parameters()[name] == pytest.approx(value, rel=0.05)


def test_hierarchical_data_parallel_recovers_link_parameters(rng):
    truth = {
        "serial.time": 0.02,
        "compute.time": 1.0,
        "allreduce.latency_intra": 2e-5,
        "allreduce.bandwidth_intra": 2e10,
        "allreduce.latency_inter": 1e-4,
        "allreduce.bandwidth_inter": 5e9,
    }
    model = pm.data_parallel(hierarchical=True).with_parameters(truth)
    data = synthetic(model, rng, noise=0.003, gpus_per_node=8.0, message_bytes=1e9)
    # From step times alone the intra-node bandwidth trades off exactly against the
    # serial and compute times; the fit must say so, and recover the rest once it is
    # fixed (as a user would from nccl-tests).
    free = pm.fit(model, data, fix={"allreduce.latency_intra": 2e-5})
    assert any("bandwidth_intra is not identifiable" in w for w in free.warnings)
    fix = {"allreduce.latency_intra": 2e-5, "allreduce.bandwidth_intra": 2e10}
    result = pm.fit(model, data, fix=fix)
    assert result.converged, result.message
    assert result.mape < 1.0
    assert not result.warnings
    for name in ("serial.time", "compute.time", "allreduce.bandwidth_inter"):
        assert result.parameters()[name] == pytest.approx(truth[name], rel=0.1), name
    assert result.parameters()["allreduce.bandwidth_intra"] == pytest.approx(2e10)


def test_squared_loss_on_throughput_matches_least_squares(rng):
    from scipy.optimize import curve_fit

    n = COUNTS
    x = 100 * n / (1 + 0.03 * (n - 1) + 1e-4 * n * (n - 1)) * np.exp(rng.normal(0, 0.02, n.shape))
    result = pm.fit("usl", pm.from_arrays(n, throughput=x), loss="squared")

    def usl(n, s, k, g):
        return g * n / (1 + s * (n - 1) + k * n * (n - 1))

    (s, k, g), _ = curve_fit(usl, n, x, p0=[0.03, 1e-4, 100])
    coefficients = pm.usl_coefficients(result.model)
    assert coefficients["sigma"] == pytest.approx(s, rel=1e-4)
    assert coefficients["kappa"] == pytest.approx(k, rel=1e-4)
    assert coefficients["gamma"] == pytest.approx(g, rel=1e-4)


@pytest.mark.slow  # 2 s: the default run stays under 4 minutes
def test_huber_loss_resists_an_outlier(rng):
    truth = {"serial.time": 0.1, "compute.time": 1.0}
    data = synthetic(pm.amdahl().with_parameters(truth), rng, noise=0.005, repeats=1)
    spoiled = data.time_s.copy()
    spoiled[-1] *= 3.0
    data = pm.from_arrays(data.gpus, spoiled)
    robust = pm.fit("amdahl", data, loss="huber")
    plain = pm.fit("amdahl", data)
    error = {
        r: abs(f.parameters()["serial.time"] / 0.1 - 1)
        for r, f in (("huber", robust), ("log", plain))
    }
    assert error["huber"] < error["log"]


def test_bounds_are_respected(rng):
    truth = {"serial.time": 0.1, "compute.time": 1.0}
    data = synthetic(pm.amdahl().with_parameters(truth), rng)
    result = pm.fit("amdahl", data, bounds={"serial.time": (None, 0.05)})
    assert result.parameters()["serial.time"] <= 0.05 * (1 + 1e-9)


def test_too_few_distinct_gpu_counts_is_an_error():
    data = pm.from_arrays([1, 2, 1, 2], [1.0, 0.6, 1.01, 0.61], source="two.csv")
    with pytest.raises(pm.InputError, match="two.csv: model 'usl' has 3 free parameters.*only 2"):
        pm.fit("usl", data)


@pytest.mark.parametrize(
    "scale, column, message",
    [
        (1e-300, "time_s", "the times are too small to fit in float64"),
        (1e300, "time_s", "the times are too large to fit in float64"),
        (1e300, "throughput", "the throughputs are too large to fit in float64"),
    ],
)
def test_times_past_float64_are_refused_about_the_data(scale, column, message):
    # Times of 1e-300 s ended in "model.components[4].parameters.coherency.time: expected
    # a positive number …, got 0.0": a parameter at 1e-22 of them underflowed to 0.
    values = scale * np.array([1.0, 0.6, 0.3, 0.2])
    data = pm.from_arrays([1, 2, 4, 8], **{column: values}, source="tiny.csv")
    for fit in (pm.fit_auto, lambda d: pm.fit("amdahl", d)):
        with pytest.raises(pm.InputError, match=f"^tiny.csv: {message}.*rescale"):
            fit(data)  # said once, not once per family
    data = pm.from_arrays([1, 2, 4, 8], 1e-280 * np.array([1.0, 0.6, 0.3, 0.2]))
    assert pm.fit("amdahl", data).parameters()["compute.time"] > 0  # still fits


def test_unknown_names_are_errors():
    data = pm.from_arrays([1, 2, 4], [1.0, 0.6, 0.4])
    with pytest.raises(pm.InputError, match="no parameter 'bandwidth'.*valid: serial.time"):
        pm.fit("amdahl", data, fix={"bandwidth": 1.0})
    with pytest.raises(pm.InputError, match="unknown loss 'l1'"):
        pm.fit("amdahl", data, loss="l1")
    with pytest.raises(pm.InputError, match="unknown model 'gustafson'"):
        pm.fit("gustafson", data)


@pytest.mark.parametrize(
    "option, pattern",
    [
        ({"n_starts": 0}, "n_starts: expected a whole number ≥ 1, got 0"),
        ({"n_starts": -3}, "n_starts: expected a whole number ≥ 1, got -3"),
        ({"adam_steps": 0}, "adam_steps: expected a whole number ≥ 1"),
        ({"seed": -1}, "seed: expected a whole number ≥ 0"),
        ({"weight_power": float("nan")}, "weight_power: expected a finite number, got nan"),
    ],
)
def test_fit_options_out_of_range_are_one_line(option, pattern):
    """They stop before the optimiser: NumPy's argmin of an empty sequence (n_starts 0),
    Optax's decay_steps (adam_steps 0), a FitError for NaN weights, before."""
    data = pm.from_arrays([1, 2, 4], [1.0, 0.6, 0.4])
    with pytest.raises(pm.InputError, match=pattern):
        pm.fit("usl", data, method="optax", **option)


def test_non_identifiable_parameter_is_reported():
    # Pure 1/N data: a serial part of zero cannot be pinned down, and the fit says so.
    data = pm.from_arrays(COUNTS, 1.0 / COUNTS)
    result = pm.fit("amdahl", data)
    assert any("serial.time" in w for w in result.warnings)
    assert "serial.time" in result.message


def test_fit_works_with_x64_disabled_and_keeps_float64(usl_truth):
    data = synthetic(pm.usl().with_parameters(usl_truth), np.random.default_rng(1))
    with jax.enable_x64(False):
        result = pm.fit("usl", data)
        predicted = result.predict([1, 64])
    assert predicted["time_s"].dtype == np.float64
    assert result.parameters()["coherency.time"] == pytest.approx(2e-4, rel=0.15)


def test_auto_selection_reports_every_candidate(usl_fit):
    data = usl_fit.data
    selection = pm.fit_auto(data, average=False)
    families = [c.family for c in selection.candidates]
    assert set(families) == {"usl", "amdahl", "pmnf"} | (
        {"weak_data_parallel"} if data.target == "throughput" else set()
    )
    assert selection.best.family == "usl"  # the coherency term is real in this data
    # The default answers with the blend, listed first, the single families after it.
    default = pm.fit_auto(data)
    assert [c.family for c in default.candidates] == ["blend", *families]
    # The single family kept by the criterion leads them, and its note says why.
    notes = [row["note"] for row in default.rows()]
    assert notes[1].startswith("kept of the single families: the answer of --no-blend")
    assert not any(note.startswith("kept") for note in notes[2:])


def test_usl_squared_loss_reproduces_r_usl_package_on_specsdm91():
    # Published by the R `usl` package (README, tests/summary.Rout.save).
    result = pm.fit("usl", pm.load_dataset("usl_specsdm91"), loss="squared")
    usl = pm.usl_coefficients(result.model)
    assert usl["sigma"] == pytest.approx(0.0277285, rel=5e-5)
    assert usl["kappa"] == pytest.approx(0.0001044, rel=5e-4)  # published to 4 digits
    # γ in scripts per hour, the package's (and the CSV's) unit; perfmodel reads per second.
    assert usl["gamma"] * 3600 == pytest.approx(89.9952330, rel=5e-5)
    assert usl["peak_n"] == pytest.approx(96.52, rel=5e-4)


def test_huber_is_optaxs_huber_loss_values_and_gradients():
    import jax.numpy as jnp
    import optax

    from perfmodel._fitting import huber

    with jax.enable_x64(True):
        x = jnp.linspace(-0.3, 0.3, 601)
        ours, theirs = huber(x, 0.05), optax.huber_loss(x, delta=0.05)
        assert float(jnp.max(jnp.abs(ours - theirs))) == 0.0
        grad = jax.grad(lambda r: huber(r, 0.05).sum())(x)
        expected = jax.grad(lambda r: optax.huber_loss(r, delta=0.05).sum())(x)
        assert float(jnp.max(jnp.abs(grad - expected))) == 0.0


@pytest.mark.slow  # 5 s: the default run stays under 4 minutes
def test_an_exact_fit_imports_no_optax():
    import os
    from pathlib import Path
    import subprocess
    import sys

    code = (
        "import sys, perfmodel as pm, numpy as np\n"
        "gpus, time_s = np.array([1.0, 2, 4, 8]), np.array([1.0, 0.53, 0.29, 0.18])\n"
        "data = pm.Benchmarks(source='x.csv', gpus=gpus, time_s=time_s)\n"
        "pm.fit_auto(data)\n"
        "assert 'optax' not in sys.modules\n"
    )
    root = str(Path(__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": root}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
