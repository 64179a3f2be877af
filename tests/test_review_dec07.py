"""Findings of the newcomer review of 2026-12-07 (the commands users try after the
quick start), each against the smallest input that showed it."""

from helpers import exact_fit as fitted
import pytest

import perfmodel as pm
from perfmodel._cli.analysis import _header


def _result(source):
    return fitted(pm.amdahl(), pm.from_arrays([1, 2, 4], [1.0, 0.6, 0.4], source=source))


def test_a_step_series_that_names_its_unit_is_not_named_twice():
    # "… ssd.csv (seconds per step) (times in seconds per step)".
    assert _header(_result("runs.csv (seconds per step)")) == (
        "amdahl fit of runs.csv (seconds per step)"
    )
    assert _header(_result("runs.csv")) == "amdahl fit of runs.csv (times in seconds per step)"


def test_a_bad_factor_on_a_shared_name_is_refused_by_that_name():
    # "set amdahl.compute.time: … got -0.00620446" for --set compute.time=x-1.
    import equinox as eqx

    from perfmodel._presets import build

    fit = fitted(eqx.tree_at(lambda blend: blend.largest, build("blend"), 8.0))
    for raw, shown in (("x-1", "-1"), ("x0", "0")):
        with pytest.raises(pm.InputError) as caught:
            pm.what_if(fit, {"compute.time": raw})
        assert str(caught.value) == f"set compute.time={raw}: expected a factor > 0, got {shown}"


@pytest.mark.slow  # 9 s: a CLI fit of the default blend
def test_repeated_runs_are_named_in_the_interval_legend_and_the_one_gpu_gap(tmp_path, capsys):
    # The legend said only "from the default blend's errors on published tables", and
    # "12.9% shorter than the one measured" where two one-GPU runs were measured.
    from perfmodel._cli import main

    csv = tmp_path / "repeats.csv"
    rows = zip([1, 1, 2, 2, 4, 4, 8, 8], [10.0, 12.5, 5.2, 6.6, 2.9, 3.7, 1.6, 2.1])
    csv.write_text("gpus,time_s\n" + "".join(f"{n},{t}\n" for n, t in rows))
    fit = tmp_path / "fit.json"
    assert main(["fit", str(csv), "-o", str(fit)]) == 0
    capsys.readouterr()
    assert main(["predict", str(fit), "--gpus", "8", "--interval", "0.9"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "errors on published tables and the scatter of the runs it repeats (wider" in out
    assert "than the median of the 2 measured" in out


@pytest.mark.slow  # 15 s: a fit, its draws and a figure
def test_the_report_says_what_is_extrapolated(tmp_path):
    # "fastest GPU count: 4096 GPUs" with a prediction table to 4096 GPUs, and no word
    # that the table was measured on 1–8 GPUs, where `fit` and `optimal` say so.
    fit = pm.fit(pm.amdahl(), pm.from_arrays([1, 2, 4, 8], [1.0, 0.51, 0.26, 0.14]))
    path = tmp_path / "report.md"
    pm.write_report(fit, path)
    text = path.read_text()
    assert "extrapolated 512× past the 8 GPUs measured" in text
    rows = [line for line in text.splitlines() if line.startswith("| ") and " – " in line]
    marked = {line.split(" | ")[0].strip("| ") for line in rows if "(extrapolated" in line}
    # Past the measured 8 GPUs, as `fit` says; past 4× of it, further than checked.
    assert {"16 (extrapolated)", "32 (extrapolated)", "64 (extrapolated beyond 4×)"} <= marked
    assert not any(m.startswith(("8 ", "4 ")) for m in marked)


def test_optimal_takes_the_objective_spelt_as_sweep_lists_it():
    # `sweep --help` lists time_to_train; `optimal --objective time_to_train` was refused.
    from perfmodel._cli.app import build_parser

    for spelt in ("time_to_train", "time-to-train"):
        args = build_parser().parse_args(["optimal", "fit.json", "--objective", spelt])
        assert args.objective == "time-to-train"
    args = build_parser().parse_args(["sweep", "space.toml", "--objective", "cost-to-train"])
    assert args.objective == "cost_to_train"
