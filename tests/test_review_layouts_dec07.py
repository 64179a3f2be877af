"""A newcomer's review of the layout workflow (2026-12-07): what a layout search is for,
the per-GPU rates of its pick, why an efficiency exceeds 100%, and the fields `predict`
takes from the fit's run."""

import json
from pathlib import Path

from helpers import run_cli
import jax
import numpy as np
import pytest

import perfmodel as pm
from perfmodel._cli.layout import taken_from_run
from perfmodel._cli.layout_rates import rates_text, superlinear_line, workload_line

K22 = Path(__file__).resolve().parents[1] / "datasets" / "megatron_k22_two_runs.csv"
GPT3 = dict(hidden=12288.0, seq_len=2048.0, layers=96.0, vocab=51200.0, global_batch=1536.0)


@pytest.mark.parametrize("recompute", [0.0, 1.0, 2.0])
def test_step_rates_are_the_closed_forms(recompute):
    # [N21] eq. 3 with full recomputation: 96·B·s·L·h²·(1 + s/6h + V/16Lh) FLOPs; the
    # model FLOPs drop the recomputation: 72·B·s·L·h²·(1 + s/6h + V/12Lh) (a quarter of
    # every layer's passes, none of the logits').
    B, s, L, h, V = (GPT3[k] for k in ("global_batch", "seq_len", "layers", "hidden", "vocab"))
    config = pm.Config(gpus=1024.0, recompute=recompute, **GPT3)
    with jax.enable_x64(True):
        rates = pm.step_rates(config, 30.0, 312e12)
    model = 72 * B * s * L * h**2 * (1 + s / (6 * h) + V / (12 * L * h))
    full = 96 * B * s * L * h**2 * (1 + s / (6 * h) + V / (16 * L * h))
    selective = model + B * L * 4 * s * s * h  # QKᵀ and scores·V forward again
    run = {0.0: model, 1.0: selective, 2.0: full}[recompute]
    assert float(rates.mfu) == pytest.approx(model / (30.0 * 1024 * 312e12), rel=1e-12)
    assert float(rates.hardware_tflops_per_gpu) == pytest.approx(run / 30.0 / 1024 / 1e12)
    assert float(rates.tokens_per_s_per_gpu) == pytest.approx(B * s / 30.0 / 1024)


def test_step_rates_vmap_as_plain_evaluation():
    times = np.array([20.0, 30.0, 40.0])
    config = pm.Config(gpus=1024.0, recompute=2.0, **GPT3)
    with jax.enable_x64(True):
        batched = jax.vmap(lambda t: pm.step_rates(config, t, 312e12).mfu)(times)
        plain = [float(pm.step_rates(config, t, 312e12).mfu) for t in times]
    np.testing.assert_allclose(np.asarray(batched), plain, rtol=1e-12)


def test_the_workload_line_says_what_the_search_is_for():
    workload = dict(GPT3, heads=96.0, parameters=174.6e9, set=["global_batch"])
    assert workload_line(workload) == (
        "workload: a 175B-parameter model (layers 96, hidden 12288, heads 96, sequence 2048, "
        "vocabulary 51200), global batch 1536 (--set global_batch; the rest the fit's run's)"
    )
    assert workload_line({**workload, "set": []}).endswith("global batch 1536 (the fit's run)")
    assert workload_line(None) is None
    rates = dict(mfu=0.521, hardware_tflops_per_gpu=162.4, tokens_per_s_per_gpu=1234.0)
    assert rates_text(rates) == (
        ", MFU 52.1% (162 TFLOP/s per GPU counting recomputation, 1234 tokens/s per GPU)"
    )
    assert rates_text(None) == "" and rates_text({**rates, "mfu": float("nan")}) == ""


def _document(efficiency: float) -> dict:
    """An `optimal_layout` answer whose 160-GPU baseline spends 147 s gathering."""
    baseline = dict(
        gpus=160.0,
        time_s=220.0,
        layout=dict(gpus=160.0, tp=8.0, pp=1.0, recompute=2.0, zero=3.0),
        breakdown=dict(compute=66.0, kernels=2.0, tensor=5.0, p2p=0.0, allreduce=147.0),
    )
    return dict(
        gpus=480,
        time_s=25.0,
        efficiency=efficiency,
        baseline=baseline,
        breakdown=dict(compute=22.0, kernels=0.8, tensor=1.0, p2p=0.1, allreduce=1.1),
    )


def test_an_efficiency_above_100_percent_names_what_the_baseline_spends_its_step_on():
    # "efficiency 290.9%" with no reason: the fewest GPUs any layout fits on spent two
    # thirds of its step in ZeRO-3's gathers (review of 2026-12-07).
    line = superlinear_line(_document(2.9))
    assert line.startswith(
        "  efficiency above 100% is the layouts', not scaling's: the best layout at 160 GPUs "
        "(recompute=2, zero=3, pp=1, tp=8) spends 147 s of its 220 s step (67%) on "
        "data-parallel collectives (ZeRO's gathers included); the pick spends 1.1 s of 25 s"
    )
    assert superlinear_line(_document(0.9)) is None
    # The term is the one with the most GPU-seconds more than the pick's, not the largest.
    document = _document(1.2)
    document["baseline"]["breakdown"] = dict(compute=130.0, allreduce=90.0)
    document["breakdown"] = dict(compute=24.0, allreduce=1.0)  # 130·160 − 24·480 < 90·160 − 480
    assert "on data-parallel collectives" in superlinear_line(document)


def test_predict_names_the_layout_fields_it_takes_from_the_run():
    # `--tp 1 --pp 1` read "interleaving needs pp > 2": the run's interleave = 3, unseen.
    run = dict(tp=8.0, pp=8.0, microbatch_size=1.0, microbatches=64.0, interleave=3.0)
    run |= dict(recompute=2.0, seq_parallel=0.0, zero=0.0)

    layouts = {k: np.array([1.0]) for k in ("gpus", "tp", "pp", "microbatch_size", "recompute")}
    assert taken_from_run(run, layouts) == (
        "from the fit's run, given nowhere: interleave=3 seq_parallel=0 zero=0 (--interleave, "
        "--seq-parallel, --zero to change them)",
    )
    every = {k: np.array([1.0]) for k in [*layouts, "interleave", "seq_parallel", "zero"]}
    assert taken_from_run(run, every) == ()


@pytest.fixture(scope="module")
def k22_fit(tmp_path_factory):
    path = tmp_path_factory.mktemp("k22") / "fit.json"
    code, _, err = run_cli("fit", K22, "--model", "hybrid", "--starts", "8", "-o", path)
    assert code == 0, err
    return path


@pytest.mark.slow  # 40 s: a hybrid fit and two layout searches
def test_a_search_for_another_model_says_what_it_is_and_why_it_scales_past_100(k22_fit):
    argv = ["optimal", k22_fit, "--max-gpus", "512"]
    argv += ["--set", "layers=105", "--set", "hidden=20480", "--set", "heads=128"]
    code, out, err = run_cli(*argv, "--set", "global_batch=280")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("optimal (time): ")
    assert lines[1].startswith("  workload: a 530B-parameter model (layers 105, hidden 20480")
    assert "(--set layers, hidden, heads, global_batch; the rest the fit's run's)" in out
    assert ", MFU " in out and "tokens/s per GPU" in out
    assert "efficiency above 100% is the layouts', not scaling's" in out
    # The run's switches a new model is run with are said, as `predict` and `sweep` say.
    assert "note: another workload than the fit's run, run as that run was:" in out
    assert "flash_attention = 0" in out
    # The baseline is the reference here: not "… is as fast as that layout".
    assert "as fast as that layout" not in out
    code, out, err = run_cli(*argv, "--set", "global_batch=280", "--json")
    found = json.loads(out)
    assert found["workload"]["parameters"] == pytest.approx(530e9, rel=0.01)
    assert found["rates"]["mfu"] == pytest.approx(
        found["rates"]["tokens_per_s_per_gpu"] * 6 * found["workload"]["parameters"] / 312e12,
        rel=0.1,  # 6·P FLOPs per token, against the shape's exact count with attention
    )
    assert found["baseline"]["breakdown"]["allreduce"] > found["breakdown"]["allreduce"]


def test_step_rates_reproduce_the_flops_of_the_published_runs():
    # [N21] Table 1 and [K22] Table 5 in `datasets/`: the hardware and model FLOPs per
    # iteration the published TFLOP/s and MFU rest on.
    import pandas as pd

    runs = pd.read_csv(K22.parent / "megatron_published_runs.csv")
    runs = runs[runs["model_flops_per_iter"].notna() & runs["iter_time_s"].notna()]
    assert len(runs) >= 18
    recompute = {"none": 0.0, "selective": 1.0, "full": 2.0}
    for run in runs.itertuples():
        shape = dict(hidden=run.hidden, seq_len=run.seq_len, layers=run.layers, vocab=run.vocab)
        config = pm.Config(
            gpus=float(run.gpus), global_batch=float(run.global_batch),
            recompute=recompute[run.recompute], **shape,
        )  # fmt: skip
        with jax.enable_x64(True):
            rates = pm.step_rates(config, run.iter_time_s, run.peak_tflops * 1e12)
        gpu_seconds = run.iter_time_s * run.gpus
        assert float(rates.hardware_tflops_per_gpu) * 1e12 * gpu_seconds == pytest.approx(
            run.hw_flops_per_iter, rel=2e-3
        ), run.id
        assert float(rates.mfu) * gpu_seconds * run.peak_tflops * 1e12 == pytest.approx(
            run.model_flops_per_iter, rel=2e-3
        ), run.id


def test_fit_of_the_hybrid_family_on_two_runs_names_fit_hybrid():
    runs = pm.load_benchmarks(K22)
    with pytest.raises(pm.InputError, match="pm.fit_hybrid fixes what the runs do not determine"):
        pm.fit("hybrid", runs)


@pytest.mark.slow  # 15 s: a hybrid fit
def test_fit_hybrid_from_python_is_the_command_lines_fit(k22_fit):
    found = pm.fit_hybrid(pm.load_benchmarks(K22), n_starts=8)
    saved = pm.load_fit(k22_fit)
    for name in ("compute.e_max", "compute.d0"):
        assert found.parameters()[name] == pytest.approx(saved.parameters()[name], rel=1e-4)
    assert any(w.startswith("tensor.bandwidth fixed at") for w in found.warnings)
    with pytest.raises(TypeError, match="did you mean 'n_starts'"):
        pm.fit_hybrid(pm.load_benchmarks(K22), n_start=8)
