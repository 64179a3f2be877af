"""`recommend`: the count worth buying against closed forms, whole nodes, the reason,
the alternatives with what they assumed, and its intervals from the shared draws."""

import dataclasses
import json
import math

from helpers import exact_fit as fitted
import numpy as np
import pytest

import perfmodel as pm
from perfmodel._questions.recommend import _reason

S, C = 0.05, 0.95  # Amdahl: T = s + c/N, T(1) = 1


def amdahl_speedup(n):
    return 1.0 / (S + C / n)


def amdahl_marginal(n):
    """dS/dN of 1/(s + c/N)."""
    return C / (S * n + C) ** 2


@pytest.fixture(scope="module")
def amdahl():
    return fitted(pm.amdahl().with_parameters({"serial.time": S, "compute.time": C}))


def test_count_worth_buying_is_the_last_before_returns_diminish(amdahl):
    rec = pm.recommend(amdahl, level=None)
    n = np.arange(1, 4097)
    knee = int(n[np.argmax(amdahl_marginal(n) < 0.5)])  # first count past the knee
    assert rec.gpus == knee - 1 and rec.knee.gpus == knee
    assert amdahl_marginal(rec.gpus) >= 0.5 > amdahl_marginal(rec.gpus + 1)
    assert rec.speedup == pytest.approx(amdahl_speedup(rec.gpus), rel=1e-9)
    assert rec.efficiency == pytest.approx(amdahl_speedup(rec.gpus) / rec.gpus, rel=1e-9)
    # The reason names the term that grows and its share where returns diminish.
    assert rec.limiting == "serial"
    assert rec.limiting_share == pytest.approx(S / (S + C / knee), rel=1e-9)
    assert f"the serial part reaches {rec.limiting_share:.0%} of the step" in rec.reason
    assert rec.sentence.startswith(f"Buy {rec.gpus} GPUs: speedup {rec.speedup:.3g}×")


def test_whole_nodes_move_the_knee_too(amdahl):
    rec = pm.recommend(amdahl, multiple_of=8, level=None)
    counts = np.array([1, *range(8, 4097, 8)], dtype=float)
    gains = np.diff(amdahl_speedup(counts)) / np.diff(counts)  # per GPU of each next step
    expected = int(counts[np.argmax(gains < 0.5)])
    assert rec.gpus == expected and rec.gpus % 8 == 0
    assert rec.knee.gpus == expected + 8 and rec.knee.multiple_of == 8
    assert rec.knee.marginal_speedup == pytest.approx(gains[np.argmax(gains < 0.5)], rel=1e-9)
    assert "the next 8 GPUs would add" in rec.reason
    # The optimum moves to whole nodes with it.
    assert rec.optimum.gpus % 8 == 0


def test_node_size_from_the_data_is_the_default_step():
    data = pm.from_arrays([8, 16, 32, 64], [1.0, 0.55, 0.33, 0.24], gpus_per_node=[8] * 4)
    model = pm.amdahl().with_parameters({"serial.time": 0.1, "compute.time": 7.2})
    rec = pm.recommend(fitted(model, data), level=None)
    assert rec.gpus_per_node == 8 and rec.multiple_of == 8 and rec.gpus % 8 == 0
    assert f"({rec.gpus // 8} node" in rec.sentence
    # Past the measurements, one parenthesis: "(16 nodes of 8) (extrapolated: …)" read as
    # two asides.
    data = pm.from_arrays([8, 16], [1.0, 0.51], gpus_per_node=[8] * 2)
    rec = pm.recommend(fitted(model, data), level=None)
    assert rec.gpus > 16 and "nodes of 8; extrapolated: at most 16 GPUs were" in rec.sentence


def test_a_fastest_count_near_the_bound_says_how_near():
    from perfmodel._questions.query import Optimum
    from perfmodel._questions.recommend import _alternative

    def fastest(speedup):
        best = Optimum(256, 0.1, speedup, speedup / 256, 25.6, None, "time", 4096, False)
        return _alternative("fastest", "fastest", best, "GPU-hours", "step", 1 / 3600, 58.0)

    held = fastest(58.0).sentence  # at the bound: a floor holds the forecast there
    assert "reaches the serial time of Amdahl's law" in held and "add nothing" in held
    near = fastest(56.0).sentence  # within 5% of it, short of it
    assert near.startswith("fastest: 256 GPUs, within 5% of the Amdahl bound 58× (speedup 56×")
    assert "add almost nothing" in near and "serial time" not in near


def test_still_speeding_up_says_measure_further(amdahl):
    # 19.9× at 4096 GPUs of a bound of 20×: the curve has levelled off.
    fastest = pm.recommend(amdahl, level=None).alternatives[0]
    assert fastest.kind == "fastest" and fastest.gpus == 4096
    assert "levels off at the Amdahl bound 20×" in fastest.sentence
    assert "measure further" not in fastest.sentence
    # 803× at 4096 GPUs of a bound of 1000×: still speeding up.
    far = fitted(pm.amdahl().with_parameters({"serial.time": 1e-3, "compute.time": 0.999}))
    fastest = pm.recommend(far, level=None).alternatives[0]
    assert "still speeding up at 4096 GPUs" in fastest.sentence
    assert "measure further" in fastest.sentence and "(the search limit" not in fastest.sentence
    # Measured up to 8 GPUs (exact_fit's data): 4096 is 512× that, and the answer says so.
    assert "; extrapolated 512× past the 8 GPUs measured)" in fastest.sentence
    near = pm.recommend(far, max_gpus=16, level=None).alternatives[0]
    assert near.gpus == 16 and "GPUs measured" not in near.sentence  # 2×: as far as checked
    none = fitted(pm.amdahl().with_parameters({"serial.time": 1e-9, "compute.time": 1.0}))
    rec = pm.recommend(none, max_gpus=32, level=None)
    assert rec.still_speeding_up and rec.gpus == 32 and rec.beyond_checked is None
    assert "measure larger counts" in rec.reason
    # Past 4× the 8 GPUs measured, how far forecasts were checked, the count stops there
    # and the model's own count is said as a guess to measure for.
    rec = pm.recommend(none, max_gpus=64, level=None)
    assert rec.still_speeding_up and rec.gpus == 32 and rec.beyond_checked == 64
    assert rec.sentence.startswith("Buy 32 GPUs (extrapolated: at most 8 GPUs were measured)")
    assert "up to 64 GPUs (the end of the search, 8× the 8 measured)" in rec.reason
    assert rec.reason.endswith("measure 32 GPUs before buying more")
    assert rec.to_dict()["beyond_checked"] == 64


def test_usl_fastest_is_the_peak():
    model = pm.usl().with_parameters(
        {"serial.time": 0.02, "compute.time": 0.98, "coherency.time": 1e-4}
    )
    rec = pm.recommend(fitted(model), max_gpus=1000, level=None)
    peak = pm.usl_coefficients(model)["peak_n"]
    assert abs(rec.optimum.gpus - peak) < 1 and not rec.optimum.at_limit
    assert rec.alternatives[0].sentence.startswith(f"fastest: {rec.optimum.gpus} GPUs")
    assert rec.gpus < rec.optimum.gpus


def test_several_costs_are_named_with_their_total():
    # USL: serial s, compute c/N, coherency k·(N−1); at the knee N both s and k·(N−1)
    # do not shrink: the reason gives their total and each, largest first.
    s, c, k = 0.02, 0.98, 1e-4
    model = pm.usl().with_parameters({"serial.time": s, "compute.time": c, "coherency.time": k})
    rec = pm.recommend(fitted(model), max_gpus=1000, level=None)
    n = rec.knee.gpus
    total = s + c / n + k * (n - 1)
    assert rec.overhead_share == pytest.approx((s + k * (n - 1)) / total, rel=1e-9)
    assert rec.limiting == "serial" and rec.limiting_share == pytest.approx(s / total, rel=1e-9)
    assert (
        f"as costs that do not shrink with more GPUs reach {rec.overhead_share:.0%} of the "
        f"step: the serial part {s / total:.0%}, coordination between GPUs (the coherency "
        f"term) {k * (n - 1) / total:.0%}"
    ) in rec.reason
    assert rec.to_dict()["overhead_share"] == rec.overhead_share


def test_one_gpu_hour_per_step_is_singular():
    model = pm.amdahl().with_parameters({"serial.time": 600.0, "compute.time": 3000.0})
    cheapest = pm.recommend(fitted(model), level=None).alternatives[1]
    assert cheapest.sentence.startswith("cheapest per step: 1 GPU, 1 GPU-hour per step")


def test_prices_deadlines_and_budgets_are_echoed(amdahl):
    deadline = float(amdahl.predict([10])["time_s"][0])
    rec = pm.recommend(
        amdahl,
        price_per_gpu_hour=2.5,
        currency="USD",
        deadline_s=deadline,
        budget_per_hour=40.0,
        level=None,
    )
    kinds = {a.kind: a for a in rec.alternatives}
    assert set(kinds) == {"fastest", "cheapest", "deadline", "budget"}
    cheapest = kinds["cheapest"]
    assert cheapest.gpus == 1 and cheapest.cost_unit == "USD"
    assert cheapest.cost == pytest.approx(1.0 * 2.5 / 3600)  # one GPU-second per step
    assert "at 2.5 USD per GPU-hour" in cheapest.sentence and "USD per step" in cheapest.sentence
    assert kinds["deadline"].gpus == 10
    assert f"deadline of {deadline:g} s per step" in kinds["deadline"].sentence
    assert kinds["budget"].gpus == 16  # 40 USD/h buys 16 GPUs at 2.5; the fastest of them
    assert "budget of 40 USD per hour (at most 16 GPUs)" in kinds["budget"].sentence
    assert rec.assumptions["currency"] == "USD" and rec.assumptions["deadline_s"] == deadline
    # Without a price, cost is in GPU-hours, and says so.
    plain = pm.recommend(amdahl, level=None).alternatives[1]
    assert plain.cost_unit == "GPU-hours" and "GPU-hours per step" in plain.sentence
    unreachable = pm.recommend(amdahl, deadline_s=1e-9, level=None).alternatives[-1]
    assert unreachable.gpus is None and "none up to 4096 GPUs" in unreachable.sentence


def test_a_budget_past_every_count_searched(amdahl):
    """1e300 per hour at 1e-300 a GPU-hour is inf GPUs: int() of it was a traceback."""
    for budget, price, bound in ((1e300, 1e-300, "over 1000000 GPUs"), (3.0, 2.0, "at most 1 GPU")):
        rec = pm.recommend(amdahl, price_per_gpu_hour=price, budget_per_hour=budget, level=None)
        assert f"per hour ({bound})" in rec.alternatives[-1].sentence


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(budget_per_hour=10.0), "price_per_gpu_hour"),
        (dict(price_per_gpu_hour=-1.0), "positive"),
        (dict(max_gpus=0), "max_gpus"),
        (dict(level=1.5), "level"),
    ],
)
def test_bad_arguments(amdahl, kwargs, match):
    with pytest.raises(pm.InputError, match=match):
        pm.recommend(amdahl, **{"level": None, **kwargs})


@pytest.fixture(scope="module")
def real_fit():
    """A real fit with residual degrees of freedom, so that the ensemble has draws."""
    gpus = np.array([1.0, 2, 4, 8, 1, 2, 4, 8])
    noise = np.array([0.01, -0.02, 0.015, -0.01, -0.01, 0.02, -0.015, 0.01])
    return pm.fit("amdahl", pm.from_arrays(gpus, (S + C / gpus) * np.exp(noise)))


@pytest.mark.slow  # 4 s: the default run stays under 4 minutes
def test_intervals_are_confidence_intervals_from_the_shared_draws(real_fit):
    draws = pm.ensemble(real_fit)
    rec = pm.recommend(real_fit, ensemble=draws)
    assert rec.level == 0.9
    lo, hi = rec.speedup_interval
    assert lo < rec.speedup < hi
    low, high = rec.gpus_interval
    assert low <= rec.gpus <= high
    # The speedup interval is the confidence interval of the curve at that count: the
    # same draws give the same interval of its time at one GPU over its time there.
    band = pm.predict_interval(real_fit, [rec.gpus], level=0.9, kind="confidence", ensemble=draws)
    assert band["time_s_lo"][0] < rec.time_s < band["time_s_hi"][0]
    # The knee's interval comes from the same draws as diminishing_returns' own.
    knee = pm.diminishing_returns(real_fit, interval=0.9, ensemble=draws)
    assert rec.knee.gpus_interval == knee.gpus_interval
    assert "90% confidence interval" in rec.sentence


@pytest.mark.slow  # 5 s: the default run stays under 4 minutes
def test_document_and_text(real_fit):
    rec = pm.recommend(real_fit)
    document = rec.to_dict()
    assert {"gpus", "speedup", "efficiency", "reason"} <= set(document)
    assert document["interval"]["kind"] == "confidence"
    json.dumps(document, allow_nan=False)
    lines = rec.summary(width=None).splitlines()  # the default wraps at 100 columns
    assert lines[0] == rec.sentence and len(lines) == 2 + len(rec.alternatives)
    assert max(len(line) for line in rec.summary().splitlines()) <= 100
    assert repr(rec).count("\n") == 0 and len(repr(rec)) < 400
    changed = dataclasses.replace(rec, gpus_interval=None)
    assert len(changed.lines()) == 1 + len(rec.alternatives)
    assert math.isfinite(document["speedup"])


@pytest.mark.slow  # 4 s: the default run stays under 4 minutes
def test_ensemble_reads_well(real_fit):
    draws = pm.ensemble(real_fit)
    text = repr(draws)
    assert "\n" not in text and len(text) < 400 and text.startswith("<Ensemble: 4000 laplace")
    assert "model-form drift outside 1–8 GPUs" in draws.summary()


@pytest.mark.slow  # 3 s: the default run stays under 4 minutes
def test_past_one_node_from_one_node_is_flagged():
    """Measured within one node of 8, a recommendation past it says the network between
    nodes is extrapolated; measured across two nodes, it does not."""
    time = [1.0, 0.52, 0.27, 0.145]
    one_node = pm.fit("amdahl", pm.from_arrays([1, 2, 4, 8], time, gpus_per_node=[8] * 4))
    rec = pm.recommend(one_node, level=None)
    # The model's answer lies past the node; the count to buy is the node itself.
    assert rec.gpus == 8 and rec.beyond_node > 8 and rec.network_unmeasured
    assert f"up to {rec.beyond_node} GPUs" in rec.sentence
    assert "measure 2 nodes (16 GPUs) before buying more" in rec.sentence
    assert rec.speedup == pytest.approx(float(one_node.predict([8])["speedup"][0]))
    # Still speeding up at the node: the node caps it, not "the search limit".
    nearly_linear = [1.0, 0.50005, 0.2501, 0.12502]
    nodes = [8] * 4
    still = pm.recommend(
        pm.fit("amdahl", pm.from_arrays([1, 2, 4, 8], nearly_linear, gpus_per_node=nodes)),
        level=None,
    )
    assert still.still_speeding_up and still.gpus == 8 < still.searched
    assert still.sentence.startswith("Buy 8 GPUs (1 node of 8)")
    document = rec.to_dict()
    assert document["network_unmeasured"] is True and document["beyond_node"] == rec.beyond_node
    banded = pm.recommend(one_node)  # the count's interval is the model's, and says so
    capped = (
        f"the model's count, {banded.beyond_node} GPUs, before the cap at one node above: "
        "90% confidence"
    )
    assert banded.gpus == 8 and capped in " ".join(banded.summary(None).split())
    interval = banded.to_dict()["interval"]  # its "gpus" brackets the uncapped count
    assert interval["gpus_of"] == banded.beyond_node != banded.gpus
    two_nodes = pm.fit(
        "amdahl", pm.from_arrays([1, 2, 4, 8, 16], [*time, 0.08], gpus_per_node=[8] * 5)
    )
    rec = pm.recommend(two_nodes, level=None)
    assert not rec.network_unmeasured and "unmeasured" not in rec.summary(None)
    unknown_node = pm.fit("amdahl", pm.from_arrays([1, 2, 4, 8], time))
    rec = pm.recommend(unknown_node, level=None)
    assert not rec.network_unmeasured
    # No node size: the answer says that giving one would account for the network.
    assert rec.node_size_unknown and rec.to_dict()["node_size_unknown"] is True
    assert "no node size given: if the 8 GPUs measured share one node" in rec.summary(None)
    for known in (one_node, two_nodes):
        assert not pm.recommend(known, level=None).node_size_unknown


def test_an_open_ended_count_interval_names_the_end_of_the_search(amdahl):
    rec = dataclasses.replace(pm.recommend(amdahl, level=None), level=0.9, gpus_interval=(7, None))
    line = rec.lines()[1]
    assert line.endswith(f"interval 7 to more than {rec.searched} (the end of the search) GPUs")
    # Every draw still speeding up at the end: no lower end to print (not "None to ...").
    rec = dataclasses.replace(rec, gpus_interval=(None, None))
    line = rec.lines()[1]
    assert line.endswith(f"interval more than {rec.searched} (the end of the search) GPUs")
    assert "None" not in line


def test_a_count_below_the_measured_ones_says_it_is_extrapolated():
    """Measured from 16 GPUs on: the cheapest count, 1 GPU, is the model's curve only."""
    data = pm.from_arrays([16, 32, 64, 128], [1.0, 0.52, 0.28, 0.16])
    rec = pm.recommend(pm.fit("amdahl", data), level=None)
    assert rec.measured_from == 16 and rec.to_dict()["measured_from"] == 16
    cheapest = next(a for a in rec.alternatives if a.kind == "cheapest")
    assert cheapest.gpus == 1
    assert cheapest.sentence.endswith("(extrapolated: no count below 16 GPUs was measured)")
    measured = pm.recommend(
        pm.fit("amdahl", pm.from_arrays([1, 2, 4, 8], [1.0, 0.52, 0.28, 0.16])), level=None
    )
    assert not any("no count below" in a.sentence for a in measured.alternatives)


def test_superlinear_measurements_are_named_where_the_curve_carries_them_on():
    # 2.5× the per-GPU throughput of 1 GPU at 8: the curve extrapolates that (995% at
    # 4096), and the answer says the measurements themselves are superlinear.
    data = pm.from_arrays([1, 2, 4, 8], throughput=[100.0, 250.0, 700.0, 2000.0])
    rec = pm.recommend(pm.fit("amdahl", data), level=None)
    assert rec.superlinear == (8, pytest.approx(2.5))
    (line,) = [x for x in rec.lines() if x.lstrip().startswith("superlinear:")]
    assert "efficiency reaches 250% at 8 GPUs (against 1)" in line
    assert rec.to_dict()["superlinear"] == {"gpus": 8, "efficiency": pytest.approx(2.5)}
    linear = pm.from_arrays([1, 2, 4, 8], throughput=[100.0, 190.0, 370.0, 700.0])
    rec = pm.recommend(pm.fit("amdahl", linear), level=None)
    assert rec.superlinear is None and "superlinear" not in rec.summary(None)


def test_a_count_interval_of_one_count_reads_as_one(amdahl):
    rec = pm.recommend(amdahl, level=None)
    line = "\n".join(dataclasses.replace(rec, level=0.9, gpus_interval=(7, 7)).lines())
    assert "the count worth buying: 90% confidence interval 7 GPUs (one count)" in line
    line = "\n".join(dataclasses.replace(rec, level=0.9, gpus_interval=(1, 1)).lines())
    assert "confidence interval 1 GPU (one count)" in line
    line = "\n".join(dataclasses.replace(rec, level=0.9, gpus_interval=(6, 9)).lines())
    assert "confidence interval 6 to 9 GPUs" in line


@pytest.mark.slow  # fits and searches at several batches: 12 s
def test_a_fixed_global_batch_bounds_the_search(tmp_path, capsys):
    """Step times of one global batch of 256: no count past 256 gives each GPU a sample,
    so the searches stop there and say why (they went on to 4096, 1/16 sample per GPU)."""
    from perfmodel._cli.app import main

    csv = tmp_path / "step.csv"
    csv.write_text(
        "gpus,global_batch,time_s\n1,256,1.92\n2,256,0.99\n4,256,0.53\n8,256,0.30\n16,256,0.19\n"
    )
    fit = pm.fit_auto(pm.load_benchmarks(csv)).best
    answer = pm.recommend(fit)
    assert answer.searched == 256 and answer.optimum.gpus <= 256
    assert answer.assumptions["max_gpus_is_global_batch"] is True
    assert "the fixed global batch of 256" in answer.summary()
    assert pm.recommend(fit, global_batch=1024).searched == 1024  # a what-if batch
    weak = tmp_path / "weak.csv"
    weak.write_text("gpus,global_batch,time_s\n1,32,0.25\n2,64,0.262\n4,128,0.27\n8,256,0.281\n")
    assert pm.recommend(pm.fit_auto(pm.load_benchmarks(weak)).best).searched == 4096
    saved = tmp_path / "step.json"
    assert main(["fit", str(csv), "-o", str(saved)]) == 0
    capsys.readouterr()
    assert main(["optimal", str(saved), "--interval", "0.9", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["searched_up_to"] == 256 and document["gpus"] <= 256


@pytest.mark.slow  # 4–8 s: the default run stays under 4 minutes
def test_a_marginal_that_rounds_to_the_threshold_reads_just_under_it():
    """0.49989 printed as "would add 0.5× speedup per GPU (under 0.5×)"."""
    data = pm.from_arrays(
        [1, 2, 4, 8, 16, 32],
        throughput=[380.0, 740.0, 1450.0, 2800.0, 4900.0, 9400.0],
        gpus_per_node=[8] * 6,
    )
    fit = pm.fit_auto(data).best
    answer = pm.recommend(fit)
    assert answer.knee.marginal_speedup == pytest.approx(0.5, abs=5e-4)
    # The model's count lies past 4× the 32 measured, where the answer stops; its own
    # reason is the knee's.
    assert answer.beyond_checked is not None
    reason = _reason(fit, answer.beyond_checked, answer.knee, 0.5, {})[0]
    assert "would add just under 0.5× speedup per GPU," in reason


@pytest.mark.slow  # 2 s: the default run stays under 4 minutes
def test_a_barely_bounded_parameter_reads_more_than_100():
    """A one-sigma factor of 5.18e+21 (the transfer term of four near-linear counts)."""
    fit = pm.fit_auto(pm.from_arrays([1, 2, 4, 8], throughput=[410.0, 790.0, 1500.0, 2700.0])).best
    row = next(line for line in fit.summary().splitlines() if "allreduce.transfer" in line)
    assert "> 100" in row and "e+" not in row.split("s", 1)[1][:30]


def test_steps_of_a_fixed_per_gpu_batch_are_costed_per_gpu_batch(tmp_path):
    # Weak scaling: a step at N GPUs does N GPUs' batches of work, so "per step" would
    # compare unequal work; the fit's seconds are per GPU batch, and every figure says so.
    path = tmp_path / "weak.csv"
    path.write_text("gpus,time_s\n1,0.30\n2,0.31\n4,0.33\n8,0.36\n")
    fit = pm.fit_auto(pm.load_benchmarks(path, scaling="weak"), models=["amdahl"]).best
    rec = pm.recommend(fit, max_gpus=64, level=None)
    assert rec.unit == "GPU batch" and rec.to_dict()["unit"] == "GPU batch"
    step = float(fit.predict([rec.gpus])["time_s"][0])  # per step, as measured
    assert rec.time_s == pytest.approx(step / rec.gpus, rel=1e-12)
    cheapest = rec.alternatives[1]
    assert cheapest.sentence.startswith("cheapest per GPU batch: 1 GPU")
    assert cheapest.sentence.endswith("GPU-hours per GPU batch")
    assert cheapest.time_s == pytest.approx(float(fit.predict([1])["time_s"][0]), rel=1e-9)


def test_the_cost_objective_says_cheapest_once():
    """`--objective cost --deadline` printed "best by cost: 62 GPUs" above "cheapest per
    image: 1 GPU" and then the same 62 GPUs again as "cheapest within the deadline"."""
    model = pm.amdahl().with_parameters({"serial.time": 0.01, "compute.time": 1.0})
    fit = fitted(model)
    rec = pm.recommend(fit, objective="cost", deadline_s=0.1, level=None, max_gpus=256)
    sentences = [a.sentence for a in rec.alternatives]
    assert sentences[0].startswith("cheapest within the deadline of 0.1 s per step: ")
    assert sentences[1].startswith("cheapest per step: 1 GPU")
    assert len(sentences) == 2
    plain = pm.recommend(fit, objective="cost", level=None, max_gpus=256)
    assert [a.sentence.split(":")[0] for a in plain.alternatives] == ["cheapest per step"]


def test_a_step_larger_than_the_search_is_refused():
    """--multiple-of 5000 with --max-gpus 4096 was reset to 1 and answered "Buy 14 GPUs",
    a multiple of nothing asked, with JSON multiple_of 1."""
    fit = fitted(pm.amdahl().with_parameters({"serial.time": 0.01, "compute.time": 1.0}))
    with pytest.raises(pm.InputError, match="multiple_of 5000 exceeds max_gpus= 4096"):
        pm.recommend(fit, multiple_of=5000, level=None)
    assert pm.recommend(fit, multiple_of=4096, level=None).multiple_of == 4096


@pytest.mark.slow  # 4–8 s: the default run stays under 4 minutes
def test_speedup_interval_stays_within_perfect_scaling():
    """The shipped SPEC SDM91 fit answered "Buy 23 GPUs: speedup 17× (90% confidence
    interval 6.51–44.7×)": 194% efficiency for data that are not superlinear. A draw
    whose one-GPU time is slow was floored against the curve's û(N), not its own T(1)."""
    from pathlib import Path

    from perfmodel._questions.query import evaluator

    fit = pm.load_fit(Path(__file__).parent.parent / "fit" / "usl_specsdm91.json")
    rec = pm.recommend(fit)
    assert rec.speedup_interval[1] <= rec.gpus * (1.0 + 1e-9)
    counts = np.array([1.0, 2.0, 8.0, 23.0, 64.0, 512.0, 4096.0])
    _, speedups, _, _ = evaluator(fit).ensemble_curves(counts, {}, None, None)
    centre = fit.predict(counts)["speedup"]
    allowed = counts * np.maximum(1.0, np.asarray(centre) / counts)
    assert np.all(speedups <= allowed * (1.0 + 1e-9))


def test_returns_end_for_good_not_at_a_dip():
    """A curve whose marginal speedup dips under the threshold and rises above it again
    (the default blend between one and two doublings past its data) ended the returns at
    the dip: "past 14 GPUs one more adds under 0.5× speedup" while 16→32 added 0.52 per
    GPU. The end is where no larger count adds the threshold per GPU any more."""
    from perfmodel._questions.query import _first_crossing

    counts = np.arange(1.0, 41.0)
    marginal = np.where(counts < 15, 0.9, np.where(counts < 17, 0.45, 0.55))
    marginal = np.where(counts > 32, 0.3, marginal)
    speedup = np.cumsum(marginal)
    index, by_marginal = _first_crossing(counts, speedup, marginal, 0.5, None)
    assert counts[index] == 33 and by_marginal
    # Concave: the first count under the threshold, as before.
    concave = 1.0 / (0.02 + 0.98 / counts)
    slope = 0.98 / (0.02 * counts + 0.98) ** 2
    index, _ = _first_crossing(counts, concave, slope, 0.5, None)
    assert index == int(np.argmax(slope < 0.5))
    # The efficiency floor still ends them where speedup/N first falls under it.
    index, by_marginal = _first_crossing(counts, concave, slope, 0.01, 0.9)
    assert not by_marginal and counts[index] == np.flatnonzero(concave / counts < 0.9)[0] + 1


def test_a_knee_past_the_search_is_not_a_dip_inside_it():
    """Review H1: the same fit answered "Buy 31 GPUs" and, with --max-gpus 16, "Buy 14":
    the curve dips under 0.5× per GPU at 15–16 and rises again up to 32, and "for good"
    looked no further than the search. It now looks on to `LOOK_AHEAD_GPUS`; a knee it
    finds past the search is none within it."""
    from perfmodel._questions.query import crossing_within, past_search_speedups

    counts = np.arange(1.0, 41.0)
    marginal = np.where(counts < 15, 0.9, np.where(counts < 17, 0.45, 0.55))
    marginal = np.where(counts > 32, 0.3, marginal)
    speedup = np.cumsum(marginal)
    for limit, expected in ((16, -1), (32, -1), (33, 32), (40, 32)):
        index, by_marginal = crossing_within(counts, speedup, marginal, 0.5, None, limit)
        assert index == expected and by_marginal
    # A count past the search with no valid time gains nothing; searched ones are kept.
    times = np.where(counts > 16, np.nan, 1.0 / speedup)
    kept = past_search_speedups(times, speedup, 16)
    assert np.array_equal(kept[:16], speedup[:16]) and np.all(kept[16:] == -np.inf)
    index, _ = crossing_within(counts, kept, marginal, 0.5, None, 16)
    assert counts[index] == 15  # nothing valid ahead rises again: the dip is the knee


@pytest.mark.slow  # a default fit and three searches (about 10 s)
def test_the_count_to_buy_does_not_depend_on_where_the_search_stops(tmp_path):
    """Review H1 end to end, on its table: a search that stops inside the dip says that
    the returns go on past it, and where, as the full search does."""
    from helpers import run_cli

    csv, saved = tmp_path / "mine.csv", tmp_path / "mine.json"
    csv.write_text("gpus,throughput\n1,410\n2,790\n4,1480\n8,2650\n")
    assert run_cli("fit", csv, "-o", saved)[0] == 0
    fit = pm.load_fit(saved)
    full = pm.diminishing_returns(fit)
    capped = pm.diminishing_returns(fit, max_gpus=16)
    assert full.gpus is not None and full.gpus > 16
    assert capped.gpus is None and capped.past_search == full.gpus
    assert f"returns diminish for good from {full.gpus} GPUs" in capped.summary()
    rec = pm.recommend(fit, max_gpus=16)
    assert rec.gpus == 16
    assert f"returns diminish for good from {full.gpus} GPUs" in rec.reason
    assert "one more GPU adds 0.4" in rec.reason and "at 16 GPUs" in rec.reason
    stepped = pm.recommend(fit, max_gpus=16, multiple_of=2)
    assert "the last 2 GPUs add" in stepped.reason  # a step, said as one
    # Inside the search, the answer is the full search's wherever the search stops.
    assert pm.diminishing_returns(fit, max_gpus=full.gpus + 3).gpus == full.gpus
    code, out, _ = run_cli("optimal", saved, "--max-gpus", "16", "--json")
    knee = json.loads(out)["diminishing_returns"]
    assert code == 0 and knee["gpus"] is None and knee["gpus_past_search"] == full.gpus


def test_a_knee_past_a_search_under_the_node_is_counted_in_nodes():
    """Review of the look-ahead (2026-12-07): `--max-gpus 4` on a fit of whole DGX nodes
    searches single GPUs, and named the knee past it in single GPUs (11) where the full
    search, in nodes of 8, finds 16."""
    from pathlib import Path

    fit = pm.load_fit(Path(__file__).parent.parent / "fit" / "mlperf07_dgxa100_resnet.json")
    full = pm.diminishing_returns(fit)
    assert full.multiple_of == 8 and full.gpus is not None
    for limit in (4, 12):
        capped = pm.recommend(fit, max_gpus=limit).knee
        assert capped.gpus is None and capped.past_search == full.gpus
