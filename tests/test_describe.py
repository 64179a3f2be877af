"""Results read well in Python: short reprs, and summaries that are the CLI's text."""

import dataclasses

from helpers import exact_fit as fitted
import numpy as np
import pytest

import perfmodel as pm
from perfmodel._fitting.select import Candidate


@pytest.fixture(scope="module")
def amdahl():
    model = pm.amdahl().with_parameters({"serial.time": 0.05, "compute.time": 0.95})
    return dataclasses.replace(
        fitted(model),
        free=("serial.time", "compute.time"),
        raw_covariance=np.diag([0.01, 0.0004]),
    )


def short(obj, lines: int = 1, chars: int = 400) -> bool:
    text = repr(obj)
    return text.count("\n") < lines and len(text) < chars and "array(" not in text


def test_fit_result_repr_and_summary(amdahl):
    assert short(amdahl) and repr(amdahl).startswith("<FitResult: amdahl on <arrays>")
    text = amdahl.summary()
    lines = text.splitlines()
    assert lines[0].startswith("<arrays>: 4 measurements") and "R² 1.0000" in lines[1]
    assert "serial.time" in text and "± (×)" in text
    assert f"{np.exp(0.1):.3g}" in text  # the spread as a factor, from the covariance


def test_undetermined_parameters_are_marked_and_last(amdahl):
    warning = "serial.time is not identifiable: the fit pushed it to the edge of its range"
    open_ = dataclasses.replace(amdahl, warnings=(warning,))
    rows = pm.FitResult.summary(open_).splitlines()
    table = [line for line in rows if line.lstrip().startswith(("serial.", "compute."))]
    assert table[-1].split()[:2] == ["serial.time", "—"] and "undetermined" in table[-1]
    assert any(line.startswith("undetermined: serial.time.") for line in rows)


def test_selection_repr_and_summary(amdahl):
    other = dataclasses.replace(amdahl, model=pm.usl())
    selection = pm.Selection(
        amdahl,
        "bic",
        (Candidate("amdahl", 2, amdahl, -30.0), Candidate("usl", 3, other, -29.0)),
    )
    assert short(selection) and "best amdahl, by bic" in repr(selection)
    text = selection.summary()
    assert text.startswith(amdahl.summary()) and "candidates (by bic" in text
    assert max(len(line) for line in text.splitlines()) <= 100


def test_question_results(amdahl):
    best = pm.optimal_gpus(amdahl, max_gpus=64)
    knee = pm.diminishing_returns(amdahl)
    assert short(best) and "64 GPUs" in repr(best) and "search limit" in best.summary()
    assert short(knee) and knee.summary().startswith(f"diminishing returns from {knee.gpus} GPUs")
    comparison = pm.compare_fits(amdahl, pm.what_if(amdahl, {"serial.time": "x0.5"}))
    assert short(comparison) and "serial.time 0.05 → 0.025" in repr(comparison)
    assert comparison.summary().splitlines()[0] == "what-if: serial.time 0.05 → 0.025"
    report = pm.sensitivity(amdahl, 64)
    assert short(report) and "at 64 GPUs" in report.summary()
    nxt = pm.next_measurements(amdahl, [16, 64], quantity="knee")
    assert short(nxt) and "ranked, most informative first:" in nxt.summary()


def test_benchmarks_repr():
    data = pm.from_arrays([1, 2, 4, 8, 16, 32, 64, 128, 256], np.linspace(1, 0.1, 9))
    assert short(data) and "9 measurements of time (s)" in repr(data) and "…" in repr(data)
