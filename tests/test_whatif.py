import dataclasses
import json
from pathlib import Path
import re

from helpers import exact_fit as fitted
import numpy as np
import pytest

import perfmodel as pm
from perfmodel._cli import main

S, C = 0.05, 0.95
HIER = {
    "serial.time": 0.01,
    "compute.time": 1.0,
    "allreduce.latency_intra": 1e-5,
    "allreduce.bandwidth_intra": 1e11,
    "allreduce.latency_inter": 3e-5,
    "allreduce.bandwidth_inter": 1e10,
}


@pytest.fixture(scope="module")
def amdahl_fit():
    return fitted(pm.amdahl().with_parameters({"serial.time": S, "compute.time": C}))


@pytest.fixture(scope="module")
def hier_fit():
    model = pm.data_parallel(hierarchical=True).with_parameters(HIER)
    names = tuple(HIER)
    covariance = np.diag(np.arange(1.0, 7.0)) * 1e-3 + 1e-4  # distinct entries to track
    return dataclasses.replace(
        fitted(model),
        free=names,
        raw_covariance=covariance,
        config_defaults={"gpus_per_node": 8.0, "message_bytes": 1e9},
    )


def test_set_a_parameter_and_a_config_value(hier_fit):
    changed = pm.what_if(hier_fit, {"allreduce.bandwidth_inter": 5e10, "gpus_per_node": "16"})
    expected = hier_fit.model.with_parameters({"allreduce.bandwidth_inter": 5e10})
    gpus = np.array([1.0, 8, 16, 64, 512])
    predicted = changed.predict(gpus)["time_s"]
    reference = dataclasses.replace(hier_fit, model=expected).predict(gpus, gpus_per_node=16.0)
    np.testing.assert_allclose(predicted, reference["time_s"], rtol=1e-12)
    assert changed.parameters()["allreduce.bandwidth_inter"] == pytest.approx(5e10)
    assert changed.config_defaults == {"gpus_per_node": 16.0, "message_bytes": 1e9}
    assert changed.fixed["allreduce.bandwidth_inter"] == 5e10
    assert "what-if: allreduce.bandwidth_inter=5e+10, gpus_per_node=16" in changed.message
    # The original is untouched.
    assert hier_fit.parameters()["allreduce.bandwidth_inter"] == pytest.approx(1e10)


def test_a_set_parameter_leaves_the_covariance(hier_fit):
    changed = pm.what_if(hier_fit, {"serial.time": 0.02, "allreduce.latency_inter": 1e-6})
    keep = [1, 2, 3, 5]
    assert changed.free == tuple(np.array(hier_fit.free)[keep])
    np.testing.assert_array_equal(
        changed.raw_covariance, hier_fit.raw_covariance[np.ix_(keep, keep)]
    )
    assert set(changed.standard_errors()) == set(changed.free)


@pytest.mark.parametrize("text", ["x0.5", "*0.5", "×0.5", " x 0.5"])
def test_relative_changes(amdahl_fit, text):
    changed = pm.what_if(amdahl_fit, {"serial.time": text, "message_bytes": "x4"})
    assert changed.parameters()["serial.time"] == pytest.approx(S / 2)
    assert changed.config_defaults["message_bytes"] == 4.0  # Config's default is 1


def test_overlap_at_its_ends_stays_finite():
    fit = fitted(pm.data_parallel(overlap=True))
    for value in (0.0, 1.0):
        changed = pm.what_if(fit, {"overlap": value})
        assert changed.parameters()["overlap"] == pytest.approx(value, abs=1e-11)
        assert np.isfinite(changed.predict([1, 64])["time_s"]).all()


def test_compare_amdahl_halving_the_serial_time(amdahl_fit):
    after = pm.what_if(amdahl_fit, {"serial.time": "x0.5"})
    comparison = pm.compare_fits(amdahl_fit, after, max_gpus=256)
    assert comparison.gpus.tolist() == [2.0**k for k in range(9)]
    n = comparison.gpus
    np.testing.assert_allclose(comparison.time_ratio, (S / 2 + C / n) / (S + C / n), rtol=1e-12)
    assert comparison.amdahl_before == pytest.approx((S + C) / S)
    assert comparison.amdahl_after == pytest.approx((S / 2 + C) / (S / 2))
    assert comparison.optimum_before.at_limit and comparison.optimum_after.at_limit

    # Knee where dS/dN = c(s + c)/(sN + c)² falls under 0.5 moves out with s halved.
    def knee(s):
        counts = np.arange(1, 257)
        return int(counts[C * (s + C) / (s * counts + C) ** 2 < 0.5][0])

    assert comparison.knee_before.gpus == knee(S)
    assert comparison.knee_after.gpus == knee(S / 2)
    assert comparison.changes == {"serial.time": (pytest.approx(S), pytest.approx(S / 2))}


def test_compare_usl_optimum_moves_with_coherency():
    usl = fitted(
        pm.usl().with_parameters(
            {"serial.time": 0.02, "compute.time": 0.98, "coherency.time": 1e-4}
        )
    )
    after = pm.what_if(usl, {"coherency.time": "x0.25"})
    comparison = pm.compare_fits(usl, after, gpus=[1, 100], max_gpus=1000)
    # The USL peak sqrt(t_c/t_k) doubles when t_k is quartered.
    assert comparison.optimum_before.gpus in (98, 99)
    assert comparison.optimum_after.gpus in (197, 198)


@pytest.mark.parametrize(
    "changes, match",
    [
        ({"bogus": 1}, "not a parameter of model 'amdahl' \\(serial.time, compute.time\\)"),
        ({"serial.time": "abc"}, "expected a number"),
        ({"serial.time": "x"}, "expected a number"),
        ({"serial.time": "inf"}, "finite"),
        ({"serial.time": -1}, "positive"),
        ({"serial.time": "x0"}, "positive"),
        # A fit file refuses these; set, they gave NaN elasticities (explain) and an
        # Amdahl bound of inf× or a time of 1e308 s (whatif). Found by fuzzing.
        ({"serial.time": 1e-320}, "serial.time: expected a positive value between 1e-307"),
        ({"compute.time": 1e308}, "and 1e\\+307, got 1e\\+308"),
        ({"serial.time": "x1e-320"}, "serial.time: expected a positive value between"),
        ({"gpus_per_node": -2}, "gpus_per_node: expected a positive value"),
        ({"gpus_per_node": 0}, "gpus_per_node: expected a positive value"),
        ({"global_batch": 0}, "global_batch: expected a positive value"),
        ({"zero": -1}, "zero: expected a value ≥ 0"),
        ({"gpus": 8}, "gpus="),
    ],
)
def test_bad_changes(amdahl_fit, changes, match):
    with pytest.raises(pm.InputError, match=match):
        pm.what_if(amdahl_fit, changes)


@pytest.mark.slow  # 7–11 s since the ramp hold (round 13): the default run stays shorter
def test_an_unprefixed_parameter_of_a_blend_sets_every_member_that_has_it():
    # `--set serial.time=x0.5`, as `whatif --help` shows, on the default fit: every
    # member's serial time is halved from its own value, and the comparison says where
    # (two doublings past the measurements) the blend has no member that has it.
    data = pm.load_dataset("tf_dgx1_p100_vgg16_real")
    blend = pm.fit_auto(data).best
    changed = pm.what_if(blend, {"serial.time": "x0.5"})
    before, after = blend.parameters(), changed.parameters()
    assert {k for k in before if before[k] != after[k]} == {
        "amdahl.serial.time",
        "usl.serial.time",
    }
    for name in ("amdahl.serial.time", "usl.serial.time"):
        assert after[name] == pytest.approx(0.5 * before[name], rel=1e-12)
    comparison = pm.compare_fits(blend, changed, gpus=[8, 16, 32, 64])
    # Past two doublings the blend weighs neither member: the change is carried on there
    # with their weight at the largest measured count (review H2), not dropped.
    assert np.all(comparison.time_ratio < 1.0)
    assert comparison.time_ratio[-1] <= comparison.time_ratio[0]
    assert comparison.note.startswith("at 32–64 GPUs the blend's weights move on to members")
    assert "note: at 32–64 GPUs" in comparison.summary() and not comparison.partial
    one = pm.fit_auto(data, models=["amdahl"]).best
    single = pm.compare_fits(one, pm.what_if(one, {"serial.time": "x0.5"}), gpus=[8, 64])
    assert single.note == ""
    # compute.time reaches every count, but past the data the power laws, which do not
    # have it, carry half the weight: the change moves only the rest, and it says so.
    halved = pm.compare_fits(blend, pm.what_if(blend, {"compute.time": "x0.5"}), gpus=[8, 64])
    assert halved.note.startswith("at 64 GPUs ") and "carried on there" in halved.note
    # The member's name is matched whole: "time" is no parameter of any member.
    with pytest.raises(pm.InputError, match="cannot set 'time'"):
        pm.what_if(blend, {"time": "x0.5"})
    # A next on the changed blend would refit its measurements and drop the change.
    with pytest.raises(pm.InputError, match=r"would drop what this fit fixed or changed \(amd"):
        pm.next_measurements(changed, [32, 64])


@pytest.mark.slow  # 7–11 s since the ramp hold (round 13): the default run stays shorter
def test_a_note_names_every_range_of_counts_the_change_cannot_reach():
    from perfmodel._questions.whatif import _ranges

    counts = np.array([1.0, 2, 4, 8, 16, 256, 512])
    mask = np.array([True, True, False, False, True, True, True])
    assert _ranges(counts, mask) == "1–2 and 16–512"
    assert _ranges(counts[:1], mask[:1]) == "1"
    # An anchored blend: the anchor alone answers inside the measured range, the far
    # weights past it; a change of Amdahl's serial part reaches only between.
    blend = pm.fit_auto(pm.load_dataset("usl_raytracer")).best
    assert blend.model.anchor
    changed = pm.what_if(blend, {"amdahl.serial.time": "x0.5"})
    comparison = pm.compare_fits(blend, changed, gpus=[2.0**k for k in range(13)])
    moved = comparison.time_ratio < 1.0
    expected = _ranges(comparison.gpus, ~moved)
    assert comparison.note.startswith(f"at {expected} GPUs the blend is ")
    assert "(amdahl has them)" in comparison.note
    # Past the measurements the change is carried, and the note says that too.
    past = comparison.gpus > float(blend.model.largest)
    assert np.all(comparison.time_ratio[past] < 1.0)
    carried = comparison.note.split("; at ")[1]
    assert "GPUs the blend's weights move on to members without" in carried
    assert "carried on there with the weight its members have at 64 GPUs" in carried
    # The blend reads its node size when fitted: a what-if of it changed nothing.
    with pytest.raises(pm.InputError, match="cannot set gpus_per_node: the default blend"):
        pm.what_if(blend, {"gpus_per_node": 8})


def test_an_unprefixed_name_of_one_family_is_not_a_suffix_match(amdahl_fit):
    with pytest.raises(pm.InputError, match="cannot set 'time'"):
        pm.what_if(amdahl_fit, {"time": "x0.5"})


def test_a_layout_count_set_must_be_whole(hier_fit):
    with pytest.raises(pm.InputError, match="set gpus_per_node: expected a whole number"):
        pm.what_if(hier_fit, {"gpus_per_node": 2.5})


def test_overlap_out_of_range():
    with pytest.raises(pm.InputError, match=r"fraction in \[0, 1\]"):
        pm.what_if(fitted(pm.data_parallel(overlap=True)), {"overlap": 1.5})


def test_compare_bad_gpus(amdahl_fit):
    with pytest.raises(pm.InputError, match="GPU counts"):
        pm.compare_fits(amdahl_fit, amdahl_fit, gpus=[0, 4])


@pytest.fixture(scope="module")
def hier_file(hier_fit, tmp_path_factory):
    path = tmp_path_factory.mktemp("whatif") / "fit.json"
    pm.save_fit(hier_fit, path)
    return str(path)


def test_cli_whatif_text_json_and_output(capsys, hier_file, tmp_path):
    out = tmp_path / "faster.json"
    argv = ["whatif", hier_file, "--set", "allreduce.bandwidth_inter=x5", "--gpus", "8,64"]
    assert main([*argv, "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "what-if: allreduce.bandwidth_inter 1e+10 → 5e+10" in text
    assert "optimal GPU count:" in text
    assert re.search(r"diminishing returns from \d+ → \d+ GPUs \(marginal", text)
    saved = pm.load_fit(out)
    assert saved.parameters()["allreduce.bandwidth_inter"] == pytest.approx(5e10)
    assert "allreduce.bandwidth_inter" not in saved.free
    assert main([*argv, "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["gpus"] == [8.0, 64.0]
    assert document["time_ratio"][0] == pytest.approx(1.0)  # one node: no inter-node traffic
    assert document["time_ratio"][1] < 1.0


@pytest.mark.slow  # 15 s: a default fit, whatif and optimal through the command line
def test_cli_whatif_json_names_the_optimum_as_optimal_does(capsys, hier_file, tmp_path):
    # It read searched, at_limit, gpu_seconds: one answer, two spellings; and per GPU
    # batch where optimal's is per step.
    per_gpu = tmp_path / "steps.json"
    data = pm.from_arrays([1, 2, 4, 8, 16, 32], time_s=[1.0, 1.05, 1.1, 1.2, 1.3, 1.45])
    fit = pm.fit_auto(data).best
    assert fit.data.per_gpu
    pm.save_fit(fit, per_gpu)
    for path, change in ((hier_file, "allreduce.bandwidth_inter=x5"), (per_gpu, "x=1")):
        change = change if path == hier_file else "amdahl.serial.time=x1"
        assert main(["whatif", str(path), "--set", change, "--gpus", "8,16", "--json"]) == 0
        document = json.loads(capsys.readouterr().out)
        assert document["gpus"] == [8, 16] and type(document["gpus"][0]) is int
        before = document["optimum_before"]
        assert main(["optimal", str(path), "--json"]) == 0
        optimal = json.loads(capsys.readouterr().out)
        names = ("gpus", "time_s", "speedup", "efficiency", "gpu_seconds_per_step")
        names += ("objective", "searched_up_to", "at_search_limit", "cost_per_step")
        names += ("step_time_s",) if "step_time_s" in optimal else ()
        assert {k: before[k] for k in names} == {k: optimal[k] for k in names}
        assert document["knee_before"] == {
            **optimal["diminishing_returns"],
            "searched_up_to": optimal["searched_up_to"],
            "multiple_of": document["knee_before"]["multiple_of"],
        }
    assert "step_time_s" in optimal  # the per-GPU-batch fit's


@pytest.mark.slow  # 5 s: the default run stays under 4 minutes
def test_cli_predict_and_optimal_accept_set(capsys, hier_file, hier_fit):
    argv = ["predict", hier_file, "--gpus", "64", "--json"]
    assert main([*argv, "--set", "gpus_per_node=16", "--set", "serial.time=x2"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    model = hier_fit.model.with_parameters({"serial.time": 0.02})
    expected = dataclasses.replace(hier_fit, model=model).predict([64], gpus_per_node=16.0)
    assert row["time_s"] == pytest.approx(expected["time_s"][0], rel=1e-12)
    assert main(["optimal", hier_file, "--json", "--set", "serial.time=x2"]) == 0
    document = json.loads(capsys.readouterr().out)
    changed = pm.what_if(hier_fit, {"serial.time": 0.02})
    assert document["gpus"] == pm.optimal_gpus(changed).gpus


@pytest.mark.parametrize(
    "argv, match",
    [
        (["whatif", "--set", "serial.time"], "expected name=value"),
        (["whatif", "--set", "nope=1"], "cannot set 'nope'"),
        (["whatif", "--set", "serial.time=fast"], "expected a number"),
        (["predict", "--gpus", "8", "--set", "overlap=0.5"], "(serial.time, compute.time,"),
        (["optimal", "--set", "serial.time=-1"], "positive"),
    ],
)
def test_cli_bad_set(capsys, hier_file, argv, match):
    command, *rest = argv
    assert main([command, hier_file, *rest]) == 2
    err = capsys.readouterr().err
    assert match in err and len(err.strip().splitlines()) == 1


def test_cli_whatif_refuses_an_older_schema(capsys, hier_file, tmp_path):
    document = json.loads(Path(hier_file).read_text())
    document["schema_version"] = 0
    old = tmp_path / "old.json"
    old.write_text(json.dumps(document))
    assert main(["whatif", str(old), "--set", "serial.time=x2"]) == 2
    assert "schema version 0" in capsys.readouterr().err
