"""Time to train and training logs on the command line: `fit` of MLPerf logs and of a CSV
of runs, `predict` with time to train per row, `optimal --objective time-to-train|
cost-to-train`, `sweep` by time to train, per-step logs with their warm-up, and the
one-line errors."""

import json
from pathlib import Path

import numpy as np
import pytest

import perfmodel as pm
from perfmodel._cli import main

ROOT = Path(__file__).resolve().parent.parent
LOGS = ROOT / "tests" / "data" / "logs"
SSD_CSV = ROOT / "datasets" / "time_to_train" / "mlperf07_dgxa100_ssd.csv"


def run(capsys, *argv):
    status = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.fixture(scope="module")
def ssd_fit(tmp_path_factory):
    out = tmp_path_factory.mktemp("ttt") / "ssd.json"
    assert main(["fit", str(LOGS / "mllog_ssd"), "-o", str(out)]) == 0
    return out


def test_fit_of_mllog_logs_is_a_time_to_train_fit(ssd_fit, capsys):
    document = json.loads(ssd_fit.read_text())
    assert document["model"]["family"] == "batch_linear"
    section = document["time_to_train"]
    assert section["version"] == 1 and section["work_unit"] == "samples"
    assert len(section["runs"]["work"]) == 3
    status, out, err = run(capsys, "fit", LOGS / "mllog_ssd")
    assert status == 0 and "B_noise = 2258 samples" in out
    assert "read 3 run(s) from 3 MLPerf result log(s)" in err


def test_runs_left_out_by_their_status_are_counted_and_the_flag_named(tmp_path, capsys):
    for log in (LOGS / "mllog_ssd").iterdir():
        text = log.read_text()
        if log.name.startswith("dgxa100_n2"):
            text = text.replace('"status": "success"', '"status": "aborted"')
        (tmp_path / log.name).write_text(text)
    status, _, err = run(capsys, "fit", tmp_path, "-o", tmp_path / "ssd.json")
    assert status == 0
    assert (
        "read 2 run(s) from 3 MLPerf result log(s); 1 run(s) not successful (aborted) left "
        "out: --all-runs keeps them" in err
    )


def test_predict_gives_time_to_train_with_its_interval_per_row(ssd_fit, capsys):
    status, out, _ = run(
        capsys, "predict", ssd_fit, "--gpus", "64,512", "--global-batch", "1536,2048", "--json"
    )
    assert status == 0
    rows = json.loads(out)
    fit = pm.load_time_to_train(ssd_fit)
    expected = fit.predict([64.0, 512.0], [1536.0, 2048.0], level=0.9)
    for i, row in enumerate(rows):
        assert row["time_s"] == pytest.approx(expected["step_time_s"][i])
        assert row["time_to_train_s"] == pytest.approx(expected["time_to_train_s"][i])
        assert row["time_to_train_s_lo"] < row["time_to_train_s"] < row["time_to_train_s_hi"]
        assert row["time_to_train_s"] == pytest.approx(row["steps_to_target"] * row["time_s"])
    # the measured 64-GPU run (batch 1536): 134.8 s
    assert rows[0]["time_to_train_s"] == pytest.approx(134.812, rel=0.03)
    status, out, _ = run(capsys, "predict", ssd_fit, "--gpus", "8,4096")
    assert status == 0 and "the batch that trains fastest at each count" in out


@pytest.mark.slow  # 2 s: the default run stays under 4 minutes
def test_optimal_time_to_train_states_the_critical_batch(ssd_fit, capsys):
    status, out, _ = run(
        capsys, "optimal", ssd_fit, "--objective", "time-to-train", "--min-gain", "0.2", "--json"
    )
    assert status == 0
    document = json.loads(out)
    # Four counts per doubling (512 on powers of two): 431, between 362 and 512.
    assert document["limited_by"] == "critical_batch" and document["knee_gpus"] == 431
    assert "the batch passes the critical batch" in document["reason"]
    lo, hi = document["time_to_train_interval_s"]
    assert lo < document["time_to_train_s"] < hi
    # 4096 GPUs at batch 16384 from runs of 8-64 GPUs at 896-1536: said, in JSON and text.
    assert document["gpus"] == 4096 and document["global_batch"] == 16384
    assert document["extrapolated"] == (
        "extrapolated: 64× the 64 GPUs and 10.7× the global batch 1536 measured (the runs "
        "span 8–64 GPUs, global batches 896–1536)"
    )
    status, out, _ = run(capsys, "optimal", ssd_fit, "--objective", "time-to-train")
    assert status == 0 and "\n  extrapolated: " in out
    argv = ["--objective", "time-to-train", "--max-gpus", "64", "--global-batch", "1024"]
    status, out, _ = run(capsys, "optimal", ssd_fit, *argv)
    assert status == 0 and "extrapolated" not in out
    status, out, _ = run(
        capsys,
        "optimal",
        ssd_fit,
        "--objective",
        "cost-to-train",
        "--deadline",
        "60",
        "--price-per-gpu-hour",
        "2.5",
    )
    # Four GPU counts per doubling (review round 11b: 512 on powers of two cost 1.4× more).
    assert status == 0 and out.startswith("train cheapest within 60 s on 362 GPUs")
    # A deadline nothing meets: said once, and the answer does not claim to meet it.
    argv = ["--objective", "cost-to-train", "--deadline", "1"]
    status, out, _ = run(capsys, "optimal", ssd_fit, *argv)
    first, second = out.splitlines()[:2]
    assert status == 0 and first.startswith("No configuration trains within the deadline of 1 s")
    assert second.startswith("train cheapest with no deadline on ") and "within 1 s" not in out


@pytest.mark.slow  # 2 s: the default run stays under 4 minutes
def test_fit_of_a_csv_of_runs_and_sweep_by_time_to_train(tmp_path, capsys):
    fit = tmp_path / "ssd.json"
    status, _, _ = run(capsys, "fit", "--time-to-train", SSD_CSV, "-o", fit)
    assert status == 0
    space = tmp_path / "space.toml"
    space.write_text(
        '[model]\nfit = "ssd.json"\n\n[axes]\ngpus = [64, 512, 4096]\n'
        "global_batch = [1024, 4096, 16384]\n"
    )
    status, out, _ = run(capsys, "sweep", space, "--objective", "time-to-train", "--json")
    assert status == 0
    document = json.loads(out)
    best = document["top"][0]
    plan = pm.plan_training(
        pm.load_time_to_train(fit), gpus=[64, 512, 4096], batches=[1024, 4096, 16384], level=None
    )
    assert (best["gpus"], best["global_batch"]) == (plan.gpus, plan.global_batch)
    assert best["time_to_train_s"] == pytest.approx(plan.time_to_train_s, rel=1e-5)  # float32


def test_a_run_under_one_step_to_the_target_is_named_on_stderr(tmp_path, capsys):
    # Epochs typed into the samples column: the run "reached the target" in 0.055 of a
    # step. It was fitted without a word (B_noise collapsed to 0.8 samples).
    lines = SSD_CSV.read_text().splitlines()
    header = lines[0].split(",")
    cells = lines[3].split(",")
    cells[header.index("samples")] = cells[header.index("epochs")]
    lines[3] = ",".join(cells)
    runs = tmp_path / "runs.csv"
    runs.write_text("\n".join(lines) + "\n")
    status, _, err = run(capsys, "fit", "--time-to-train", runs, "--json")
    assert status == 0
    (warning,) = [line for line in err.splitlines() if "under one step" in line]
    assert warning.startswith(f"warning: {runs} row 3 (line 4): samples 50 is less than ")
    assert "global_batch 912" in warning and "probably steps, samples per GPU or epochs" in warning
    status, _, err = run(capsys, "fit", "--time-to-train", SSD_CSV, "--json")
    assert status == 0 and "under one step" not in err


def test_megatron_logs_report_the_warm_up_dropped(capsys):
    status, out, err = run(capsys, "fit", LOGS / "megatron", "--model", "amdahl")
    assert status == 0
    assert "read 4 run(s) from 3 Megatron-LM log(s)" in err
    assert "warm-up dropped 1 logged interval(s) (10 steps) per run" in err
    # The ramp-up's runs at 8 GPUs are different workloads, which amdahl does not read.
    assert "the rows at 8 GPUs differ in global_batch (128, 256)" in err
    status, _, err = run(capsys, "fit", LOGS / "megatron", "--model", "amdahl", "--warmup", "20")
    assert status == 0 and "(the intervals ending at or before step 20)" in err


@pytest.mark.slow  # 5 s: the default run stays under 4 minutes
def test_a_batch_ramp_up_fitted_by_batch_linear_is_per_step(tmp_path, capsys):
    # The slope rule read the ramp-up as weak scaling and divided the step times by N,
    # which batch_linear's c·B/N already does: R² −1.28, 1.308 s at 16 GPUs.
    out_file = tmp_path / "meg.json"
    argv = ["fit", LOGS / "megatron", "--model", "batch_linear", "-o", out_file]
    status, out, err = run(capsys, *argv)
    assert status == 0 and "assumed: seconds per step" in out and "differ in" not in err
    fit = pm.load_fit(out_file)
    assert fit.r2 > 0.95 and not fit.data.per_gpu
    assert fit.predict([16], global_batch=512)["time_s"][0] == pytest.approx(0.847, rel=0.05)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["fit", LOGS / "megatron", "--time-to-train"], "a megatron log gives step times"),
        (["fit", LOGS / "megatron", "--gpus-per-node", "8"], "--gpus-per-node: not an option"),
        (["fit", LOGS / "megatron", "--warmup", "soon"], "--warmup: expected 'auto' or a step"),
        (["fit", "--format", "mllog", LOGS / "megatron"], "no ':::MLLOG"),
        (["fit", "--time-to-train", ROOT / "datasets" / "mlperf07_dgxa100_ssd.csv"], "no 'samples"),
        (
            ["fit", "--time-to-train", ROOT / "datasets" / "usl_specsdm91.csv"],
            "a throughput column",
        ),
    ],
)
def test_log_errors_are_one_line(capsys, argv, message):
    status, _, err = run(capsys, *argv)
    assert status == 2
    assert err.count("\n") == 1 and message in err, err


def test_answer_errors_are_one_line(ssd_fit, tmp_path, capsys):
    step_only = tmp_path / "step.json"
    pm.save_fit(pm.load_time_to_train(ssd_fit).step, step_only)
    cases = [
        (["optimal", step_only, "--objective", "time-to-train"], "no 'time_to_train' section"),
        (["optimal", ssd_fit, "--objective", "time-to-train", "--deadline", "5"], "cost-to-train"),
        (["predict", ssd_fit, "--gpus", "8,16,32", "--global-batch", "1,2"], "one value or one"),
        # 1 sample over 8 GPUs and 100.5 samples were answered without a word.
        (["predict", ssd_fit, "--gpus", "8", "--global-batch", "1"], "at least one per GPU"),
        (["predict", ssd_fit, "--gpus", "8", "--global-batch", "100.5"], "expected whole sam"),
        (["optimal", ssd_fit, "--objective", "time-to-train", "--min-gain", "2"], "--min-gain"),
        (
            ["optimal", ssd_fit, "--objective", "time-to-train", "--global-batch", "0"],
            "--global-batch: expected numbers ≥ 1, got [0.0]",
        ),
    ]
    for argv, message in cases:
        try:
            status, _, err = run(capsys, *argv)
        except SystemExit as caught:  # argparse refuses --min-gain 2 by its range
            status, err = caught.code, capsys.readouterr().err.splitlines()[-1] + "\n"
        assert status == 2 and err.count("\n") == 1 and message in err, (argv, err)
    assert not np.isnan(json.loads(ssd_fit.read_text())["time_to_train"]["noise"])


@pytest.mark.slow  # 8 s: two reports; the plot test below draws its figure
def test_report_of_a_time_to_train_fit_answers_about_training(ssd_fit, tmp_path, capsys):
    status, out, _ = run(capsys, "report", ssd_fit, "-o", tmp_path / "r.md")
    assert status == 0 and (tmp_path / "r.png").is_file()
    assert (tmp_path / "r_time_to_train.png").stat().st_size > 10_000
    page = (tmp_path / "r.md").read_text()
    assert page.startswith("# Time-to-train report: mllog_ssd")
    # Its own figure under the time-to-train table, the step's under the step table.
    lead = page.index("![time to train at the fastest batch](r_time_to_train.png)")
    assert page.index("| fastest to train |") < lead < page.index("## Step time")
    assert page.index("## Step time") < page.index("![scaling plots of the fit](r.png)")
    fit = pm.load_time_to_train(ssd_fit)
    fastest = pm.plan_training(fit, level=0.9)
    # One line, as every result's repr (it printed ~200 lines of grids).
    assert repr(fastest) == (
        f"<TrainingPlan: time; {fastest.gpus:g} GPUs at global batch "
        f"{fastest.global_batch:g}: {fastest.time_to_train_s:.4g} s to the target, cost "
        f"{fastest.cost:.4g}; limited by {fastest.limited_by}>"
    )
    expected = (
        f"| fastest to train | {fastest.gpus:g} GPUs at global batch {fastest.global_batch:g}"
    )
    assert expected + " (extrapolated: runs at" in page  # past the runs, and says so
    assert "| cheapest to train |" in page and "## Best global batch per GPU count" in page
    # A measured count names the batch its runs used where the best is another:
    # "8 (measured) | 512" read as if batch 512 had run (review of 2026-12-07).
    best = page.split("## Best global batch per GPU count")[1].split("\n## ")[0]
    for n in np.unique(fit.runs.data.gpus):
        ran = np.unique(fit.runs.data.config["global_batch"][fit.runs.data.gpus == n])
        row = next(line for line in best.splitlines() if line.startswith(f"| {n:g} ("))
        cells = [c.strip() for c in row.strip("|").split("|")]
        if cells[1] == f"{ran[0]:g}" and ran.size == 1:
            assert cells[0] == f"{n:g} (measured)"
        else:
            assert (
                cells[0] == f"{n:g} (measured at global_batch {', '.join(f'{b:g}' for b in ran)})"
            )
    # Every run once, with the model's error at its own GPU count and batch.
    runs = page.split("## Time to train of the runs")[1].split("\n## ")[0]
    data = fit.runs.data
    rows = [line for line in runs.splitlines() if line.startswith("| ") and "---" not in line]
    assert len(rows) == data.gpus.size + 1  # and the header
    predicted = fit.predict(data.gpus, data.config["global_batch"], None)["time_to_train_s"]
    first = f"{(predicted[0] / data.time_s[0] - 1.0):+.1%}"
    assert rows[1].rstrip(" |").endswith(first)
    # The step answers are still there, named as such.
    assert "(the step fit)" in page and "## Fitted parameters: batch_linear" in page


@pytest.mark.slow  # 5 s: two time-to-train fits
def test_fit_time_to_train_writes_its_report_or_nothing(tmp_path, capsys):
    fit, report = tmp_path / "f.json", tmp_path / "r.html"
    status, out, _ = run(capsys, "fit", SSD_CSV, "--time-to-train", "-o", fit, "--report", report)
    assert status == 0 and fit.is_file() and report.is_file()
    assert f"wrote {report}" in out
    assert "Time-to-train report" in report.read_text()
    assert report.read_text().count("data:image/png;base64,") == 2  # both figures embedded
    bad = tmp_path / "r.pdf"
    status, _, err = run(
        capsys, "fit", SSD_CSV, "--time-to-train", "-o", tmp_path / "g.json", "--report", bad
    )
    assert status == 2 and "unknown report format" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "g.json").exists() and not bad.exists()


@pytest.mark.slow  # 8 s: the default run stays under 4 minutes
def test_plot_of_a_time_to_train_fit_draws_time_to_train_and_the_batch(ssd_fit, tmp_path, capsys):
    status, out, _ = run(capsys, "plot", ssd_fit, "-o", tmp_path / "t.png", "--max-gpus", "256")
    assert status == 0 and (tmp_path / "t.png").stat().st_size > 10_000
    fit = pm.load_time_to_train(ssd_fit)
    left, right = pm.plot_time_to_train(fit, max_gpus=256).axes
    assert left.get_title() == "time to train, best global batch"
    # The curve is, at each count, the fastest batch's time (the plan's own grid) ...
    model = left.get_lines()[0]
    plan = pm.plan_training(fit, level=None, max_gpus=256)
    n, seconds = model.get_xdata(), model.get_ydata()
    for count in (1, 8, 64, 256):
        k = int(np.flatnonzero(plan.gpus_grid == count)[0])
        assert seconds[n == count][0] == np.nanmin(plan.time_grid_s[k])
    # ... the runs sit at their measured times and batches ...
    data = fit.runs.data
    np.testing.assert_array_equal(left.get_lines()[1].get_ydata(), data.time_s)
    np.testing.assert_array_equal(right.get_lines()[1].get_ydata(), data.config["global_batch"])
    # ... and the fastest answer is the plan's: at 256 GPUs, at the batch it names.
    # The step figure (Python) names the folder of logs, not "" (its basename).
    step = pm.plot_fit(pm.load_fit(ssd_fit))
    assert step.get_suptitle().startswith("mllog_ssd (seconds per step): batch_linear fit")
    assert f"fastest: 256 GPUs at batch {plan.global_batch:g}" in [
        t.get_text() for t in left.get_legend().get_texts()
    ]
