"""Each term of `benchmarks/_megatron_reference.py` against its closed form, by hand."""

import importlib.util
import json
from pathlib import Path
import subprocess
import sys

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks"
GIB = 2.0**30


def _load(name):
    sys.path.insert(0, str(BENCH))
    try:
        spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(BENCH))
    return module


@pytest.fixture(scope="module")
def ref():
    return _load("_megatron_reference")


@pytest.fixture(scope="module")
def bench():
    return _load("megatron")


# GPT-3 175B [N21 Table 1 row "175B" shape; K22 Table 3]
H, A, S, V, L = 12288.0, 96.0, 2048.0, 51200.0, 96.0


def test_iteration_flops_is_narayanan_eq3_with_full_recompute(ref):
    batch = 1536.0
    eq3 = 96 * batch * S * L * H**2 * (1 + S / (6 * H) + V / (16 * L * H))
    assert float(ref.iteration_flops(H, S, L, V, batch, ref.FULL)) == pytest.approx(eq3, rel=1e-12)
    assert eq3 == pytest.approx(4.5e18, rel=0.01)  # 4.51e18 FLOPs per iteration


def test_iteration_flops_without_recompute_is_model_flops(ref):
    # 3 passes: 72·B·s·L·h²·(1 + s/6h + V/12Lh)
    batch = 4.0
    model = 72 * batch * S * L * H**2 * (1 + S / (6 * H) + V / (12 * L * H))
    assert float(ref.iteration_flops(H, S, L, V, batch, ref.NONE)) == pytest.approx(model, 1e-12)
    # selective adds only the attention recomputation, 4·B·s²·h per layer
    extra = L * 4 * batch * S * S * H
    got = float(ref.iteration_flops(H, S, L, V, batch, ref.SELECTIVE))
    assert got == pytest.approx(model + extra, rel=1e-12)


def test_flops_match_the_published_csv_columns(bench, ref):
    import pandas as pd

    frame = pd.read_csv(bench.DEFAULT_CSV)
    for _, r in frame[frame.dataset != "K22_F1"].iterrows():
        rc = ref.RECOMPUTE_CODES[r.recompute]
        hw = ref.iteration_flops(r.hidden, r.seq_len, r.layers, r.vocab, r.global_batch, rc)
        mf = ref.iteration_flops(r.hidden, r.seq_len, r.layers, r.vocab, r.global_batch, 0)
        assert float(hw) == pytest.approx(r.hw_flops_per_iter, rel=1e-6), r.id
        assert float(mf) == pytest.approx(r.model_flops_per_iter, rel=1e-6), r.id


def test_interleaved_bubble_is_p_minus_1_over_v_m(ref):
    p, v, m = 8.0, 3.0, 64.0
    assert float(ref.bubble_fraction(p, v, m)) == pytest.approx(7 / 192)
    slots = float(ref.pipeline_schedule_factor(p, v, m))
    assert slots / m - 1 == pytest.approx(7 / 192)
    assert float(ref.pipeline_schedule_factor(1.0, 1.0, 5.0)) == 5.0  # no pipeline, no bubble
    assert float(ref.pipeline_schedule_factor(4.0, 1.0, 8.0)) == 11.0  # 1F1B: m + p − 1


def test_in_flight_layers_1f1b_and_interleaved(ref):
    # 1F1B: p micro-batches of L/p layers = L; fewer micro-batches than stages: m·L/p
    assert float(ref.inflight_layers(96.0, 8.0, 1.0, 64.0)) == 96.0
    assert float(ref.inflight_layers(96.0, 8.0, 1.0, 3.0)) == 36.0
    # interleaved: L·(1 + (p−1)/(p·v)) [K22 §4.2.3]
    got = float(ref.inflight_layers(96.0, 8.0, 3.0, 64.0))
    assert got == pytest.approx(96 * (1 + 7 / 24))


def test_activation_memory_is_korthikanti_table2(ref):
    s, b, h, a, t = 2048.0, 1.0, H, A, 8.0
    sbh = s * b * h
    none = float(ref.activation_bytes_per_layer(h, a, s, b, t, ref.NONE, 0))
    assert none == pytest.approx(sbh * (10 + 24 / t + 5 * a * s / (h * t)))
    seq = float(ref.activation_bytes_per_layer(h, a, s, b, t, ref.NONE, 1))
    assert seq == pytest.approx(sbh / t * (34 + 5 * a * s / h))
    sel_seq = float(ref.activation_bytes_per_layer(h, a, s, b, t, ref.SELECTIVE, 1))
    assert sel_seq == pytest.approx(34 * sbh / t)
    assert float(ref.activation_bytes_per_layer(h, a, s, b, t, ref.FULL, 0)) == 2 * sbh


def test_figure1_memory_of_the_interleaved_175b_run(ref):
    stack = ref.STACKS["megatron-2022"]
    mem = ref.memory_per_gpu(H, A, S, V, L, 1.0, 8.0, 8.0, 1.0, 3.0, 64.0, ref.NONE, 0, 0, stack)
    assert float(mem["layer_activations"]) / GIB == pytest.approx(66.84375, rel=1e-9)
    # 12·L·h²/(t·p) parameters × 18 bytes (2 weight + 4 gradient + 12 Adam)
    assert float(mem["layer_states"]) / GIB == pytest.approx(45.5625, rel=1e-3)


@pytest.mark.parametrize(
    "zero, per_param",
    [(0, 2 + 4 + 12), (1, 2 + 4 + 12 / 4), (2, 2 + 4 / 4 + 12 / 4), (3, (2 + 4 + 12) / 4)],
)
def test_zero_stages_shard_their_shares(ref, zero, per_param):
    stack = ref.STACKS["megatron-2022"]
    d = 4.0
    mem = ref.memory_per_gpu(H, A, S, V, L, 1.0, 8.0, 8.0, d, 1.0, 64.0, ref.FULL, 0, zero, stack)
    layers, _ = ref.stage_parameters(H, S, V, L, 8.0, 8.0)
    assert float(mem["layer_states"]) == pytest.approx(float(layers) * per_param)


def test_ring_collectives_follow_the_nccl_bus_bandwidth_convention(ref):
    n, size, alpha, beta = 8.0, 1e8, 1e-6, 2e11
    ar = float(ref.all_reduce_time(n, size, alpha, beta))
    assert ar == pytest.approx(2 * 7 * alpha + 2 * 7 / 8 * size / beta)
    ag = float(ref.all_gather_time(n, size, alpha, beta))
    assert 2 * ag == pytest.approx(ar)  # reduce-scatter + all-gather = all-reduce


def test_tensor_parallel_collective_counts(ref):
    hw = dict(ref.A100_SELENE, nvlink_latency=0.0)
    b, t = 1.0, 8.0
    one = float(ref.all_reduce_time(t, b * S * H * 2, 0.0, hw["nvlink_bandwidth"]))
    sync, over = ref.tensor_parallel_times(H, S, b, t, ref.NONE, 0, 0, hw)
    assert (float(sync), float(over)) == pytest.approx((4 * one, 0.0))  # 2 fwd + 2 bwd
    sync, over = ref.tensor_parallel_times(H, S, b, t, ref.NONE, 0, 1, hw)
    assert (float(sync), float(over)) == pytest.approx((2 * one, 2 * one))  # async backward
    sync, _ = ref.tensor_parallel_times(H, S, b, t, ref.FULL, 0, 0, hw)
    assert float(sync) == pytest.approx(6 * one)  # + recomputed forward
    # sequence parallel: 2 AG + 2 RS forward, 2 AG backward synchronous; 2 RS + 2 re-done AG
    sync, over = ref.tensor_parallel_times(H, S, b, t, ref.SELECTIVE, 1, 1, hw)
    assert (float(sync), float(over)) == pytest.approx((3 * one, 2 * one))
    assert float(ref.tensor_parallel_times(H, S, b, 1.0, ref.FULL, 0, 0, hw)[0]) == 0.0


def test_gemm_efficiency_saturates(ref):
    assert float(ref.gemm_efficiency(1e9, 1e9, 1e9, 0.9, 100.0)) == pytest.approx(0.9, rel=1e-6)
    assert float(ref.gemm_efficiency(100.0, 100.0, 100.0, 0.9, 100.0)) == pytest.approx(0.9 / 4)
    # a larger micro-batch (M = b·s) is never slower per FLOP
    e1, e4 = ref.gemm_efficiency(np.array([2048.0, 8192.0]), 1536.0, 12288.0, 0.9, 300.0)
    assert e4 > e1


def test_pipeline_sends_count_and_size(ref):
    hw = dict(ref.A100_SELENE, network_latency=0.0, nvlink_latency=0.0)
    b, t, p, v, m, d = 1.0, 8.0, 8.0, 3.0, 64.0, 1.0
    size = b * S * H * 2
    one = size / t / hw["network_bandwidth"] + 7 / 8 * size / hw["nvlink_bandwidth"]
    got = float(ref.p2p_time(H, S, b, t, p, v, m, d, 0, 1, hw))
    assert got == pytest.approx(2 * (v * m + p - 1) * one)
    assert float(ref.p2p_time(H, S, b, t, 1.0, 1.0, m, d, 0, 1, hw)) == 0.0


def test_data_parallel_all_reduce_is_hierarchical(ref):
    hw = dict(ref.A100_SELENE, network_latency=0.0, nvlink_latency=0.0)
    params, g = 1e9, 2.0
    # tp = 8: one replica per node, a ring across 4 nodes of the whole gradient
    got = float(ref.data_parallel_time(params, g, 8.0, 4.0, hw))
    assert got == pytest.approx(2 * 3 / 4 * params * g / hw["network_bandwidth"])
    # tp = 1, dp = 8: inside one node only
    got = float(ref.data_parallel_time(params, g, 1.0, 8.0, hw))
    assert got == pytest.approx(2 * 7 / 8 * params * g / hw["nvlink_bandwidth"])
    assert float(ref.data_parallel_time(params, g, 8.0, 1.0, hw)) == 0.0


def test_zero3_gathers_weights_every_micro_batch(ref):
    hw = dict(ref.A100_SELENE, network_latency=0.0)
    params, t, d, m = 1e9, 8.0, 4.0, 10.0
    gather = 3 / 4 * params * 2.0 / hw["network_bandwidth"]
    assert float(ref.zero3_time(params, t, d, m, ref.NONE, hw)) == pytest.approx(m * 3 * gather)
    assert float(ref.zero3_time(params, t, d, m, ref.FULL, hw)) == pytest.approx(m * 4 * gather)


def test_optimizer_step_is_sharded_by_zero1(ref):
    hw = ref.A100_SELENE
    full = float(ref.optimizer_time(1e9, 4.0, 0, 8.0, hw))
    assert full == pytest.approx(1e9 * (34 + 12) / hw["hbm_bandwidth"])
    assert float(ref.optimizer_time(1e9, 4.0, 1, 8.0, hw)) == pytest.approx(full / 8)


def test_logits_are_paid_every_micro_batch_on_the_last_stage(ref):
    stack, eff = ref.STACKS["megatron-2022"], ref.PRIOR_EFFICIENCY
    args = (H, A, S, V, L, 1.0, 8.0, 8.0, 1.0, 1.0)
    few = ref.iteration_time(*args, 16.0, ref.FULL, 0, 0, stack, eff=eff)
    many = ref.iteration_time(*args, 32.0, ref.FULL, 0, 0, stack, eff=eff)
    one = float(ref.logits_time(H, S, 1.0, V, 8.0, ref.A100_SELENE, eff))
    assert float(few["logits"]) == pytest.approx(16 * one)
    assert float(many["logits"]) == pytest.approx(32 * one)


def test_iteration_time_is_vectorised(ref):
    stack, eff = ref.STACKS["megatron-2021"], ref.PRIOR_EFFICIENCY
    tp = np.array([1.0, 2.0, 4.0, 8.0])[:, None]
    pp = np.array([1.0, 2.0, 4.0])[None, :]
    grid = ref.iteration_time(
        H, A, S, V, L, 1.0, tp, pp, 64.0 / (tp * pp), 1.0, 512.0, ref.FULL, 0, 0, stack, eff=eff
    )["total"]
    assert grid.shape == (4, 3)
    for i, t in enumerate(tp[:, 0]):
        for j, p in enumerate(pp[0]):
            one = ref.iteration_time(
                H, A, S, V, L, 1.0, t, p, 64.0 / (t * p), 1.0, 512.0, ref.FULL, 0, 0, stack, eff=eff
            )["total"]
            assert float(one) == pytest.approx(float(grid[i, j]), rel=1e-12)


@pytest.mark.slow  # the whole validation benchmark: about a minute on two cores
def test_benchmark_meets_its_targets_on_the_published_runs(bench):
    result = bench.run(bench.DEFAULT_CSV, bench.DEFAULT_CALIBRATION, quiet=True)
    for table in ("N21_T1", "K22_T5"):
        summary = result["tables"][table]["calibrated"]
        assert summary["mean_abs_error_pct"] <= 3.0, table
        assert summary["max_abs_error_pct"] <= 8.0, table
    assert result["memory_max_abs_error_pct"] <= 5.0
    rows = {r["id"]: r for r in result["rows"]}
    assert all(rows[i]["calibration"] for i in bench.DEFAULT_CALIBRATION)
    assert result["picks_under_two_layers_per_stage"] == 0


@pytest.mark.slow  # a subprocess of the benchmark
def test_cli_runs_on_another_csv_and_ends_with_json(bench, tmp_path):
    import pandas as pd

    frame = pd.read_csv(bench.DEFAULT_CSV)
    part = frame[frame.id.isin(["T5_22B_full", "T5_1T_full", "F1_1T_none_params"])]
    path = tmp_path / "runs.csv"
    part.to_csv(path, index=False)
    out = subprocess.run(
        [
            sys.executable,
            str(BENCH / "megatron.py"),
            "--csv",
            str(path),
            "--calibrate",
            "T5_22B_full",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout
    last = json.loads(out.strip().splitlines()[-1])
    assert {"mean_abs_error_pct", "max_abs_error_pct", "layout_within_2pct", "rows"} <= set(last)
    ids = {r["id"]: r for r in last["rows"]}
    assert ids["T5_22B_full"]["calibration"] and not ids["T5_1T_full"]["calibration"]
    assert {"error_pct", "layout_gap_pct"} <= set(ids["T5_1T_full"])


def test_published_time_is_derived_when_only_tflops_are_given(bench):
    import pandas as pd

    frame = pd.read_csv(bench.DEFAULT_CSV)
    row = frame[frame.id == "T1_1008B"].iloc[0]
    bare = row.drop(["iter_time_s", "hw_flops_per_iter", "dp"])
    assert bench.published_seconds(bare) == pytest.approx(row.iter_time_s, rel=1e-3)
    assert bench.row_settings(bare)["d"] == row.dp


def test_every_published_measure_gives_the_same_iteration_time(bench, ref):
    # One run (Table 5's 175B, selective recomputation, 64 GPUs) stated each way a paper
    # or a log may state it: the iteration time comes back the same from each.
    import pandas as pd

    frame = pd.read_csv(bench.DEFAULT_CSV)
    row = frame[frame.id == "T5_175B_seqsel"].iloc[0]
    row = row.drop(["iter_time_s", "hw_flops_per_iter", "model_flops_per_iter"])
    seconds = bench.published_seconds(row)
    assert row.measured == "iter_time_s" and seconds == row.value
    gpus, tokens, batch = row.gpus, row.global_batch * row.seq_len, row.global_batch
    args = (row.hidden, row.seq_len, row.layers, row.vocab, batch)
    hardware = float(ref.iteration_flops(*args, ref.SELECTIVE, row.heads))
    model = float(ref.iteration_flops(*args, ref.NONE, row.heads))
    peak = 312e12
    stated = {
        "iter_time_ms": seconds * 1e3,
        "tokens_per_s": tokens / seconds,
        "tokens_per_s_per_gpu": tokens / seconds / gpus,
        "samples_per_s": batch / seconds,
        "tflops_per_gpu": hardware / seconds / gpus / 1e12,
        "pct_peak": 100 * hardware / seconds / gpus / peak,
        "mfu": model / seconds / gpus / peak,  # a fraction
    }
    assert set(stated) | {"iter_time_s"} == set(bench.TIME_MEASURES)
    for measured, value in stated.items():
        other = row.copy()
        other["measured"], other["value"] = measured, value
        assert bench.published_seconds(other) == pytest.approx(seconds, rel=1e-12), measured
    for measured, scale in (("mfu", 100.0), ("pct_peak", 0.01)):  # a fraction or a %
        other = row.copy()
        other["measured"], other["value"] = measured, scale * stated[measured]
        assert bench.published_seconds(other) == pytest.approx(seconds, rel=1e-12), measured
    given = row.copy()  # the model FLOPs of the CSV, where it gives them
    given["measured"], given["value"] = "mfu", stated["mfu"]
    given["model_flops_per_iter"] = 2 * model
    assert bench.published_seconds(given) == pytest.approx(2 * seconds, rel=1e-12)


@pytest.mark.parametrize(
    "column, value, expected",
    [
        ("gpu", "V100", "column gpu: expected one of A100-80GB, A100-40GB, H100-80GB"),
        ("measured", "tokens", "column measured: expected one of tflops_per_gpu"),
        ("recompute", "partial", "column recompute: expected one of none, selective, full"),
        ("tp", 3, "column gpus: expected a multiple of tp × pp = 24"),
        ("hidden", "", "column hidden: expected a positive whole number"),
        ("dp", 5, "column dp: expected gpus / (tp × pp) = 1"),
        ("stack", "megatron-2019", "column stack: expected one of megatron-2021"),
        ("microbatch_size", 0, "column microbatch_size: expected a positive whole number or"),
        ("interleave", "two", "column interleave: expected a positive whole number or"),
        ("layers", 2.5, "column layers: expected a positive whole number"),
        ("heads", 100, "column heads: expected a multiple of tp = 8"),
        ("interleave", 5, "column layers: expected a multiple of pp × interleave = 40"),
        ("zero", 4, "column zero: expected one of 0, 1, 2, 3 or nothing"),
        ("peak_tflops", -5, "column peak_tflops: expected a positive number or nothing"),
        ("peak_tflops", "abc", "column peak_tflops: expected a positive number or nothing"),
        ("peak_tflops", 0.001, "column peak_tflops: expected one GPU's dense peak in TFLOP/s"),
        ("microbatch_size", 3, "column microbatch_size: expected a divisor of global_batch"),
    ],
)
def test_a_bad_cell_stops_the_benchmark_in_one_line(bench, tmp_path, column, value, expected):
    import pandas as pd

    frame = pd.read_csv(bench.DEFAULT_CSV)
    frame = frame[frame.id.isin(["T5_22B_full", "T5_175B_full"])].reset_index(drop=True)
    frame["stack"] = ""
    frame[column] = frame[column].astype(object) if column in frame else None
    frame.loc[1, column] = value
    path = tmp_path / "runs.csv"
    frame.to_csv(path, index=False)
    with pytest.raises(SystemExit) as stop:
        bench.read_runs(str(path))
    message = str(stop.value)
    assert "\n" not in message and "line 3 (id T5_175B_full)" in message
    assert expected in message, message


def test_gpu_names_are_read_as_published(bench):
    import pandas as pd

    frame = pd.read_csv(bench.DEFAULT_CSV)
    row = frame[frame.id == "T5_175B_full"].iloc[0]
    for spelled, key in [("A100", "A100-80GB"), ("NVIDIA H100-SXM5-80GB", "H100-80GB")]:
        named = row.copy()
        named["gpu"], named["peak_tflops"] = spelled, float("nan")
        hw = bench.row_settings(named)["hw"]
        assert hw["peak_flops"] == bench.pm.GPUS[key]["peak_flops"], spelled
        assert hw["network_bandwidth"] == bench.pm.GPUS[key]["network_bandwidth"]


def test_a_calibration_the_peak_cannot_give_is_named(bench, tmp_path):
    # The same run three times faster than measured (as an FP8 run read against the BF16
    # peak would be): e_max stops at its bound, and the result says why it may have.
    import pandas as pd

    frame = pd.read_csv(bench.DEFAULT_CSV)
    frame = frame[frame.id.isin(["T5_22B_full", "T5_175B_full"])].reset_index(drop=True)
    frame.to_csv(tmp_path / "measured.csv", index=False)
    fine = bench.run(str(tmp_path / "measured.csv"), ("T5_175B_full",), True, model="reference")
    assert fine["at_bound"] == []
    frame["value"] = frame["value"] / 3.0
    frame["iter_time_s"] = frame["iter_time_s"] / 3.0
    frame.to_csv(tmp_path / "fast.csv", index=False)
    result = bench.run(str(tmp_path / "fast.csv"), ("T5_175B_full",), True, model="reference")
    assert result["efficiency"]["e_max"] == pytest.approx(bench.BOUNDS["e_max"][1])
    (note,) = result["at_bound"]
    assert note.startswith("e_max ended at its upper bound 0.95") and "peak_tflops" in note


def test_the_line_named_is_the_file_line_and_a_broken_file_stops_in_one_line(bench, tmp_path):
    import pandas as pd

    frame = pd.read_csv(bench.DEFAULT_CSV)
    frame = frame[frame.id.isin(["T5_22B_full", "T5_175B_full"])].reset_index(drop=True)
    frame.loc[1, "gpu"] = "V100"
    lines = frame.to_csv(index=False).splitlines()
    path = tmp_path / "runs.csv"
    path.write_text("\n".join([lines[0], lines[1], "", lines[2]]) + "\n")  # a blank line
    with pytest.raises(SystemExit, match=r"line 4 \(id T5_175B_full\), column gpu"):
        bench.read_runs(str(path))
    frame.loc[1, "id"] = ""
    frame.loc[1, "gpu"] = "A100"
    frame.to_csv(path, index=False)
    with pytest.raises(SystemExit, match=r"runs.csv, line 3, column id: expected a run id"):
        bench.read_runs(str(path))
    frame.loc[1, "id"], frame.loc[1, "measured"], frame.loc[1, "value"] = "X", "mfu", 150
    frame.to_csv(path, index=False)
    with pytest.raises(SystemExit, match=r"column value: expected a mfu up to 100 \(%\)"):
        bench.read_runs(str(path))
    path.write_text("")
    with pytest.raises(SystemExit, match=r"runs.csv: not a readable CSV"):
        bench.read_runs(str(path))
    path.write_text('id,dataset\n"a,b\n')
    with pytest.raises(SystemExit) as stop:
        bench.read_runs(str(path))
    assert "\n" not in str(stop.value) and "runs.csv" in str(stop.value)
