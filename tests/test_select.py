import dataclasses
import math

import jax
import numpy as np
import pytest
from scipy.optimize import least_squares

import perfmodel as pm
from perfmodel._cli import main
from perfmodel._fitting.select import candidate_models, information_criterion, leave_one_out

# The same shape as tests/test_fit.py (8 counts × 3 repeats), so compiled fits are shared.
COUNTS = np.array([1, 2, 4, 8, 16, 32, 64, 128], dtype=float)
GPUS = np.repeat(COUNTS, 3)


def synthetic(model, seed=0, noise=0.01, throughput=False):
    with jax.enable_x64(True):
        clean = np.asarray(model(pm.Config(gpus=GPUS)))
    noisy = clean * np.exp(np.random.default_rng(seed).normal(0.0, noise, GPUS.shape))
    if throughput:
        return pm.from_arrays(GPUS, throughput=1.0 / noisy)
    return pm.from_arrays(GPUS, noisy)


AMDAHL = pm.amdahl().with_parameters({"serial.time": 0.02, "compute.time": 1.0})
USL = pm.usl().with_parameters({"serial.time": 0.05, "compute.time": 2.0, "coherency.time": 2e-4})
WEAK = pm.weak_data_parallel().with_parameters(
    {"compute.time": 1e-3, "allreduce.latency": 2e-6, "allreduce.transfer": 1e-4}
)
LOG_SQUARED = pm.pmnf(0, 2).with_parameters({"constant.time": 0.5, "scaling.time": 0.01})


def test_information_criteria_match_hand_computation():
    r = np.array([0.01, -0.02, 0.015, 0.0, -0.01, 0.005])
    n, rss = 6, float(np.sum(r**2))
    aicc = n * math.log(rss / n) + 2 * 2 + 2 * 2 * 3 / (n - 2 - 1)
    bic = n * math.log(rss / n) + 2 * math.log(n)
    assert information_criterion(r, 2, "aicc") == pytest.approx(aicc, rel=1e-12)
    assert information_criterion(r, 2, "bic") == pytest.approx(bic, rel=1e-12)
    # Undefined where the fit interpolates (BIC) or the small-sample term blows up (AICc).
    assert information_criterion(r[:4], 3, "aicc") == math.inf
    assert information_criterion(r[:3], 3, "bic") == math.inf
    assert math.isfinite(information_criterion(r[:4], 3, "bic"))


def test_leave_one_out_matches_refits_by_hand():
    data = synthetic(AMDAHL, seed=3, noise=0.02)

    def fit_log(n, t):
        def residuals(p):
            return np.log(np.exp(p[0]) + np.exp(p[1]) / n) - np.log(t)

        return least_squares(residuals, np.log([0.02, 1.0]), xtol=1e-14, ftol=1e-14).x

    errors = []
    for count in COUNTS:
        held = data.gpus == count
        p = fit_log(data.gpus[~held], data.time_s[~held])
        predicted = np.exp(p[0]) + np.exp(p[1]) / count
        errors.append(np.log(predicted / data.time_s[held]) ** 2)
    by_hand = float(np.mean(np.concatenate(errors)))
    # Fold fits are Adam only (no L-BFGS polish): agreement to a fraction of a percent.
    assert leave_one_out(pm.amdahl(), data) == pytest.approx(by_hand, rel=5e-3)


@pytest.mark.parametrize(
    "truth,family",
    [(AMDAHL, "amdahl"), (USL, "usl"), (LOG_SQUARED, "pmnf")],
    ids=["amdahl", "usl", "pmnf"],
)
def test_auto_picks_the_family_the_data_came_from(truth, family):
    # Times of a fixed amount of work, stated: a time that grows with N (the log² case)
    # would otherwise be read as the step time of a fixed per-GPU batch.
    data = dataclasses.replace(synthetic(truth, seed=1, noise=0.01), scaling="strong")
    selection = pm.fit_auto(data, average=False)
    assert selection.criterion == "bic"
    assert selection.best.family == family
    assert [c.family for c in selection.candidates if c.fit is None] == []
    assert {c.family for c in selection.candidates} == {"amdahl", "usl", "pmnf"}
    assert selection.candidates[0].fit is selection.best
    if family == "pmnf":
        assert dict(selection.best.model.options) == {"exponent": 0, "log_exponent": 2}


def test_throughput_prefers_weak_data_parallel_and_evidence_finds_it():
    data = synthetic(WEAK, seed=1, noise=0.01, throughput=True)
    families = [m.family for m in candidate_models(data)]
    assert families == ["weak_data_parallel", "amdahl", "usl", "pmnf"]
    assert [m.family for m in candidate_models(synthetic(AMDAHL))] == ["amdahl", "usl", "pmnf"]
    # Even listed second, behind Amdahl's law, the family the data came from wins.
    models = [pm.amdahl(), pm.weak_data_parallel()]
    selection = pm.fit_auto(data, models=models, average=False)
    assert selection.best.family == "weak_data_parallel"


def test_weak_hierarchical_is_chosen_on_request_only():
    truth = pm.weak_hierarchical().with_parameters(
        {
            "compute.time": 2.5e-3,
            "allreduce.transfer_intra": 1.6e-4,
            "allreduce.transfer_inter": 2.4e-3,
        }
    )
    with jax.enable_x64(True):
        clean = np.asarray(truth(pm.Config(gpus=GPUS, gpus_per_node=8.0)))
    noisy = clean * np.exp(np.random.default_rng(5).normal(0.0, 0.01, GPUS.shape))
    data = pm.from_arrays(GPUS, throughput=1.0 / noisy, gpus_per_node=8)
    assert pm.straddles_nodes(data)
    # It never saturates, so auto does not offer it on throughput across nodes ...
    families = [m.family for m in candidate_models(data)]
    assert families == ["weak_data_parallel", "amdahl", "usl", "pmnf", "data_parallel"]
    # ... but listed, the evidence finds it where the data came from it.
    models = [pm.weak_data_parallel(), pm.weak_hierarchical()]
    selection = pm.fit_auto(data, models=models, average=False)
    assert selection.best.family == "weak_hierarchical"
    # The default leans on it where the counts straddle the node (0.9 up to a doubling).
    near = {c.family: c.weight for c in pm.fit_auto(data).best.components}
    assert near["weak_hierarchical"] == 0.9
    for keep in (GPUS <= 8, GPUS >= 8):  # inside one node, or whole nodes only
        part = pm.from_arrays(GPUS[keep], throughput=1.0 / noisy[keep], gpus_per_node=8)
        assert not pm.straddles_nodes(part)


def test_leave_one_out_criterion_picks_the_true_family():
    models = [pm.amdahl(), pm.usl()]
    selection = pm.fit_auto(synthetic(USL, seed=4), criterion="loo", models=models, average=False)
    assert selection.best.family == "usl"
    assert all(c.score > 0 for c in selection.candidates)


def test_the_preferred_family_stays_unless_another_is_clearly_better():
    data = synthetic(AMDAHL, seed=2)
    # pmnf(−1, 0) is Amdahl's law: equal scores keep whichever comes first.
    for first, second in [(pm.pmnf(-1, 0), pm.amdahl()), (pm.amdahl(), pm.pmnf(-1, 0))]:
        selection = pm.fit_auto(data, models=[first, second], average=False)
        assert selection.best.family == first.family
    # With a real coherency term the USL wins although Amdahl is preferred.
    usl_data = synthetic(USL, seed=2)
    chosen = pm.fit_auto(usl_data, models=[pm.amdahl(), pm.usl()], average=False).best
    assert chosen.family == "usl"


def test_auto_skips_families_with_too_few_counts_and_says_why():
    gpus = np.repeat([1.0, 8.0], 12)
    data = pm.from_arrays(gpus, np.linspace(0.95, 1.0, 24) / gpus)
    selection = pm.fit_auto(data, average=False)
    skipped = {c.family: c.reason for c in selection.candidates if c.fit is None}
    assert set(skipped) == {"usl"}
    assert all("needs 3 distinct configurations, data have 2" in r for r in skipped.values())
    assert selection.best.family in {"amdahl", "pmnf"}
    # The default blend still answers from two counts (the ridge picks the smallest
    # coefficients of the family that has more than the data determine).
    assert pm.fit_auto(data).best.components


def test_explicit_family_with_too_few_counts_is_an_error(tmp_path, capsys):
    data = pm.from_arrays([1, 1, 8, 8], [1.0, 1.01, 0.2, 0.21])
    with pytest.raises(pm.InputError, match="3 free parameters.*only 2 distinct"):
        pm.fit("usl", data)
    csv = tmp_path / "two.csv"
    csv.write_text("gpus,time_s\n1,1.0\n1,1.01\n8,0.2\n8,0.21\n")
    assert main(["fit", str(csv), "--model", "usl"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "only 2 distinct configurations" in err[0]


def test_candidates_may_be_named_as_fit_takes_them():
    """``models=["usl", "amdahl"]`` as `fit` takes a family (it was an AttributeError on
    str); anything else that is not one family is one line."""
    data = pm.from_arrays([1, 2, 4, 8], [1.0, 0.55, 0.32, 0.21])
    selection = pm.fit_auto(data, models=["amdahl", "pmnf"], average=False)
    assert [c.family for c in selection.candidates] == ["amdahl", "pmnf"]
    with pytest.raises(pm.InputError, match=r"models: expected single families .*got Blend"):
        pm.fit_auto(data, models=["blend"], average=False)
    with pytest.raises(pm.InputError, match="unknown model 'uslx'"):
        pm.fit_auto(data, models=["uslx"])


def test_unknown_criterion():
    with pytest.raises(pm.InputError, match="unknown criterion 'aic'"):
        pm.fit_auto(synthetic(AMDAHL), criterion="aic")


@pytest.mark.slow  # 2 s: the default run stays under 4 minutes
def test_cli_fit_reports_every_candidate(tmp_path, capsys):
    data = synthetic(USL, seed=5)
    csv = tmp_path / "bench.csv"
    csv.write_text(
        "gpus,time_s\n" + "".join(f"{g:g},{float(t)!r}\n" for g, t in zip(GPUS, data.time_s))
    )
    assert main(["fit", str(csv)]) == 0
    out = capsys.readouterr().out
    assert "candidates (by bic, lower is better;" in out
    for family in ("usl", "amdahl", "pmnf"):
        assert family in out
    assert "hypotheses" in out  # the chosen PMNF exponents are shown with the candidate


def test_candidates_asked_for_answer_without_the_blend():
    """`models=` names the candidates: the answer is one of them unless average=True
    asks for the blend too (it had been the blend, silently)."""
    usl_data = synthetic(USL, seed=2)
    asked = pm.fit_auto(usl_data, models=["amdahl", "usl"])
    assert asked.best.model.family in ("amdahl", "usl")
    assert pm.fit_auto(usl_data, models=["amdahl", "usl"], average=True).best.model.family == (
        "blend"
    )
