"""``-`` reads standard input, and a fit file piped in is read once for every use."""

import io
import json
from pathlib import Path
import sys

from perfmodel._cli import main

CSV = Path(__file__).resolve().parent.parent / "datasets" / "dle_mxnet_rn50_dgx1_fp32.csv"


def _stdin(monkeypatch, content: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(content)))


def test_a_fit_and_its_file_read_from_standard_input(tmp_path, monkeypatch, capsys):
    fit = tmp_path / "fit.json"
    assert main(["fit", str(CSV), "--model", "amdahl", "-o", str(fit), "--json"]) == 0
    from_file = json.loads(capsys.readouterr().out)
    _stdin(monkeypatch, CSV.read_bytes())
    assert main(["fit", "-", "--model", "amdahl", "--json"]) == 0
    from_stdin = json.loads(capsys.readouterr().out)
    assert from_stdin["parameters"] == from_file["parameters"]
    # A fit file is read several times (its cache mark, its sections, the fit): a pipe
    # gave its bytes to the first reader only, and the fit "was not JSON".
    assert main(["predict", str(fit), "--gpus", "16", "--json"]) == 0
    expected = json.loads(capsys.readouterr().out)
    for _ in range(2):  # each call reads its own standard input
        _stdin(monkeypatch, fit.read_bytes())
        assert main(["predict", "-", "--gpus", "16", "--json"]) == 0
        assert json.loads(capsys.readouterr().out) == expected


def test_empty_standard_input_is_a_one_line_error(monkeypatch, capsys):
    _stdin(monkeypatch, b"")
    assert main(["predict", "-", "--gpus", "4"]) != 0
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith("perfmodel: error: -: not a JSON fit file")


def test_a_bad_cell_from_standard_input_names_its_row(monkeypatch, capsys):
    _stdin(monkeypatch, b"gpus,time_s\n1,2.0\n2,abc\n")
    assert main(["fit", "-"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        "perfmodel: error: - row 2 (line 3), column 'time_s': expected a finite number, got 'abc'"
    )
