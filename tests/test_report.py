import base64
import html
import io
import json
import math
import re

import numpy as np
from PIL import Image
import pytest

import perfmodel as pm
from perfmodel._cli import main
from perfmodel._datasets import dataset_path
from perfmodel._fitting import meanings
from perfmodel._show.report import _html_table, _si, _Table, WIDEST_INTERVAL
from perfmodel._uncertainty.intervals import parameter_intervals, predict_interval

DATASET = "usl_specsdm91"  # throughput (scripts/hour) at 7 loads, with an interior peak
CSV = "gpus,time_s\n1,1.0\n2,0.52\n4,0.29\n"
# The full report runs fit_auto, intervals and sensitivities: tens of seconds on a CPU.
integration = pytest.mark.slow


@pytest.fixture(scope="module")
def fit_file(tmp_path_factory):
    """A quick USL fit saved as the CLI would (same shapes as tests/test_plot.py's)."""
    gpus = np.array([1, 1, 2, 4, 8, 8, 16, 32, 64, 64, 128, 256], dtype=float)
    data = pm.from_arrays(gpus, 0.002 + 1.0 / gpus + 2e-5 * (gpus - 1), source="quick.csv")
    path = tmp_path_factory.mktemp("quick") / "fit.json"
    pm.save_fit(pm.fit("usl", data, n_starts=8), path, {"selection": None})
    return path


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """`perfmodel fit DATASET.csv -o fit.json --report report.html`, then Markdown."""
    folder = tmp_path_factory.mktemp("report")
    csv = dataset_path(DATASET)
    fit_json, report = folder / "fit.json", folder / "report.html"
    assert main(["fit", str(csv), "-o", str(fit_json), "--report", str(report)]) == 0
    markdown = folder / "report.md"
    assert main(["report", str(fit_json), "-o", str(markdown)]) == 0
    return {
        "folder": folder,
        "fit": pm.load_fit(fit_json),
        "document": json.loads(fit_json.read_text()),
        "html": report.read_text(encoding="utf-8"),
        "md": markdown.read_text(encoding="utf-8"),
    }


def _section(page: str, title: str) -> str:
    start = page.index(f"<h2>{html.escape(title)}")
    end = page.find("<h2>", start + 1)
    return page[start : end if end > 0 else len(page)]


@integration
def test_html_is_one_self_contained_page(written):
    page = written["html"]
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert not re.search(r"(src|href)=\"(?!data:)", page)
    assert "<script" not in page and "<link" not in page
    (encoded,) = re.findall(r'src="data:image/png;base64,([^"]+)"', page)
    with Image.open(io.BytesIO(base64.b64decode(encoded))) as image:
        assert image.format == "PNG" and image.size == (1100, 800)


@integration
def test_html_answers_match_the_queries(written):
    fit = written["fit"]
    answers = _section(written["html"], "Answers")
    # What `perfmodel optimal` answers: whole nodes when the data state the node size.
    answer = pm.recommend(fit)
    best, knee = answer.optimum, answer.knee
    assert f"<td>GPUs worth buying</td><td>{answer.gpus} GPUs" in answers
    assert html.escape(answer.sentence) in answers
    assert f"<td>{best.gpus} GPUs" in answers  # then "(the search limit …)" when it is
    assert f"from {knee.gpus} GPUs" in answers
    bound = pm.amdahl_bound(fit)  # None for the default blend: no serial part far ahead
    assert (f"{bound:.4g}×" in answers) if bound is not None else ("Amdahl" not in answers)


@integration
def test_html_parameters_with_units_and_intervals(written):
    fit = written["fit"]
    table = _section(written["html"], f"Fitted parameters: {fit.family}")
    specs = fit.model.parameter_specs()
    open_ = pm._fitting.undetermined(fit)
    assert open_  # SDM91's amdahl.compute.time: the exact fit set it to 0
    for name in open_:
        assert f"<td>{name}</td><td>—</td><td>undetermined: the data show no such term" in table
    # The blend's coefficients: each with its member's own interval (SDM91's anchored
    # blend: 13 of them for 7 measurements, every member with residuals of its own).
    intervals = parameter_intervals(fit, 0.9)
    for name, (lo, hi) in intervals.items():
        unit = specs[name].unit
        if name in open_:
            continue
        assert f"<td>{name}</td><td>{_si(fit.parameters()[name], unit)}</td>" in table
        if lo == 0.0 and hi == math.inf:  # a member with no residual of its own
            assert f"<td>{name}</td><td>{_si(fit.parameters()[name], unit)}</td><td>none: " in table
        elif hi / lo > WIDEST_INTERVAL:  # said in words, not as 6e-73 ps – 3e+83 s
            cell = f"<td>{name}</td><td>{_si(fit.parameters()[name], unit)}</td>"
            assert f"{cell}<td>barely bounded by the data (wider than ×10000)" in table
        else:
            assert f"{_si(lo, unit)} – {_si(hi, unit)}" in table
        assert html.escape(meanings(fit)[name]) in table  # a power law's says its e too


@integration
def test_html_candidates_are_those_of_the_fit_file(written):
    table = _section(written["html"], "Candidate families")
    candidates = written["document"]["selection"]["candidates"]
    assert len(candidates) >= 2
    for row in candidates:
        assert f"<td>{row['family']}</td>" in table
    assert table.count("<tr>") == len(candidates) + 1


@integration
def test_html_predictions_carry_the_prediction_interval(written):
    fit = written["fit"]
    table = _section(written["html"], "Predictions")
    # SDM91 counts scripts per hour, read as scripts per second.
    assert "<th>throughput (scripts/s)</th><th>90% prediction interval</th>" in table
    band = predict_interval(fit, [72.0], level=0.9)
    lo, hi = band["throughput_lo"][0], band["throughput_hi"][0]
    assert f"<td>72 (measured)</td><td>{band['throughput'][0]:.4g}</td>" in table
    assert f"<td>{lo:.4g} – {hi:.4g}</td>" in table


@integration
def test_html_data_and_sensitivities(written):
    fit = written["fit"]
    data = _section(written["html"], "Data")
    assert data.count("<tr>") == fit.data.gpus.size + 1
    moves = _section(written["html"], "What would move it")
    answer = pm.sensitivity(fit, pm.recommend(fit).knee.gpus)
    for p in answer.ranked():  # a blend's shared parameters as one row each
        idle = "Changing nothing measurable here" in moves and f" {p.name}" in moves
        assert f"<td>{p.name}</td>" in moves or idle
    shared = {m for g in answer.groups for m in g.members}
    assert answer.groups and all(f"<td>{m}</td>" not in moves for m in shared)


@integration
def test_markdown_report_links_its_png(written):
    md = written["md"]
    assert md.startswith(f"# Scaling report: {DATASET}.csv")
    assert "![scaling plots of the fit](report.png)" in md
    assert "## Candidate families (by bic, lower is better)" in md
    with Image.open(written["folder"] / "report.png") as image:
        assert image.format == "PNG"


def test_si_formatting():
    assert _si(3.326e-4, "s") == "332.6 µs"
    assert _si(4.9e10, "B/s") == "49 GB/s"
    assert _si(2.5, "s") == "2.5 s"
    assert _si(2000.0, "s") == "2000 s"  # seconds never become ks
    assert _si(0.5, "1") == "0.5"
    assert _si(float("inf"), "s") == "—"


def test_tables_escape_html():
    text = _html_table(_Table("a <b>", [{"x": "<script>"}], note="1 < 2"))
    assert "<script>" not in text and "&lt;script&gt;" in text and "a &lt;b&gt;" in text


def _run(capsys, *argv):
    status = main([str(a) for a in argv])
    return status, capsys.readouterr().err


def test_bad_report_path_fails_before_fitting(tmp_path, capsys):
    csv = tmp_path / "bench.csv"
    csv.write_text(CSV)
    out = tmp_path / "fit.json"
    status, err = _run(capsys, "fit", csv, "-o", out, "--report", tmp_path / "r.txt")
    assert status == 2 and "unknown report format 'txt'; use .html, .md" in err
    status, err = _run(capsys, "fit", csv, "--report", tmp_path / "no" / "r.html")
    assert status == 2 and "does not exist" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bench.csv"]


def test_report_of_bad_fit_files(tmp_path, capsys, fit_file):
    document = json.loads(fit_file.read_text())
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps({**document, "schema_version": 99}))
    status, err = _run(capsys, "report", newer, "-o", tmp_path / "r.html")
    assert status == 2 and "schema version 99" in err
    for bad in ({"rows": []}, [1, 2], {"criterion": "aicc", "candidates": [3]}):
        broken = tmp_path / "broken.json"
        broken.write_text(json.dumps({**document, "selection": bad}))
        status, err = _run(capsys, "report", broken, "-o", tmp_path / "r.html")
        assert status == 2 and "malformed 'selection' in the fit file" in err
        assert len(err.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.json", "newer.json"]


def test_write_report_rejects_unknown_format(tmp_path, fit_file):
    with pytest.raises(pm.InputError, match="unknown report format 'pdf'"):
        pm.write_report(pm.load_fit(fit_file), tmp_path / "r.pdf")
    assert not list(tmp_path.iterdir())


def test_a_folder_of_logs_names_the_report(fit_file):
    import dataclasses

    from perfmodel._show.report import _title

    fit = pm.load_fit(fit_file)
    for source, title in [
        ("runs/ssd/ (seconds per step)", "Scaling report: ssd (seconds per step)"),
        ("data/bench.csv", "Scaling report: bench.csv"),
    ]:
        named = dataclasses.replace(fit, data=dataclasses.replace(fit.data, source=source))
        assert _title(named) == title


@integration
def test_the_report_keeps_the_caveats_of_the_answer(tmp_path, capsys):
    """The page said "GPUs worth buying | 92 GPUs" without the line `optimal` prints
    beside it: no node size was given for measurements that may share one node."""
    csv = tmp_path / "r8.csv"
    csv.write_text("gpus,time_s\n1,1.0\n2,0.505\n4,0.256\n8,0.13\n")
    fit_json, page = tmp_path / "fit.json", tmp_path / "report.md"
    assert main(["fit", str(csv), "--model", "amdahl", "-o", str(fit_json)]) == 0
    assert main(["report", str(fit_json), "-o", str(page)]) == 0
    capsys.readouterr()
    row = next(line for line in page.read_text().splitlines() if "GPUs worth buying" in line)
    assert "(extrapolated: at most 8 GPUs were measured)" in row
    assert "No node size given: if the 8 GPUs measured share one node" in row
