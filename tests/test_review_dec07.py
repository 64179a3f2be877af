"""Findings of the newcomer review of 2026-12-07 (the commands users try after the
quick start), each against the smallest input that showed it."""

from types import SimpleNamespace

from perfmodel._cli.analysis import _header


def _result(source, target="time", per_gpu=False):
    data = SimpleNamespace(source=source, unit="", per_gpu=per_gpu)
    return SimpleNamespace(label="batch_linear", target=target, data=data)


def test_a_step_series_that_names_its_unit_is_not_named_twice():
    # "… ssd.csv (seconds per step) (times in seconds per step)".
    step = _result("runs.csv (seconds per step)")
    assert _header(step) == "batch_linear fit of runs.csv (seconds per step)"
    plain = _result("runs.csv")
    assert _header(plain) == "batch_linear fit of runs.csv (times in seconds per step)"
