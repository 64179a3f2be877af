"""The published baselines of benchmarks/baselines.py and the NumPy reference of the
proposed default (benchmarks/_reference_default.py) on noiseless synthetic series."""

from pathlib import Path
import sys

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import _reference_default as ref  # noqa: E402
import baselines as bl  # noqa: E402

N = np.array([1.0, 2, 4, 8, 16])
FAR = np.array([32.0, 64])


def close(a, b, rtol=1e-6):
    np.testing.assert_allclose(np.asarray(a, float), np.asarray(b, float), rtol=rtol)


def test_amdahl_and_usl_recover_their_laws_in_both_quantities():
    x = 100 * N / (1 + 0.05 * (N - 1))
    close(bl.fit_amdahl(N, x, "throughput")(FAR), 100 * FAR / (1 + 0.05 * (FAR - 1)))
    t = 1e-5 * (0.1 + 0.9 / N)  # seconds per unit of work: tiny values must converge too
    close(bl.fit_amdahl(N, t, "time")(FAR), 1e-5 * (0.1 + 0.9 / FAR))
    usl = lambda n: 50 * n / (1 + 0.02 * (n - 1) + 1e-3 * n * (n - 1))  # noqa: E731
    close(bl.fit_usl(N, usl(N), "throughput")(FAR), usl(FAR), rtol=1e-5)


def test_ernest_recovers_its_coefficients_by_nnls():
    theta = np.array([2.0, 30.0, 0.5, 0.01])
    t = bl.ernest_features(N) @ theta
    predict = bl.fit_ernest(N, t, "time")
    close(predict.theta, theta, rtol=1e-8)
    # on throughput it models seconds per unit of work
    close(bl.fit_ernest(N, 1 / t, "throughput")(FAR), 1 / (bl.ernest_features(FAR) @ theta))


def test_power_law_recovers_a_and_b():
    predict = bl.fit_power_law(N, 3.0 * N**-0.8, "time")
    assert predict.a == pytest.approx(3.0) and predict.b == pytest.approx(0.8)
    close(bl.fit_power_law(N, 7.0 * N**0.9, "throughput")(FAR), 7.0 * FAR**0.9)


def test_optimus_recovers_the_step_time_of_weak_scaling():
    step = 0.2 + 0.01 * N  # θ1 + θ3·N per step of b·N units
    predict = bl.fit_optimus(N, N / step, "throughput")
    close(predict(FAR), FAR / (0.2 + 0.01 * FAR))
    strong = 0.5 / N + 0.1 + 0.002 * N  # θ0·M/w + θ1 + θ3·w, fixed global batch
    close(bl.fit_optimus(N, strong, "time", strong=True)(FAR), 0.5 / FAR + 0.1 + 0.002 * FAR)


def test_pollux_fits_its_own_model_and_keeps_goodput_priors():
    params = (1.0, 0.3, 0.02, 0.1, 0.01, 1.5)  # t_grad, α_n, β_n, α_r, β_r, γ
    n = np.array([1.0, 2, 4, 8, 16, 32])
    nodes = np.ceil(n / 8)
    step = bl.pollux_step_time(params, nodes, n)
    predict = bl.fit_pollux(n, n / step, "throughput", gpus_per_node=8)
    close(predict(n), n / step, rtol=0.03)  # the priors pull it slightly off
    inside = bl.fit_pollux(
        N[:4], N[:4] / bl.pollux_step_time(params, 1, N[:4]), "throughput", gpus_per_node=8
    )
    p = inside.params
    assert p["alpha_n"] >= 1.1 * p["alpha_r"] - 1e-12  # inter-node raised to 1.1× intra
    assert p["beta_n"] >= 1.1 * p["beta_r"] - 1e-12
    one = bl.fit_pollux(n, n / step, "throughput", gpus_per_node=8, two_level=False)
    assert np.all(np.isfinite(one(FAR)))


def test_loo_selector_picks_the_law_that_made_the_data():
    assert bl.fit_loo_classic(N, 5.0 * N**0.85, "throughput").law == "power_law"
    x = 100 * N / (1 + 0.05 * (N - 1))
    chosen = bl.fit_loo_classic(N, x, "throughput")
    assert chosen.law in ("amdahl", "usl")
    close(chosen(FAR), 100 * FAR / (1 + 0.05 * (FAR - 1)), rtol=1e-4)


# The reference default --------------------------------------------------------------


def test_families_recover_their_coefficients():
    theta = np.array([1.0, 0.02, 0.3])
    u = ref.features("weak_data_parallel", N) @ theta
    close(ref.fit_family("weak_data_parallel", N, u), theta, rtol=1e-4)  # ridge 1e-8
    hier = np.array([1.0, 0.1, 0.4])
    u = ref.features("weak_hierarchical", N, 4) @ hier
    close(ref.fit_family("weak_hierarchical", N, u, 4), hier, rtol=1e-4)
    usl = np.array([0.05, 0.95, 0.002])  # s + p/N + k(N−1)
    close(ref.fit_family("usl", N, ref.features("usl", N) @ usl), usl, rtol=1e-4)
    close(ref.fit_family("power_law", N, 2.0 * N**-0.9), [np.log(2.0), 0.9], rtol=1e-10)
    # the flat power law is the unweighted log-log fit: on noisy data it differs from
    # the weighted one and equals numpy's polyfit
    noisy = 2.0 * N**-0.9 * (1 + 0.05 * np.sin(3 * N))
    slope, intercept = np.polyfit(np.log(N), np.log(noisy), 1)
    close(ref.fit_family("power_law_flat", N, noisy), [intercept, -slope], rtol=1e-10)
    assert abs(ref.fit_family("power_law", N, noisy)[1] + slope) > 1e-3


def test_the_answer_does_not_depend_on_the_column():
    x = 100 * N / (1 + 0.03 * (N - 1)) * (1 + 0.01 * np.sin(N))
    by_throughput = ref.fit_default(N, x, "throughput").predict(FAR)
    per_unit = ref.fit_default(N, 1 / x, "time")  # seconds per unit of work
    per_step = ref.fit_default(N, 64 * N / x, "time")  # seconds per step, 64 per GPU
    assert per_unit.unit == "unit" and per_step.unit == "step"
    close(1 / per_unit.predict(FAR), by_throughput, rtol=1e-10)
    close(64 * FAR / per_step.predict(FAR), by_throughput, rtol=1e-10)
    # stated strong scaling: its own weights, the same in every presentation
    strong = ref.fit_default(N, x, "throughput", scaling="strong")
    assert strong.regime == "strong" and ref.fit_default(N, x).regime == "weak"
    per_step_global = ref.fit_default(N, 4096 / x, "time", scaling="strong")  # fixed batch
    close(4096 / per_step_global.predict(FAR), strong.predict(FAR), rtol=1e-10)
    assert np.max(np.abs(strong.predict(FAR) / by_throughput - 1)) > 1e-4


def test_weights_move_from_near_to_far_between_one_and_two_doublings():
    x = 100 * N / (1 + 0.03 * (N - 1)) * (1 + 0.01 * np.sin(N))
    fitted = ref.fit_default(N, x)
    ask = fitted.max_gpus * 2.0 ** np.array([-2.0, 0.0, 1.0, 1.5, 2.0, 3.0])
    w = fitted.weights(ask)
    close(sum(w.values()), np.ones(len(ask)), rtol=1e-12)
    for family in w:
        near, far = ref.NEAR["weak"].get(family, 0.0), ref.FAR["weak"].get(family, 0.0)
        close(w[family], [near, near, near, (near + far) / 2, far, far], rtol=1e-12)
    logs = fitted.family_logs(ask)
    expected = sum(w[f] * logs[f] for f in w) + np.log(fitted.scale)
    close(fitted.log_u(ask), expected, rtol=1e-12)


def test_straddling_the_node_uses_the_two_level_family_and_intervals_widen():
    hier = np.array([1.0, 0.1, 0.4])
    x = 1 / (ref.features("weak_hierarchical", N, 4) @ hier)
    fitted = ref.fit_default(N, x, "throughput", gpus_per_node=4)
    assert fitted.regime == "straddling" and fitted.near == ref.NEAR["straddling"]
    close(fitted.thetas["weak_hierarchical"], hier, rtol=1e-4)
    no_node = ref.fit_default(N, x, "throughput")
    assert no_node.regime == "weak" and "weak_hierarchical" not in no_node.thetas
    lo50, hi50 = fitted.interval(FAR, 0.5)
    lo90, hi90 = fitted.interval(FAR, 0.9)
    p = fitted.predict(FAR)
    assert np.all((lo90 <= lo50) & (lo50 <= p) & (p <= hi50) & (hi50 <= hi90))
    assert (hi90 / lo90)[1] > (hi90 / lo90)[0]
    assert (
        fitted.interval_table() == "many"
        and ref.fit_default(N[:3], x[:3]).interval_table() == "few"
    )


def test_training_points_are_never_missed_by_more_than_the_worst_family():
    """Inside the measured range the weights are NEAR's, a convex combination in log u:
    |log û − log u| ≤ max over the mixed families of |log u_f − log u| at every point."""
    rng = np.random.default_rng(0)
    n = np.repeat(N, 2)
    x = 100 * n / (1 + 0.04 * (n - 1)) * np.exp(rng.normal(0, 0.03, n.size))
    for scaling in (None, "strong"):
        fitted = ref.fit_default(n, x, scaling=scaling)
        measured = -np.log(x)
        ours = np.abs(fitted.log_u(n) - measured)
        logs = fitted.family_logs(n)
        worst = np.max([np.abs(logs[f] + np.log(fitted.scale) - measured) for f in fitted.near], 0)
        assert np.all(ours <= worst + 1e-12)
        assert fitted.training_rms() > 0


def test_bad_input_is_refused():
    with pytest.raises(ValueError):
        ref.fit_default([1, 1], [10.0, 11.0])
    with pytest.raises(ValueError):
        ref.fit_default([1, 2], [10.0, 0.0])
    with pytest.raises(ValueError):
        bl.fit_ernest([1, 2], [1.0, -1.0], "time")


def test_reference_reproduces_its_test_vectors():
    """tests/data/reference_vectors.json (the port's target) is what the reference computes
    today: regenerate it with benchmarks/extrapolation_research/make_vectors.py."""
    import json

    path = Path(__file__).resolve().parent / "data" / "reference_vectors.json"
    data = json.loads(path.read_text())
    assert data["constants"]["NEAR"] == ref.NEAR and data["constants"]["FAR"] == ref.FAR
    regimes = {case["regime"] for case in data["cases"]}
    assert regimes == {"weak", "strong", "straddling"}
    for case in data["cases"][::7]:
        fitted = ref.fit_default(
            case["gpus"],
            case["measured"],
            case["target"],
            gpus_per_node=case["gpus_per_node"],
            scaling=case["scaling"],
        )
        assert fitted.regime == case["regime"]
        close(fitted.predict(case["ask"]), case["predict"], rtol=1e-9)
        close(fitted.interval_scale(case["ask"]), case["interval_scale"], rtol=1e-9)
        lo, hi = fitted.interval(case["ask"], 0.9)
        close(lo, case["interval"]["0.9"][0], rtol=1e-9)
        close(hi, case["interval"]["0.9"][1], rtol=1e-9)
