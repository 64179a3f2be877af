"""`--gpus 8,16` gives each training log its GPU count, in the order the logs are given."""

import json
from pathlib import Path

import numpy as np
import pytest

import perfmodel as pm
from perfmodel._cli import main

LOG = Path(__file__).resolve().parent / "data" / "logs" / "lightning" / "version_0" / "metrics.csv"


@pytest.fixture
def two_runs(tmp_path):
    """The Lightning log at 8 GPUs and the same run at 16, its steps 1.8× shorter."""
    lines = LOG.read_text().splitlines()
    faster = [lines[0]]
    for line in lines[1:]:
        cells = line.split(",")
        if cells[2]:  # validation rows log no step time
            cells[2] = f"{float(cells[2]) / 1.8:.4f}"
        faster.append(",".join(cells))
    paths = []
    for name, text in (("g8", LOG.read_text()), ("g16", "\n".join(faster) + "\n")):
        (tmp_path / name).mkdir()
        paths.append(tmp_path / name / "metrics.csv")
        paths[-1].write_text(text)
    return paths


def test_one_count_per_log_in_the_order_given(two_runs):
    data = pm.read_log(two_runs, "lightning", gpus=[8, 16])
    assert list(data.gpus) == [8.0, 16.0]
    assert data.time_s[0] / data.time_s[1] == pytest.approx(1.8, rel=1e-3)
    swapped = pm.read_log(two_runs[::-1], "lightning", gpus=[16, 8])
    np.testing.assert_array_equal(np.sort(swapped.time_s), np.sort(data.time_s))


def test_counts_that_do_not_match_the_logs_are_one_line_errors(two_runs, capsys):
    with pytest.raises(pm.InputError, match="3 GPU counts for 2 log file"):
        pm.read_log(two_runs, "lightning", gpus=[8, 16, 32])
    with pytest.raises(pm.InputError, match="gpus: expected a whole number ≥ 1, got 2.5"):
        pm.read_log(two_runs, "lightning", gpus=[8, 2.5])
    argv = ["fit", *map(str, two_runs), "--format", "lightning", "--model", "amdahl"]
    assert main([*argv, "--gpus", "8,16,32"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "--gpus: 3 GPU counts for 2 log file(s)" in err
    assert main([*argv, "--gpus", "8,16"]) == 0
    assert "read 2 run(s) from 2 Lightning log(s)" in capsys.readouterr().err


@pytest.mark.slow  # 8 s: a default fit and its prediction intervals
def test_a_speedup_interval_against_an_unmeasured_gpu_carries_its_uncertainty(
    two_runs, tmp_path, capsys
):
    # Two runs at 8 and 16 GPUs read "speedup 5.61–5.81" beside a 1-GPU time of
    # 1.18–2.73 s: the interval left out the forecast 1-GPU time's uncertainty.
    fit = tmp_path / "fit.json"
    argv = ["fit", *map(str, two_runs), "--format", "lightning", "--gpus", "8,16"]
    assert main([*argv, "-o", str(fit)]) == 0
    capsys.readouterr()
    ask = ["predict", str(fit), "--gpus", "1,8,21", "--interval", "0.9"]
    assert main(ask) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "against each draw's own 1-GPU time, extrapolated (no run below 8 GPUs" in out
    assert main([*ask, "--json"]) == 0
    one, eight, _ = json.loads(capsys.readouterr().out)
    # At 8 GPUs (measured, ±2%) the speedup's interval is the 1-GPU time's, to a few %:
    # as low as its fastest, as high as perfect scaling from the 8-GPU run allows.
    low = eight["speedup"] * one["time_s_lo"] / one["time_s"]
    assert eight["speedup_lo"] == pytest.approx(low, rel=0.05)
    assert eight["speedup_hi"] <= 8.0 * (1 + 1e-9)
    assert eight["speedup_hi"] / eight["speedup_lo"] > 1.5  # it read 5.61–5.81 at 21
