import math

from helpers import exact_fit as fitted
import numpy as np
import pytest

import perfmodel as pm
from perfmodel._questions import MAX_GPUS


@pytest.fixture(scope="module")
def usl_model():
    return pm.usl().with_parameters(
        {"serial.time": 0.02, "compute.time": 0.98, "coherency.time": 1e-4}
    )


def test_usl_optimum_is_gunthers_peak(usl_model):
    result = fitted(usl_model)
    peak = pm.usl_coefficients(usl_model)["peak_n"]  # sqrt((1 − σ)/κ) ≈ 99
    best = pm.optimal_gpus(result, max_gpus=1000)
    assert best.gpus in (int(np.floor(peak)), int(np.ceil(peak)))
    assert not best.at_limit
    times = result.predict(np.arange(1, 1001))["time_s"]
    assert best.time_s == pytest.approx(times.min())


def test_amdahl_optimum_is_the_search_limit_and_bound_is_one_over_s():
    result = fitted(pm.amdahl().with_parameters({"serial.time": 0.2, "compute.time": 0.8}))
    best = pm.optimal_gpus(result, max_gpus=64)
    assert best.gpus == 64 and best.at_limit
    assert pm.amdahl_bound(result) == pytest.approx(5.0)


def test_cost_objective_and_deadline(usl_model):
    result = fitted(usl_model)
    cheapest = pm.optimal_gpus(result, max_gpus=256, objective="cost", price_per_gpu_hour=2.0)
    assert cheapest.gpus == 1  # N·T(N) only grows: one GPU wastes nothing
    assert cheapest.cost == pytest.approx(cheapest.gpu_seconds * 2.0 / 3600)
    deadline = float(result.predict([10])["time_s"][0])
    best = pm.optimal_gpus(result, max_gpus=256, objective="cost", deadline_s=deadline)
    assert best.gpus == 10
    with pytest.raises(pm.InputError, match="meets the deadline"):
        pm.optimal_gpus(result, objective="cost", deadline_s=1e-9)


def test_multiple_of_whole_nodes(usl_model):
    best = pm.optimal_gpus(fitted(usl_model), max_gpus=1000, multiple_of=8)
    assert best.gpus % 8 == 0


def test_diminishing_returns_matches_amdahl_derivative():
    s, c = 0.05, 0.95
    result = fitted(pm.amdahl().with_parameters({"serial.time": s, "compute.time": c}))
    knee = pm.diminishing_returns(result, threshold=0.5, max_gpus=1000)
    n = np.arange(1, 1001)
    marginal = c / (s * n + c) ** 2  # d/dN of 1 / (s + c/N), with T(1) = 1
    expected = int(n[np.argmax(marginal < 0.5)])
    assert knee.gpus == expected
    assert knee.marginal_speedup == pytest.approx(marginal[expected - 1], rel=1e-9)


def test_efficiency_floor_criterion():
    result = fitted(pm.amdahl().with_parameters({"serial.time": 0.05, "compute.time": 0.95}))
    knee = pm.diminishing_returns(result, threshold=1e-6, efficiency_floor=0.5, max_gpus=1000)
    assert knee.criterion.startswith("efficiency")
    assert knee.efficiency < 0.5
    n = knee.gpus - 1
    assert 1 / (0.05 + 0.95 / n) / n >= 0.5


def test_no_knee_reported_as_none():
    result = fitted(pm.amdahl().with_parameters({"serial.time": 1e-9, "compute.time": 1.0}))
    knee = pm.diminishing_returns(result, max_gpus=64)
    assert knee.gpus is None


def test_bad_query_arguments():
    result = fitted(pm.amdahl())
    for bad in (0, 2.5, math.inf, math.nan, True, MAX_GPUS + 1):
        with pytest.raises(pm.InputError, match="^max_gpus: expected a whole number"):
            pm.optimal_gpus(result, max_gpus=bad)
        with pytest.raises(pm.InputError, match="^max_gpus: expected a whole number"):
            pm.diminishing_returns(result, max_gpus=bad)
    for price in (-2.0, 0.0, math.nan, math.inf):
        with pytest.raises(pm.InputError, match="^price_per_gpu_hour: expected a positive"):
            pm.optimal_gpus(result, objective="cost", price_per_gpu_hour=price)
    with pytest.raises(pm.InputError, match="^deadline_s applies.*cost objective"):
        pm.optimal_gpus(result, deadline_s=0.2)
    with pytest.raises(pm.InputError, match="^threshold: expected"):
        pm.diminishing_returns(result, threshold=math.inf)
    with pytest.raises(pm.InputError, match="unknown objective"):
        pm.optimal_gpus(result, objective="energy")
    # "max_gpus=: expected …": an argument the message is about reads as its name.
    with pytest.raises(pm.InputError) as caught:
        pm.optimal_gpus(result, max_gpus=float("inf"))
    assert str(caught.value).startswith("max_gpus: expected") and "=:" not in str(caught.value)
    assert caught.value.render(lambda name: "--max-gpus").startswith("--max-gpus: expected")


def test_one_gpu_is_singular():
    result = fitted(pm.amdahl())
    best = pm.optimal_gpus(result, objective="cost", price_per_gpu_hour=2.0)
    assert best.gpus == 1 and "best by cost: 1 GPU, speedup" in best.summary()
    knee = pm.diminishing_returns(result, threshold=0.99)
    assert knee.gpus == 1 and "diminishing returns from 1 GPU, " in knee.summary()


def test_search_limit_is_evaluated_in_bounded_memory():
    """The largest allowed search is answered (10⁶ counts, one vector per curve)."""
    result = fitted(pm.amdahl().with_parameters({"serial.time": 1e-7, "compute.time": 1.0}))
    best = pm.optimal_gpus(result, max_gpus=MAX_GPUS)
    assert best.gpus == MAX_GPUS and best.at_limit


def test_non_finite_predictions_are_refused_not_ranked():
    """Not the misleading "no count meets the deadline of None s" of an all-NaN search."""
    result = fitted(pm.amdahl().with_parameters({"serial.time": 1e308, "compute.time": 1e308}))
    with pytest.raises(pm.InputError, match="predicts a step time of inf s at 1 GPUs"):
        pm.optimal_gpus(result)
    with pytest.raises(pm.InputError, match="predicts a step time of inf s at 1 GPUs"):
        pm.diminishing_returns(result)


def test_a_count_interval_past_the_search_reads_in_words():
    from perfmodel._questions.query import count_interval_text

    assert count_interval_text((8, 16), "confidence", 0.9) == " (90% confidence interval 8 to 16)"
    # One count at both ends, in the optimum's line and the knee's alike.
    assert (
        count_interval_text((64, 64), "confidence", 0.9) == " (90% confidence interval: 64 alone)"
    )
    assert count_interval_text((8, None), "confidence", 0.9).endswith("8 to beyond the search)")
    # It read "(90% confidence interval none to beyond the search)".
    text = count_interval_text((None, None), "confidence", 0.9)
    assert text == " (90% confidence interval: beyond the search for every plausible curve)"
