"""Round 15, from the review and fuzz of round 13: a parameter the data leave undetermined
reads as such from Python too (it printed 2.3e-22), and a log's GPU-count or batch
column that disagrees with the value given for it is refused (``--gpus`` had silently
replaced a column of 1, 2, 4, 8)."""

from helpers import refused, run_cli
import pytest

import perfmodel as pm
from perfmodel._readers import read_runs


@pytest.fixture(scope="module")
def usl_without_coherency():
    # Amdahl's law exactly: USL's coherency term has nothing to fit.
    data = pm.from_arrays(gpus=[1, 2, 4, 8], time_s=[1.0, 0.55, 0.325, 0.2125])
    return pm.fit("usl", data)


def test_an_undetermined_parameter_is_named_and_not_shown_as_a_value(usl_without_coherency):
    fit = usl_without_coherency
    assert fit.undetermined == ("coherency.time",)
    assert fit.parameters()["coherency.time"] < 1e-12  # where the fit left it
    text = repr(fit)
    assert "coherency.time=undetermined" in text and "serial.time=0.1" in text
    assert "undetermined: coherency.time" in fit.summary()


def test_a_determined_fit_has_nothing_undetermined():
    fit = pm.fit("amdahl", pm.from_arrays([1, 2, 4, 8], [1.0, 0.56, 0.31, 0.2]))
    assert fit.undetermined == () and "undetermined" not in repr(fit)


def _tracker(tmp_path, gpus):
    path = tmp_path / "run.csv"
    rows = [f"{step},{step * 0.2:.1f},{gpus[i]}" for i, step in enumerate(range(0, 50, 10))]
    path.write_text("_step,_runtime,gpus\n" + "\n".join(rows) + "\n")
    return path


def test_a_gpus_column_that_disagrees_with_the_gpus_given_is_refused(tmp_path):
    varying = _tracker(tmp_path, [1, 2, 4, 8, 8])
    with pytest.raises(pm.InputError, match=r"run.csv line 2, column 'gpus': GPU count 1 "):
        read_runs(varying, format="csv", gpus=8, global_batch=64)
    refused(
        *run_cli("fit", varying, "--format", "csv", "--gpus", "8", "--global-batch", "64")[::2],
        "run.csv line 2, column 'gpus'",
        "disagrees with the --gpus given (8)",
    )


def test_a_gpus_column_that_agrees_with_the_gpus_given_is_read(tmp_path):
    same = _tracker(tmp_path, [8] * 5)
    (run,) = read_runs(same, format="csv", gpus=8, global_batch=64)
    (alone,) = read_runs(same, format="csv", global_batch=64)
    assert run.gpus == alone.gpus == 8 and run.step_time_s == pytest.approx(0.2)
