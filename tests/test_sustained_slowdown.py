"""Past a sustained slowdown the default's forecast is not faster than the last measured
count (`_closed.sustained_slowdown`, `_closed.slowdown_hold`; review of 2026-12-07, H3:
the SPEC SDM91 table, fastest at 72 and slower at 108, 144 and 216, read "fastest: still
speeding up at 4096 GPUs")."""

import json

import jax
import numpy as np
import pytest

import perfmodel as pm
from perfmodel import _closed
from perfmodel._cli import main
from perfmodel._fitting import twin


@pytest.mark.parametrize(
    "gpus, u, expected",
    [
        ([1, 18, 36, 72, 108, 144, 216], [52, 3.6, 2.2, 1.87, 1.90, 1.95, 2.07], True),
        # one slower step, recovered by the next node (DLPerf RN50: 6862/s, 6018/s, 11618/s)
        ([1, 8, 16, 32], [1 / 880, 1 / 6862, 1 / 6018, 1 / 11618], False),
        ([1, 8, 16], [1 / 880, 1 / 6862, 1 / 6018], False),  # one slower step only
        ([1, 2, 4, 8], [1.0, 0.55, 0.3, 0.2], False),  # still speeding up
        ([4, 8], [1.0, 2.0], False),  # two counts: no two steps
        # replicates: the per-count medians rise (0.5, 0.6, 0.7), not every run
        ([1, 2, 2, 2, 4, 4, 4], [0.5, 0.4, 0.6, 0.9, 0.7, 0.65, 0.75], True),
        ([1, 2, 4, 4, 4], [0.5, 0.6, 0.4, 0.55, 0.9], False),  # median at 4 falls
        # two runs at 32: the median of the logs, 0.894, as the reference takes it (the
        # median of the times, 1.05, would say it rose)
        ([8, 16, 32, 32], [0.9, 1.0, 0.5, 1.6], False),
    ],
)
def test_a_sustained_slowdown_is_two_slower_steps_at_the_largest_counts(gpus, u, expected):
    assert _closed.sustained_slowdown(np.array(gpus, float), np.array(u, float)) is expected


def test_the_hold_keeps_the_curve_at_the_largest_count_past_it():
    n = np.array([8.0, 16.0, 32.0, 64.0])
    u = np.array([1.0, 1.2, 0.9, 0.5])
    held = _closed.slowdown_hold(np, n, u, 16.0, 1.2)
    assert held.tolist() == [1.0, 1.2, 1.2, 1.2]  # at and below 16 untouched


@pytest.fixture(scope="module")
def specsdm():
    with jax.enable_x64(True):
        return pm.fit_auto(pm.load_dataset("usl_specsdm91")).best


@pytest.mark.slow  # 6 s: the default fit of a shipped series
def test_a_table_that_slows_down_is_not_forecast_faster_again(specsdm):
    model = specsdm.model
    assert model.slowdown and dict(model.options)["slowdown"] is True
    counts = np.array([72.0, 216.0, 512.0, 4096.0])
    time = specsdm.predict(counts)["time_s"]
    assert time[2] >= time[1] * (1 - 1e-12) and time[3] >= time[1] * (1 - 1e-12)
    # The NumPy path that answers from a fit file holds it alike.
    numpy = twin.numpy_model(model)
    assert numpy is not None and numpy.slowdown
    with jax.enable_x64(True):
        jax_u = np.asarray(model(specsdm.config(counts)))
    np_u = np.asarray(numpy.seconds(counts, specsdm.config(counts)))
    np.testing.assert_allclose(np_u, jax_u, rtol=1e-9)
    # Where the hold carries the time its parts are those at the largest count, on both
    # paths (they were the far members' terms, scaled to a time they did not give).
    with jax.enable_x64(True):
        far = {k: float(v[0]) for k, v in model.breakdown(specsdm.config([4096.0])).items()}
        there = {k: float(v[0]) for k, v in model.breakdown(specsdm.config([216.0])).items()}
    assert far == pytest.approx(there, rel=1e-9)
    mirrored = numpy.breakdown(np.array([4096.0]), specsdm.config([4096.0]))
    assert {k: float(v[0]) for k, v in mirrored.items()} == pytest.approx(far, rel=1e-9)
    # The fastest count is inside the measurements (the USL's peak), not the search limit.
    best = pm.optimal_gpus(specsdm)
    assert 72 <= best.gpus <= 216 and not best.at_limit


@pytest.mark.slow  # 7 s: a fit and two answers through the command line
def test_the_command_line_answers_the_peak_and_keeps_the_rule_in_the_fit_file(
    tmp_path, capsys, cli_cache
):
    out = tmp_path / "fit.json"
    assert main(["fit", "usl_specsdm91", "-o", str(out)]) == 0
    document = json.loads(out.read_text())
    assert document["model"]["options"]["slowdown"] is True
    capsys.readouterr()
    assert main(["optimal", str(out), "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert 72 <= answer["gpus"] <= 216
    document["model"]["options"]["slowdown"] = "yes"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(document))
    assert main(["predict", str(bad), "--gpus", "8"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == (
        f"perfmodel: error: {bad}: model.options.slowdown: expected true or false, got 'yes'"
    )
