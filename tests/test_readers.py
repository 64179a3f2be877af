"""Readers of training logs (`perfmodel._readers`): the real formats, and one clear error
per malformed case naming the file and the line."""

from pathlib import Path

import numpy as np
import pytest

from perfmodel import InputError
from perfmodel._readers import detect_format, read_log, read_runs, steady_median

LOGS = Path(__file__).parent / "data" / "logs"
ROOT = Path(__file__).resolve().parent.parent
SSD = LOGS / "mllog_ssd"
BERT = LOGS / "mllog_bert_dgxa100_n1.txt"
MEGATRON = LOGS / "megatron"
LIGHTNING = LOGS / "lightning" / "version_0" / "metrics.csv"
WANDB = LOGS / "wandb_history_32gpu.csv"


def write(tmp_path, text, name="log.txt"):
    path = tmp_path / name
    path.write_text(text)
    return path


def mllog(key, time_ms, value=None, **metadata):
    import json

    record = {"namespace": "", "time_ms": time_ms, "event_type": "POINT_IN_TIME", "key": key}
    record |= {"value": value, "metadata": {"file": "train.py", "lineno": 1, **metadata}}
    return ":::MLLOG " + json.dumps(record)


def run_lines(batch=256, platform="4xNVIDIA DGX A100", stop_ms=61_000, status="success"):
    return [
        "+ srun ./run_and_time.sh",
        mllog("submission_platform", 1, platform),
        mllog("global_batch_size", 2, batch),
        mllog("run_start", 1_000),
        mllog("train_samples", 1_001, 1000),
        mllog("epoch_start", 1_002, epoch_num=1),
        mllog("epoch_stop", 31_000, epoch_num=1),
        mllog("eval_accuracy", 31_500, 0.5, epoch_num=1),
        mllog("epoch_start", 31_500, epoch_num=2),
        mllog("epoch_stop", 60_000, epoch_num=2),
        mllog("eval_accuracy", 60_500, 0.76, epoch_num=2),
        mllog("run_stop", stop_ms, status=status),
    ]


def text(lines):
    return "\n".join(lines) + "\n"


# MLPerf MLLOG ---------------------------------------------------------------------


def test_mllog_folder_is_one_run_per_file_with_published_times():
    runs = read_runs(SSD)
    assert [r.format for r in runs] == ["mllog"] * 3
    assert [r.gpus for r in runs] == [8, 16, 64]  # DGX A100: 8 GPUs per node
    np.testing.assert_allclose([r.time_to_train_s for r in runs], [612.840, 340.015, 134.812])
    assert [r.global_batch for r in runs] == [912, 896, 1536]
    assert [r.epochs for r in runs] == [50, 50, 60]  # the epoch of the last evaluation
    assert [r.status for r in runs] == ["success"] * 3
    assert runs[0].samples == 50 * 117266  # train_samples logged at the start: the dataset
    data = read_log(SSD)
    np.testing.assert_array_equal(data.gpus, [8, 16, 64])
    np.testing.assert_allclose(data.time_s, [612.840, 340.015, 134.812])
    np.testing.assert_array_equal(data.config["global_batch"], [912, 896, 1536])
    np.testing.assert_array_equal(data.config["gpus_per_node"], [8, 8, 8])


def test_mllog_rank_prefixes_and_samples_trained_logged_at_the_end():
    (run,) = read_runs(BERT)  # lines start with "0: " (srun labels)
    assert run.gpus == 8 and run.global_batch == 256 and run.epochs == 1
    assert run.samples == 3000064
    assert run.time_to_train_s == pytest.approx(2851.760)


def test_mllog_epoch_time_is_the_median_after_warmup(tmp_path):
    (run,) = read_runs(write(tmp_path, text(run_lines())))
    assert run.epoch_time_s == pytest.approx(29.249)  # the median of 29.998 s and 28.5 s
    assert run.warmup_dropped == 0 and run.steps_used == 2  # two epochs: nothing dropped
    assert run.time_to_train_s == 60.0
    assert read_log(tmp_path / "log.txt", quantity="epoch_time").time_s[0] == pytest.approx(29.249)
    assert read_runs(RESNET := LOGS / "mllog_resnet_dgxa100_n1.txt")[0].warmup_dropped == 1
    assert RESNET.is_file()


def test_mllog_gpus_from_logged_node_keys_or_options(tmp_path):
    lines = run_lines(platform="2xACME Box")
    path = write(tmp_path, text(lines))
    with pytest.raises(InputError, match=r"log.txt line 12: no GPU count in the log; pass gpus="):
        read_log(path)
    assert read_runs(path, gpus_per_node=4)[0].gpus == 8
    assert read_runs(path, gpus=3)[0].gpus == 3
    lines += [mllog("number_of_nodes", 3, 2), mllog("accelerators_per_node", 4, 6)]
    lines.insert(2, lines.pop())
    lines.insert(2, lines.pop())
    assert read_runs(write(tmp_path, text(lines)))[0].gpus == 12


def test_mllog_aborted_runs_are_left_out_unless_asked(tmp_path):
    write(tmp_path, text(run_lines()), "result_0.txt")
    write(tmp_path, text(run_lines(status="aborted")), "result_1.txt")
    assert read_log(tmp_path).gpus.size == 1
    assert read_log(tmp_path, status=None).gpus.size == 2
    (tmp_path / "result_0.txt").unlink()
    with pytest.raises(InputError, match=r"no run with status 'success' \(found: aborted\)"):
        read_log(tmp_path)


MLLOG_ERRORS = [
    # (edit of run_lines(), message)
    (
        lambda ls: ls[:3] + [ls[3][:60]] + ls[4:],
        r"log.txt line 4: malformed MLLOG record: expected a JSON object after ':::MLLOG '",
    ),
    (lambda ls: ls[:3] + [":::MLLOG [1, 2]"] + ls[4:], r"line 4: malformed MLLOG record"),
    (
        lambda ls: ls[:3] + [':::MLLOG {"time_ms": 5, "value": 1}'] + ls[4:],
        r"line 4: MLLOG record without a string 'key'",
    ),
    (
        lambda ls: ls[:3] + [ls[3].replace('"time_ms": 1000', '"time_ms": "soon"')] + ls[4:],
        r"line 4: MLLOG record 'run_start': expected a finite number in 'time_ms', got \"soon\"",
    ),
    (
        lambda ls: (
            ls[:3]
            + [ls[3].replace('"metadata": {', '"metadata": [{').replace("}}", "}]}")]
            + ls[4:]
        ),
        r"line 4: MLLOG record 'run_start': expected an object in 'metadata'",
    ),
    (lambda ls: [ls[0]] + ls[1:3] + ls[4:], r"log.txt line 11: run_stop before any run_start"),
    (lambda ls: ls[:-1], r"run_start at line 4 but no run_stop: the run did not finish"),
    (lambda ls: [x for x in ls if "run_" not in x], r"log.txt: no run_start record"),
    (
        lambda ls: ls[:-1] + [mllog("run_stop", 500, status="success")],
        r"line 12: run_stop at time_ms 500 precedes run_start \(line 4, time_ms 1000\)",
    ),
    (
        lambda ls: ls + [mllog("run_start", 70_000)],
        r"line 13: a second run_start after the run_stop at line 12; expected one run per "
        r"result file",
    ),
    (
        lambda ls: ls[:2] + [mllog("global_batch_size", 2, "big")] + ls[3:],
        r"line 3: global_batch_size: expected a positive number, got \"big\"",
    ),
    (
        lambda ls: ls[:4] + [mllog("global_batch_size", 1_001, 512)] + ls[4:],
        r"line 5: global_batch_size 512 differs from 256 at line 3",
    ),
    (  # a fractional batch was taken
        lambda ls: ls[:2] + [mllog("global_batch_size", 2, 912.5)] + ls[3:],
        r"line 3: global_batch_size 912.5; expected whole samples",
    ),
    (
        lambda ls: ls[:5] + [mllog("epoch_start", 1_002, epoch_num=-1)] + ls[6:],
        r"line 6: epoch_num: expected a positive number, got -1",
    ),
    (
        lambda ls: ls[:4] + [mllog("train_samples", 1_001, None)] + ls[5:],
        r"line 5: train_samples: expected a positive number, got null",
    ),
    (
        lambda ls: ls[:11] + [mllog("run_stop", 61_000, status=3)],
        r"line 12: run_stop status: expected a string",
    ),
    # Found by fuzzing: a ValueError traceback (Python's 4300-digit limit on integers),
    # "input nested too deeply" without the file, and a fit of 0 GPUs ("fit failed").
    (
        lambda ls: ls[:3] + [ls[3].replace('"time_ms": 1000', '"time_ms": ' + "9" * 5000)],
        r"log.txt line 4: malformed MLLOG record: expected a JSON object",
    ),
    (lambda ls: ls + [":::MLLOG " + "[" * 100_000], r"log.txt line 13: malformed MLLOG record"),
    (
        lambda ls: ls[:1] + [mllog("submission_platform", 1, "0xNVIDIA DGX A100")] + ls[2:],
        r"line 2: submission_platform: expected 1 or more nodes and at most 10,000,000 GPUs",
    ),
]


@pytest.mark.parametrize("edit, message", MLLOG_ERRORS)
def test_mllog_malformed(tmp_path, edit, message):
    path = write(tmp_path, text(edit(run_lines())))
    with pytest.raises(InputError, match=message):
        read_log(path, format="mllog")


def test_mllog_platform_that_does_not_count_nodes(tmp_path):
    path = write(tmp_path, text(run_lines(platform="a big cluster")))
    with pytest.raises(
        InputError, match=r"line 2: submission_platform: expected '<nodes>x<system>'"
    ):
        read_runs(path, gpus_per_node=8)


def test_mllog_forced_on_a_file_without_records(tmp_path):
    path = write(tmp_path, "hello\n")
    with pytest.raises(InputError, match=r"log.txt: no ':::MLLOG' lines; expected an MLPerf"):
        read_log(path, format="mllog")


# Megatron-LM ----------------------------------------------------------------------


def test_megatron_logs_median_after_warmup_and_world_size():
    runs = {(Path(r.source).name, r.global_batch): r for r in read_runs(MEGATRON)}
    eight = runs["gpt_8gpu.log", 256]
    assert eight.gpus == 8 and eight.warmup_dropped == 1 and eight.warmup_steps == 10
    assert eight.steps_used == 11 and eight.step_time_s == pytest.approx(0.812, rel=0.01)
    sixteen = runs["gpt_16gpu.log", 512]  # newer world-size wording, timestamp prefix
    assert sixteen.gpus == 16 and sixteen.config["tp"] == 2
    assert sixteen.config["microbatches"] == 512 / (8 * 4)
    assert sixteen.samples == 61440
    ramp = [runs["gpt_8gpu_rampup.log", b] for b in (128, 256)]  # world size from the dump
    assert [r.gpus for r in ramp] == [8, 8]
    assert ramp[0].step_time_s == pytest.approx(0.430, rel=0.01)
    data = read_log(MEGATRON)
    assert data.gpus.size == 4 and set(data.config) >= {"global_batch", "tp", "pp"}


def test_megatron_integer_warmup(tmp_path):
    (run,) = read_runs(MEGATRON / "gpt_8gpu.log", warmup=50)
    assert run.warmup_dropped == 5 and run.warmup_steps == 50
    assert "at or before step 50" in run.warmup_rule
    with pytest.raises(InputError, match=r"warmup=1000 drops every logged interval"):
        read_runs(MEGATRON / "gpt_8gpu.log", warmup=1000)


ITER = (
    " iteration       {i}/  500000 | consumed samples:        {c} | elapsed time per "
    "iteration (ms): {ms} | learning rate: 1.000E-04 | global batch size:   256 | lm loss: "
    "1.0E+01 |"
)


def megatron_lines(n=4):
    return [
        "using world size: 8, data-parallel-size: 8, tensor-model-parallel size: 1, "
        "pipeline-model-parallel size: 1 "
    ] + [ITER.format(i=10 * k, c=2560 * k, ms=800.0) for k in range(1, n + 1)]


MEGATRON_ERRORS = [
    (
        lambda ls: ls[:-1] + [ls[-1][:70]],
        r"log.txt line 5: iteration line without 'elapsed time per iteration \(ms\): <number>' "
        r"\(a line cut off\?\)",
    ),
    (
        lambda ls: ls[:2] + [ls[2].replace("800.0", "abc")] + ls[3:],
        r"line 3: elapsed time per iteration \(ms\): expected a positive number, got 'abc'",
    ),
    (
        lambda ls: ls[:2] + [ls[2].replace("800.0", "0.0")] + ls[3:],
        r"line 3: elapsed time per iteration \(ms\): expected a positive number, got '0.0'",
    ),
    (
        lambda ls: ls[:2] + [ls[2].replace("global batch size:   256 |", "")] + ls[3:],
        r"line 3: iteration line without 'global batch size: <number>'; pass global_batch=",
    ),
    (
        lambda ls: ls + [ITER.format(i=20, c=5120, ms=800.0)],
        r"line 6: iteration 20 after iteration 40 at line 5; expected increasing iterations",
    ),
    (
        lambda ls: ls + ["using world size: 16, data-parallel-size: 16"],
        r"line 6: world size 16 differs from 8 at line 1; expected one run per log",
    ),
    (
        lambda ls: ["  world_size ...................................... eight"] + ls[1:],
        r"line 1: world_size: expected a positive number, got 'eight'",
    ),
    (lambda ls: ls[1:], r"log.txt line 2: no GPU count in the log; pass gpus=$"),
    (
        lambda ls: [ls[0].replace("world size: 8,", "world size: 1000000000,")] + ls[1:],
        r"log.txt line 3: expected a GPU count of 1 to 10,000,000, got 1000000000",
    ),
    (lambda ls: ls[:1], r"log.txt: no Megatron-LM iteration lines; expected lines like"),
    # World size 0 ended in a ZeroDivisionError; a banner that contradicts the argument
    # dump was read as the banner's count.
    (
        lambda ls: [ls[0].replace("world size: 8,", "world size: 0,")] + ls[1:],
        r"log.txt line 1: world size 0; expected a GPU count ≥ 1",
    ),
    (
        lambda ls: ["  world_size ...................................... 4"] + ls,
        r"log.txt line 2: world size 8 differs from world_size 4 in the arguments at line 1",
    ),
]


@pytest.mark.parametrize("edit, message", MEGATRON_ERRORS)
def test_megatron_malformed(tmp_path, edit, message):
    path = write(tmp_path, text(edit(megatron_lines())))
    with pytest.raises(InputError, match=message):
        read_log(path, format="megatron")


def test_megatron_options_fill_what_the_log_lacks(tmp_path):
    lines = [x.replace("global batch size:   256 |", "") for x in megatron_lines()[1:]]
    (run,) = read_runs(write(tmp_path, text(lines)), format="megatron", gpus=4, global_batch=64)
    assert run.gpus == 4 and run.global_batch == 64 and run.step_time_s == 0.8


# Lightning CSVLogger and tracker CSVs ----------------------------------------------


def test_lightning_metrics_csv_skips_rows_of_other_metrics():
    (run,) = read_runs(LIGHTNING.parent.parent, gpus=8, global_batch=256)  # a version folder
    assert run.format == "lightning" and run.steps_used == 11 and run.warmup_dropped == 1
    assert run.step_time_s == pytest.approx(0.3136)  # validation rows (empty cells) skipped
    data = read_log(LIGHTNING, gpus=8, global_batch=256)
    assert data.gpus[0] == 8 and data.config["global_batch"][0] == 256


def test_tracker_csv_wall_clock_differences_per_step():
    (run,) = read_runs(WANDB)
    assert run.format == "csv" and run.gpus == 32 and run.global_batch == 1024
    assert run.step_time_s == pytest.approx(0.2105, rel=0.01)  # Δ_runtime / Δ_step
    assert run.warmup_dropped == 1 and run.warmup_steps == 100
    (named,) = read_runs(WANDB, timestamp_column="_timestamp")
    assert named.step_time_s == pytest.approx(run.step_time_s, rel=1e-6)


def test_tracker_csv_duration_in_milliseconds(tmp_path):
    path = write(tmp_path, "step,iteration_time\n10,120\n20,100\n30,101\n40,99\n", "m.csv")
    (run,) = read_runs(path, time_unit="ms", gpus=2)
    assert run.step_time_s == pytest.approx(0.100)


CSV_ERRORS = [
    ("epoch,loss\n0,1\n", {}, r"m.csv: no step column; expected one of step, "),
    ("step,loss\n0,1\n", {}, r"m.csv: no time column; expected a per-step duration"),
    (
        "step,step_time\n1,0.5\n2,fast\n",
        {},
        r"m.csv line 3, column 'step_time': expected a "
        r"positive number, got 'fast'",
    ),
    ("step,step_time\n1,0.5\n2,-1\n", {}, r"line 3, column 'step_time': expected a positive"),
    (
        "step,step_time\n2,0.5\n1,0.5\n",
        {},
        r"line 3, column 'step': step 1 after step 2 at "
        r"line 2; expected increasing steps",
    ),
    (
        "step,_runtime\n1,5\n2,4\n",
        {},
        r"line 3, column '_runtime': time 4 s is not after 5 s "
        r"at line 2; expected increasing wall-clock times",
    ),
    ("step,_runtime\n1,5\n", {}, r"column '_runtime': expected two rows with a value"),
    (
        "step,step_time,global_batch\n1,0.5,64\n2,0.5,128\n",
        {},
        r"line 3, column "
        r"'global_batch': global batch 128 differs from 64 at line 2; expected one global batch",
    ),
    (
        "step,step_time\n1,0.5\n",
        {"time_column": "dt"},
        r"m.csv: no column 'dt' \(time per "
        r"step\); columns found: step, step_time",
    ),
    ("step,step_time\n1,0.5\n", {"time_unit": "h"}, r"time_unit.*expected s, ms or us"),
    ("step,step_time\n1,0.5\n", {}, r"m.csv line 2: no GPU count in the log; pass gpus="),
    ('step,step_time\n1,"0.5\n', {}, r"m.csv line 2: a quote \(\"\) opens here"),
    # pandas read the second as 'step_time.1' and the first was used without a word.
    (
        "step,step_time,loss,step_time\n1,0.5,2,0.6\n",
        {},
        r"m.csv: column 'step_time' appears twice in the header \(columns 2 and 4\)",
    ),
]


@pytest.mark.parametrize("content, options, message", CSV_ERRORS)
def test_csv_malformed(tmp_path, content, options, message):
    path = write(tmp_path, content, "m.csv")
    with pytest.raises(InputError, match=message):
        read_log(path, format="csv", **options)


def test_empty_csv(tmp_path):
    with pytest.raises(InputError, match=r"m.csv: empty file, expected a CSV header"):
        read_log(write(tmp_path, "", "m.csv"), format="lightning")


# Detection and entry points ---------------------------------------------------------


@pytest.mark.parametrize(
    "path, kind",
    [
        (SSD / "dgxa100_n1_result_0.txt", "mllog"),
        (BERT, "mllog"),
        (MEGATRON / "gpt_16gpu.log", "megatron"),
        (LIGHTNING, "lightning"),
        (WANDB, "csv"),
    ],
)
def test_detect_format(path, kind):
    assert detect_format(path) == kind


def test_a_megatron_log_that_stopped_before_its_first_iteration_says_so(tmp_path):
    # It was read as a CSV: "missing column 'gpus' … columns found: using world size: 16".
    text = (MEGATRON / "gpt_16gpu.log").read_text()
    crashed = write(tmp_path, "".join(x for x in text.splitlines(True) if "iteration" not in x))
    assert detect_format(crashed) == "megatron"
    with pytest.raises(InputError, match=r"no Megatron-LM iteration lines"):
        read_log(crashed)


def test_entry_point_errors(tmp_path):
    with pytest.raises(InputError, match=r"cannot tell the log format.*give format="):
        detect_format(write(tmp_path, "just words\n"))
    with pytest.raises(InputError, match=r"nope.log: no such file or folder"):
        read_log(tmp_path / "nope.log")
    with pytest.raises(InputError, match=r"unknown log format 'tensorboard'; expected one of"):
        read_log(SSD, format="tensorboard")
    with pytest.raises(InputError, match=r"unknown option\(s\) for mllog logs: time_column"):
        read_log(SSD, time_column="x")
    with pytest.raises(InputError, match=r"quantity: expected one of step_time"):
        read_log(SSD, quantity="speed")
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "hparams.yaml").write_text("a: 1\n")
    with pytest.raises(InputError, match=r"empty: a folder without log files"):
        read_log(empty)
    with pytest.raises(InputError, match=r"a megatron log, while .* is a mllog log"):
        read_log([SSD / "dgxa100_n1_result_0.txt", MEGATRON / "gpt_8gpu.log"])
    with pytest.raises(InputError, match=r"gives no step time for this run"):
        read_log(SSD, quantity="step_time")


def test_config_given_by_some_runs_only(tmp_path):
    write(tmp_path, text(run_lines()), "a.txt")
    write(tmp_path, text([x for x in run_lines() if "global_batch" not in x]), "b.txt")
    with pytest.raises(InputError, match=r"b.txt: no global_batch for this run, while .*a.txt"):
        read_log(tmp_path)


def test_steady_median_rules():
    steps = np.arange(10, 110, 10)
    seconds = np.array([5.0, 2.0, 1.3, 1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.0])
    median, dropped, warm, rule = steady_median(steps, seconds)
    assert dropped == 3 and warm == 30 and median == 1.0 and rule.startswith("auto")
    assert steady_median(steps[:2], seconds[:2])[1] == 0  # too few to tell warm-up apart
    assert steady_median(steps, np.ones(10))[1] == 1  # the first interval always goes
    assert steady_median(steps, seconds, 20)[1:3] == (2, 20)
    with pytest.raises(InputError, match=r"warmup: expected 'auto' or a step count"):
        steady_median(steps, seconds, "some")


def test_read_log_feeds_a_fit():
    import perfmodel as pm

    result = pm.fit("amdahl", read_log(SSD), n_starts=8, adam_steps=100, lbfgs_steps=50)
    assert result.predict([8])["time_s"][0] == pytest.approx(612.8, rel=0.2)


@pytest.mark.slow  # 8 s: the default run stays under 4 minutes
def test_logs_of_one_global_batch_state_strong_scaling_as_a_csv_does(tmp_path, capsys):
    # The same step times as logs of a fixed global batch and as a CSV with its
    # global_batch column: the same regime, the same answer (not exactly Amdahl's law,
    # which would be answered by that family alone).
    from perfmodel._cli import main

    paths = []
    for g in (1, 2, 4, 8):
        step = 0.1 + 0.8 / g + 0.01 * (g.bit_length() - 1)
        rows = [f"0,{s * 50},{step * (2 if s == 1 else 1):.4f},{g}" for s in range(1, 7)]
        path = tmp_path / f"metrics_{g}.csv"
        path.write_text("epoch,step,step_time,world_size\n" + "\n".join(rows) + "\n")
        paths.append(str(path))
    data = read_log(paths[0], global_batch=256)
    assert data.scaling is None  # one GPU count: nothing to tell
    assert main(["fit", *paths, "--global-batch", "256"]) == 0
    from_logs = capsys.readouterr().out
    table = tmp_path / "a.csv"
    table.write_text("gpus,time_s,global_batch\n1,0.9,256\n2,0.51,256\n4,0.32,256\n8,0.23,256\n")
    assert main(["fit", str(table)]) == 0
    from_csv = capsys.readouterr().out
    assert "(strong regime)" in from_logs and "(strong regime)" in from_csv
    assert from_logs.splitlines()[0] == from_csv.splitlines()[0]


def test_a_missing_option_is_named_as_the_command_line_flag(tmp_path, capsys):
    from perfmodel._cli import main

    path = write(tmp_path, "step,step_time\n1,0.5\n2,0.5\n", "m.csv")
    assert main(["fit", str(path)]) == 2
    assert capsys.readouterr().err.strip().endswith("no GPU count in the log; pass --gpus")


# Runs trained to a target (`read_training_runs`) ------------------------------------


def test_training_runs_from_mllog_and_from_a_csv_of_runs():
    from perfmodel._readers import read_training_runs

    logs = read_training_runs(LOGS / "mllog_ssd")
    np.testing.assert_array_equal(logs.data.gpus, [8, 16, 64])
    np.testing.assert_array_equal(logs.data.config["global_batch"], [912, 896, 1536])
    assert logs.work_unit == "samples" and logs.samples_per_unit == 1.0
    np.testing.assert_allclose(logs.data.time_s, [612.84, 340.015, 134.812])
    epochs = read_training_runs(LOGS / "mllog_ssd", work="epochs")
    assert epochs.samples_per_unit == pytest.approx(117266.0)  # COCO's train_samples
    np.testing.assert_allclose(epochs.work * epochs.samples_per_unit, logs.work)
    csv = read_training_runs(ROOT / "datasets" / "time_to_train" / "mlperf07_dgxa100_ssd.csv")
    assert csv.data.gpus.size == 20 and csv.work_unit == "samples"
    first = {(g, b): w for g, b, w in zip(csv.data.gpus, csv.data.config["global_batch"], csv.work)}
    assert first[(8.0, 912.0)] == pytest.approx(logs.work[0])


@pytest.mark.parametrize(
    "content, message",
    [
        ("gpus,time_s,samples\n8,100,5\n", "no 'global_batch' column"),
        ("gpus,time_s,global_batch\n8,100,512\n", "no 'samples' or 'epochs' column"),
        (
            "gpus,time_s,global_batch,samples\n8,100,512,5\n16,60,512,-1\n",
            r"row 2 \(line 3\), column 'samples': expected a positive number of at most "
            r"1e\+16, got '-1'",
        ),
        ("gpus,throughput,global_batch,samples\n8,100,512,5\n", "a throughput column"),
        ("gpus,time_s,global_batch,samples\n8,100,512,1e300\n", "of at most 1e\\+16, got '1e300'"),
        (
            "gpus,time_s,global_batch,samples,samples\n8,100,512,5000,6000\n",
            r"runs.csv: column 'samples' appears twice in the header \(columns 4 and 5\)",
        ),
    ],
)
def test_training_runs_csv_errors(tmp_path, content, message):
    from perfmodel._readers import read_training_runs

    path = tmp_path / "runs.csv"
    path.write_text(content)
    with pytest.raises(InputError, match=message):
        read_training_runs(path)


@pytest.mark.parametrize(
    "rows, expected",
    [
        # 600 steps typed as samples: × the batch is near the other runs' samples.
        ("64,2048,600,170\n", "row 4 (line 6): samples 600 is less than global_batch 2048"),
        ("64,2048,600,170\n", "probably steps, not samples: × global_batch gives 1.229e+06"),
        # Samples per GPU: × 512 GPUs is near the others.
        ("512,4096,2400,60\n", "probably samples per GPU, not samples: × 512 GPUs gives"),
        # Neither reading fits the other runs.
        ("64,2048,3,170\n", "probably steps, samples per GPU or epochs, not samples"),
    ],
)
def test_a_run_under_one_step_to_the_target_is_warned(tmp_path, rows, expected):
    from perfmodel._readers import read_training_runs

    path = tmp_path / "runs.csv"
    path.write_text(
        "gpus,global_batch,samples,time_s\n8,256,1000000,1000\n16,512,1100000,520\n\n"
        "32,1024,1300000,300\n" + rows
    )
    runs = read_training_runs(path)
    assert len(runs.warnings) == 1 and expected in runs.warnings[0], runs.warnings
    np.testing.assert_array_equal(runs.data.lines, [2, 3, 5, 6])  # the blank line counted
    assert runs.work[0] == 1e6 and runs.work[2] == 1.3e6  # its rows read, not shifted


def test_a_csv_of_runs_with_a_blank_line_reads_each_rows_work(tmp_path):
    # pandas skipped the blank line the benchmark reader counts: the work column was read
    # one row off, and the last row ended in an IndexError.
    from perfmodel._readers import read_training_runs

    path = tmp_path / "runs.csv"
    path.write_text("gpus,global_batch,samples,time_s\n8,256,1e6,1000\n\n16,512,2e6,520\n")
    runs = read_training_runs(path)
    np.testing.assert_array_equal(runs.work, [1e6, 2e6])
    assert runs.warnings == ()


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_a_csv_of_runs_with_windows_or_old_mac_line_endings(tmp_path, newline):
    # Lone CRs (an old Mac export) ended in `_csv.Error: new-line character seen in
    # unquoted field`.
    from perfmodel._readers import read_training_runs

    path = tmp_path / "runs.csv"
    rows = ["gpus,global_batch,samples,time_s", "8,256,1e6,1000", "", "16,512,2e6,520", ""]
    path.write_bytes(newline.join(rows).encode())
    runs = read_training_runs(path)
    np.testing.assert_array_equal(runs.work, [1e6, 2e6])
    np.testing.assert_array_equal(runs.data.lines, [2, 4])


def test_a_tracker_csv_with_old_mac_line_endings(tmp_path):
    path = tmp_path / "m.csv"
    path.write_bytes(b"step,iteration_time\r10,120\r20,100\r30,101\r40,99\r")
    assert detect_format(path) == "csv"
    (run,) = read_runs(path, time_unit="ms", gpus=2)
    assert run.step_time_s == pytest.approx(0.100)


def test_training_runs_refuse_per_step_logs_and_bad_options():
    from perfmodel._readers import read_training_runs

    with pytest.raises(InputError, match="a megatron log gives step times"):
        read_training_runs(LOGS / "megatron")
    with pytest.raises(InputError, match="work: expected one of samples, epochs"):
        read_training_runs(LOGS / "mllog_ssd", work="tokens")
    with pytest.raises(InputError, match="format: expected mllog or csv"):
        read_training_runs(LOGS / "mllog_ssd", format="megatron")


def test_a_log_too_short_to_tell_its_warm_up_says_so(tmp_path):
    # Two logged intervals: "auto" cannot tell the warm-up (3012 ms) from the steady state
    # (842 ms), so the median keeps it, and the line that says what was read says so.
    from perfmodel._cli.logs import runs_line

    lines = MEGATRON.joinpath("gpt_8gpu.log").read_text().splitlines()
    iteration = [i for i, line in enumerate(lines) if "elapsed time per iteration" in line]
    (full,) = read_runs(MEGATRON / "gpt_8gpu.log")  # 12 intervals: the warm-up is dropped
    assert "fewer than 3 intervals" not in runs_line([full], "megatron", 1)
    path = tmp_path / "short.log"
    cut = set(iteration[2:])
    path.write_text("\n".join(x for i, x in enumerate(lines) if i not in cut) + "\n")
    (run,) = read_runs(path)
    assert run.warmup_dropped == 0 and run.steps_used == 2
    line = runs_line([run], "megatron", 1)
    assert "1 run(s) logged fewer than 3 intervals, so their warm-up is in the median" in line
    assert "--warmup STEPS" in line


def test_tracker_csv_with_trailing_commas_and_a_byte_order_mark(tmp_path):
    """A trailing comma on every row shifted every column by one (a step time of 1.0 s
    instead of 0.21 s, silently); a byte-order mark hid the step column; a row with an
    extra cell is refused with its line."""
    rows = ["0,0.000", "100,21.000", "200,42.000", "300,63.000", "400,84.000"]
    plain = write(tmp_path, text(["_step,_runtime", *rows]), "plain.csv")
    (expected,) = read_runs(plain, format="csv", gpus=8, global_batch=64)
    trailing = write(tmp_path, text(["_step,_runtime,", *(r + "," for r in rows)]), "t.csv")
    (run,) = read_runs(trailing, format="csv", gpus=8, global_batch=64)
    assert run.step_time_s == pytest.approx(expected.step_time_s) == pytest.approx(0.21)
    marked = tmp_path / "bom.csv"
    marked.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes())
    (run,) = read_runs(marked, format="csv", gpus=8, global_batch=64)
    assert run.step_time_s == pytest.approx(0.21)
    extra = write(tmp_path, text(["_step,_runtime", "0,0,5", *rows[1:]]), "x.csv")
    with pytest.raises(InputError, match=r"x.csv line 2: 3 cells, but the header has 2"):
        read_runs(extra, format="csv", gpus=8, global_batch=64)


def test_a_log_given_twice_is_refused(tmp_path):
    """It was read twice and counted as two runs, silently (a file and its folder too)."""
    log = MEGATRON / "gpt_8gpu.log"
    with pytest.raises(InputError, match=r"gpt_8gpu.log: given twice; each run counts once"):
        read_runs([log, log])
    with pytest.raises(InputError, match=r"gpt_8gpu.log: given twice; each run"):
        read_runs([MEGATRON, log])  # its folder, then the file
    link = tmp_path / "same.log"
    link.symlink_to(log)
    with pytest.raises(InputError, match=r"same.log: given twice \(also as .*gpt_8gpu.log\)"):
        read_runs([log, link])
