"""A newcomer's review of the Python API (2026-12-06): inputs that reached NumPy, pandas
or JAX unchecked, and a list of valid models that named one `fit` refuses."""

import re
import subprocess
import sys

from helpers import exact_fit as fitted
import pytest

import perfmodel as pm


@pytest.fixture(scope="module")
def amdahl_fit():
    return fitted(pm.amdahl().with_parameters({"serial.time": 0.05, "compute.time": 2.0}))


@pytest.mark.parametrize("gpus", [[[8, 16]], [[8], [16]]])
def test_an_interval_of_a_nested_list_of_counts_is_refused(amdahl_fit, gpus):
    # [[8, 16]] returned bounds of shape (4000, 2) beside a point of (1, 2); [[8], [16]]
    # was a NumPy broadcasting error, and speedup_interval a JAX gradient error.
    shape = "(1, 2)" if len(gpus) == 1 else "(2, 1)"
    said = f"gpus: expected a GPU count or a flat list of them, got an array of shape {shape}"
    with pytest.raises(pm.InputError, match=f"^{re.escape(said)}$"):
        pm.predict_interval(amdahl_fit, gpus, 0.9, method="laplace")
    with pytest.raises(pm.InputError, match="flat list of them"):
        pm.speedup_interval(amdahl_fit, gpus, 0.9, method="laplace")


@pytest.mark.slow  # 3 s (a process of its own): the default run stays under 4 minutes
def test_what_if_of_a_string_is_refused():
    # "serial.time=x0.5" was an AttributeError: 'str' object has no attribute 'items'.
    # In a process of its own: the tests' type checker refuses the str before the library.
    code = (
        "import perfmodel as pm\n"
        "from perfmodel._questions.whatif import split_changes\n"
        "try:\n"
        "    split_changes(None, 'serial.time=x0.5')\n"
        "except pm.InputError as error:\n"
        "    print(error)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith('changes: expected a mapping of names to values, e.g. {"serial')


def test_nested_arrays_are_refused_with_their_column():
    # pandas said "Per-column arrays must each be 1-dimensional".
    with pytest.raises(pm.InputError, match=r"^<arrays>, column 'gpus': expected one value"):
        pm.from_arrays([[1, 2], [4, 8]], [[1, 0.5], [0.3, 0.2]])


@pytest.mark.parametrize(
    "name, said",
    [
        ("Amdahl", r"^unknown model 'Amdahl' \(did you mean 'amdahl'\?\); valid: amdahl, usl"),
        ("usll", r"^unknown model 'usll' \(did you mean 'usl'\?\)"),
        ("blend", r"^the blend is the default fit, made by fit_auto .*: amdahl, usl"),
    ],
)
def test_a_model_name_fit_does_not_take_names_those_it_does(name, said):
    data = pm.from_arrays([1, 2, 4, 8], [1.0, 0.55, 0.3, 0.18])
    with pytest.raises(pm.InputError, match=said) as refused:
        pm.fit(name, data)
    valid = str(refused.value).split(": ")[-1] if name == "blend" else str(refused.value)
    assert ", blend," not in valid  # "valid: …, blend, …" listed the one name fit refuses


def test_a_node_size_the_data_never_gave_reads_unset(amdahl_fit):
    # "gpus_per_node 8 → 16" named the field's default as if the data had said 8.
    changed = pm.what_if(amdahl_fit, {"gpus_per_node": 16})
    comparison = pm.compare_fits(amdahl_fit, changed, max_gpus=64)
    assert comparison.changes["gpus_per_node"] == (None, 16.0)
    assert "gpus_per_node unset → 16" in repr(comparison)
    assert comparison.summary().startswith("what-if: gpus_per_node unset → 16\n")
    again = pm.compare_fits(changed, pm.what_if(changed, {"gpus_per_node": 8}), max_gpus=64)
    assert again.changes["gpus_per_node"] == (16.0, 8.0)


def test_from_arrays_states_the_scaling_as_the_hint_says():
    # The hint said scaling="strong" in Python, which from_arrays refused as a TypeError.
    data = pm.from_arrays([8, 16, 32, 64], [1.21, 0.66, 0.39, 0.25], scaling="strong")
    assert data.scaling == "strong"
    with pytest.raises(pm.InputError, match="^scaling must be 'weak' or 'strong', got 'fixed'"):
        pm.from_arrays([8, 16], [1.0, 0.6], scaling="fixed")


def test_benchmarks_and_a_requirement_have_a_summary(amdahl_fit):
    one = pm.from_arrays([8], [1.0])
    assert repr(one) == "<Benchmarks: <arrays>: 1 measurement of time (s); GPUs 8>"
    assert (
        one.summary()
        == "<arrays>: 1 measurement, 1 distinct configuration, target time (s)\nGPUs 8"
    )
    answer = pm.require(amdahl_fit, parameter="serial.time", target=("efficiency", 0.5), gpus=16)
    lines = answer.summary().splitlines()
    assert lines[0] == answer.message and lines[1].startswith("values of serial.time that meet")


def test_the_fastest_count_past_a_measured_peak_says_its_rise_is_extrapolated():
    # optimal_gpus said "fastest: 4096 GPUs" of measurements fastest at 8 GPUs and 16%
    # slower at 16, where recommend and `perfmodel optimal` said the rise is extrapolated.
    data = pm.from_arrays([1, 2, 4, 8, 16], [1.0, 0.6, 0.45, 0.42, 0.5])
    model = pm.amdahl().with_parameters({"serial.time": 0.3, "compute.time": 0.7})
    best = pm.optimal_gpus(fitted(model, data))
    assert best.gpus == 4096 and best.note.startswith("the measurements are fastest at 8 GPUs")
    assert "; the measurements are fastest at 8 GPUs and 16% slower at 16: the rise" in repr(best)
    assert pm.optimal_gpus(fitted(model), max_gpus=64).note == ""  # no peak measured


def test_an_optimum_says_its_interval_and_the_search_limit_in_one_parenthesis():
    from perfmodel._questions.query import Optimum

    def said(interval, gpus=4096):
        best = Optimum(gpus, 0.1, 4.5, 4.5 / gpus, 0.1 * gpus, None, "time", 4096, gpus == 4096)
        return pm.Optimum(**{**best.__dict__, "gpus_interval": interval, "level": 0.9}).summary()

    assert said((398, 4096)).startswith(
        "fastest: 4096 GPUs (90% confidence interval 398 to 4096; the search limit: more GPUs"
    )
    assert said((4096, 4096)).startswith("fastest: 4096 GPUs (90% confidence interval: 4096 alone;")
    assert said(None).startswith("fastest: 4096 GPUs (the search limit: more GPUs may still help)")
    assert said((8, 16), gpus=16).startswith("fastest: 16 GPUs (90% confidence interval 8 to 16),")
