"""Measurements that follow one family exactly (data from a formula, not a machine) are
answered by that family, not by the default blend, whose hedge between laws is for
measured series (issue #9: never worse on the data it was given)."""

import json
import subprocess
import sys

import numpy as np
import pytest

import perfmodel as pm
from perfmodel._fitting.select import EXACT_MAPE_PERCENT

GPUS = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
SERIAL = 0.05  # Amdahl's serial share: the speedup is bounded by 1/SERIAL = 20


def _amdahl(gpus):
    return SERIAL + (1.0 - SERIAL) / gpus


@pytest.fixture(scope="module")
def exact():
    return pm.fit_auto(pm.from_arrays(GPUS, time_s=_amdahl(GPUS), source="amdahl.csv"))


def test_exact_amdahl_data_are_answered_by_amdahl_with_its_bound(exact):
    best = exact.best
    assert best.family == "amdahl" and exact.candidates[0].fit is best
    assert best.mape < EXACT_MAPE_PERCENT
    speedup = float(best.predict([4096.0])["speedup"][0])
    assert speedup == pytest.approx(1.0 / _amdahl(4096.0), rel=1e-5)  # 19.9×, not 122×
    assert any("follow amdahl exactly" in w for w in best.warnings)


def test_noisy_amdahl_data_keep_the_blend():
    # 1% noise: real measurements; the threshold is far below it.
    noise = 1.0 + 0.01 * np.array([1.0, -1.0, 0.5, -0.5, 1.0])
    selection = pm.fit_auto(pm.from_arrays(GPUS, time_s=_amdahl(GPUS) * noise))
    assert selection.best.family == "blend"


def test_a_law_with_a_term_the_data_do_not_show_keeps_the_blend():
    # A constant step time (perfect weak scaling) is Amdahl's law with no serial part:
    # exact, but the serial time is undetermined and its interval would be 0 to inf.
    selection = pm.fit_auto(pm.from_arrays(GPUS, time_s=np.ones_like(GPUS)))
    assert selection.best.family == "blend"


def test_too_few_counts_keep_the_blend():
    # Three counts: a 2-parameter family fits them closely without following it.
    gpus = GPUS[:3]
    selection = pm.fit_auto(pm.from_arrays(gpus, time_s=_amdahl(gpus)))
    assert selection.best.family == "blend"


def test_asking_for_single_families_is_unchanged():
    data = pm.from_arrays(GPUS, time_s=_amdahl(GPUS))
    chosen = pm.fit_auto(data, models=["usl", "amdahl"]).best
    assert chosen.family == "usl"  # the first preferred, as before: BIC ties within 2


@pytest.mark.slow  # two CLI processes; the Python path above is the same code
def test_cli_answers_the_bound_and_says_why(tmp_path):
    path = tmp_path / "amdahl.csv"
    rows = "".join(f"{int(n)},{float(t)!r}\n" for n, t in zip(GPUS, _amdahl(GPUS)))
    path.write_text("gpus,time_s\n" + rows)
    fit_file = tmp_path / "fit.json"
    run = [sys.executable, "-m", "perfmodel"]
    told = subprocess.run(
        [*run, "fit", str(path), "-o", str(fit_file)], capture_output=True, text=True, check=True
    )
    assert "follow amdahl exactly" in told.stdout + told.stderr
    out = subprocess.run(
        [*run, "optimal", str(fit_file), "--json"], capture_output=True, text=True, check=True
    ).stdout
    answer = json.loads(out)
    assert answer["amdahl_bound"] == pytest.approx(1.0 / SERIAL, rel=1e-6)
    assert answer["speedup"] == pytest.approx(1.0 / _amdahl(4096.0), rel=1e-5)
