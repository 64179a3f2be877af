"""`perfmodel fit --model hybrid` on measured runs, and `predict`, `optimal` and `sweep` of
the hybrid family over layouts (`perfmodel._cli.layout`)."""

import contextlib
import io
import json
from pathlib import Path
import re
import textwrap

import numpy as np
import pandas as pd
import pytest

import perfmodel as pm
from perfmodel._cli import main

# A hybrid fit of measured runs takes ~20 s on two cores: every test here is slow.
pytestmark = pytest.mark.slow

RUNS = Path(__file__).resolve().parent.parent / "benchmarks" / "megatron_runs.csv"


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """Korthikanti et al. Table 5's 22B (8 GPUs) and 175B (64 GPUs) full-recompute runs."""
    frame = pd.read_csv(RUNS)
    frame = frame[(frame.series == "K22_T5") & (frame.recompute == "full")].iloc[:2]
    path = tmp_path_factory.mktemp("runs") / "runs.csv"
    frame.drop(columns="series").to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def fitted_and_printed(two_runs, tmp_path_factory):
    out = tmp_path_factory.mktemp("fit") / "fit.json"
    argv = ["fit", str(two_runs), "--model", "hybrid", "--starts", "8", "-o", str(out)]
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        assert main(argv) == 0
    return out, printed.getvalue()


@pytest.fixture(scope="module")
def fitted(fitted_and_printed):
    return fitted_and_printed[0]


def test_fit_determines_the_efficiency_and_fixes_the_rest(fitted, capsys):
    document = json.loads(fitted.read_text())
    params = {
        k: v["value"] if isinstance(v, dict) else v for k, v in document["parameters"].items()
    }
    # The calibration of benchmarks/megatron.py: e_max 0.889, d0 338 elements.
    assert params["compute.e_max"] == pytest.approx(0.889, rel=2e-3)
    assert params["compute.d0"] == pytest.approx(338.0, rel=2e-2)
    assert set(document["free"]) == {"compute.e_max", "compute.d0"}
    warnings = " ".join(document["quality"]["warnings"])
    assert "compute.peak_flops fixed at 3.12e+14" in warnings
    assert "tensor.bandwidth fixed at 2e+11: no distinct runs left" in warnings
    assert "allreduce.bandwidth_inter fixed at 2.4e+10: the runs barely depend on it" in warnings


def test_fit_opens_with_a_layout_search_not_a_gpu_count(fitted_and_printed, capsys):
    # The GPU-count recommendation varied gpus alone at the fit's default layout: "cheapest
    # per step: 1 GPU" for a tp=8, pp=8 run. A hybrid fit opens with `optimal`'s answer.
    fitted, printed = fitted_and_printed
    lines = printed.splitlines()
    assert lines[1].startswith("optimal (time): ") and " tp=" in lines[1] and " pp=" in lines[1]
    words = " ".join(printed.split())
    assert "against the best layout at 64 GPUs" in words
    assert "the fit's measured run of this workload on the fewest GPUs, gpus=64 tp=8 pp=8" in words
    assert "Buy " not in printed and "cheapest per step: 1 GPU" not in printed
    assert main(["optimal", str(fitted), "--json"]) == 0
    alone = json.loads(capsys.readouterr().out)
    assert f"optimal (time): {alone['gpus']} GPUs" in lines[1]
    # It opens with the count where returns diminish (below the search limit's optimum),
    # and that count's layout, whose time `predict` gives alike.
    worth, knee = alone["worth_buying"], alone["diminishing_returns"]
    assert worth["gpus"] == knee["gpus"] < alone["gpus"] and worth["speedup"] == knee["speedup"]
    assert lines[0].startswith(f"worth buying: {worth['gpus']} GPUs, gpus={worth['gpus']} tp=")
    assert f"the fastest, below, is {alone['speedup']:.3g}× at {alone['gpus']} GPUs" in lines[0]
    flags = {"tp": "--tp", "pp": "--pp", "microbatch_size": "--microbatch-size"}
    flags |= {"interleave": "--interleave", "recompute": "--recompute", "zero": "--zero"}
    flags |= {"seq_parallel": "--seq-parallel"}
    argv = ["predict", str(fitted), "--gpus", str(worth["gpus"]), "--json"]
    for field, flag in flags.items():
        argv += [flag, f"{worth['layout'][field]:g}"]
    assert main(argv) == 0
    row = json.loads(capsys.readouterr().out)["rows"][0]
    assert row["time_s"] == pytest.approx(worth["time_s"], rel=1e-5)  # float32 sweep


def test_fit_refuses_weak_scaling_and_missing_shapes(two_runs, tmp_path, capsys):
    assert main(["fit", str(two_runs), "--model", "hybrid", "--weak-scaling"]) == 2
    assert "drop --weak-scaling" in capsys.readouterr().err
    bare = tmp_path / "bare.csv"
    pd.read_csv(two_runs).drop(columns="hidden").to_csv(bare, index=False)
    assert main(["fit", str(bare), "--model", "hybrid"]) == 2
    assert "needs 'hidden'" in capsys.readouterr().err
    bad = tmp_path / "bad.csv"
    pd.read_csv(two_runs).assign(recompute="most").to_csv(bad, index=False)
    assert main(["fit", str(bad), "--model", "hybrid"]) == 2
    err = capsys.readouterr().err
    assert "column 'recompute': expected one of 0, 1, 2 or none, selective, full, got 'most'" in err


def test_predict_at_layouts_against_the_measured_reference(fitted, capsys):
    argv = ["predict", str(fitted), "--gpus", "64,64,80", "--tp", "8,4,8", "--pp", "8,16,5"]
    argv += ["--microbatch-size", "1", "--interleave", "3,3,1", "--recompute", "full", "--json"]
    assert main(argv) == 0
    document = json.loads(capsys.readouterr().out)
    reference, rows = document["reference"], document["rows"]
    # The workload of the fit's defaults is the 175B model: its measured run is the reference.
    assert reference["gpus"] == 64 and reference["tp"] == 8 and reference["pp"] == 8
    assert rows[0]["speedup"] == pytest.approx(1.0) and rows[0]["status"] == "ok"
    assert rows[1]["status"] == "ok" and rows[1]["efficiency"] == pytest.approx(
        rows[1]["speedup"], rel=1e-12
    )
    assert rows[2]["status"] == "pp does not divide layers" and rows[2]["time_s"] is None


def test_predict_bounds_the_speedup_against_the_reference_layout(fitted, capsys):
    # `--interval` gave time_s_lo/_hi but no speedup interval, and took no --kind.
    argv = ["predict", str(fitted), "--gpus", "64,128,512,80", "--pp", "8,8,8,5", "--json"]
    bands = {}
    for kind in ("prediction", "confidence"):
        assert main([*argv, "--interval", "0.9", "--kind", kind]) == 0
        bands[kind] = json.loads(capsys.readouterr().out)["rows"]
    rows = bands["prediction"]
    assert rows[0]["speedup_lo"] == pytest.approx(1.0) == rows[0]["speedup_hi"]  # itself
    for row in rows[1:3]:
        assert row["speedup_lo"] < row["speedup"] < row["speedup_hi"]
        assert row["speedup_interval"] == "90% confidence (of the curve)"
        # Drawn with the reference, so tighter than the times' ratio at their ends.
        assert row["speedup_hi"] < rows[0]["time_s_hi"] / row["time_s_lo"]
    assert (
        rows[2]["speedup_hi"] - rows[2]["speedup_lo"]
        > rows[1]["speedup_hi"] - rows[1]["speedup_lo"]
    )
    assert "speedup_lo" not in rows[3] and "interval" not in rows[3]  # pp 5: not valid
    # The curve's interval leaves the noise out: narrower where it is measured (past it,
    # the drift of the same draws dominates both), and said.
    narrow, wide = bands["confidence"][0], rows[0]
    assert wide["time_s_lo"] < narrow["time_s_lo"] < narrow["time_s_hi"] < wide["time_s_hi"]
    for narrow, wide in zip(bands["confidence"][:3], rows[:3]):
        assert narrow["interval"] == "90% confidence" and wide["interval"] == "90% prediction"
        assert narrow["speedup_lo"] == wide["speedup_lo"]
    assert main(argv[:-1] + ["--interval", "0.9"]) == 0
    out = capsys.readouterr().out
    assert "speedup_lo/_hi: 90% confidence interval of the speedup" in out


def test_predict_reads_a_csv_of_layouts(fitted, tmp_path, capsys):
    layouts = tmp_path / "layouts.csv"
    layouts.write_text(
        "gpus,tp,pp,microbatch_size,recompute,zero\n64,8,8,1,full,0\n128,8,8,1,2,3\n"
    )
    assert main(["predict", str(fitted), "--layouts", str(layouts)]) == 0
    out = capsys.readouterr().out
    assert "against the reference layout gpus=64 tp=8 pp=8" in out and "ok" in out
    layouts.write_text("gpus,tp,zero\n64,8,5\n")
    assert main(["predict", str(fitted), "--layouts", str(layouts)]) == 2
    err = capsys.readouterr().err
    assert "row 1 (line 2), column 'zero': expected one of 0, 1, 2, 3" in err
    assert main(["predict", str(fitted), "--layouts", str(layouts), "--gpus", "8"]) == 2
    capsys.readouterr()
    layouts.write_text("gpus,tp,hidden,heads\n64,8,12288,96\n64,8,1,128\n")  # was answered
    assert main(["predict", str(fitted), "--layouts", str(layouts)]) == 2
    assert "row 2 (line 3): heads do not divide hidden" in capsys.readouterr().err
    assert main(["predict", str(fitted), "--gpus", "64", "--recompute", "most"]) == 2
    err = capsys.readouterr().err
    assert "--recompute: expected one of 0, 1, 2 or none, selective, full, got 'most'" in err


def test_optimal_is_a_layout_search(fitted, capsys):
    assert main(["optimal", str(fitted), "--max-gpus", "128", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["gpus"] in (64, 72, 80, 96, 104, 112, 120, 128)
    assert set(document["layout"]) >= {"tp", "pp", "microbatch_size", "interleave", "recompute"}
    assert document["reference"]["gpus"] == 64
    assert document["alternatives"] and all(a["slower_pct"] >= 0 for a in document["alternatives"])


def test_sweep_warns_about_workload_fields_left_at_their_defaults(tmp_path, capsys):
    # The README's former example: a 175B model with hidden, seq_len, … left at 1.
    space = tmp_path / "space.toml"
    space.write_text(
        textwrap.dedent(
            """
            [model]
            family = "hybrid"
            [fixed]
            layers = 96
            hidden = 12288
            seq_len = 2048
            global_batch = 64
            gpu_memory_bytes = 77e9
            [axes]
            gpus = [64]
            tp = [4, 8]
            pp = [8, 16]
            microbatch_size = [1, 2]
            recompute = [0, 2]
            """
        )
    )
    assert main(["sweep", str(space), "--json"]) == 0
    captured = capsys.readouterr()
    # The file named, and heads 0 read as what it means (review of 2026-12-06).
    said = f"warning: {space}: the space leaves heads = 0 (hidden/128), vocab = 0 at the default"
    assert said in captured.err
    document = json.loads(captured.out)
    assert document["warnings"] and document["alternatives"]
    best = document["top"][0]
    for alternative in document["alternatives"]:
        slower = alternative["step_time_s"] / best["step_time_s"] - 1.0
        assert alternative["slower_pct"] == pytest.approx(100 * slower, rel=1e-4)


def test_a_measured_run_with_an_invalid_layout_is_refused_with_its_line(two_runs, tmp_path, capsys):
    runs = pd.read_csv(two_runs)
    runs.loc[1, "pp"] = 7  # 8 × 7 does not divide the 64 GPUs, nor 7 the 96 layers
    bad = tmp_path / "pp7.csv"
    runs.to_csv(bad, index=False)
    assert main(["fit", str(bad), "--model", "hybrid"]) == 2
    err = capsys.readouterr().err
    assert "pp7.csv line 3: this run's layout is not valid (tp·pp does not divide gpus)" in err
    runs = pd.read_csv(two_runs)
    runs.loc[0, "heads"] = 100  # 6144 hidden dimensions do not split over 100 heads
    runs.to_csv(bad, index=False)
    assert main(["fit", str(bad), "--model", "hybrid"]) == 2
    assert "pp7.csv line 2: this run's heads do not divide hidden" in capsys.readouterr().err
    # A misspelt layout column leaves the runs at the default: said, with the field meant.
    typo = tmp_path / "typo.csv"
    pd.read_csv(two_runs).rename(columns={"microbatch_size": "micro_batch_size"}).to_csv(
        typo, index=False
    )
    assert main(["fit", str(typo), "--model", "hybrid"]) == 2
    err = capsys.readouterr().err
    assert "typo.csv: column 'micro_batch_size' is not a field perfmodel reads (did you" in err
    assert "'microbatch_size'?)" in err and "Traceback" not in err
    # So is one that leaves every layout valid (seq_paralel: the SP runs fitted as non-SP,
    # exit 0, the warning last); a column unlike any field is still only named.
    runs = pd.read_csv(two_runs)
    runs.rename(columns={"seq_parallel": "seq_paralel"}).to_csv(typo, index=False)
    assert main(["fit", str(typo), "--model", "hybrid"]) == 2
    assert "(did you mean 'seq_parallel'?)" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [
        ["plot", "-o", "x.png"],
        ["report", "-o", "x.md"],
        ["explain", "--gpus", "8"],
        ["next", "--candidates", "128,256"],
        ["whatif", "--set", "compute.e_max=0.9", "-o", "x.json"],
    ],
)
def test_gpu_count_curves_of_a_hybrid_fit_are_refused(fitted, tmp_path, capsys, argv):
    command, *rest = argv
    rest = [str(tmp_path / r) if r.startswith("x.") else r for r in rest]
    assert main([command, str(fitted), *rest]) == 2
    err = capsys.readouterr().err
    assert f"{command}: a hybrid (Megatron-LM layout) fit answers per layout" in err
    assert "perfmodel optimal" in err and not list(tmp_path.iterdir())


def test_python_questions_over_gpu_counts_refuse_a_hybrid_fit(fitted):
    # The same refusal from Python: at the fit's one layout (tp 8, pp 8) 1 GPU is not a
    # valid layout, so a speedup curve over GPU counts would compare invalid layouts.
    fit = pm.load_fit(fitted)
    for question in (pm.recommend, pm.optimal_gpus, pm.diminishing_returns):
        with pytest.raises(pm.InputError, match="answers per layout.*search layouts"):
            question(fit)
    with pytest.raises(pm.InputError, match="compare_fits: a hybrid"):
        pm.compare_fits(fit, pm.what_if(fit, {"compute.e_max": 0.9}))


def test_predict_reads_the_runs_csv_itself_as_layouts(fitted, two_runs, capsys):
    assert main(["predict", str(fitted), "--layouts", str(two_runs), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    measured = pd.read_csv(two_runs)["time_s"].to_numpy()
    # The fit is calibrated on these two runs: the predictions are the measurements.
    assert [r["time_s"] for r in rows] == pytest.approx(measured, rel=1e-3)


def test_optimal_says_when_no_larger_count_has_a_valid_layout(fitted, capsys):
    # 105 layers: pp must divide 105, so 512 GPUs (8·64) has no valid layout of tp 8.
    argv = ["optimal", str(fitted), "--max-gpus", "512", "--set", "layers=105"]
    argv += ["--set", "hidden=20480", "--set", "heads=128", "--set", "global_batch=280"]
    assert main([*argv, "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["searched_up_to"] == 512 and not document["at_search_limit"]
    assert document["largest_valid"] and document["gpus"] < 512
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "the largest count with a valid layout that fits, searched up to 512" in out
    assert "the search limit" not in out


def test_optimal_at_a_count_with_nothing_found_says_why(fitted, capsys):
    # Before, both read "no valid layout fits in memory at any GPU count searched", also
    # for --gpus 7, whose layouts are not valid at all.
    assert main(["optimal", str(fitted), "--gpus", "7"]) == 2
    err = capsys.readouterr().err
    assert "no valid layout at 7 GPUs: global_batch does not split" in err
    assert "memory" not in err
    # ... and which counts near it have one, searched as it was (the budget included).
    near = re.search(r"; the nearest counts? with a layout that fits: (\d+)(?: and (\d+))?$", err)
    assert near, err
    for count in filter(None, near.groups()):
        assert main(["optimal", str(fitted), "--gpus", count, "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["gpus"] == int(count)
    assert main(["optimal", str(fitted), "--gpus", "8", "--set", "gpu_memory_bytes=20e9"]) == 2
    err = capsys.readouterr().err
    assert re.search(
        r"no valid layout fits in memory at 8 GPUs: the leanest valid layout needs "
        r"[0-9.]+ GB per GPU, more than the 20 GB budget; nor has any count of whole nodes "
        r"from 16 to 136$",  # 530B in 20 GB per GPU: not on 17 nodes either
        err.strip(),
    )


def test_a_fit_that_misses_one_of_its_runs_far_is_refused(two_runs, tmp_path, capsys):
    # Bad-input review of 2026-12-06: seq_len = 1e9 in one run gave "R² -1.0e+19,
    # converged" and a worth-buying answer.
    frame = pd.read_csv(two_runs)
    frame.loc[0, "seq_len"] = 1e9
    path = tmp_path / "runs.csv"
    frame.to_csv(path, index=False)
    out = tmp_path / "fit.json"
    assert main(["fit", str(path), "--model", "hybrid", "-o", str(out)]) == 1
    err = capsys.readouterr().err.strip()
    assert re.search(
        r"runs.csv: line 2: the fitted hybrid model is [0-9.e+]+× slower than this run", err
    )
    assert len(err.splitlines()) == 1 and not out.exists()


def test_a_microbatch_size_of_0_is_refused_as_an_option(fitted, capsys):
    # 0 reads "not given" in a CSV; given as an option it was answered, with the status
    # blaming interleaving (bad-input review of 2026-12-06).
    argv = ["predict", str(fitted), "--gpus", "64", "--tp", "8", "--pp", "8"]
    assert main([*argv, "--microbatch-size", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith(
        "--microbatch-size: expected a whole number ≥ 1, got 0 (0 means not given: leave "
        "--microbatch-size out)"
    )


def test_a_vocab_of_0_warns_as_a_missing_column_does(two_runs, tmp_path, capsys):
    # 0 reads "not given": a missing column warned, a column of 0 did not.
    frame = pd.read_csv(two_runs)
    frame["vocab"] = 0
    path = tmp_path / "runs.csv"
    frame.to_csv(path, index=False)
    assert main(["fit", str(path), "--model", "hybrid", "-o", str(tmp_path / "f.json")]) == 0
    assert "vocab not in the data (or 0): taken as 0 (no output layer)" in capsys.readouterr().err


def test_time_to_train_layout_alternatives_rank_as_step_times():
    import perfmodel as pm

    fixed = dict(layers=32, hidden=4096, heads=32, seq_len=2048, vocab=51200, gpus=64.0)
    fixed |= dict(global_batch=256, gpus_per_node=8, gpu_memory_bytes=72e9)
    axes = {"tp": [2, 4, 8], "pp": [1, 2, 4]}
    model = pm.hybrid()
    best = pm.sweep(model, axes, fixed=fixed, pareto=False, progress=False).top.iloc[0]
    by_time = pm.layout_alternatives(model, axes, best, fixed=fixed, objective="time")
    by_ttt = pm.layout_alternatives(model, axes, best, fixed=fixed, objective="time_to_train")
    pd.testing.assert_frame_equal(by_time, by_ttt)


def test_the_next_distinct_layouts_are_not_the_best_under_another_name():
    # Review of 2026-12-06: "0.0% slower with another seq_parallel" at tp 1, where
    # Megatron-LM turns sequence parallelism off, and "another zero" at one replica.
    import perfmodel as pm
    from perfmodel._sweep.noop import canonical_layouts

    fixed = dict(layers=40, hidden=5120, heads=40, seq_len=2048, vocab=50304, gpus=64.0)
    fixed |= dict(global_batch=512, gpus_per_node=8, gpu_memory_bytes=80e9, zero=3)
    axes = {"tp": [1, 2], "pp": [1, 2], "microbatch_size": [2, 4], "seq_parallel": [0, 1]}
    model = pm.hybrid()
    best = pm.sweep(model, axes, fixed=fixed, pareto=False, progress=False).top.iloc[0]
    assert best["tp"] == 1  # the case: a tp-1 pick, whose seq_parallel 1 is itself
    found = pm.layout_alternatives(model, axes, best, fixed=fixed)
    assert len(found) and all(found["slower_pct"] > 1e-6)
    names = list(axes)  # gpus is fixed: not a column
    same = canonical_layouts({n: best[n] for n in names}, {})[0]
    columns = {n: found[n] if n in found else best[n] for n in names}
    assert same not in canonical_layouts(columns, {})
    # "also" names every other axis on which the row differs from the best.
    for _, row in found.iterrows():
        (other,) = canonical_layouts({n: row[n] for n in names}, {})
        differ = [n for n, a, b in zip(names, same, other) if a != b]
        assert row["also"] == ", ".join(n for n in differ if n not in row["axis"].split(", "))


def test_optimal_searches_what_sweep_does_and_names_the_measured_reference(fitted, capsys):
    # Review round 7: optimal tried interleave ≤ 4, ZeRO 0/1 and no sequence parallelism,
    # so its "best" was slower than layouts the same fit rates valid.
    assert main(["optimal", str(fitted), "--max-gpus", "512", "--json"]) == 0
    best = json.loads(capsys.readouterr().out)
    assert best["layout"]["seq_parallel"] in (0.0, 1.0) and "seq_parallel" in best["layout"]
    rated = ["predict", str(fitted), "--gpus", "512", "--tp", "8", "--pp", "16", "--json"]
    rated += ["--microbatch-size", "1", "--interleave", "6", "--recompute", "0"]
    rated += ["--seq-parallel", "1", "--zero", "1"]
    assert main(rated) == 0
    row = json.loads(capsys.readouterr().out)["rows"][0]
    assert row["status"] == "ok" and best["time_s"] <= row["time_s"] * (1 + 1e-5)
    # The reference is a measured run: its measured time is named beside the model's.
    assert best["reference"]["measured_s"] == pytest.approx(18.13)
    assert main(["optimal", str(fitted), "--max-gpus", "512"]) == 0
    words = " ".join(capsys.readouterr().out.split())
    assert "the fit's measured run of this workload on the fewest GPUs, gpus=64" in words
    assert "(model 18.13 s, measured 18.13 s), is " in words


def test_python_predict_of_a_hybrid_fit_is_against_the_reference_layout(fitted, capsys):
    fit = pm.load_fit(fitted)
    layout = dict(tp=8, pp=[16, 7], microbatch_size=1, interleave=[3, 1], recompute=1, zero=1)
    out = fit.predict([256, 256], **layout)
    assert (
        main(
            ["predict", str(fitted), "--gpus", "256", "--tp", "8", "--pp", "16", "--json"]
            + ["--microbatch-size", "1", "--interleave", "3", "--recompute", "1"]
            + ["--zero", "1"]
        )
        == 0
    )
    row = json.loads(capsys.readouterr().out)["rows"][0]
    assert out["speedup"][0] == pytest.approx(row["speedup"], rel=1e-9)
    assert out["efficiency"][0] == pytest.approx(row["efficiency"], rel=1e-9)
    assert list(out["status"]) == ["ok", "tp·pp does not divide gpus"]
    assert np.isnan(out["time_s"][1]) and np.isnan(out["speedup"][1])


def test_predict_leaves_speedup_blank_for_rows_of_another_workload(fitted, tmp_path, capsys):
    layouts = tmp_path / "l.csv"
    layouts.write_text(
        "gpus,tp,pp,microbatch_size,interleave,recompute,layers\n"
        "64,8,8,1,3,full,96\n64,8,8,1,3,full,48\n"
    )
    assert main(["predict", str(fitted), "--layouts", str(layouts), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert rows[0]["speedup"] == pytest.approx(1.0) and rows[1]["speedup"] is None
    assert rows[1]["time_s"] > 0
    assert main(["predict", str(fitted), "--layouts", str(layouts)]) == 0
    assert "note: 1 row(s) of another model or global batch" in capsys.readouterr().out


def _rows(capsys, *argv):
    assert main(["predict", *map(str, argv), "--json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)["rows"]


def test_a_micro_batch_count_is_read_and_contradictions_refused(fitted, capsys):
    # The fit's runs give microbatch_size 1, which `Config` prefers: --microbatches 3 and
    # 1000 were answered "ok" at the size-1 time (review round 9).
    layout = ["--gpus", "64", "--tp", "8", "--pp", "8", "--interleave", "1"]
    by_count = _rows(capsys, fitted, *layout, "--microbatches", "32")[0]
    by_size = _rows(capsys, fitted, *layout, "--microbatch-size", "2")[0]
    assert by_count["time_s"] == pytest.approx(by_size["time_s"], rel=1e-12)
    assert by_count["time_s"] != pytest.approx(_rows(capsys, fitted, *layout)[0]["time_s"])
    odd = _rows(capsys, fitted, *layout, "--microbatches", "3")[0]
    assert odd["status"] == pm.REASONS[4] and odd["time_s"] is None
    assert (
        main(["predict", str(fitted), *layout, "--microbatches", "8", "--microbatch-size", "2"])
        == 2
    )
    assert "give microbatches or microbatch_size, not both" in capsys.readouterr().err
    fit = pm.load_fit(fitted)
    found = fit.predict([64], tp=8, pp=8, interleave=1, microbatches=32)
    assert found["time_s"][0] == pytest.approx(by_count["time_s"], rel=1e-12)
    # A sweep of the fit reads the count too (every count had the size-1 time).
    swept = pm.sweep(
        fit, {"gpus": [64], "microbatches": [16, 32]}, fixed=dict(tp=8, pp=8, interleave=1)
    )
    times = swept.top.sort_values("microbatches")["step_time_s"].to_numpy()
    assert times[1] == pytest.approx(by_count["time_s"], rel=1e-5) and times[0] != times[1]


def test_predict_holds_layouts_to_the_memory_optimal_does(fitted, tmp_path, capsys):
    # Runs that do not give gpu_memory_bytes: `predict` answered "ok" for any memory while
    # `optimal` held layouts to 90% of the fit's GPU.
    document = json.loads(fitted.read_text())
    del document["config_defaults"]["gpu_memory_bytes"]
    edited = tmp_path / "no_budget.json"
    edited.write_text(json.dumps(document))
    layout = ["--gpus", "64", "--tp", "8", "--pp", "8", "--interleave", "1"]
    heavy = [*layout, "--microbatch-size", "8", "--recompute", "none"]
    assert _rows(capsys, edited, *heavy)[0]["status"] == "out of memory"
    assert _rows(capsys, edited, *layout)[0]["status"] == "ok"
    # The text says what the time and speedup of such a row are.
    assert main(["predict", str(edited), *heavy]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "note: 1 row(s) out of memory (memory_gb above the budget of 77.31 GB per GPU): " in out
    assert "their time and speedup are what those layouts would do if they fitted" in out
    budget = pm._fitting.memory_budget(pm.load_fit(edited))["gpu_memory_bytes"]
    assert budget == pytest.approx(0.9 * 80 * 2**30)


def test_a_new_workload_names_the_recipe_it_takes_from_the_fit(fitted, tmp_path, capsys):
    # Llama-style 70B rows at seq 4096 took the 2022 runs' flash_attention = 0 and were
    # all out of memory, with "no layout given is valid" and no word of why.
    layouts = tmp_path / "llama.csv"
    shape = "80,8192,64,8,28672,1,1,4096,32000,1024,8"
    header = "gpus,tp,pp,microbatch_size,interleave,recompute,seq_parallel,zero,layers,hidden,"
    header += "heads,query_groups,ffn_hidden,gated_mlp,untied_embeddings,seq_len,vocab,"
    header += "global_batch,gpus_per_node"
    layouts.write_text(f"{header}\n512,4,4,1,5,0,1,1,{shape}\n")
    assert main(["predict", str(fitted), "--layouts", str(layouts)]) == 2
    err = capsys.readouterr().err
    assert "run as that run was: " in err and "flash_attention = 0" in err
    layouts.write_text(f"{header},flash_attention\n512,4,4,1,5,0,1,1,{shape},1\n")
    assert main(["predict", str(fitted), "--layouts", str(layouts), "--json"]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert len(notes) == 1 and "dp_overlap = " in notes[0] and "flash_attention" not in notes[0]


def test_a_fitted_link_stays_within_what_the_gpu_has():
    # Four made-up H100 runs fitted NVLink at 3.3 TB/s (7× the hardware), used silently.
    from perfmodel._fitting.hybrid_runs import at_link_bounds, link_bounds

    bounds = link_bounds("H100-80GB")
    assert bounds["tensor.bandwidth"] == (36e9, 540e9)
    assert bounds["compute.hbm_bandwidth"][1] == pytest.approx(3.35e12)
    model = pm.hybrid(gpu="H100-80GB").with_parameters({"tensor.bandwidth": 540e9})
    held = {"tensor.bandwidth": bounds["tensor.bandwidth"]}
    (note,) = at_link_bounds(model, held, "H100-80GB")
    assert "tensor.bandwidth stopped at the upper end of what the H100-80GB can do" in note
    assert not at_link_bounds(model, {"tensor.bandwidth": (1e9, 1e13)}, "H100-80GB")


def test_optimal_keeps_a_searched_field_set_with_set(fitted, capsys):
    # --set zero=2 (or tp=3, or zero=9 refused elsewhere) was overwritten by the search and
    # the answer printed as if nothing were set (fuzz round 9).
    argv = ["optimal", str(fitted), "--max-gpus", "64", "--json"]
    assert main([*argv, "--set", "zero=1", "--set", "tp=4"]) == 0
    best = json.loads(capsys.readouterr().out)["layout"]
    assert best["zero"] == 1 and best["tp"] == 4
    assert main([*argv, "--set", "tp=3"]) == 2
    assert "tp does not divide gpus_per_node (all)" in capsys.readouterr().err
    assert main([*argv, "--set", "microbatches=32", "--set", "microbatch_size=2"]) == 2
    assert "--set: give microbatches or microbatch_size, not both" in capsys.readouterr().err


def test_optimal_searches_sizes_for_runs_that_give_micro_batch_counts(two_runs, tmp_path, capsys):
    # Runs with a microbatches column: the search of sizes met the fit's counts and was
    # refused ("give microbatches or microbatch_size, not both").
    runs = pd.read_csv(two_runs)
    counted = tmp_path / "counted.csv"
    runs.assign(microbatches=[1, 64]).drop(columns="microbatch_size").to_csv(counted, index=False)
    out = tmp_path / "counted.json"
    assert main(["fit", str(counted), "--model", "hybrid", "--starts", "4", "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["optimal", str(out), "--max-gpus", "64", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["layout"]["microbatch_size"] >= 1


@pytest.mark.parametrize(
    "options, words",
    [
        (["--price-per-gpu-hour", "2", "--budget", "1"], "--budget is not read by a hybrid fit"),
        (["--currency", "USD"], "--currency names the currency of --price-per-gpu-hour"),
        (["--interval", "0.9"], "--interval is not read by a hybrid fit's layout search"),
        (["--deadline", "1"], "--deadline is read with --objective cost by a hybrid fit"),
    ],
)
def test_optimal_of_a_hybrid_fit_refuses_what_its_search_does_not_read(fitted, options, words):
    # Fuzz round 11: 512 GPUs beside --budget 1 at 2 per GPU-hour, without a word.
    with contextlib.redirect_stderr(io.StringIO()) as err:
        assert main(["optimal", str(fitted), "--max-gpus", "512", *options]) == 2
    assert words in err.getvalue() and len(err.getvalue().strip().splitlines()) == 1


def test_the_layout_worth_buying_meets_the_efficiency_floor(fitted):
    # Fuzz round 11: "worth buying: 384 GPUs … efficiency 78.0%" with a floor of 0.9.
    with contextlib.redirect_stdout(io.StringIO()) as out:
        argv = ["optimal", str(fitted), "--max-gpus", "512", "--efficiency-floor", "0.995"]
        assert main([*argv, "--json"]) == 0
    document = json.loads(out.getvalue())
    worth = document["worth_buying"]
    assert worth is not None and worth["efficiency"] >= 0.995
    knee = document["diminishing_returns"]
    assert knee["gpus"] is None or knee["efficiency"] >= 0.995


def test_scaling_is_against_the_best_layout_at_the_reference_count(fitted, capsys):
    # Review leftover of 2026-12-06: against the measured full-recompute run, the search
    # answered "efficiency 99.1%" at 512 GPUs and 139% at 64 GPUs itself: the gain of
    # selective recomputation and sequence parallelism, not of scaling.
    assert main(["optimal", str(fitted), "--gpus", "64", "--json"]) == 0
    at_64 = json.loads(capsys.readouterr().out)
    assert at_64["efficiency"] == pytest.approx(1.0) and at_64["speedup"] == pytest.approx(1.0)
    assert at_64["baseline"]["layout"] == at_64["layout"]
    assert at_64["reference"]["time_s"] / at_64["time_s"] > 1.2  # the measured recipe's
    assert main(["optimal", str(fitted), "--gpus", "256", "--json"]) == 0
    at_256 = json.loads(capsys.readouterr().out)  # the reference count searched apart
    assert at_256["baseline"] == at_64["baseline"]
    assert at_256["efficiency"] == pytest.approx(
        at_64["time_s"] * 64 / (at_256["time_s"] * 256), rel=1e-6
    )
    assert at_256["efficiency"] < 1.0
    assert main(["optimal", str(fitted), "--gpus", "256"]) == 0
    words = " ".join(capsys.readouterr().out.split())
    ratio = at_64["reference"]["time_s"] / at_64["time_s"]
    assert f"against the best layout at 64 GPUs ({at_64['time_s']:.4g} s)" in words
    assert f"is {ratio:.3g}× slower than that layout" in words


def test_the_cost_of_a_layout_names_the_currency(fitted):
    with contextlib.redirect_stdout(io.StringIO()) as out:
        argv = ["optimal", str(fitted), "--max-gpus", "128", "--objective", "cost"]
        assert main([*argv, "--price-per-gpu-hour", "2", "--currency", "USD"]) == 0
    assert "cost per step " in out.getvalue() and " USD\n" in out.getvalue()


def test_a_fit_file_whose_measured_layout_could_not_run_is_refused(fitted, tmp_path):
    # With data_sha256 deleted, tp 3 at 8 GPUs in data.config was read and answered.
    document = json.loads(fitted.read_text())
    document["data"]["config"]["tp"][0] = 3.0
    del document["data_sha256"]
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(document))
    with pytest.raises(
        pm.InputError,
        match=r"edited\.json: data\.config: run 0 \(line 2 of .*runs\.csv\) has a layout "
        r"that could not run \(tp·pp does not divide gpus\)",
    ):
        pm.load_fit(path)
    document["data"]["config"]["tp"][0] = 8.0
    path.write_text(json.dumps(document))
    assert pm.load_fit(path).data.config["tp"][0] == 8.0
