"""What a bad-input review of 2026-12-06 found: each case once, as a user meets it."""

import json
import os
import re

import pytest

import perfmodel as pm
from perfmodel._cli import main

HERE = os.path.dirname(os.path.abspath(__file__))


def _csv(tmp_path, text: str) -> str:
    path = tmp_path / "runs.csv"
    path.write_text(text)
    return str(path)


def test_a_name_past_the_file_system_limit_is_no_dataset():
    # The answer cache looked for a shipped dataset of that name and reported "File name
    # too long" for a path the user never gave, instead of the real error.
    from perfmodel._files import shipped_csv, shipped_file

    assert shipped_csv("s" * 300) is None and shipped_file("datasets/" + "s" * 300) is None


@pytest.mark.slow  # 8 s: a first run with the answer cache on
def test_a_long_argument_gets_its_own_error_with_the_cache_on(cli_cache, tmp_path, capsys):
    data = _csv(tmp_path, "gpus,time_s\n1,10\n2,5.5\n4,3\n8,1.8\n")
    assert main(["fit", data, "--series", "s" * 300]) == 2
    assert "--series given but the file has no 'series' column" in capsys.readouterr().err


@pytest.mark.parametrize(
    "text, words",
    [
        ("gpus,time_s\n1,10\n,\n2,5.5\n4,3\n8,1.8\n", "line 3: no value in any cell (',')"),
        ("gpus,time_s\n1,10\n , \n2,5.5\n4,3\n", "line 3: no value in any cell"),
        (
            "gpus,time_s\n1,10\n2,5.5,\n4,3\n8,1.8\n",
            "line 3: 3 cells (the last empty: a trailing comma), but the header has 2 "
            "columns (gpus, time_s); a trailing comma is read only when every row has one",
        ),
        ("gpus,time_s\n1,10\n2,5.5\n4,3\n8,1.8,", "line 5: 3 cells (the last empty"),
    ],
)
def test_rows_read_as_nothing_are_refused_not_dropped(tmp_path, text, words):
    with pytest.raises(pm.InputError, match=re.escape(words)):
        pm.load_benchmarks(_csv(tmp_path, text))


def test_blank_lines_and_a_trailing_comma_on_every_row_are_read(tmp_path):
    plain = pm.load_benchmarks(_csv(tmp_path, "gpus,time_s\n1,10\n2,5.5\n4,3\n8,1.8\n"))
    for text in (
        "gpus,time_s\n1,10,\n2,5.5,\n4,3,\n8,1.8,\n",
        "gpus,time_s\n1,10\n\n2,5.5\n4,3\n\n8,1.8\n\n",
    ):
        data = pm.load_benchmarks(_csv(tmp_path, text))
        assert list(data.gpus) == list(plain.gpus) and list(data.time_s) == list(plain.time_s)


def test_a_folder_of_logs_too_large_to_walk_is_refused(tmp_path, monkeypatch):
    # `perfmodel fit /tmp` walked a 22 GB tree for minutes without a word.
    from perfmodel._readers import read

    for i in range(6):
        (tmp_path / f"note{i}.md").write_text("x")
    hidden = tmp_path / ".git"
    hidden.mkdir()
    (hidden / "run.log").write_text("not a run")  # a hidden folder is not entered
    monkeypatch.setattr(read, "MAX_FOLDER_ENTRIES", 5)
    with pytest.raises(pm.InputError, match="more than 5 files and folders; give the folder"):
        read.log_files(str(tmp_path))
    monkeypatch.setattr(read, "MAX_FOLDER_ENTRIES", 100)
    with pytest.raises(pm.InputError, match="a folder without log files"):
        read.log_files(str(tmp_path))


def test_a_nan_time_in_an_nccl_log_is_named_as_a_time(tmp_path, capsys):
    # In a log without a redop column, "nan" was refused as a reduction.
    with open(os.path.join(HERE, "data", "nccl", "nccl_tests_44_2x2080ti.log")) as stream:
        text = stream.read()
    row = re.search(r"^ +1048576 +131072 +float +47\.38", text, re.M)
    path = tmp_path / "nan.log"
    path.write_text(text[: row.end() - 5] + "  nan" + text[row.end() :])
    assert main(["fit-collective", str(path)]) == 2
    err = capsys.readouterr().err
    assert "expected a finite number for out_of_place time (us), got 'nan'" in err


def test_the_smallest_value_a_fit_file_names_is_taken():
    # "expected … between 1e-307 and 1e+307, got 1e-307": 1/1e307 rounds above 1e-307.
    from perfmodel._schema import parameter_ok

    spec = pm.amdahl().parameter_specs()["serial.time"]
    assert parameter_ok(spec, 1e-307) and parameter_ok(spec, 1e307)
    assert not parameter_ok(spec, 9e-308) and not parameter_ok(spec, 2e307)


def _sweep_of_amdahl(path, capsys, gpus: str, fixed: str = "") -> str:
    """What `perfmodel sweep` prints for an Amdahl space over `gpus` (a TOML value)."""
    body = f'[model]\nfamily = "amdahl"\n[fixed]\n"serial.time" = 0.01\n{fixed}'
    path.write_text(body + f'"compute.time" = 1.0\n[axes]\ngpus = {gpus}\n')
    assert main(["sweep", str(path)]) == 0
    return capsys.readouterr().out


def test_a_long_sweep_table_prints_its_ends(tmp_path, capsys):
    # A 10⁶-count gpus axis printed a 1.7-million-line table.
    out = _sweep_of_amdahl(tmp_path / "space.toml", capsys, "{ start = 1, stop = 100, step = 1 }")
    best = out.split("best per gpus")[1].split("\n\n")[0].splitlines()
    assert len(best) == 3 + 20 + 1 + 20 + 1  # title, header, rule, ends, gap, note
    assert best[-1] == "(… 60 rows between not shown; -o FILE.json writes every row)"
    assert best[3].split()[0] == "1" and best[-2].split()[0] == "100"


@pytest.mark.slow  # 3 s: a sweep through the command line
def test_a_sweep_says_what_its_costs_count(tmp_path, capsys):
    # cost_per_sample had no unit (newcomer review of 2026-12-06).
    out = _sweep_of_amdahl(tmp_path / "space.toml", capsys, "[1, 2, 4]")
    assert "costs (cost_per_sample, cost_to_train) in GPU-hours" in out
    out = _sweep_of_amdahl(tmp_path / "space.toml", capsys, "[1, 2]", "price_per_gpu_hour = 2.5\n")
    assert "in price_per_gpu_hour's currency" in out


def test_predict_prints_efficiency_as_a_percentage(tmp_path, capsys):
    # predict printed 0.9801 where every other command says 98% (newcomer review).
    csv, saved = tmp_path / "b.csv", tmp_path / "b.json"
    csv.write_text("gpus,time_s\n1,1.0\n2,0.55\n4,0.3\n8,0.18\n")
    assert main(["fit", str(csv), "--model", "amdahl", "-o", str(saved)]) == 0
    capsys.readouterr()
    assert main(["predict", str(saved), "--gpus", "1,8", "--wide"]) == 0
    rows = capsys.readouterr().out.splitlines()[-2:]
    assert rows[0].split()[-1] == "100.0%"
    assert main(["predict", str(saved), "--gpus", "8", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert rows[1].split()[-1] == f"{100 * row['efficiency']:.1f}%" and row["efficiency"] < 1


def test_a_missing_file_named_like_a_shipped_dataset_gets_a_hint(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # where no such files are
    with pytest.raises(pm.InputError, match=r"did you mean the shipped dataset 'usl_specsdm91'"):
        pm.load_benchmarks("usl_specsdm9")
    with pytest.raises(pm.InputError, match=r"perfmodel fit usl_specsdm91 -o fit.json makes"):
        pm.load_fit("usl_specsdm91")  # a dataset where a fit file is read
    with pytest.raises(pm.InputError, match=r"^nothing_like_it.csv: no such file$"):
        pm.load_benchmarks("nothing_like_it.csv")


@pytest.mark.slow  # 7 s: a recommendation with its interval draws
def test_an_interval_whose_draws_overflow_says_so(tmp_path):
    # A fit file edited to compute.time = 1e307 (inside the range a fit file takes) read
    # "90% confidence interval nan–nan×".
    import json

    fit = pm.fit(pm.amdahl(), pm.from_arrays([1, 2, 4, 8], [1.0, 0.52, 0.28, 0.16]))
    path = tmp_path / "fit.json"
    pm.save_fit(fit, path)
    document = json.loads(path.read_text())
    document["parameters"]["compute.time"]["value"] = 1e307
    document.pop("data_sha256", None)
    path.write_text(json.dumps(document))
    text = pm.recommend(pm.load_fit(path), max_gpus=100000).summary()
    assert "nan" not in text
    assert "no confidence interval: draws of these parameters overflow" in " ".join(text.split())


def test_a_gpu_memory_below_1_mib_in_a_csv_is_a_unit_slip(tmp_path):
    # Refused in --set and in space files, it was taken from a runs CSV.
    text = "gpus,time_s,gpu_memory_bytes\n8,1.4,80e9\n64,18.1,80\n"
    with pytest.raises(
        pm.InputError, match=r"row 2 \(line 3\), column 'gpu_memory_bytes': 80 bytes"
    ):
        pm.load_benchmarks(_csv(tmp_path, text))


def test_a_search_of_one_gpu_is_refused(tmp_path, capsys):
    # It answered "buy 1 GPU: speedup 1× (90% confidence interval 1–1×); each GPU still
    # adds at least 0.5× speedup at 1 GPU".
    with pytest.raises(SystemExit) as exit_:
        main(["optimal", "no-such-fit.json", "--max-gpus", "1"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "--max-gpus: expected a whole number in [2, 1000000]" in err
    assert "the search compares every GPU count from 1 to it" in err


@pytest.mark.slow  # 18 s: three default fits from the command line
def test_falling_step_times_read_as_weak_scaling_get_the_other_reading(tmp_path, capsys):
    # Newcomer review of 2026-12-06: a plateau of step times (log-log slope -0.18) was read
    # as a fixed batch per GPU and answered "Buy 64 GPUs" with R² -0.35, no word of the
    # shared-batch reading and no warning. Then (review of 2026-12-07) the other reading
    # was printed, but under the same headline: as a fixed batch per GPU these steps would
    # be 169% efficient, so they are now read as one global batch unless stated.
    data = _csv(tmp_path, "gpus,time_s\n1,10\n2,7\n4,6\n8,5.8\n16,5.9\n")
    assert main(["fit", data]) == 0
    captured = capsys.readouterr()
    out = " ".join(captured.out.split())
    assert out.startswith("Buy 1 GPU:") and "blend (strong regime)" in out
    assert "the step at 16 GPUs is 1.69× shorter than at 1: as steps of a fixed" in out
    assert "misses its own measurements" not in captured.err
    # Stated weak scaling is taken at its word, and the other reading is not printed:
    # the user said which.
    assert main(["fit", data, "--weak-scaling"]) == 0
    captured = capsys.readouterr()
    out, err = " ".join(captured.out.split()), captured.err
    assert "Buy 1 GPU" not in out and "global batch shared" not in out
    assert re.search(r"warning: the fit misses its own measurements: R² -0\.\d\d", err)
    # Step times that never shorten are weak scaling, clearly: no other reading.
    flat = _csv(tmp_path, "gpus,time_s\n1,1.0\n2,1.02\n4,1.05\n8,1.1\n")
    assert main(["fit", flat]) == 0
    captured = capsys.readouterr()
    assert "global batch shared" not in " ".join(captured.out.split())
    assert "misses its own measurements" not in captured.err


@pytest.mark.slow  # 9 s: a recommendation and its draws
def test_an_amdahl_bound_the_curve_never_nears_says_so(capsys):
    # Newcomer review of 2026-12-06: a USL fit printed "Amdahl bound on speedup: 74.34×"
    # under a fastest count of 28.9×.
    import dataclasses

    from perfmodel._cli.answers import print_optimal
    from perfmodel._questions.recommendation import Alternative

    fastest = Alternative("fastest", 93, 1.0, 28.9, 0.31, None, "GPU-hours", "fastest: 93 GPUs")
    answer = dataclasses.replace(
        pm.recommend(pm.fit("amdahl", pm.load_dataset("usl_specsdm91"))),
        alternatives=(fastest,),
        amdahl_bound=74.34,
    )
    print_optimal(answer)
    said = " ".join(capsys.readouterr().out.split())
    assert "Amdahl bound on speedup: 74.34× (the serial time's limit; this curve's other" in said
    print_optimal(dataclasses.replace(answer, amdahl_bound=30.0))
    assert "Amdahl bound on speedup: 30× " not in capsys.readouterr().out
