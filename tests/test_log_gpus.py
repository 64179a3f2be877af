"""`--gpus 8,16` gives each training log its GPU count, in the order the logs are given."""

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
def test_a_speedup_interval_against_an_unmeasured_gpu_says_what_it_leaves_out(
    two_runs, tmp_path, capsys
):
    # Two runs at 8 and 16 GPUs read "speedup 5.61–5.81" beside a 1-GPU time of
    # 1.18–2.73 s, with no word that the 1-GPU time's own uncertainty is not in it.
    fit = tmp_path / "fit.json"
    argv = ["fit", *map(str, two_runs), "--format", "lightning", "--gpus", "8,16"]
    assert main([*argv, "-o", str(fit)]) == 0
    capsys.readouterr()
    assert main(["predict", str(fit), "--gpus", "1,8,21", "--interval", "0.9"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "extrapolated (no run below 8 GPUs was measured): its own uncertainty" in out
