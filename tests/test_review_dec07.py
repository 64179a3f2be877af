"""Findings of the newcomer review of 2026-12-07 (the commands users try after the
quick start), each against the smallest input that showed it."""

from helpers import exact_fit as fitted

import perfmodel as pm
from perfmodel._cli.analysis import _header


def _result(source):
    return fitted(pm.amdahl(), pm.from_arrays([1, 2, 4], [1.0, 0.6, 0.4], source=source))


def test_a_step_series_that_names_its_unit_is_not_named_twice():
    # "… ssd.csv (seconds per step) (times in seconds per step)".
    assert _header(_result("runs.csv (seconds per step)")) == (
        "amdahl fit of runs.csv (seconds per step)"
    )
    assert _header(_result("runs.csv")) == "amdahl fit of runs.csv (times in seconds per step)"
