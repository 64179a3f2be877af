"""What the seventh newcomer review (2026-12-05) found read wrongly, outside the hybrid
layouts (those are in tests/test_hybrid_cli.py and tests/test_layout_knee.py)."""

import numpy as np
import pytest

import perfmodel as pm
from perfmodel._errors import InputError


@pytest.mark.parametrize(
    "header, option, cell, expected",
    [
        ("gpus,iter_time_s", dict(time_column="iter_time_s"), "", "empty cell"),
        ("gpus,iter_time_s", dict(time_column="iter_time_s"), "-1", "a positive number"),
        ("gpus,my_rate", dict(throughput_column="my_rate"), "", "empty cell"),
    ],
)
def test_a_bad_cell_is_named_by_the_column_the_file_has(tmp_path, header, option, cell, expected):
    # It said "column 'time_s'" of a file whose column is iter_time_s.
    path = tmp_path / "runs.csv"
    path.write_text(f"{header}\n1,1.0\n2,{cell}\n4,0.3\n")
    with pytest.raises(InputError) as caught:
        pm.load_benchmarks(path, **option)
    column = header.split(",")[1]
    assert f"row 2 (line 3), column '{column}'" in str(caught.value)
    assert expected in str(caught.value)


@pytest.mark.slow  # 2 s: the default run stays under 4 minutes
def test_a_parameter_on_its_bound_has_no_spread_but_says_so():
    # A hybrid fit's e_max capped at 0.95 was shown "± (×) 2.37", read as e_max ≤ 2.25.
    from perfmodel._fitting.describe import parameter_rows

    data = pm.from_arrays([1, 2, 4, 8, 16], [1.0, 0.52, 0.275, 0.15, 0.09])
    free = pm.fit("amdahl", data)
    assert free.parameters()["serial.time"] < 0.05
    capped = pm.fit("amdahl", data, bounds={"serial.time": (0.05, 0.2)})
    spread = {row["parameter"]: row["± (×)"] for row in parameter_rows(capped)}
    assert spread["serial.time"] == "at bound" and spread["compute.time"] not in ("at bound",)


class _Data:
    gpus = np.array([8.0, 16.0])
    time_s = np.array([0.1, 0.1])
    config = {"global_batch": np.array([912.0, 1824.0])}
    per_gpu = False


class _Fit:
    """A fit whose one-GPU step time is 1 ms per sample of its global batch."""

    data = _Data()
    config_defaults = {"global_batch": 2048.0}

    def predict(self, gpus, global_batch=2048.0):
        gpus = np.asarray(gpus, dtype=float)
        return {"time_s": np.broadcast_to(np.asarray(global_batch) * 1e-3, gpus.shape)}


def test_measured_speedup_is_against_one_gpu_at_the_points_own_batch():
    # A time-to-train report drew runs at batch 912 against one GPU at the default 2048:
    # 199% efficiency.
    from perfmodel._show.plot import measured_speedup

    speedup = measured_speedup(_Fit())
    assert speedup == pytest.approx([9.12, 18.24])


def test_a_prediction_row_at_a_measured_count_says_what_was_measured_there():
    from perfmodel._presets import build
    from perfmodel._show.report import _measured_label

    fit = _Fit()
    fit.model = build("batch_linear")  # T = a + c·B/N: reads the global batch
    assert _measured_label(fit, 8.0) == " (measured at global_batch 912)"
    fit.config_defaults = {"global_batch": 912.0}
    assert _measured_label(fit, 8.0) == " (measured)"
    # The default blend reads no global batch: its row at 8 GPUs is what was fitted there
    # (an MLPerf report said "measured at global_batch 256" at 8 GPUs, not at 256).
    fit.model, fit.config_defaults = build("blend"), {"global_batch": 2048.0}
    assert _measured_label(fit, 8.0) == " (measured)"
