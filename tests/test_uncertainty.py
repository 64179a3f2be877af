import dataclasses
import json
import math

import equinox as eqx
import jax
from jax.flatten_util import ravel_pytree
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

import perfmodel as pm
from perfmodel._cli import main
from perfmodel._fitting.loss import objective
from perfmodel._uncertainty import draws as _ensemble
from perfmodel._uncertainty import intervals as _uncertainty
from perfmodel._uncertainty.problem import Problem

TRUTH = {"serial.time": 0.02, "compute.time": 1.0}
COUNTS = np.array([1.0, 2.0, 4.0, 8.0, 16.0, 32.0])


def amdahl_data(rng, noise=0.02, throughput=True):
    """Amdahl at `COUNTS`, 3 repeats, log-normal noise; as throughput (work/s) by
    default, so the fixture covers the throughput path and every test shares its
    compiled code."""
    gpus = np.repeat(COUNTS, 3)
    times = (TRUTH["serial.time"] + TRUTH["compute.time"] / gpus) * np.exp(
        rng.normal(0.0, noise, gpus.shape)
    )
    if throughput:
        return pm.from_arrays(gpus, throughput=1.0 / times)
    return pm.from_arrays(gpus, times)


@pytest.fixture(scope="module")
def fit():
    return pm.fit("amdahl", amdahl_data(np.random.default_rng(0)))


@pytest.fixture(scope="module")
def laplace(fit):
    return pm.ensemble(fit, "laplace")


@pytest.fixture(scope="module")
def bootstrap(fit):
    # Default size, so the CLI test below reuses the compiled refits.
    return pm.ensemble(fit, "bootstrap")


def test_laplace_covariance_matches_a_numerical_hessian(fit):
    # For the mean squared log error L(θ) = Σr²/n, Gauss-Newton gives ∇²L ≈ 2JᵀJ/n, so
    # σ²(JᵀJ)⁻¹ = 2σ²/n · (∇²L)⁻¹; the residual-curvature term it drops is O(noise).
    with jax.enable_x64(True):
        model = jax.tree_util.tree_map(
            lambda x: jnp.asarray(x) if eqx.is_array(x) else x, fit.model
        )
        params, static = eqx.partition(model, model.raw_leaf_mask(set(fit.free)))
        theta, unravel = ravel_pytree(params)
        config, time_s = fit.data.to_config(), jnp.asarray(fit.data.time_s)

        def loss(t):
            w = jnp.ones_like(time_s)
            return float(
                objective(unravel(jnp.asarray(t)), static, config, time_s, w, "log", "throughput")
            )

        theta = np.asarray(theta)
    h, k = 1e-4, theta.size
    hessian = np.zeros((k, k))
    for i in range(k):
        for j in range(k):
            e_i, e_j = np.eye(k)[i] * h, np.eye(k)[j] * h
            hessian[i, j] = (
                loss(theta + e_i + e_j)
                - loss(theta + e_i - e_j)
                - loss(theta - e_i + e_j)
                + loss(theta - e_i - e_j)
            ) / (4 * h * h)
    n = fit.data.gpus.size
    sigma2 = float(np.sum(fit.residuals**2)) / (n - k)
    numerical = 2 * sigma2 / n * np.linalg.inv(hessian)
    # 5%: the dropped Σ r·∇²r term is of the order of the 2% noise.
    np.testing.assert_allclose(fit.raw_covariance, numerical, rtol=0.05)


def classical_s2(fit):
    """RSS/(n − k): the noise variance the stored Laplace covariance uses."""
    return float(np.sum(fit.residuals**2)) / (fit.residuals.size - len(fit.free))


def test_noise_scale_pools_the_residuals_with_the_prior(fit, laplace):
    n, k = fit.residuals.size, len(fit.free)
    nu0, s0 = _ensemble.NOISE_DOF, _ensemble.NOISE
    assert laplace.dof == nu0 + n - k
    expected = (nu0 * s0**2 + np.sum(fit.residuals**2)) / (nu0 + n - k)
    assert laplace.sigma**2 == pytest.approx(expected, rel=1e-9)
    classical = pm.ensemble(fit, noise_dof=0.0, discrepancy=0.0)
    assert classical.dof == n - k
    assert classical.sigma**2 == pytest.approx(classical_s2(fit), rel=1e-9)


def test_laplace_samples_have_the_laplace_covariance(fit, laplace):
    # Draws are Student-t scale mixtures of σ²(JᵀJ)⁻¹ (σ² the pooled noise variance):
    # their covariance is ν/(ν−2) times that.
    nu = laplace.dof
    expected = fit.raw_covariance / classical_s2(fit) * laplace.sigma**2 * nu / (nu - 2)
    # 4000 draws: sample variances are within ~10% (t tails widen it a little).
    np.testing.assert_allclose(np.cov(laplace.raw.T), expected, rtol=0.15)


def test_laplace_interval_is_the_delta_method_student_t(fit):
    # Laplace members are linearised: log T(N) = log T̂(N) + g(N)·δθ, so the mean curve's
    # interval is log T̂ ± t_ν · s·sqrt(g (JᵀJ)⁻¹ gᵀ), the delta method, exactly.
    draws = pm.ensemble(fit, discrepancy=0.0)
    gpus = np.array([2.0, 64.0])
    band = pm.predict_interval(fit, gpus, 0.9, kind="confidence", ensemble=draws)
    with jax.enable_x64(True):
        problem = Problem(fit)
        jac = problem.space_jacobian(problem.theta, problem.config)
        g = problem.space_jacobian(problem.theta, fit.config(gpus))
    lev = np.einsum("ij,jk,ik->i", g, np.linalg.inv(jac.T @ jac), g)
    half = stats.t.ppf(0.95, draws.dof) * draws.sigma * np.sqrt(lev)
    # 4000 draws: the 5% and 95% quantiles are within a few percent.
    np.testing.assert_allclose(np.log(band["time_s_hi"] / band["time_s"]), half, rtol=0.06)
    np.testing.assert_allclose(np.log(band["time_s"] / band["time_s_lo"]), half, rtol=0.06)


def test_bootstrap_spread_roughly_agrees_with_laplace(fit, laplace, bootstrap):
    ratio = np.std(bootstrap.raw, axis=0) / np.std(laplace.raw, axis=0)
    # Different approximations of one spread; 1000 resamples of 18 points.
    assert np.all((ratio > 0.6) & (ratio < 1.6)), ratio
    # Wild signs and rows resampled within each GPU count (3 repeats each) too; the
    # latter sees only within-count scatter, so looser.
    for resample, (lo, hi) in [("wild", (0.6, 1.6)), ("case", (0.4, 2.0))]:
        draws = pm.ensemble(fit, "bootstrap", resample=resample)
        ratio = np.std(draws.raw, axis=0) / np.std(laplace.raw, axis=0)
        assert np.all((ratio > lo) & (ratio < hi)), (resample, ratio)


@pytest.mark.slow  # 4 s: the default run stays under 4 minutes
def test_vmapped_bootstrap_refits_equal_a_loop_of_fresh_fits(fit):
    rng = np.random.default_rng(3)
    # Four resamples: the shape the rolling-origin refits of the fixture compiled.
    resampled = fit.data.time_s[None, :] * np.exp(rng.normal(0.0, 0.02, (4, fit.data.gpus.size)))
    with jax.enable_x64(True):
        problem = Problem(fit)
        ends, _ = _ensemble._refits(
            problem.params,
            problem.lower,
            problem.upper,
            500,
            problem.static,
            problem.config,
            jnp.asarray(resampled),
            jnp.ones(resampled.shape),
            "log",
            "throughput",
        )
        batched = np.asarray(jax.vmap(lambda p: ravel_pytree(p)[0])(ends))
    for row, times in zip(batched, resampled):
        fresh = pm.fit("amdahl", pm.from_arrays(fit.data.gpus, throughput=1.0 / times))
        expected = [math.log(fresh.parameters()[name]) for name in fit.free]
        np.testing.assert_allclose(row, expected, rtol=1e-6, atol=1e-8)


@pytest.mark.slow  # 4 s: the default run stays under 4 minutes
def test_prediction_interval_covers_new_measurements_at_its_level():
    # 40 synthetic datasets from known parameters (the fixture's shape, so nothing
    # recompiles), 5 new measurements each at an interpolated and an extrapolated count:
    # 400 draws, correlated within a dataset through its fitted parameters. With 40
    # independent datasets the binomial standard error of a 90% share is 0.047; the
    # tolerance of ±0.1 is about two of them. Data follow the model, so no drift term,
    # and no noise prior: the classical Student-t interval.
    rng = np.random.default_rng(11)
    gpus = np.array([3.0, 64.0])
    hits = []
    for _ in range(40):
        result = pm.fit("amdahl", amdahl_data(rng, noise=0.05))
        draws = pm.ensemble(result, discrepancy=0.0, noise_dof=0.0, seed=int(rng.integers(1 << 30)))
        band = pm.predict_interval(result, gpus, 0.9, ensemble=draws)
        new = (TRUTH["serial.time"] + TRUTH["compute.time"] / gpus) * np.exp(
            rng.normal(0.0, 0.05, (5, 2))
        )
        hits.append((band["time_s_lo"] <= new) & (new <= band["time_s_hi"]))
    share = float(np.mean(hits))
    assert 0.8 <= share <= 1.0, share
    # The mean curve's (confidence) interval leaves the noise out: narrower.
    mean = pm.predict_interval(result, gpus, 0.9, kind="confidence", ensemble=draws)
    assert np.all(mean["time_s_hi"] / mean["time_s_lo"] < band["time_s_hi"] / band["time_s_lo"])


def test_laplace_parameter_intervals_are_student_t(fit, laplace):
    # θ̂ ± t_ν · s·sqrt((JᵀJ)⁻¹_ii) in log space, with the pooled s and ν of the ensemble.
    intervals = pm.parameter_intervals(fit, 0.9)
    errors = fit.standard_errors()
    q = stats.t.ppf(0.95, laplace.dof) * laplace.sigma / math.sqrt(classical_s2(fit))
    for name, value in fit.parameters().items():
        lo, hi = intervals[name]
        np.testing.assert_allclose(math.log(hi / value), q * errors[name], rtol=1e-9)
        np.testing.assert_allclose(math.log(value / lo), q * errors[name], rtol=1e-9)


def test_t_quantile_matches_scipy():
    for dof in (1, 2, 3, 7, 40, math.inf):
        for p in (0.75, 0.9, 0.95, 0.995):
            np.testing.assert_allclose(
                _uncertainty.t_quantile(p, dof), stats.t.ppf(p, dof), rtol=1e-9
            )


def test_model_form_drift_only_widens_outside_the_measured_counts(fit):
    with_drift = pm.ensemble(fit, seed=5)
    without = pm.ensemble(fit, discrepancy=0.0, seed=5)
    inside = [1, 5, 32]
    a = pm.predict_interval(fit, inside, ensemble=with_drift)
    b = pm.predict_interval(fit, inside, ensemble=without)
    np.testing.assert_allclose(a["time_s_lo"], b["time_s_lo"])
    np.testing.assert_allclose(a["time_s_hi"], b["time_s_hi"])
    outside = pm.predict_interval(fit, [64, 1024], ensemble=with_drift)
    width = np.log(outside["time_s_hi"] / outside["time_s_lo"])
    assert width[1] > width[0] > 0
    assert with_drift.tau > 0 and without.tau == 0


def test_rolling_origin_sees_a_model_that_extrapolates_badly(fit):
    # USL data (strong coherency) fitted by Amdahl: the refits on fewer counts miss the
    # next count by far more than the noise, so the drift per doubling grows past its
    # prior; on Amdahl's own data it shrinks below it.
    gpus = np.repeat(COUNTS, 3)
    rng = np.random.default_rng(4)
    usl_times = (0.02 + 1.0 / gpus + 0.01 * (gpus - 1)) * np.exp(rng.normal(0, 0.01, gpus.shape))
    wrong = pm.fit("amdahl", pm.from_arrays(gpus, throughput=1.0 / usl_times))
    assert pm.ensemble(wrong).tau > 2 * _ensemble.DISCREPANCY
    assert pm.ensemble(fit).tau < _ensemble.DISCREPANCY


@pytest.mark.slow  # 4 s: the default run stays under 4 minutes
def test_fixed_parameters_have_zero_width_and_bounds_hold():
    # A time_s fit here, so that path is covered too.
    data = amdahl_data(np.random.default_rng(2), throughput=False)
    result = pm.fit(
        "amdahl", data, fix={"serial.time": 0.02}, bounds={"compute.time": (0.99, 1.005)}
    )
    assert result.free == ("compute.time",)
    intervals = pm.parameter_intervals(result, 0.9)
    fixed = intervals["serial.time"]
    assert fixed[0] == fixed[1] == pytest.approx(0.02, rel=1e-12)
    lo, hi = intervals["compute.time"]
    assert 0.99 - 1e-12 <= lo < hi <= 1.005 + 1e-12
    draws = pm.ensemble(result, samples=200, discrepancy=0.0)
    assert draws.raw.shape == (200, 1)
    assert np.all(draws.parameters()["compute.time"] <= 1.005 + 1e-12)
    assert pm.parameter_intervals(result, 0.9, ensemble=draws)["serial.time"] == fixed
    # Predictions still carry the uncertainty of the free compute time.
    band = pm.predict_interval(result, [1, 1024], 0.9, kind="confidence", ensemble=draws)
    assert np.all(band["time_s_lo"] < band["time_s"]) and np.all(band["time_s"] < band["time_s_hi"])
    assert set(band) == {"gpus", "time_s", "time_s_lo", "time_s_hi"}


def test_throughput_fit_has_throughput_bounds(fit, laplace):
    band = pm.predict_interval(fit, [4, 8, 64], 0.9, ensemble=laplace)
    assert np.all(band["throughput_lo"] < band["throughput"])
    assert np.all(band["throughput"] < band["throughput_hi"])
    np.testing.assert_allclose(band["throughput_lo"], 1.0 / band["time_s_hi"])
    np.testing.assert_allclose(band["throughput_hi"], 1.0 / band["time_s_lo"])


@pytest.mark.slow  # 4 s: the default run stays under 4 minutes
def test_a_counts_bounds_do_not_depend_on_the_other_counts_asked():
    # Squared loss on times: at 1e5 GPUs the noise (absolute, in seconds) exceeds the
    # predicted time, so draws are floored; the floor must be each draw's own, not one
    # taken over every count asked (found by a newcomer: bounds moved with --gpus).
    gpus = np.array([1.0, 2.0, 4.0, 8.0])
    data = pm.from_arrays(gpus, np.array([10.0, 5.3, 2.9, 1.7]))
    fit = pm.fit("power_law", data, loss="squared")
    draws = pm.ensemble(fit, "laplace")
    alone = pm.predict_interval(fit, [1e5], 0.9, ensemble=draws)
    among = pm.predict_interval(fit, [8, 1e5, 1e7], 0.9, ensemble=draws)
    assert alone["time_s_lo"][0] == among["time_s_lo"][1]
    assert alone["time_s_hi"][0] == among["time_s_hi"][1]
    assert 0.0 < alone["time_s_lo"][0] < alone["time_s"][0] < alone["time_s_hi"][0]


def test_what_if_keeps_the_original_uncertainty(fit, laplace):
    faster = pm.what_if(fit, {"serial.time": "x0.5"})
    draws = pm.ensemble(faster, discrepancy=0.0)
    # Same residuals (and prior); one parameter fewer is free: one more degree of freedom.
    assert draws.dof == laplace.dof + 1
    assert draws.sigma**2 * draws.dof == pytest.approx(laplace.sigma**2 * laplace.dof, rel=1e-9)
    assert draws.raw.shape[1] == 1


def test_undetermined_parameters_give_unbounded_intervals(fit):
    # Only the 1-GPU rows: t_serial + t_compute is known, not how it splits, so the
    # prediction at 8 GPUs is open while the one at 1 GPU is not.
    one = fit.data.gpus == 1
    data = dataclasses.replace(fit.data, gpus=fit.data.gpus[one], time_s=fit.data.time_s[one])
    result = dataclasses.replace(fit, data=data, residuals=fit.residuals[one])
    assert pm.parameter_intervals(result)["serial.time"] == (0.0, math.inf)
    band = pm.predict_interval(result, [1, 8], 0.9, ensemble=pm.ensemble(result, discrepancy=0))
    assert 0 < band["time_s_lo"][0] < band["time_s_hi"][0] < math.inf
    assert band["time_s_lo"][1] == 0.0 and band["time_s_hi"][1] == math.inf


def test_optimum_and_knee_intervals_contain_the_estimates(fit):
    # Amdahl's cheapest count under a deadline is the first that meets it; 0.025 s is
    # met at 100 GPUs, beyond the measured 32, where the model-form drift widens it.
    best = pm.optimal_gpus(fit, max_gpus=512, objective="cost", deadline_s=0.03, interval=0.9)
    lo, hi = best.gpus_interval
    assert lo <= best.gpus <= hi and lo < hi
    knee = pm.diminishing_returns(fit, max_gpus=512, interval=0.9)
    lo, hi = knee.gpus_interval
    assert lo <= knee.gpus <= hi and lo < hi
    assert pm.optimal_gpus(fit, max_gpus=512).gpus_interval is None


@pytest.mark.parametrize("level", [0.0, 1.0, -0.1, 1.5, math.nan])
def test_bad_levels_are_rejected(fit, level):
    with pytest.raises(pm.InputError, match="interval level"):
        pm.predict_interval(fit, [8], level)
    with pytest.raises(pm.InputError, match="interval level"):
        pm.optimal_gpus(fit, interval=level)


def test_a_level_of_the_wrong_type_is_rejected(fit):
    # An InputError at run time; the annotations' type check (on in the tests) is first.
    with pytest.raises((pm.InputError, TypeError)):
        pm.predict_interval(fit, [8], "high")


def test_bad_options_are_rejected(fit):
    with pytest.raises(pm.InputError, match="unknown interval method 'mcmc'"):
        pm.predict_interval(fit, [8], 0.9, method="mcmc")
    with pytest.raises(pm.InputError, match="unknown resampling"):
        pm.ensemble(fit, "bootstrap", resample="jackknife")
    once = dataclasses.replace(
        fit, data=dataclasses.replace(fit.data, gpus=fit.data.gpus + np.arange(18) * 1e-3)
    )
    with pytest.raises(pm.InputError, match="needs repeated measurements"):
        pm.ensemble(once, "bootstrap", resample="case")
    with pytest.raises(pm.InputError, match="GPU counts from 1 to 10,000,000"):
        pm.predict_interval(fit, [0, 8], 0.9)
    with pytest.raises(pm.InputError, match="unknown interval kind"):
        pm.predict_interval(fit, [8], 0.9, kind="mean")
    with pytest.raises(pm.InputError, match="discrepancy"):
        pm.ensemble(fit, discrepancy=-1.0)
    with pytest.raises(pm.InputError, match="noise prior"):
        pm.ensemble(fit, noise=0.0)
    with pytest.raises(pm.InputError, match="samples"):
        pm.ensemble(fit, samples=1)
    with pytest.raises(pm.InputError, match="another fit"):
        other = pm.what_if(fit, {"compute.time": "x2"})
        pm.predict_interval(other, [8], ensemble=pm.ensemble(fit))


def test_as_many_parameters_as_measurements_takes_the_noise_from_the_prior(fit):
    # Two measurements for two parameters (built from the fixture to skip a compile):
    # the residuals say nothing about the noise, the prior does.
    two = dataclasses.replace(
        fit.data, gpus=fit.data.gpus[:4:3], time_s=fit.data.time_s[:4:3], config={}
    )
    result = dataclasses.replace(fit, data=two, residuals=np.zeros(2))
    draws = pm.ensemble(result, discrepancy=0.0)
    assert draws.sigma == pytest.approx(_ensemble.NOISE) and draws.dof == _ensemble.NOISE_DOF
    band = pm.predict_interval(result, [1, 2], 0.9, ensemble=draws)
    assert np.all(band["time_s_lo"] < band["time_s"]) and np.all(band["time_s"] < band["time_s_hi"])
    with pytest.raises(pm.InputError, match="no residual"):
        pm.ensemble(result, noise_dof=0.0)


@pytest.fixture(scope="module")
def fit_file(fit, tmp_path_factory):
    out = tmp_path_factory.mktemp("intervals") / "fit.json"
    pm.save_fit(fit, out)
    return out


@pytest.mark.parametrize("method", ["laplace", "bootstrap"])
def test_cli_predict_interval_round_trip(capsys, fit_file, method):
    capsys.readouterr()
    argv = ["predict", str(fit_file), "--gpus", "1,8,64", "--interval", "0.9", "--json"]
    assert main([*argv, "--method", method]) == 0
    rows = json.loads(capsys.readouterr().out)
    expected = pm.predict_interval(pm.load_fit(fit_file), [1, 8, 64], 0.9, method)
    for i, row in enumerate(rows):
        assert row["time_s_lo"] < row["time_s"] < row["time_s_hi"]
        assert row["throughput_lo"] < row["throughput"] < row["throughput_hi"]
        assert row["time_s_lo"] == pytest.approx(expected["time_s_lo"][i], rel=1e-12)
        assert row["throughput_hi"] == pytest.approx(expected["throughput_hi"][i], rel=1e-12)
    assert main(["predict", str(fit_file), "--gpus", "8", "--interval", "0.5"]) == 0
    assert "50% prediction interval" in capsys.readouterr().out


def test_cli_optimal_interval(capsys, fit_file):
    capsys.readouterr()
    assert main(["optimal", str(fit_file), "--interval", "0.8", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["interval"] == {"level": 0.8, "kind": "confidence", "method": "laplace"}
    lo, hi = document["diminishing_returns"]["gpus_interval"]
    assert lo <= document["diminishing_returns"]["gpus"] <= hi
    assert main(["optimal", str(fit_file), "--interval", "0.8"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "80% confidence interval" in out
    # The fastest count's interval was in --json only (review of 2026-12-07).
    lo, hi = document["gpus_interval"]
    words = (
        f"{lo} alone" if lo == hi else f"{lo} to {hi if hi is not None else 'beyond the search'}"
    )
    fastest = out.split("fastest: ")[1]
    assert (
        f"{document['gpus']} GPUs (80% confidence interval{':' if lo == hi else ''} {words})"
        in fastest
    )


def test_cli_bad_interval_level_exits_2(capsys, fit_file):
    with pytest.raises(SystemExit) as caught:  # argparse checks the range of --interval
        main(["predict", str(fit_file), "--gpus", "8", "--interval", "1"])
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--interval: expected a finite number ≥ 0.01 and ≤ 0.999" in err
    # Past 0.999 the tails hold fewer than two of the 4000 draws; 0.999 reads "99.9%", not
    # "100%", and a level of 1e-300 (an interval of one point) is refused in Python too.
    assert main(["predict", str(fit_file), "--gpus", "8", "--interval", "0.999"]) == 0
    assert "_lo/_hi: 99.9% prediction interval" in capsys.readouterr().out
    with pytest.raises(pm.InputError, match="interval level must be from 0.01 to 0.999"):
        pm.predict_interval(pm.load_fit(fit_file), [8], level=1e-300)


@pytest.mark.parametrize("extra", [["--interval", "x"], ["--method", "mcmc", "--interval", "0.9"]])
def test_cli_malformed_interval_options_exit_2(capsys, fit_file, extra):
    with pytest.raises(SystemExit) as caught:
        main(["predict", str(fit_file), "--gpus", "8", *extra])
    assert caught.value.code == 2
    assert "Traceback" not in capsys.readouterr().err
