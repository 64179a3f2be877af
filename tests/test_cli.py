import json
import shutil
import subprocess
import sys

import pytest

from perfmodel._cli import main

CSV = "gpus,time_s\n" + "".join(
    f"{n},{t}\n"
    for n, t in [
        (1, 1.0),
        (2, 0.52),
        (4, 0.29),
        (8, 0.18),
        (16, 0.13),
        (32, 0.115),
        (1, 1.01),
        (8, 0.185),
    ]
)


@pytest.fixture(scope="module")
def fit_file(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli")
    csv = folder / "bench.csv"
    csv.write_text(CSV)
    out = folder / "fit.json"
    assert main(["fit", str(csv), "-o", str(out), "--model", "usl"]) == 0
    return out


def run(capsys, *argv):
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_fit_prints_table_and_writes_json(fit_file):
    document = json.loads(fit_file.read_text())
    assert document["model"]["family"] == "usl"
    assert set(document["parameters"]) == {
        "serial.time",
        "compute.time",
        "coherency.time",
    }


def test_fit_auto_json(capsys, tmp_path):
    csv = tmp_path / "bench.csv"
    csv.write_text(CSV)
    status, out, _ = run(capsys, "fit", str(csv), "--json")
    assert status == 0
    document = json.loads(out)
    families = {c["family"] for c in document["selection"]["candidates"]}
    assert families == {"usl", "amdahl", "pmnf"}
    assert document["model"]["family"] in families


def test_predict_json(capsys, fit_file):
    status, out, _ = run(capsys, "predict", str(fit_file), "--gpus", "1,2,4,8,64,1024", "--json")
    assert status == 0
    rows = json.loads(out)
    assert [r["gpus"] for r in rows] == [1, 2, 4, 8, 64, 1024]
    assert all(r["time_s"] > 0 for r in rows)
    assert rows[0]["speedup"] == pytest.approx(1.0)
    assert "throughput" not in rows[0]


def test_predict_table(capsys, fit_file):
    status, out, _ = run(capsys, "predict", str(fit_file), "--gpus", "1,8")
    assert status == 0 and "speedup" in out and "efficiency" in out


def test_optimal_json(capsys, fit_file):
    status, out, _ = run(capsys, "optimal", str(fit_file), "--max-gpus", "4096", "--json")
    assert status == 0
    document = json.loads(out)
    assert 1 <= document["gpus"] <= 4096
    assert document["diminishing_returns"]["gpus"] <= document["gpus"]
    assert document["amdahl_bound"] > document["speedup"]


def test_throughput_fit_predicts_throughput(capsys, tmp_path):
    csv = tmp_path / "x.csv"
    csv.write_text("gpus,throughput\n1,100\n2,190\n4,350\n8,600\n")
    out = tmp_path / "fit.json"
    assert main(["fit", str(csv), "-o", str(out), "--model", "amdahl"]) == 0
    capsys.readouterr()
    status, text, _ = run(capsys, "predict", str(out), "--gpus", "1,8", "--json")
    rows = json.loads(text)
    assert rows[1]["throughput"] == pytest.approx(600, rel=0.05)


@pytest.mark.parametrize(
    "csv_text, argv, message",
    [
        ("gpus,time_s\n1,1\n2,x\n", [], "row 2 (line 3), column 'time_s'"),
        ("gpus,time_s\n1,1\n2,-1\n", [], "expected a positive number"),
        ("gpus,time_s\n0,1\n", [], "column 'gpus'"),
        ("gpus,time_s\n", [], "header but no data rows"),
        ("gpus,time_s\n1,1\n2,0.6\n", ["--model", "usl"], "has 3 free parameters"),
        (
            "gpus,time_s\n1,1\n2,0.6\n4,0.4\n",
            ["--model", "nope"],
            "unknown model 'nope'",
        ),
        ("gpus,time_s\n1,1\n2,0.6\n4,0.4\n", ["--fix", "x=1"], "no parameter 'x'"),
        (
            "gpus,time_s\n1,1\n2,0.6\n4,0.4\n",
            ["--fix", "serial.time"],
            "expected name=value",
        ),
    ],
)
def test_bad_input_exits_2_and_writes_nothing(capsys, tmp_path, csv_text, argv, message):
    csv = tmp_path / "bench.csv"
    csv.write_text(csv_text)
    out = tmp_path / "fit.json"
    status, _, err = run(capsys, "fit", str(csv), "-o", str(out), *argv)
    assert status == 2
    assert message in err and "Traceback" not in err
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bench.csv"]


def test_bad_gpu_list(capsys, fit_file):
    status, _, err = run(capsys, "predict", str(fit_file), "--gpus", "1,0.5")
    assert status == 2 and "whole numbers" in err


def test_unknown_option_exits_2(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["fit", "x.csv", "--frobnicate"])
    assert exit_info.value.code == 2
    assert "unrecognized arguments: --frobnicate" in capsys.readouterr().err


def test_datasets_lists_shipped_series(capsys):
    status, out, _ = run(capsys, "datasets", "--json")
    names = {row["name"] for row in json.loads(out)}
    assert {"usl_specsdm91", "tf_dgx1_p100_vgg16_real"} <= names


def test_console_script_demo_has_no_traceback_on_error():
    exe = shutil.which("perfmodel") or f"{sys.executable} -m perfmodel"
    result = subprocess.run(
        [*exe.split(), "predict", "missing.json", "--gpus", "1"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2
    assert "missing.json: no such file" in result.stderr
    assert "Traceback" not in result.stderr


def test_demo_runs_on_shipped_dataset(capsys):
    status, out, _ = run(capsys, "demo")
    assert status == 0
    assert out.splitlines()[2].startswith("Buy ") and "predictions:" in out
