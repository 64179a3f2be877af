import dataclasses
import json

from helpers import exact_fit as fitted
import jax
import numpy as np
import pytest
from test_whatif import HIER

import perfmodel as pm
from perfmodel._cli import main
from perfmodel._questions.elasticity import _times
from perfmodel._text import refit_command

S, C = 0.05, 2.0  # Amdahl: serial and one-GPU compute seconds


@pytest.fixture(scope="module")
def amdahl_fit():
    return fitted(pm.amdahl().with_parameters({"serial.time": S, "compute.time": C}))


@pytest.fixture(scope="module")
def dp_fit():
    """Hierarchical all-reduce with overlap: every kind of parameter (time, bandwidth, fraction)."""
    model = pm.data_parallel(hierarchical=True, overlap=True).with_parameters(
        {**HIER, "overlap": 0.4}
    )
    return dataclasses.replace(
        fitted(model), config_defaults={"gpus_per_node": 8.0, "message_bytes": 1e9}
    )


@pytest.mark.parametrize("n", [1, 16, 1000])
def test_amdahl_elasticities_are_shares_of_the_step(amdahl_fit, n):
    report = pm.sensitivity(amdahl_fit, n)
    t = S + C / n
    by_name = {p.name: p for p in report.parameters}
    # d log T / d log t_s = t_s / T; d log T / d log t_c = (t_c/N) / T.
    assert by_name["serial.time"].elasticity == pytest.approx(S / t, rel=1e-10)
    assert by_name["compute.time"].elasticity == pytest.approx(C / n / t, rel=1e-10)
    # d log S / d log t_s = t_s/T(1) − t_s/T(N).
    assert by_name["serial.time"].speedup_elasticity == pytest.approx(S / (S + C) - S / t)
    assert report.time_s == pytest.approx(t)
    assert report.speedup == pytest.approx((S + C) / t)
    assert sum(report.breakdown.values()) == pytest.approx(t)
    assert report.limiting == "serial"
    elasticities = [abs(p.elasticity) for p in report.parameters]
    assert elasticities == sorted(elasticities, reverse=True)


def test_halving_the_serial_time_is_evaluated_exactly(amdahl_fit):
    n = 64
    change = {p.name: p.change for p in pm.sensitivity(amdahl_fit, n).parameters}["serial.time"]
    t, t_new = S + C / n, S / 2 + C / n
    assert change.label == "½"
    assert change.value == pytest.approx(S / 2)
    assert change.time_s == pytest.approx(t_new)
    assert change.time_change == pytest.approx(t_new / t - 1.0)
    assert change.speedup == pytest.approx((S / 2 + C) / t_new)
    assert change.efficiency == pytest.approx((S / 2 + C) / t_new / n)


def test_autodiff_elasticities_match_finite_differences(dp_fit):
    n, h = 64, 1e-6
    report = pm.sensitivity(dp_fit, n)
    values = dp_fit.parameters()

    config = dp_fit.config(float(n))

    def log_time(name, factor):
        model = dp_fit.model.with_parameters({name: values[name] * factor})
        return np.log(float(_times(model, config)[0]))  # jitted once, plain evaluation

    assert {p.name for p in report.parameters} == set(values)
    for p in report.parameters:
        numeric = (log_time(p.name, np.exp(h)) - log_time(p.name, np.exp(-h))) / (2 * h)
        assert p.elasticity == pytest.approx(numeric, rel=1e-5, abs=1e-9), p.name


def test_bandwidths_double_times_halve_and_overlap_hides_half_the_rest(dp_fit):
    report = pm.sensitivity(dp_fit, 64)
    values, config = dp_fit.parameters(), dp_fit.config(64.0)
    for p in report.parameters:
        if p.kind == "bandwidth":
            assert p.change.value == pytest.approx(2 * values[p.name])
            assert p.elasticity < 0 and p.change.time_change < 0
        elif p.kind == "time":
            assert p.change.value == pytest.approx(values[p.name] / 2)
        else:
            assert p.change.value == pytest.approx(1 - (1 - 0.4) / 2)
        exact = float(_times(dp_fit.model.with_parameters({p.name: p.change.value}), config)[0])
        assert p.change.time_s == pytest.approx(exact, rel=1e-10)
    assert "overlap" in report.breakdown and report.breakdown["overlap"] <= 0
    assert sum(report.breakdown.values()) == pytest.approx(report.time_s)
    assert report.limiting == "allreduce"
    sentences = report.sentences()
    assert (
        sentences[0].startswith("2× allreduce.bandwidth_inter")
        and "cuts the step by" in sentences[0]
    )


def test_a_small_change_does_not_read_one_times_faster():
    # Halving a 0.25% serial part: "1× faster" beside "cuts the step by 0.1%" read as
    # no change at all; the ratio now shows the digits that differ from 1.
    small = fitted(pm.amdahl().with_parameters({"serial.time": 0.005, "compute.time": C}))
    serial = next(s for s in pm.sensitivity(small, 1).sentences() if "serial.time" in s)
    assert "cuts the step by 0.1%" in serial and "1.0012× faster" in serial


def test_a_gpu_count_of_the_wrong_type_is_rejected(amdahl_fit):
    # An InputError at run time; the annotations' type check (on in the tests) is first.
    with pytest.raises((pm.InputError, TypeError)):
        pm.sensitivity(amdahl_fit, "x")


@pytest.mark.parametrize(
    "gpus, factor, match",
    [
        (0, 2.0, "GPU count"),
        (8, 1.0, "factor"),
        (8, float("nan"), "factor"),
    ],
)
def test_bad_arguments(amdahl_fit, gpus, factor, match):
    with pytest.raises(pm.InputError, match=match):
        pm.sensitivity(amdahl_fit, gpus, factor=factor)


@pytest.fixture(scope="module")
def dp_file(dp_fit, tmp_path_factory):
    path = tmp_path_factory.mktemp("sensitivity") / "fit.json"
    pm.save_fit(dp_fit, path)
    return path


def test_cli_explain_prints_breakdown_and_sentences(capsys, dp_file):
    assert main(["explain", str(dp_file), "--gpus", "8,512"]) == 0
    out = capsys.readouterr().out
    assert out.count("largest term besides parallel compute") == 2
    assert "overlap" in out and "total" in out
    assert "2× allreduce.bandwidth_inter (1e+10 → 2e+10 B/s) cuts the step by" in out


def test_cli_explain_json(capsys, dp_file, dp_fit):
    assert main(["explain", str(dp_file), "--gpus", "512", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    (result,) = document["results"]
    assert type(result["gpus"]) is int and result["gpus"] == 512  # it read 512.0
    expected = pm.sensitivity(dp_fit, 512)
    assert result["time_s"] == pytest.approx(expected.time_s)
    assert [p["name"] for p in result["parameters"]] == [p.name for p in expected.parameters]
    assert len(result["sentences"]) == len(expected.parameters)


def _status(argv) -> int:
    """`main`'s exit status, also for the options argparse refuses (SystemExit)."""
    try:
        return main(argv)
    except SystemExit as exit_:
        return exit_.code


@pytest.mark.parametrize(
    "argv, match",
    [
        (["--gpus", "0"], "--gpus"),
        (["--gpus", "8", "--set", "bogus=1"], "cannot set 'bogus'"),
        (["--gpus", "8", "--factor", "0.5"], "factor"),
    ],
)
def test_cli_explain_bad_input(capsys, dp_file, argv, match):
    assert _status(["explain", str(dp_file), *argv]) == 2
    err = capsys.readouterr().err
    assert match in err and "Traceback" not in err


def test_cli_explain_refuses_an_older_schema(capsys, dp_file, tmp_path):
    document = json.loads(dp_file.read_text())
    document["schema_version"] = 0
    old = tmp_path / "old.json"
    old.write_text(json.dumps(document))
    assert main(["explain", str(old), "--gpus", "8"]) == 2
    assert "schema version 0" in capsys.readouterr().err


@pytest.fixture(scope="module")
def blend_fit():
    # Four counts of a data-parallel table whose all-reduce transfer term the exact fit
    # sets to 0: one undetermined parameter, and members without weight at 64 GPUs.
    return pm.fit_auto(pm.load_dataset("tf_dgx1_p100_vgg16_real")).best


@pytest.mark.slow  # 1 s: the default run stays under 4 minutes
def test_a_factor_that_takes_the_time_to_zero_is_refused(blend_fit):
    # ÷1e308 leaves a blend's one-GPU time 0: a ZeroDivisionError traceback before.
    with pytest.raises(pm.InputError, match=r"^factor: 1e\+308 takes \S+ to "):
        pm.sensitivity(blend_fit, 8, factor=1e308)


def test_a_blend_says_what_its_scaling_loss_is_and_which_parameters_it_cannot_tell(blend_fit):
    report = pm.sensitivity(blend_fit, 64)
    (transfer,) = [p for p in report.parameters if p.undetermined]
    assert transfer.name == "weak_data_parallel.allreduce.transfer"
    assert report.parameters[-1] is transfer  # ranked last, whatever its elasticity
    weights, *carried, note = report.notes
    # The parts are the members' terms by their weights at N, the idle members named.
    shares = {k: float(v) for k, v in blend_fit.model.weights(blend_fit.config(64.0)).items()}
    # Members that weigh less at 64 GPUs than at the largest measured count: a change to
    # them is carried on with their weight there, and the note says so (review H2).
    there = blend_fit.model.weights(blend_fit.config(float(blend_fit.model.largest)))
    more = [n for n, w in there.items() if float(w) > shares[n]]
    assert len(carried) == bool(more) and all(f" {n} " in carried[0] for n in more[:1])
    assert weights.startswith("the parts are its members' terms, weighted as the blend")
    for name, share in shares.items():
        assert (f"{name} {share:.0%}" in weights) == (share > 0)
    if min(shares.values()) == 0:
        assert "weigh 0: their terms read 0 here, though fitted)" in weights
    exponent = dict(blend_fit.model.options)["power_exponent"]
    assert note.startswith("scaling_loss: what the blend's power laws c·N^e") and (
        f"{exponent:.3g}" in note
    )
    # The power laws' time is perfect scaling (compute) plus their loss to it.
    assert "power" not in report.breakdown and report.breakdown["scaling_loss"] > 0
    sentences = report.sentences()
    # A parameter several members have is one line, changed in all of them (a faster GPU
    # halves every member's compute time): the sentences read the groups, not the members.
    grouped = {m for g in report.groups for m in g.members}
    assert {g.name for g in report.groups} >= {"compute.time", "serial.time"}
    shown = [p for p in report.parameters if p.name not in grouped] + list(report.groups)
    idle = [p for p in shown if not p.undetermined and abs(p.change.time_change) < 5e-4]
    # Those of members that weigh 0 here and at the largest measured count share a line
    # that says so (review round 10); those that weigh there are carried on (review H2):
    # halving the serial time of Amdahl's law and the USL shortens the step at 64 GPUs.
    unreached = [p for p in idle if report._unreached(p)]
    reached = [p for p in idle if p not in unreached]
    (serial,) = [g for g in report.groups if g.name == "serial.time"]
    assert serial.change.time_change < -0.01 and serial not in idle
    said = [s for s in sentences if "cannot move it at 64 GPUs" in s]
    assert len(said) == bool(unreached) and all(p.name in said[0] for p in unreached)
    if len(reached) > 1:
        (line,) = [s for s in sentences if "change nothing measurable at" in s]
        assert all(p.name in line for p in reached)
    assert sentences[-1].startswith(f"{transfer.name} is undetermined")
    lines_for_idle = (1 if len(reached) > 1 else len(reached)) + 1
    assert len(sentences) == len(shown) - len(idle) - 1 + lines_for_idle + 1
    (compute,) = [g for g in report.groups if g.name == "compute.time"]
    members = [p for p in report.parameters if p.name in compute.members]
    assert compute.elasticity == pytest.approx(sum(p.elasticity for p in members), rel=1e-12)
    values = {p.name: p.change.value for p in members}
    changed = blend_fit.model.carrying(values).with_parameters(values)
    with jax.enable_x64(True):
        seconds = float(changed(blend_fit.config(64.0)))
    assert compute.change.time_s == pytest.approx(seconds, rel=1e-9)
    assert any(s.startswith("½ compute.time (every member's: ") for s in sentences)
    assert (
        "c of the power law"
        in blend_fit.model.parameter_specs()["power_law.power.time"].description
    )


@pytest.mark.slow  # 12 s: two CLI fits of a shipped table
def test_cli_explain_and_report_show_no_value_for_an_undetermined_parameter(
    blend_fit, tmp_path, capsys
):
    path = tmp_path / "blend.json"
    pm.save_fit(blend_fit, path)
    assert main(["explain", str(path), "--gpus", "64"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if "allreduce.transfer " in line)
    assert row.split()[1:] == ["—", "s", "undetermined"]
    assert "scaling_loss: what the blend's power laws c·N^e" in out
    assert main(["report", str(path), "-o", str(tmp_path / "r.md")]) == 0
    text = (tmp_path / "r.md").read_text()
    assert "| weak_data_parallel.allreduce.transfer | — | undetermined: the data show" in text
    assert "e-1" not in text.split("## What would move it")[1].split("##")[0]


def test_past_an_unmeasured_node_the_parts_say_no_network_was_measured(tmp_path):
    # Review of 2026-12-06: `explain` at 64 GPUs of a table measured within one node of
    # 8 showed "allreduce 0 0.0%" with nothing saying the network was never measured.
    csv = tmp_path / "one node.csv"
    csv.write_text("gpus,gpus_per_node,time_s\n1,8,1.0\n2,8,0.52\n4,8,0.28\n8,8,0.16\n")
    model = pm.amdahl().with_parameters({"serial.time": 0.02, "compute.time": 0.98})
    fit = fitted(model, pm.load_benchmarks(str(csv)))  # no fit to compile
    (note,) = pm.sensitivity(fit, 64).notes
    assert note.startswith("past one node, unmeasured: every measurement fits in one node of 8")
    assert "at 64 GPUs these parts extrapolate" in note and "measure 2 nodes (16 GPUs)" in note
    assert pm.sensitivity(fit, 8).notes == ()  # within the node the data decide
    # The refit it suggests names this CSV, quoted for a shell.
    assert pm.sensitivity(fit, 64).refit == f"perfmodel fit '{csv}' --model NAME"
    assert refit_command("<arrays>", "usl") == "perfmodel fit CSV --model usl"


def test_a_speedup_elasticity_that_is_rounding_reads_0():
    from perfmodel._questions.elasticity import _difference

    # d log T(1) − d log T(N) of a parameter moving both alike printed "-2.776e-17".
    assert _difference(0.3922, 0.3922 + 2.776e-17) == 0.0
    assert _difference(0.5, 0.25) == 0.25 and _difference(1e-20, 0.0) == 1e-20


def test_a_tried_change_far_from_its_elasticity_is_marked():
    # Elasticity 1 beside "½ → −5.0%" read as a contradiction (review of 2026-12-07): the
    # blend's held efficiency takes over between the two values.
    from types import SimpleNamespace

    from perfmodel._cli.analysis import off_the_slope

    def parameter(elasticity, time_change, undetermined=False):
        change = SimpleNamespace(value=0.5, time_change=time_change)
        return SimpleNamespace(
            value=1.0, elasticity=elasticity, change=change, undetermined=undetermined
        )

    assert off_the_slope(parameter(1.0, -0.05))
    assert not off_the_slope(parameter(1.0, -0.5))  # as the slope says
    assert not off_the_slope(parameter(0.77, -0.385))  # Amdahl's serial part, ½
    assert not off_the_slope(parameter(0.01, 0.0))  # too small a move to compare
    assert not off_the_slope(parameter(1.0, -0.05, undetermined=True))


def test_the_mark_is_on_the_parameter_at_the_default_width(capsys, dp_file, monkeypatch):
    # The mark was in the change column, which the default width of 100 leaves out:
    # the footnote explained a mark no row showed.
    from perfmodel._cli import analysis

    monkeypatch.setattr(analysis, "off_the_slope", lambda p: p.name == "serial.time")
    assert main(["explain", str(dp_file), "--gpus", "512"]) == 0
    out = capsys.readouterr().out
    rows = [line.split() for line in out.split("sensitivity:")[1].splitlines()]
    assert ["serial.time", "*"] in [row[:2] for row in rows]
    assert "\n* far from what the elasticity says" in out
