"""The default for throughput tables: weak_data_parallel averaged with Amdahl's law."""

import jax
import numpy as np
import pytest

import perfmodel as pm
from perfmodel._cli import main
from perfmodel._fitting.average import average_with_amdahl, AVERAGED_FAMILY, averaged_parameters

GPUS = np.array([1.0, 2.0, 3.0, 4.0, 8.0, 64.0, 1000.0])
# A real throughput table (1-8 GPUs of a DGX-2H) with three to four training counts, the
# case the average is for.
DATASET = "dle_pytorch_txl_dgx2h_base_bs16_mixed"


def test_averaged_parameters_give_the_mean_step_time():
    full = {"compute.time": 3e-3, "allreduce.latency": 4e-5, "allreduce.transfer": 7e-4}
    nested = {"serial.time": 2e-4, "compute.time": 2.5e-3}
    averaged = pm.weak_data_parallel().with_parameters(averaged_parameters(full, nested))
    with jax.enable_x64(True):
        config = pm.Config(gpus=GPUS)
        expected = 0.5 * (
            pm.weak_data_parallel().with_parameters(full)(config)
            + pm.amdahl().with_parameters(nested)(config)
        )
        np.testing.assert_allclose(averaged(config), expected, rtol=1e-12)


@pytest.fixture(scope="module")
def train():
    data = pm.load_dataset(DATASET)
    keep = data.gpus <= 8
    return pm.from_arrays(data.gpus[keep], throughput=data.measured[keep])


def test_average_is_the_mean_of_two_least_squares_fits(train):
    averaged = average_with_amdahl(train)
    full = pm.fit("weak_data_parallel", train, loss="squared")
    nested = pm.fit("amdahl", train, loss="squared")
    counts = np.array([1.0, 8.0, 16.0, 128.0])
    expected = 0.5 * (full.predict(counts)["time_s"] + nested.predict(counts)["time_s"])
    np.testing.assert_allclose(averaged.predict(counts)["time_s"], expected, rtol=1e-9)
    assert averaged.family == "weak_data_parallel" and averaged.loss_kind == "squared"
    assert averaged.converged and "amdahl converged" in averaged.message
    # Its own residuals, not those of either fit.
    measured = train.measured
    predicted = averaged.predict(train.gpus)["throughput"]
    np.testing.assert_allclose(averaged.residuals, np.log(predicted / measured), rtol=1e-9)


def test_fit_auto_averages_only_the_default_weak_data_parallel_choice(train):
    selection = pm.fit_auto(train)
    assert selection.candidates[0].family == AVERAGED_FAMILY
    assert selection.candidates[0].fit is selection.best
    assert selection.best.loss_kind == "squared"
    plain = pm.fit_auto(train, average=False)
    assert plain.best.family == "weak_data_parallel" and plain.best.loss_kind == "log"
    assert AVERAGED_FAMILY not in {c.family for c in plain.candidates}
    # A user's fixed values or loss refer to the chosen family alone: no average then.
    fixed = pm.fit_auto(train, fix={"allreduce.latency": 1e-7})
    assert fixed.best.loss_kind == "log" and AVERAGED_FAMILY not in {
        c.family for c in fixed.candidates
    }
    assert pm.fit_auto(train, loss="huber").best.loss_kind == "huber"


def test_time_data_are_not_averaged():
    gpus = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    selection = pm.fit_auto(pm.from_arrays(gpus, 0.05 + 1.0 / gpus))
    assert AVERAGED_FAMILY not in {c.family for c in selection.candidates}


def test_cli_no_average(tmp_path, capsys):
    data = pm.load_dataset(DATASET)
    path = tmp_path / "table.csv"
    path.write_text(
        "gpus,throughput\n" + "".join(f"{g:g},{x:g}\n" for g, x in zip(data.gpus, data.measured))
    )
    assert main(["fit", str(path), "--no-average"]) == 0
    out = capsys.readouterr().out
    assert "model weak_data_parallel (log loss" in out and AVERAGED_FAMILY not in out
    saved = tmp_path / "fit.json"
    assert main(["fit", str(path), "-o", str(saved)]) == 0
    out = capsys.readouterr().out
    assert "model weak_data_parallel (squared loss" in out and AVERAGED_FAMILY in out
    assert pm.load_fit(saved).averaged_with == "amdahl"
    assert main(["fit", str(path), "--loss", "log"]) == 0
    assert AVERAGED_FAMILY not in capsys.readouterr().out


def test_refits_of_an_averaged_fit_average_both_refits(train):
    from jax.flatten_util import ravel_pytree
    import jax.numpy as jnp

    from perfmodel._uncertainty.draws import _refit_rows
    from perfmodel._uncertainty.problem import Problem as _Problem

    averaged = average_with_amdahl(train)
    with jax.enable_x64(True):
        problem = _Problem(averaged)
        times = np.broadcast_to(np.asarray(train.time_s), (2, train.gpus.size))
        flat, values = _refit_rows(problem, times, np.ones_like(times))
        centre = np.asarray(ravel_pytree(problem.params)[0])
    # Refitted to its own data, the average comes back (not the weak_data_parallel fit).
    np.testing.assert_allclose(flat[0], centre, atol=1e-4)
    assert np.all(np.isfinite(values)) and jnp.shape(flat) == (2, 3)


def test_averaged_fit_round_trips_and_bootstraps(train, tmp_path):
    averaged = average_with_amdahl(train)
    path = tmp_path / "fit.json"
    pm.save_fit(averaged, path)
    loaded = pm.load_fit(path)
    assert loaded.averaged_with == "amdahl" and loaded.loss_kind == "squared"
    counts = [16.0, 64.0]
    laplace = pm.predict_interval(loaded, counts, 0.9)
    bootstrap = pm.predict_interval(loaded, counts, 0.9, method="bootstrap")
    for band in (laplace, bootstrap):
        assert np.all(band["time_s_lo"] < band["time_s"]) and np.all(
            band["time_s"] < band["time_s_hi"]
        )
    ratio = (bootstrap["time_s_hi"] / bootstrap["time_s_lo"]) / (
        laplace["time_s_hi"] / laplace["time_s_lo"]
    )
    assert np.all((ratio > 0.5) & (ratio < 2.0))


def test_a_changed_parameter_is_no_longer_an_average_and_keeps_its_intervals(train):
    averaged = average_with_amdahl(train)
    changed = pm.what_if(averaged, {"allreduce.latency": "x2"})
    assert changed.averaged_with == "" and changed.label == "weak_data_parallel"
    assert pm.what_if(averaged, {"global_batch": 32}).averaged_with == "amdahl"
    for method in ("laplace", "bootstrap"):
        band = pm.predict_interval(changed, [16.0, 64.0], 0.9, method=method)
        assert np.all(band["time_s_lo"] < band["time_s"]) and np.all(np.isfinite(band["time_s_hi"]))


def test_fit_options_reach_both_fits(train):
    options = dict(n_starts=8, adam_steps=200, lbfgs_steps=100, seed=1)
    selection = pm.fit_auto(train, **options)
    assert selection.best.averaged_with == "amdahl"
    expected = average_with_amdahl(train, **options)
    np.testing.assert_allclose(
        selection.best.predict([64.0])["time_s"], expected.predict([64.0])["time_s"], rtol=1e-12
    )


def test_an_explicit_loss_is_kept(train):
    selection = pm.fit_auto(train, loss="log")
    assert selection.best.loss_kind == "log" and selection.best.averaged_with == ""


def test_load_rejects_a_bad_averaged_with(train, tmp_path):
    import json

    path = tmp_path / "fit.json"
    pm.save_fit(pm.fit("amdahl", train), path)
    document = json.loads(path.read_text())
    document["model"]["averaged_with"] = "amdahl"
    path.write_text(json.dumps(document))
    with pytest.raises(pm.InputError, match="model.averaged_with: expected"):
        pm.load_fit(path)
