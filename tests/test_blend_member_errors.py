"""The default blend's parameter uncertainties: each coefficient's from its member's own
fit (`perfmodel._fitting.blend.member_covariance`), against the weighted-least-squares
closed forms, by simulation from known parameters, and as the CLI prints them; Laplace
and bootstrap draws of the whole blend are refused with one line."""

import contextlib
import io
import math

import numpy as np
import pytest

import perfmodel as pm
from perfmodel._cli import app
from perfmodel._fitting import fit_blend, meanings, per_unit_of_work
from perfmodel._fitting.blend import ALPHA, power_exponents

GPUS = np.array([1.0, 2, 4, 8, 16, 32, 1, 2, 4, 8, 16, 32])


def _amdahl_times(rng, noise=0.02, serial=0.05):
    """Seconds per step of a fixed global batch: Amdahl's law, log-normal noise."""
    return 0.01 * (serial + (1 - serial) / GPUS) * np.exp(rng.normal(0.0, noise, GPUS.size))


def _blend(times):
    data, _ = per_unit_of_work(pm.from_arrays(GPUS, times))
    return fit_blend(data)


@pytest.fixture(scope="module")
def fitted():
    return _blend(_amdahl_times(np.random.default_rng(3)))


def _sandwich(jacobian, residuals, w):
    """σ²·A·(JᵀW²J)·A, A = (JᵀWJ)⁻¹, σ² = Σe²/tr((I − H)ᵀ(I − H)), H = J·A·JᵀW: the
    n × n hat matrix formed here, k × k products in the library."""
    a = np.linalg.inv(jacobian.T @ (w[:, None] * jacobian))
    hat = jacobian @ a @ (jacobian.T * w)
    rest = np.eye(len(w)) - hat
    sigma2 = np.sum(residuals**2) / np.trace(rest.T @ rest)
    return sigma2 * a @ (jacobian.T @ (w[:, None] ** 2 * jacobian)) @ a


def test_amdahl_member_matches_the_sandwich_closed_form(fitted):
    """Relative residuals e = φ·θ/u − 1 with weights (N/N_max)², J = φ·θ/u (d/d log θ)."""
    u, n = fitted.data.time_s, fitted.data.gpus
    values = fitted.parameters()
    theta = np.array([values["amdahl.serial.time"], values["amdahl.compute.time"]])
    phi = np.stack([np.ones_like(n), 1.0 / n], axis=-1)
    cov = _sandwich(phi * theta / u[:, None], phi @ theta / u - 1.0, (n / n.max()) ** ALPHA)
    errors = fitted.standard_errors()
    got = [errors["amdahl.serial.time"], errors["amdahl.compute.time"]]
    np.testing.assert_allclose(got, np.sqrt(np.diag(cov)), rtol=1e-6)


def test_power_law_members_match_their_regression(fitted):
    """log u = log c − e·log N by weighted least squares: sd(log c) is the intercept's;
    with equal weights (power_law_flat) the textbook σ²·(XᵀX)⁻¹, σ² = Σe²/(n − 2)."""
    u, n = fitted.data.time_s, fitted.data.gpus
    x = np.stack([np.ones_like(n), -np.log(n)], axis=-1)
    for name, power in (("power_law", ALPHA), ("power_law_flat", 0.0)):
        w = (n / n.max()) ** power
        beta = np.linalg.solve(x.T @ (w[:, None] * x), x.T @ (w * np.log(u)))
        e = np.log(u) - x @ beta
        expected = math.sqrt(_sandwich(x, e, w)[0, 0])
        if power == 0.0:
            textbook = np.sum(e**2) / (n.size - 2) * np.linalg.inv(x.T @ x)[0, 0]
            assert expected == pytest.approx(math.sqrt(textbook), rel=1e-9)
        assert fitted.standard_errors()[f"{name}.power.time"] == pytest.approx(expected, rel=1e-6)
        assert fitted.parameters()[f"{name}.power.time"] == pytest.approx(
            math.exp(beta[0]), rel=1e-6
        )
        # The exponent is −beta[1], with the slope's standard error, and the table says it.
        exponent, error = power_exponents(fitted.model, fitted.data)[name]
        assert exponent == pytest.approx(-beta[1], rel=1e-6)
        assert error == pytest.approx(math.sqrt(_sandwich(x, e, w)[1, 1]), rel=1e-6)
        if power == 0.0:
            slope = np.sum(e**2) / (n.size - 2) * np.linalg.inv(x.T @ x)[1, 1]
            assert error == pytest.approx(math.sqrt(slope), rel=1e-6)
        words = meanings(fitted)[f"{name}.power.time"]
        assert f"c·N^e (e = {exponent:.3g}".replace("-", "−") in words
        assert f"± {error:.2g}, 1 s.e.; −1 is perfect scaling)" in words


def test_zeroed_and_exact_members_have_no_standard_error():
    """A coefficient the member's fit set to 0 is infinite (undetermined); a member
    with as many coefficients as measurements has no residual to estimate one from."""
    n = np.array([1.0, 2.0, 4.0])
    data, _ = per_unit_of_work(pm.from_arrays(n, throughput=[100.0, 190.0, 350.0]))
    fit = fit_blend(data)
    errors = fit.standard_errors()
    assert "usl.coherency.time is not identifiable" in fit.warnings[0]  # set to 0
    assert math.isinf(errors["usl.coherency.time"])
    assert math.isfinite(errors["usl.serial.time"])  # usl left with two, one residual
    assert math.isinf(errors["weak_data_parallel.compute.time"])  # three for three counts
    assert math.isfinite(errors["amdahl.serial.time"])
    intervals = pm.parameter_intervals(fit, 0.9)
    assert intervals["weak_data_parallel.allreduce.latency"] == (0.0, math.inf)
    lo, hi = intervals["amdahl.serial.time"]
    assert lo < fit.parameters()["amdahl.serial.time"] < hi


def test_member_intervals_are_student_t_on_the_log(fitted):
    """θ̂·exp(±t_{n−k}·s): t with 10 degrees of freedom for Amdahl (12 points, 2)."""
    lo, hi = pm.parameter_intervals(fitted, 0.9)["amdahl.compute.time"]
    value = fitted.parameters()["amdahl.compute.time"]
    sd = fitted.standard_errors()["amdahl.compute.time"]
    assert math.log(hi / value) == pytest.approx(1.8124611 * sd, rel=1e-5)  # t_0.95(10)
    assert math.log(value / lo) == pytest.approx(1.8124611 * sd, rel=1e-5)


@pytest.mark.slow
def test_member_errors_hold_by_simulation():
    """From known parameters with 2% noise, 200 times. A member fitted with equal
    weights (power_law_flat, on power-law data) is ordinary least squares: its 90%
    intervals hold the truth 84–96% of the time. One weighted towards the largest counts
    (amdahl, on Amdahl data): the sandwich's standard errors are the estimates' spread,
    (log θ̂ − log θ)/s has a standard deviation within 0.8–1.15 (the naive weighted
    σ²·(JᵀWJ)⁻¹ gives about 1.9), and the intervals hold at least 86%."""
    rng = np.random.default_rng(11)
    runs = 200
    amdahl = {"amdahl.serial.time": 0.01 * 0.05, "amdahl.compute.time": 0.01 * 0.95}
    z = {name: [] for name in amdahl}
    hits = dict.fromkeys([*amdahl, "power_law_flat.power.time"], 0)
    for _ in range(runs):
        fit = _blend(_amdahl_times(rng))
        intervals = pm.parameter_intervals(fit, 0.9)
        for name, value in amdahl.items():
            lo, hi = intervals[name]
            hits[name] += lo <= value <= hi
            z[name].append(math.log(fit.parameters()[name] / value) / fit.standard_errors()[name])
        power = 0.01 * GPUS**-0.8 * np.exp(rng.normal(0.0, 0.02, GPUS.size))
        lo, hi = pm.parameter_intervals(_blend(power), 0.9)["power_law_flat.power.time"]
        hits["power_law_flat.power.time"] += lo <= 0.01 <= hi
    assert 0.84 <= hits["power_law_flat.power.time"] / runs <= 0.96, hits
    for name in amdahl:
        assert 0.8 <= np.std(z[name]) <= 1.15, (name, np.std(z[name]))
        assert hits[name] / runs >= 0.86, hits


@pytest.mark.slow  # 2 s: the default run stays under 4 minutes
def test_cli_prints_member_uncertainties_and_refuses_blend_draws(tmp_path):
    csv = tmp_path / "four.csv"
    csv.write_text("gpus,throughput\n1,100\n2,190\n4,350\n8,600\n")
    saved = tmp_path / "four.json"
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert app.main(["fit", str(csv), "-o", str(saved)]) == 0
    row = next(line for line in out.getvalue().splitlines() if "amdahl.serial.time" in line)
    assert "—" not in row and "1.01" in row
    assert pm.load_fit(saved).standard_errors()["amdahl.serial.time"] == pytest.approx(
        pm.fit_auto(pm.load_benchmarks(csv)).best.standard_errors()["amdahl.serial.time"]
    )
    for method in ("laplace", "bootstrap"):
        err = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            code = app.main(
                ["predict", str(saved), "--gpus", "16", "--interval", "0.9", "--method", method]
            )
        assert code != 0
        lines = err.getvalue().strip().splitlines()
        assert len(lines) == 1 and "not defined for the default blend" in lines[0]
        assert "--model NAME" in lines[0]


def test_a_member_without_weight_says_so(fitted):
    """In the weak regime USL is fitted for the intervals' spread alone (weight 0)."""
    assert fitted.model.regime == "weak"
    specs = fitted.model.parameter_specs()
    assert specs["usl.serial.time"].description.endswith(
        "(weight 0 here: it only widens the intervals)"
    )
    assert "weight 0" not in specs["amdahl.serial.time"].description
