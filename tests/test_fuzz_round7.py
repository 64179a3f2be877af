"""Inputs the seventh fuzzing round (2026-12-05) found answered with a traceback, a run
out of memory or a silent wrong number; each now gets one line naming the file and the
field, or the answer it should."""

import json
from pathlib import Path
import shutil

from helpers import refused, run_cli
import pytest

ROOT = Path(__file__).resolve().parent.parent
SSD = ROOT / "tests" / "data" / "logs" / "mllog_ssd"
BERT = ROOT / "tests" / "data" / "logs" / "mllog_bert_dgxa100_n1.txt"
SPACE = """[model]
family = "hybrid"
[fixed]
layers = 24
hidden = 2048
heads = 16
seq_len = 2048
vocab = 51200
global_batch = 64
gpus_per_node = 8
gpu_memory_bytes = 77.3e9
[axes]
gpus = [8, 16]
tp = [1, 2]
pp = [1, 2]
"""
RUNS = (
    "gpus,time_s,tp,pp,layers,hidden,heads,seq_len,vocab,global_batch,microbatch_size,"
    "recompute\n8,1.42,8,1,48,6144,64,2048,51200,{batch},4,full\n"
    "64,18.13,8,8,96,12288,96,2048,51200,64,1,full\n"
)


_run, _refused = run_cli, refused


@pytest.mark.parametrize(
    "axis, expected",
    [
        ("{ start = 1, stop = 8, step = 1e-320 }", "a range of inf values"),
        ("{ start = 8, stop = 8e12, step = 8 }", "a range of 1e+12 values"),
        ("{ start = 8, stop = 64, num = 1000000000000 }", "1e+12 values in one axis"),
    ],
)
def test_an_axis_too_long_to_hold_is_refused_even_with_yes(tmp_path, axis, expected):
    # A step of 1e-320 raised OverflowError; 8e12 values with --yes ran out of memory.
    space = tmp_path / "space.toml"
    space.write_text(SPACE.replace("tp = [1, 2]", f"tp = {axis}"))
    _refused(*_run("sweep", space, "--yes")[::2], "axes.tp", "one axis may hold")


@pytest.mark.slow  # a hybrid sweep: ~12 s
def test_sweep_reads_a_bom_and_names_a_misplaced_table_once(tmp_path):
    space = tmp_path / "space.toml"
    space.write_bytes(b"\xef\xbb\xbf" + SPACE.encode())
    code, out, err = _run("sweep", space)
    assert code == 0 and "valid layouts" in out, err
    space.write_text(SPACE + "[[sweep]]\nobjective = 'time'\n")
    code, _, err = _run("sweep", space)
    _refused(code, err, "[sweep] must be a table")
    assert err.count(str(space)) == 1


def test_distributed_options_without_distributed_are_refused(tmp_path):
    space = tmp_path / "space.toml"
    space.write_text(SPACE)
    _refused(*_run("sweep", space, "--init-timeout", "5")[::2], "--init-timeout: only with")
    _refused(*_run("sweep", space, "--coordinator", "x:1")[::2], "--coordinator: only with")


@pytest.mark.slow  # a hybrid fit and its predictions: ~45 s
def test_values_past_any_run_are_refused_where_runs_and_layouts_are_read(tmp_path):
    # global_batch = 1e300 failed in an SVD (fit) or was predicted inf s with "ok".
    runs = tmp_path / "runs.csv"
    runs.write_text(RUNS.format(batch="1e300"))
    code, _, err = _run("fit", runs, "--model", "hybrid")
    _refused(code, err, "row 1 (line 2), column 'global_batch': expected at most 1e+18")
    runs.write_text(RUNS.format(batch=4))
    fitted = tmp_path / "fit.json"
    code, _, err = _run("fit", runs, "--model", "hybrid", "--starts", "4", "-o", fitted)
    assert code == 0, err
    layouts = tmp_path / "layouts.csv"
    layouts.write_text("gpus,tp,pp,global_batch\n64,8,8,1e300\n")
    _refused(*_run("predict", fitted, "--layouts", layouts)[::2], "expected at most 1e+18")
    layouts.write_text("gpus,tp,pp\n2_80,8,8\n")
    _refused(*_run("predict", fitted, "--layouts", layouts)[::2], "expected a number")
    argv = ("predict", fitted, "--gpus", "64", "--tp", "8", "--pp", "8")
    _refused(*_run(*argv, "--set", "global_batch=1e300")[::2], "expected at most 1e+18")
    # Heads that do not divide hidden are an invalid layout wherever they come from.
    _refused(*_run(*argv, "--set", "heads=5000")[::2], "heads do not divide hidden")
    # A fit file whose defaults lost a workload field answered for another model.
    document = json.loads(fitted.read_text())
    del document["config_defaults"]["hidden"]
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(document))
    _refused(*_run(*argv[:1], edited, *argv[2:])[::2], "config_defaults.hidden: expected 12288")


@pytest.mark.slow  # 5 s: the default run stays under 4 minutes
def test_explain_refuses_a_factor_that_takes_a_term_to_nothing(tmp_path):
    data = tmp_path / "data.csv"
    data.write_text("gpus,time_s\n1,1.0\n2,0.52\n4,0.275\n8,0.15\n")
    fitted = tmp_path / "fit.json"
    assert _run("fit", data, "--model", "amdahl", "-o", fitted)[0] == 0
    with pytest.raises(SystemExit) as stopped:
        _run("explain", fitted, "--gpus", "8", "--factor", "1e100")
    assert stopped.value.code == 2


def _logs(tmp_path, name: str) -> Path:
    folder = tmp_path / name
    shutil.copytree(SSD, folder)
    return folder


def test_mlperf_logs_of_two_benchmarks_or_one_log_twice_are_refused(tmp_path):
    mixed = _logs(tmp_path, "mixed")
    shutil.copy(BERT, mixed / "bert.txt")
    _refused(*_run("fit", mixed)[::2], "' result, while", "fit one benchmark at a time")
    twice = _logs(tmp_path, "twice")
    first = sorted(twice.iterdir())[0]
    shutil.copy(first, twice / "copy.txt")
    _refused(*_run("fit", twice)[::2], "the same contents as")


def _edit_last_evaluation(folder: Path, edit, again: bool = False) -> None:
    """Edit the last ``eval_accuracy`` record of the first log in `folder` (`again`: a
    copy of it, edited, after it)."""
    path = sorted(folder.iterdir())[0]
    lines = path.read_text().splitlines()
    last = max(i for i, line in enumerate(lines) if '"eval_accuracy"' in line)
    record = json.loads(lines[last].split(":::MLLOG ", 1)[1])
    edit(record)
    lines[last + 1 if again else last : last + 1] = [":::MLLOG " + json.dumps(record)]
    path.write_text("\n".join(lines) + "\n")


def test_an_evaluation_out_of_epoch_order_is_refused(tmp_path):
    # A stale eval record at epoch 5 after epoch 50 made the work to the target 10× less.
    folder = _logs(tmp_path, "ooo")
    _edit_last_evaluation(folder, lambda r: r["metadata"].update(epoch_num=1), again=True)
    _refused(*_run("fit", folder)[::2], "eval_accuracy at epoch_num 1 after one at")


@pytest.fixture(scope="module")
def ssd_fit(tmp_path_factory):
    path = tmp_path_factory.mktemp("ttt") / "ssd.json"
    assert _run("fit", SSD, "-o", path)[0] == 0
    return path


@pytest.mark.parametrize(
    "edit, expected",
    [
        (lambda s: s.pop("noise_batch_interval"), "missing key 'noise_batch_interval'"),
        (lambda s: s["drift"].update(dof=1e308), "time_to_train.drift: expected"),
        (lambda s: s["drift"].update(tau=1e308), "time_to_train.drift: expected"),
        (lambda s: s.update(noise=-1), "time_to_train.noise: -1 is not what its runs give"),
        (
            lambda s: s["noise_batch_interval"].update(lo="abc"),
            "noise_batch_interval.lo: 'abc' is not what its runs give",
        ),
    ],
)
def test_an_edited_time_to_train_section_is_refused(ssd_fit, tmp_path, edit, expected):
    document = json.loads(ssd_fit.read_text())
    edit(document["time_to_train"])
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(document))
    argv = ("predict", path, "--gpus", "512", "--global-batch", "2048")
    _refused(*_run(*argv)[::2], expected)


@pytest.mark.parametrize(
    "key, value", [("factor", "bogus"), ("precision", "bogus"), ("loss", {"kind": "x", "value": 0})]
)
def test_a_collective_fit_file_with_an_unknown_choice_is_refused(tmp_path, key, value):
    import perfmodel as pm

    path = tmp_path / "coll.json"
    assert _run("fit-collective", "--dataset", "nccl_tests_44_2x2080ti", "-o", path)[0] == 0
    document = json.loads(path.read_text())
    document[key] = value
    path.write_text(json.dumps(document))
    with pytest.raises(pm.InputError, match="expected one of"):
        pm.load_collective_fit(path)


def test_an_evaluation_that_scored_nan_is_refused(tmp_path):
    folder = _logs(tmp_path, "nan")
    _edit_last_evaluation(folder, lambda r: r.update(value=float("nan")))  # json writes NaN
    _refused(*_run("fit", folder)[::2], "eval_accuracy is nan")


@pytest.mark.slow  # 5 s: the default run stays under 4 minutes
def test_a_speedup_without_an_interval_says_so_rather_than_0_to_inf(tmp_path):
    # Four measurements, four free parameters: no interval, which read "0–inf×".
    collective = tmp_path / "coll.json"
    assert _run("fit-collective", "--dataset", "nccl_tests_44_2x2080ti", "-o", collective)[0] == 0
    data = tmp_path / "dp.csv"
    data.write_text(
        "gpus,time_s,message_bytes,gpus_per_node\n1,0.100,1e8,2\n2,0.056,1e8,2\n"
        "4,0.032,1e8,2\n8,0.020,1e8,2\n"
    )
    code, out, err = _run("fit", data, "--model", "data_parallel", "--collective-fit", collective)
    assert code == 0, err
    assert "no confidence interval: the measurements leave a parameter free" in " ".join(
        out.split()
    )
    assert "0–inf" not in out


@pytest.mark.parametrize(
    "option, value", [("peak_flops", 1e-300), ("network_bandwidth", 400.0), ("nvlink_latency", 5)]
)
def test_a_gpu_number_no_accelerator_has_is_refused_naming_it(option, value):
    # A sweep space with peak_flops = 1e-300 reported every layout "out of memory".
    import perfmodel as pm

    with pytest.raises(pm.InputError, match=f"hybrid {option}: expected .* to "):
        pm.hybrid(**{option: value})
