"""`optimal --json` names the count worth buying at its top level, beside the fastest."""

import json
from pathlib import Path

import pytest

from perfmodel._cli import main

CSV = Path(__file__).resolve().parent.parent / "datasets" / "tf_dgx1_p100_resnet50_real.csv"


@pytest.mark.slow  # 11 s: a fit and two answers from the command line
def test_the_count_worth_buying_is_at_the_top_and_is_the_one_the_text_opens_with(tmp_path, capsys):
    fit = tmp_path / "fit.json"
    argv = ["fit", str(CSV), "--gpus-per-node", "8", "--model", "usl", "-o", str(fit)]
    assert main(argv) == 0
    capsys.readouterr()
    assert main(["optimal", str(fit), "--max-gpus", "1024", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["worth_buying"] == document["recommendation"]["gpus"]
    interval = document["recommendation"]["interval"]
    assert interval["speedup_of"] == document["worth_buying"]
    assert main(["optimal", str(fit), "--max-gpus", "1024"]) == 0
    text = capsys.readouterr().out
    gpus = document["worth_buying"]
    assert text.startswith(f"Buy {gpus} GPU{'s' if gpus != 1 else ''}")
    # `gpus` stays the best count by the objective (the fastest), as documented.
    assert document["objective"] == "time" and document["gpus"] >= gpus


@pytest.mark.slow  # 13 s: two demo fits
def test_demo_answers_in_json_and_prints_efficiency_as_predict_does(capsys):
    assert main(["demo", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["recommendation"]["gpus"] >= 1
    assert [row["gpus"] for row in document["predictions"]][:3] == [1, 2, 4]
    assert document["predictions"][0]["efficiency"] == 1.0
    assert main(["demo"]) == 0
    table = capsys.readouterr().out.split("predictions:")[1]
    assert "100.0%" in table and " 1.0 " not in table
