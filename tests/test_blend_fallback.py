"""Where the default blend misses its own measurements, its measured range is handed over
to the family fitted with equal weights that fits them (the anchor), and nothing past
the measurements changes (issue #9: never worse on the data it was given)."""

import dataclasses
import json

import jax
import numpy as np
import pytest
from test_saved import same_answers

import perfmodel as pm
from perfmodel._closed import INSIDE
from perfmodel._errors import InputError
from perfmodel._fitting import LAMBDA
from perfmodel._fitting.blend import ANCHOR_MISS_PERCENT, ANCHOR_MISS_RATIO, fit_members
from perfmodel._fitting.canonical import per_unit_of_work
from perfmodel._saved import read_saved
from perfmodel._show.report import report_markdown
from perfmodel._uncertainty.conformal import calibrated, training_rms

# Step times of a fixed amount of work that stop falling by 32 GPUs: the unanchored
# blend misses the small counts by 13%, USL fits within 1%.
LEVELS_OFF = ([1, 2, 4, 8, 16, 32, 1, 8], [1.0, 0.52, 0.29, 0.18, 0.13, 0.115, 1.01, 0.185])


@pytest.fixture(scope="module")
def sdm91():
    # SPEC SDM91 load test: the members' (N/N_max)² weights ignore the smallest counts.
    return pm.fit_auto(pm.load_dataset("usl_specsdm91")).best


def _mape(model, fit) -> float:
    with jax.enable_x64(True):
        predicted = np.asarray(model(fit.data.to_config()))
    return 100.0 * float(np.mean(np.abs(fit.data.as_measured(predicted) / fit.data.measured - 1)))


def test_a_blend_that_misses_its_table_is_anchored_on_the_family_that_fits(sdm91):
    model = sdm91.model
    assert sdm91.family == "blend" and model.anchor == "usl_flat"
    unanchored = _mape(model.without_anchor(), sdm91)
    anchor = model.members[model.names.index("usl_flat")]
    assert unanchored > max(ANCHOR_MISS_PERCENT, ANCHOR_MISS_RATIO * _mape(anchor, sdm91))
    assert unanchored > 100.0 and sdm91.mape < 6.0  # 731% before anchoring
    assert sdm91.mape == pytest.approx(_mape(model, sdm91), rel=1e-9)
    assert not any("misses its own measurements" in w for w in sdm91.warnings)
    assert "anchored on usl_flat" in sdm91.message


def test_the_anchor_answers_inside_the_range_and_nothing_changes_past_it(sdm91):
    model = sdm91.model
    anchor = model.members[model.names.index("usl_flat")]
    inside = np.array([1.0, 18.0, 54.0, 108.0])  # up to half the largest count (216)
    past = np.array([216.0, 300.0, 432.0, 864.0, 4096.0])
    ramp = np.array([150.0, 200.0])
    with jax.enable_x64(True):
        at = lambda m, n: np.asarray(m(sdm91.config(n)))  # noqa: E731
        np.testing.assert_allclose(at(model, inside), at(anchor, inside), rtol=1e-12)
        np.testing.assert_array_equal(at(model, past), at(model.without_anchor(), past))
        weights = model.weights(sdm91.config(ramp))
    share = np.log2(216.0 / ramp)  # ANCHOR_SPAN = 1 doubling
    np.testing.assert_allclose(np.asarray(weights["usl_flat"]), share, rtol=1e-12)
    np.testing.assert_allclose(sum(np.asarray(w) for w in weights.values()), 1.0, rtol=1e-12)


def test_intervals_past_the_range_are_those_of_the_unanchored_curve(sdm91):
    with jax.enable_x64(True):
        predicted = np.asarray(sdm91.model.without_anchor()(sdm91.data.to_config()))
    residuals = np.log(sdm91.data.as_measured(predicted) / sdm91.data.measured)
    assert training_rms(sdm91) == pytest.approx(float(np.sqrt(np.mean(residuals**2))))
    assert training_rms(sdm91) > float(np.sqrt(np.mean(np.asarray(sdm91.residuals) ** 2)))


def test_intervals_inside_the_range_use_the_anchored_curves_error(sdm91):
    gpus = np.array([1.0, 18.0, 108.0, 150.0, 216.0, 432.0])
    with jax.enable_x64(True):
        config = sdm91.config(gpus)
        anchored = calibrated(sdm91)
        unanchored = dataclasses.replace(anchored, rms_inside=None)
        ours, theirs = (np.asarray(c.scale(config)) for c in (anchored, unanchored))
        spread = np.asarray(sdm91.model.spread(config))
    np.testing.assert_array_equal(ours[4:], theirs[4:])  # from the largest count on
    assert np.all(ours[:4] < theirs[:4])
    # s = (max(d, 0.25) + κ·D + λ·(a·r_in + (1 − a)·r))·(1 + (INSIDE − 1)·a): at 150
    # GPUs a = log2(216/150); 1 GPU is the smallest measured count (no DOWN term).
    share = np.log2(216.0 / gpus[:4]).clip(0.0, 1.0)
    r, r_in = float(anchored.rms), float(anchored.rms_inside)
    expected = theirs[:4] - share * LAMBDA * (r - r_in) * (1.0 + (INSIDE - 1.0) * share)
    assert np.ptp(spread[:4]) > 0  # D varies: speedups inside the range keep an interval
    np.testing.assert_allclose(ours[:4], expected, rtol=1e-12)


def test_an_anchored_fit_file_reads_back_the_same_on_both_paths(sdm91, tmp_path):
    path = tmp_path / "sdm91.json"
    pm.save_fit(sdm91, path)
    document = json.loads(path.read_text())
    assert document["model"]["options"]["anchor"] == "usl_flat"
    (component,) = [c for c in document["model"]["components"] if c.get("anchor")]
    assert component["name"] == "usl_flat" and component["weight"] == component["far"] == 0
    gpus = [1, 18, 150, 216, 432, 4096]
    expected = sdm91.predict(gpus)["throughput"]
    np.testing.assert_allclose(pm.load_fit(path).predict(gpus)["throughput"], expected, rtol=1e-12)
    saved = read_saved(path)  # the NumPy path of the command line
    np.testing.assert_allclose(saved.predict(gpus)["throughput"], expected, rtol=1e-12)


@pytest.mark.slow  # 23 s: every answer of the command line on both paths
def test_an_anchored_fit_file_answers_the_same_without_jax(sdm91, tmp_path):
    pm.save_fit(sdm91, tmp_path / "sdm91.json")
    same_answers(tmp_path / "sdm91.json")  # predictions, curves, intervals, searches


def test_an_edited_anchor_is_refused_in_one_line(sdm91, tmp_path):
    path = tmp_path / "edited.json"
    pm.save_fit(sdm91, path)
    document = json.loads(path.read_text())
    document["model"]["options"]["anchor"] = "ernest_flat"
    path.write_text(json.dumps(document))
    with pytest.raises(InputError, match=r"model\.options.*anchor must be one of"):
        pm.load_fit(path)


def test_a_time_curve_that_levels_off_is_anchored_too():
    data = pm.from_arrays(*LEVELS_OFF)
    blend = pm.fit_auto(data).best
    assert blend.model.anchor == "usl_flat"
    assert _mape(blend.model.without_anchor(), blend) > 10.0 and blend.mape < 1.5


def test_a_blend_that_fits_is_not_anchored():
    data, _ = per_unit_of_work(pm.load_dataset("tf_dgx1_p100_resnet50_real"))
    with jax.enable_x64(True):
        model = fit_members(data)
    assert model.anchor == "" and model.without_anchor() is model
    selection = pm.fit_auto(pm.load_dataset("tf_dgx1_p100_resnet50_real"))
    assert selection.best.model.anchor == "" and selection.best.mape < ANCHOR_MISS_PERCENT
    assert not any("misses its own measurements" in w for w in selection.best.warnings)


@pytest.mark.slow  # 6 s: three recommendations and a report
def test_a_peak_inside_the_measurements_is_named_when_the_fastest_count_is_past_them(sdm91):
    # Fastest at 8 GPUs and 16% slower at 16: one slower step (a node crossing may be
    # recovered by the next node), so no hold, and the blend's far families turn back up
    # past the measurements.
    dip = pm.fit_auto(pm.from_arrays([1, 2, 4, 8, 16], time_s=[1.0, 0.6, 0.45, 0.42, 0.5])).best
    assert not dip.model.slowdown
    fastest = pm.recommend(dip, level=None).alternatives[0]
    assert fastest.gpus > 16
    note = "the measurements are fastest at 8 GPUs and 16% slower at 16"
    assert note in fastest.sentence
    assert note in report_markdown(dip, image="x.png")  # the report's fastest row too
    coarse = pm.recommend(dip, level=None, multiple_of=512).alternatives[0]
    assert "fastest at 8" not in coarse.sentence  # no count inside the measurements offered
    # SDM91 is slower at each of its last two steps (72 → 108 → 144 → 216): held past
    # them, its fastest count is inside the measurements, and no note is needed.
    held = pm.recommend(sdm91, level=None).alternatives[0]
    assert 72 <= held.gpus <= 216 and "fastest at 72" not in held.sentence
    rising = pm.fit_auto(pm.from_arrays([1, 2, 4, 8, 16], throughput=[1, 1.9, 3.6, 6.5, 11]))
    still = pm.recommend(rising.best, level=None)
    assert still.alternatives[0].gpus > 16 and "fastest at" not in still.alternatives[0].sentence


@pytest.mark.slow  # 7 s: a what-if refit of an anchored blend
def test_a_what_if_keeps_the_fits_own_error_and_the_fit_says_it_is_anchored(sdm91):
    changed = pm.what_if(sdm91, {"amdahl.serial.time": "x3"})
    assert training_rms(changed) == training_rms(sdm91)  # the fit's, not the changed curve's
    (note,) = [w for w in sdm91.warnings if w.startswith("anchored:")]
    assert "would miss these measurements by 731%" in note and "up to 108 GPUs" in note
    assert f"Warning: {note}" in report_markdown(sdm91, image="x.png")


@pytest.mark.slow  # the default run refuses an edited anchor in test_an_edited_anchor_…
@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda d: d["model"]["options"].update(anchor="usl"), r"model\.options\.anchor: blend"),
        (
            lambda d: next(c for c in d["model"]["components"] if c["name"] == "usl").update(
                anchor=True
            ),
            r"model\.components\[4\]\.anchor: expected false",
        ),
        (
            lambda d: next(c for c in d["model"]["components"] if c.get("anchor")).pop("anchor"),
            r"model\.components\[5\]\.anchor: expected true",
        ),
    ],
)
def test_edited_anchor_fields_are_refused_naming_the_field(sdm91, tmp_path, edit, message):
    path = tmp_path / "edited.json"
    pm.save_fit(sdm91, path)
    document = json.loads(path.read_text())
    edit(document)
    path.write_text(json.dumps(document))
    with pytest.raises(InputError, match=message):
        pm.load_fit(path)


@pytest.mark.slow  # 3 s: the default run stays under 4 minutes
def test_gpus_for_a_serial_share_where_the_blends_serial_part_vanishes(sdm91):
    # Far out the members with a serial term have no weight: the share is exactly 0, and
    # log 0 = −inf is a share that meets every ceiling, not a gap in the curve. (Without
    # the hold past SDM91's sustained slowdown, which keeps the parts at 216 from there.)
    sdm91 = dataclasses.replace(sdm91, model=dataclasses.replace(sdm91.model, slowdown=False))
    for goal in (0.1, 0.2, 0.4, 0.6):
        answer = pm.require(sdm91, parameter="gpus", target=("serial_share", goal))
        assert answer.reachable and "Traceback" not in answer.message
        # No zero-width range (the curve touching the target at 0.4 listed one).
        assert all(lo < hi for lo, hi in answer.feasible)
    answer = pm.require(sdm91, parameter="gpus", target=("serial_share", 0.2))
    assert answer.side == "≤" and answer.value == 19 and answer.best == 0.0
    (_, first), (again, last) = answer.feasible
    assert first == pytest.approx(answer.exact) and 216 < again < last
    assert "holds up to 19 GPUs" in answer.message and "and again from" in answer.message
