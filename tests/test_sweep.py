import dataclasses
import itertools
import json
import os
import re
import subprocess
import sys
import textwrap

from helpers import exact_fit as fitted
import jax
import numpy as np
import pandas as pd
import pytest

import perfmodel as pm
from perfmodel._cli import main

# A small GPT on 8-GPU nodes with 30 GB GPUs: the grid has valid, invalid and
# out-of-memory layouts, and GPU counts with none feasible.
FIXED = dict(
    layers=8.0,
    hidden=4096.0,
    seq_len=2048.0,
    parameters=7e9,
    flops_per_sample=6 * 7e9 * 2048,
    sample_bytes=8192.0,
    gpu_memory_bytes=30e9,
    price_per_gpu_hour=2.0,
)
AXES = {
    "gpus": [4, 8, 12, 16, 24, 32, 40, 64],
    "tp": [1, 2, 4, 8],
    "pp": [1, 2, 4],
    "microbatches": [1, 2, 4, 8],
    "global_batch": [64, 128, 192],
    "allreduce.bandwidth_inter": [12.5e9, 25e9, 50e9],
}
OPTIONS = dict(network_bandwidth=4e10, flops=3e14)
TOP = 7


@pytest.fixture(scope="module")
def model():
    return pm.hybrid_basic(**OPTIONS)


@pytest.fixture(scope="module")
def reference(model):
    """The whole grid evaluated at once in float64, and its reductions by brute force."""
    grid = np.array(list(itertools.product(*AXES.values())), dtype=float)
    values = {name: grid[:, i] for i, name in enumerate(AXES)}
    bandwidth = values["allreduce.bandwidth_inter"]
    evaluated = model.with_parameters({"allreduce.bandwidth_inter": bandwidth})
    fields = {n: v for n, v in values.items() if n != "allreduce.bandwidth_inter"}
    config = pm.Config(**FIXED, **fields)
    time_s = np.asarray(evaluated(config))
    code = np.asarray(pm.layout_status(config, "hybrid_basic"))
    memory = np.asarray(pm.basic_memory_per_gpu(config)["total"])
    score = np.where(code == 0, time_s / values["global_batch"], np.inf)
    return dict(values=values, time_s=time_s, code=code, memory=memory, score=score)


@pytest.fixture(scope="module")
def result(model):
    return pm.sweep(model, AXES, fixed=FIXED, top_k=TOP, precision="float64", progress=False)


def _configs(frame) -> list[tuple]:
    return [tuple(row) for row in frame[list(AXES)].to_numpy()]


def _reference_configs(reference, index) -> list[tuple]:
    return [tuple(reference["values"][n][i] for n in AXES) for i in index]


def test_counts_equal_brute_force(result, reference):
    code = reference["code"]
    assert result.evaluated == len(code) == np.prod([len(v) for v in AXES.values()])
    assert result.valid == int(((code == 0) | (code == len(pm.REASONS) - 1)).sum())
    assert result.feasible == int((code == 0).sum())
    assert 0 < result.feasible < result.valid < result.evaluated


def test_top_k_equals_brute_force(result, reference):
    score = reference["score"]
    order = np.lexsort((np.arange(len(score)), score))[:TOP]
    assert _configs(result.top) == _reference_configs(reference, order)
    np.testing.assert_allclose(result.top["step_time_s"], reference["time_s"][order], rtol=1e-12)
    assert result.top["feasible"].all() and (result.top["reason"] == "").all()
    assert _configs(result.best) != [] and result.precision == "float64"


def test_best_per_gpu_count_equals_brute_force_and_marks_the_rest(result, reference):
    values, score = reference["values"], reference["score"]
    best = result.per_axis["gpus"]
    assert list(best["gpus"]) == AXES["gpus"]  # one row per value, in axis order
    pd.testing.assert_frame_equal(best, result.best)
    for gpus, row in zip(AXES["gpus"], best.itertuples(index=False)):
        mine = values["gpus"] == gpus
        if np.isfinite(score[mine]).any():
            i = np.flatnonzero(mine)[np.argmin(score[mine])]
            assert _configs(best[best.gpus == gpus]) == _reference_configs(reference, [i])
            continue
        assert not row.feasible
        valid = mine & ((reference["code"] == 0) | (reference["code"] == len(pm.REASONS) - 1))
        if valid.any():
            need = reference["memory"][valid].min() / 1e9
            assert row.valid and row.reason == (
                f"out of memory: every valid layout needs ≥ {need:.4g} GB per GPU"
            )
            assert row.memory_gb == pytest.approx(need, rel=1e-6)  # the leanest layout's
        else:
            assert not row.valid and row.reason == "no valid layout"
            assert np.isnan(row.memory_gb)
    reasons = set(best["reason"])
    assert "" in reasons and "no valid layout" in reasons
    assert any(r.startswith("out of memory") for r in reasons)


def test_pareto_front_equals_brute_force(result, reference):
    values, score = reference["values"], reference["score"]
    cost = score * values["gpus"] * FIXED["price_per_gpu_hour"] / 3600
    ranked = np.flatnonzero(np.isfinite(score))
    front, lowest = [], np.inf
    for i in ranked[np.lexsort((ranked, cost[ranked], score[ranked]))]:
        if cost[i] < lowest:
            front.append(i)
            lowest = cost[i]
    assert _configs(result.pareto) == _reference_configs(reference, front)
    assert len(front) >= 2
    sample_cost = result.pareto["cost_per_sample"].to_numpy()
    assert (np.diff(result.pareto["step_time_s"] / result.pareto["global_batch"]) > 0).all()
    assert (np.diff(sample_cost) < 0).all()


@pytest.mark.slow  # 2 s: the default run stays under 4 minutes
def test_cost_objective_ranks_by_cost_per_sample():
    # USL per unit of work on GPUs at three prices: cost = N·price·T/3600 by brute force.
    model = pm.usl().with_parameters(
        {"serial.time": 0.01, "compute.time": 1.0, "coherency.time": 1e-4}
    )
    gpus, price = np.arange(1.0, 129.0), np.array([1.0, 2.5, 4.0])
    axes = {"price_per_gpu_hour": price, "gpus": gpus}
    cheap = pm.sweep(
        model,
        axes,
        objective="cost",
        per=["price_per_gpu_hour"],
        top_k=5,
        fixed={"global_batch": 32.0},
        precision="float64",
        progress=False,
    )
    n, p = np.meshgrid(gpus, price)
    time_s = 0.01 + 1.0 / n + 1e-4 * (n - 1)
    cost = (n * p * time_s / 3600 / 32).ravel()
    order = np.lexsort((np.arange(cost.size), cost))[:5]
    assert list(zip(cheap.top["price_per_gpu_hour"], cheap.top["gpus"])) == list(
        zip(p.ravel()[order], n.ravel()[order])
    )
    np.testing.assert_allclose(cheap.top["cost_per_sample"], cost[order], rtol=1e-12)
    # The cheapest GPU count does not depend on the price; the fastest is Gunther's peak.
    assert cheap.best["gpus"].nunique() == 1 and len(cheap.best) == 3
    assert cheap.pareto["gpus"].iloc[0] == n.ravel()[np.argmin(time_s)]
    assert cheap.pareto["price_per_gpu_hour"].eq(1.0).all()


def test_chunked_equals_unchunked(model, result):
    # Five configurations per chunk: many chunks, padding and ties across boundaries.
    small = pm.sweep(
        model, AXES, fixed=FIXED, top_k=TOP, precision="float64", chunk_size=5, progress=False
    )
    for name in ("best", "top", "pareto"):
        pd.testing.assert_frame_equal(getattr(small, name), getattr(result, name))
    assert (small.valid, small.feasible) == (result.valid, result.feasible)


@pytest.mark.slow  # compiles the sweep again in float32: ~13 s
def test_float32_agrees_with_float64(model, result):
    fast = pm.sweep(model, AXES, fixed=FIXED, top_k=TOP, progress=False)
    assert fast.precision == "float32"
    assert (fast.valid, fast.feasible) == (result.valid, result.feasible)
    assert list(fast.best["feasible"]) == list(result.best["feasible"])
    # float32 carries ~7 digits: the times agree to that, and so do the winners.
    np.testing.assert_allclose(fast.best["step_time_s"], result.best["step_time_s"], rtol=1e-5)
    np.testing.assert_allclose(fast.top["step_time_s"], result.top["step_time_s"], rtol=1e-5)
    assert _configs(fast.best.dropna(subset=["tp"])) == _configs(result.best.dropna(subset=["tp"]))


@pytest.mark.slow  # a joint fit or a subprocess: seconds each, run with -m slow
def test_sharded_over_four_devices_equals_one(tmp_path):
    script = textwrap.dedent(
        f"""
        import jax, pandas as pd, perfmodel as pm
        assert len(jax.devices()) == 4, jax.devices()
        model = pm.hybrid_basic(**{OPTIONS!r})
        kw = dict(fixed={FIXED!r}, top_k={TOP}, precision="float64", progress=False,
                  chunk_size=64)
        four = pm.sweep(model, {AXES!r}, **kw)
        one = pm.sweep(model, {AXES!r}, devices=jax.devices()[:1], **kw)
        assert len(four.devices) == 4 and len(one.devices) == 1
        for name in ("best", "top", "pareto"):
            pd.testing.assert_frame_equal(getattr(four, name), getattr(one, name))
        assert (four.valid, four.feasible) == (one.valid, one.feasible)
        four.top.to_json({str(tmp_path / "top.json")!r})
        print("sharded ok", four.devices)
        """
    )
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=4"}
    env["JAX_PLATFORMS"] = "cpu"
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "sharded ok" in done.stdout


def test_sweep_of_a_fit_on_real_data_matches_optimal_gpus():
    # A model with known parameters around a real dataset: the sweep takes the data's
    # configuration (global batch, per-GPU throughput) and finds optimal_gpus' answer.
    data = pm.load_dataset("tf_dgx1_p100_vgg16_real")
    usl = pm.usl().with_parameters(
        {"serial.time": 3e-4, "compute.time": 6e-3, "coherency.time": 2e-6}
    )
    defaults = {k: float(v[-1]) for k, v in data.config.items()}
    fit = dataclasses.replace(fitted(usl, data), config_defaults=defaults)
    found = pm.sweep(fit, {"gpus": np.arange(1, 257)}, precision="float64", progress=False)
    best = pm.optimal_gpus(fit, max_gpus=256)
    assert int(found.top["gpus"].iloc[0]) == best.gpus
    assert found.top["step_time_s"].iloc[0] == pytest.approx(best.time_s, rel=1e-12)
    # Throughput fits are per unit of work already: no division by the global batch.
    assert found.top["samples_per_s"].iloc[0] == pytest.approx(1 / best.time_s, rel=1e-12)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (
            dict(axes={"tpp": [1, 2]}),
            r"unknown axis 'tpp' \(did you mean 'tp'\?\); valid: .*gpus, .*serial.time, comp",
        ),
        (dict(axes={}), "axes: expected a non-empty mapping"),
        (dict(axes={"gpus": []}), "axis 'gpus': no values"),
        (dict(axes={"gpus": [8, 0]}), "axis 'gpus': expected positive values, got 0"),
        (dict(axes={"gpus": [8, -2]}), "axis 'gpus': expected positive values, got -2"),
        (dict(axes={"tp": [1.5]}), "axis 'tp': expected whole numbers ≥ 1, got 1.5"),
        (dict(axes={"gpus": [8, 8]}), "axis 'gpus': values repeat"),
        (dict(axes={"gpus": [8, float("nan")]}), "NaN is not a value"),
        (dict(axes={"gpus": ["a"]}), "axis 'gpus': expected numbers"),
        (dict(axes={"zero": [4]}), "'zero': expected one of 0, 1, 2, 3"),
        (dict(axes={"recompute": [3]}), "'recompute': expected one of 0, 1, 2"),
        (dict(axes={"heads": [-1]}), "'heads': expected values ≥ 0"),
        (dict(axes={"microbatch_size": [0.5]}), "expected whole numbers ≥ 0, got 0.5"),
        (dict(axes={"overlap": [1.5]}), "unknown axis 'overlap'"),
        (dict(axes={"tp": [1, 2]}), "gpus: give it as an axis or a fixed value"),
        (dict(fixed={"gpus": 8, "tp": 2}, axes={"tp": [1]}), "'tp' is both an axis"),
        (dict(fixed={"serial.time": -1.0}), "fixed value 'serial.time': expected positive"),
        (dict(per=["tp"]), "per: 'tp' is not an axis"),
        (dict(objective="speed"), "unknown objective 'speed'"),
        (dict(precision="float16"), "unknown precision 'float16'"),
        (dict(top_k=0), "top_k: expected a whole number ≥ 1"),
        (dict(chunk_size=0), "chunk_size: expected a whole number from 1 to"),
        (dict(chunk_size=2**26 + 1), "chunk_size: expected a whole number from 1 to 67108864"),
        (dict(max_configs=2), "the space has 3 configurations, more than the maximum 2"),
        # Past float32 (NumPy's overflow warnings, then "0 fit in memory" with status 0):
        (dict(fixed={"serial.time": 1e300}), "'serial.time': expected at most 1e\\+18"),
        (dict(axes={"gpus": [8, 2**63]}), "'gpus': expected at most 9.007e\\+15, got 9.2"),
    ],
)
def test_bad_input_is_an_input_error_naming_the_key(kwargs, message):
    kwargs = {"axes": {"gpus": [1, 2, 4]}, **kwargs}
    with pytest.raises(pm.InputError, match=message):
        pm.sweep(pm.amdahl(), progress=False, **kwargs)


# The command line ----------------------------------------------------------------------


def _space(tmp_path, body: str, name: str = "space.toml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return str(path)


SPACE = f"""
[model]
family = "hybrid_basic"
options = {{ network_bandwidth = 4e10, flops = 3e14 }}

[fixed]
{chr(10).join(f"{k} = {v!r}" for k, v in FIXED.items())}

[axes]
gpus = [4, 8, 12, 16, 24, 32, 40, 64]
tp = {{ start = 1, stop = 8, num = 4, scale = "log" }}
pp = [1, 2, 4]
microbatches = [1, 2, 4, 8]
global_batch = {{ start = 64, stop = 192, step = 64 }}
"allreduce.bandwidth_inter" = [12.5e9, 25e9, 50e9]

[sweep]
top_k = {TOP}
precision = "float64"
"""


@pytest.mark.slow  # a CLI sweep of the shared space: ~12 s
def test_cli_round_trip_equals_python(tmp_path, capsys, result):
    path = _space(tmp_path, SPACE)
    out = tmp_path / "result.json"
    assert main(["sweep", path, "--json", "-o", str(out), "--no-progress"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document == json.loads(out.read_text())
    assert document["evaluated"] == result.evaluated and document["valid"] == result.valid
    assert [tuple(row[n] for n in AXES) for row in document["top"]] == _configs(result.top)
    times = [row["step_time_s"] for row in document["per_axis"]["gpus"]]
    expected = result.per_axis["gpus"]["step_time_s"].to_numpy()
    np.testing.assert_allclose(np.array(times, dtype=float), expected, rtol=1e-12)
    assert document["axes"]["tp"] == [1, 2, 4, 8]  # the log range, snapped to integers
    # whole-number fields as JSON integers (512, not 512.0), as every other command
    assert all(type(row[n]) is int for row in document["top"] for n in ("gpus", "tp", "pp"))
    assert all(type(v) is int for v in document["axes"]["tp"])
    assert document["axes"]["global_batch"] == [64, 128, 192]

    assert main(["sweep", path, "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "best per gpus (by samples per second, highest first)" in text and f"top {TOP}" in text
    assert "Pareto front" in text and "not ranked, gpus:" in text


BAD_SPACES = [
    ("[axes\ngpus = [1]", "malformed TOML"),
    (
        "[model]\nfamily = 'hybrid'\n[axes]\ntpp = [1, 2]\ngpus = [8]",
        "unknown axis 'tpp' .*; valid:",
    ),
    (  # a misspelt name gets the closest valid one, wherever it is in the file
        "[model]\nfamily = 'hybird'\n[axes]\ngpus = [8]",
        r"model.family: unknown 'hybird' \(did you mean 'hybrid'\?\)",
    ),
    (
        "[model]\nfamily = 'hybrid'\noption = {}\n[axes]\ngpus = [8]",
        r"\(did you mean 'options'\?\)",
    ),
    (
        "[model]\nfamily = 'hybrid'\noptions = { gpuu = 'A100' }\n[axes]\ngpus = [8]",
        r"model.options.gpuu: not an option of hybrid \(did you mean 'gpu'\?\)",
    ),
    (
        "[model]\nfamily = 'hybrid'\n[fixed]\nlayer = 8\n[axes]\ngpus = [8]",
        r"'layer' \(did you mean 'layers'\?\)",
    ),
    (
        "[model]\nfamily = 'hybrid'\n[axes]\ngpus = { start = 8, stopp = 16, num = 2 }",
        r"axes.gpus.stopp: unknown key \(did you mean 'stop'\?\)",
    ),
    (
        "[model]\nfamily = 'hybrid'\n[axes]\ngpus = [8]\n[sweep]\ntopk = 3",
        r"sweep.topk: unknown option \(did you mean 'top_k'\?\)",
    ),
    (
        "[model]\nfamily = 'hybrid'\n[axes]\ngpus = [8]\n[sweeep]",
        r"unknown table \[sweeep\] \(did you mean 'sweep'\?\)",
    ),
    ("[model]\nfamily = 'hybrid'\n[axes]\n", r"\[axes\]: no axes"),
    ("[model]\nfamily = 'hybrid'\n[axes]\ngpus = []", "axes.gpus: empty list"),
    ("[model]\nfamily = 'hybrid'\n[axes]\ngpus = [8, -8]", "axis 'gpus': expected positive"),
    ("[model]\nfamily = 'hybrid'\n[axes]\ngpus = 'many'", "axes.gpus: expected a list or a range"),
    ("[model]\nfamily = 'hybrid'\n[axes]\ngpus = [8, 'x']", r"axes.gpus\[1\]: expected a number"),
    (
        "[model]\nfamily = 'hybrid'\n[axes]\ngpus = { start = 8, stop = 4, step = 1 }",
        "axes.gpus: stop 4 is below start 8",
    ),
    (
        "[model]\nfamily = 'hybrid'\n[axes]\ngpus = { start = 8, stop = 64, step = 8, num = 3 }",
        "axes.gpus: give exactly one of step and num",
    ),
    (
        "[model]\nfamily = 'hybrid'\n[axes]\n"
        "gpus = { start = 0, stop = 64, num = 3, scale = 'log' }",
        "axes.gpus.start: a log range needs start > 0",
    ),
    (
        "[model]\nfamily = 'hybrid'\n[axes]\n"
        "gpus = { start = 1, stop = 64, num = 3, scale = 'ln' }",
        "axes.gpus.scale: expected 'linear' or 'log'",
    ),
    ("[model]\nfamily = 'hybrid'\n[axes]\ngpus = { stop = 64, step = 8 }", "a range needs 'start'"),
    (
        "[model]\nfamily = 'hybrid'\n[axes]\ntp = { start = 1, stop = 10, num = 3 }",
        "axis 'tp': expected whole",
    ),
    ("[model]\nfamily = 'transformer'\n[axes]\ngpus = [8]", "model.family: unknown 'transformer'"),
    ("[model]\nfamily = 'hybrid'\nfit = 'f.json'\n[axes]\ngpus = [8]", "model: give either family"),
    ("[model]\nfit = 'missing.json'\n[axes]\ngpus = [8]", "missing.json: no such file"),
    (
        "[model]\nfamily = 'hybrid'\noptions = { speed = 1 }\n[axes]\ngpus = [8]",
        "model.options.speed: not an option of hybrid",
    ),
    (
        "[model]\nfamily = 'hybrid'\n[fixed]\nlayers = 'many'\n[axes]\ngpus = [8]",
        "fixed.layers: expected a number",
    ),
    (
        "[model]\nfamily = 'hybrid'\n[axes]\ngpus = [8]\n[sweep]\nfast = true",
        "sweep.fast: unknown option",
    ),
    (
        "[model]\nfamily = 'hybrid'\n[axes]\ngpus = [8]\n[sweep]\ntop_k = 'ten'",
        "sweep.top_k: expected a whole number, got 'ten'",
    ),
    (  # "of the wrong type" said not which
        "[model]\nfamily = 'hybrid'\n[axes]\ngpus = [8]\n[sweep]\ntop_k = 2.5",
        "sweep.top_k: expected a whole number, got 2.5",
    ),
    (
        "[model]\nfamily = 'hybrid'\n[axes]\ngpus = [8]\n[sweep]\nper = ['tp']",
        "per: 'tp' is not an axis",
    ),
    ("[model]\nfamily = 'hybrid'\n[axes]\ngpus = [8]\n[plot]\nx = 1", r"unknown table \[plot\]"),
    (
        "[model]\nfamily = 'hybrid'\n[axes]\ngpus = { start = 1, stop = 5000, step = 1 }\n"
        "tp = [1, 2, 4, 8]\n[sweep]\nmax_configs = 1000",
        "the space has 2e\\+04 configurations, more than the maximum 1000; pass --yes",
    ),
    (  # every tp would list the same time
        "[model]\nfamily = 'amdahl'\n[axes]\ngpus = [1, 2]\ntp = [1, 2]",
        "axes.tp: the amdahl model does not read tp: the time is the same whatever its value; "
        "a sweep of it reads gpus, global_batch, price_per_gpu_hour and the model's parameters$",
    ),
    (
        "[model]\nfamily = 'usl'\n[fixed]\ngpus_per_node = 4\n[axes]\ngpus = [1, 2]",
        "fixed.gpus_per_node: the usl model does not read gpus_per_node",
    ),
    (  # hybrid_basic's; the Megatron-LM model counts the parameters from the shape
        "[model]\nfamily = 'hybrid'\n[fixed]\nparameters = 7e9\n[axes]\ngpus = [8]",
        "fixed.parameters: the hybrid model does not read parameters: .*; a sweep of it reads "
        "gpus, gpus_per_node, global_batch, tp, pp, microbatches, layers, hidden, ",
    ),
]


@pytest.mark.parametrize("body, message", BAD_SPACES)
def test_cli_bad_space_exits_2_with_one_line(tmp_path, capsys, body, message):
    path = _space(tmp_path, body)
    out = tmp_path / "out.json"
    assert main(["sweep", path, "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert err.startswith(f"perfmodel: error: {path}") or "no such file" in err
    assert re.search(message, err), err
    assert not out.exists()


@pytest.mark.slow  # 2 s: the default run stays under 4 minutes
def test_cli_max_configs_and_yes(tmp_path, capsys):
    body = "[model]\nfamily = 'amdahl'\n[axes]\ngpus = { start = 1, stop = 64, step = 1 }\n"
    path = _space(tmp_path, body)
    assert main(["sweep", path, "--max-configs", "10"]) == 2
    assert "64 configurations, more than the maximum 10; pass --yes" in capsys.readouterr().err
    assert (
        main(["sweep", path, "--max-configs", "10", "--yes", "--json", "--top", "2", "--progress"])
        == 0
    )
    captured = capsys.readouterr()
    assert [row["gpus"] for row in json.loads(captured.out)["top"]] == [64, 63]
    assert "sweep:" in captured.err and "100.0%" in captured.err  # the progress line
    assert main(["sweep", str(tmp_path / "nope.toml")]) == 2
    assert "nope.toml: no such file" in capsys.readouterr().err


def test_shipped_example_space_parses(tmp_path):
    from perfmodel._sweep import load_space

    here = os.path.dirname(os.path.abspath(__file__))
    spaces = os.path.join(here, "..", "benchmarks", "spaces")
    space = load_space(os.path.join(spaces, "gpt3_175b_dgx_h100.toml"))
    assert space.model.family == "hybrid"
    assert max(space.axes["gpus"]) == 4096 and space.axes["microbatch_size"][-1] == 8
    assert np.prod([len(v) for v in space.axes.values()]) > 1e7
    # Every shipped space, and the one in docs/sweeps.md, reads all its axes and fields.
    with open(os.path.join(here, "..", "docs", "sweeps.md"), encoding="utf-8") as stream:
        (block,) = re.findall(r"```toml\n(.*?)```", stream.read(), re.S)
    for name in os.listdir(spaces):
        assert load_space(os.path.join(spaces, name)).model.family == "hybrid"
    assert load_space(_space(tmp_path, block)).axes["tp"] == [1, 2, 4, 8]


def test_fields_read_follow_the_model():
    from perfmodel._reads import fields_read

    # Besides the model's own: gpus and price (cost), and the global batch (per sample).
    assert fields_read(pm.amdahl()) == ("gpus", "global_batch", "price_per_gpu_hour")
    assert fields_read(pm.usl(), per_step=False) == ("gpus", "price_per_gpu_hour")
    # A flat all-reduce runs over dp = gpus/(tp·pp) ranks; the hierarchical one by node.
    assert {"tp", "pp", "message_bytes"} <= set(fields_read(pm.data_parallel()))
    assert "gpus_per_node" not in fields_read(pm.data_parallel())
    assert "gpus_per_node" in fields_read(pm.data_parallel(hierarchical=True))
    basic = set(fields_read(pm.hybrid_basic(**OPTIONS)))
    assert {"tp", "pp", "microbatches", "parameters", "zero", "gpu_memory_bytes"} <= basic


def test_cli_refuses_a_fit_swept_over_what_it_does_not_read(tmp_path, capsys):
    # The walkthrough's case: Amdahl's law fitted to throughput, swept over tp as well.
    from perfmodel._sweep import load_space

    data = pm.load_dataset("tf_dgx1_p100_vgg16_real")
    amdahl = pm.amdahl().with_parameters({"serial.time": 3e-4, "compute.time": 6e-3})
    fit = dataclasses.replace(fitted(amdahl, data), config_defaults={"global_batch": 512.0})
    pm.save_fit(fit, tmp_path / "a.json")
    head = '[model]\nfit = "a.json"\n[axes]\ngpus = [1, 2, 4, 8, 16]\n'
    out = tmp_path / "top.csv"
    for extra, name in (
        ("tp = [1, 2]", "axes.tp"),
        ("global_batch = [64, 128]", "axes.global_batch"),
    ):
        path = _space(tmp_path, head + extra)
        assert main(["sweep", path, "-o", str(out)]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "Traceback" not in err
        assert err.startswith(f"perfmodel: error: {path}: {name}: the amdahl model does not read")
        # Per unit of work already: no global batch; the fit's own (512) is no error.
        assert err.endswith(
            "a sweep of it reads gpus, price_per_gpu_hour and the model's parameters"
        )
        assert not out.exists()
    assert load_space(_space(tmp_path, head + "price_per_gpu_hour = [1, 2]")).axes["gpus"]


@pytest.mark.slow  # 2 s: the default run stays under 4 minutes
def test_python_sweep_warns_of_fields_the_model_does_not_read():
    # Also as Python warnings, which a notebook shows (review round 11: only the tuple).
    with pytest.warns(UserWarning) as told:
        found = pm.sweep(
            pm.amdahl(), {"gpus": [1, 2], "tp": [1, 2]}, fixed={"layers": 4}, progress=False
        )
    assert tuple(str(w.message) for w in told) == found.warnings
    tail = (
        "the time is the same whatever its value; a sweep of it reads gpus, global_batch, "
        "price_per_gpu_hour and the model's parameters"
    )
    assert found.warnings == (
        f"axis 'tp': the amdahl model does not read tp: {tail}",
        f"fixed value 'layers': the amdahl model does not read layers: {tail}",
    )


@pytest.mark.slow  # 2 s: the default run stays under 4 minutes
def test_cli_writes_the_ranked_configurations_as_csv_for_a_csv_name(tmp_path, capsys):
    body = (
        '[model]\nfamily = "amdahl"\n[fixed]\n"serial.time" = 0.01\n[axes]\n'
        'gpus = [1, 2, 4, 8]\nprice_per_gpu_hour = [1.0, 2.5]\n[sweep]\nprecision = "float64"\n'
    )
    path = _space(tmp_path, body)
    out = tmp_path / "top.csv"
    assert main(["sweep", path, "--json", "--top", "3", "-o", str(out), "--no-progress"]) == 0
    top = pd.DataFrame(json.loads(capsys.readouterr().out)["top"])
    table = pd.read_csv(out)
    assert list(table.columns) == [
        *("gpus", "price_per_gpu_hour", "step_time_s", "samples_per_s", "cost_per_step"),
        *("cost_per_sample", "serial_s", "compute_s"),
    ]
    assert table["gpus"].tolist() == [8, 8, 4] and table["gpus"].dtype == np.int64
    np.testing.assert_allclose(
        table.to_numpy(float), top[table.columns].to_numpy(float), rtol=1e-15
    )
    # Any other name: the whole result as JSON, as before.
    other = tmp_path / "result.out"
    assert main(["sweep", path, "--top", "3", "-o", str(other), "--no-progress"]) == 0
    assert json.loads(other.read_text())["top"] == top.to_dict(orient="records")


def test_repr_is_one_line_and_summary_the_tables(result):
    assert "\n" not in repr(result) and repr(result).startswith("<SweepResult: ")
    text = result.summary()
    assert "best per" in text and f"top {TOP}" in text
    assert max(len(line) for line in text.splitlines()) <= 100


@pytest.mark.slow  # 4 s: the default run stays under 4 minutes
def test_sweep_of_the_default_blend_equals_its_predictions():
    fit = pm.fit_auto(pm.load_dataset("tf_dgx1_p100_vgg16_real")).best
    assert fit.family == "blend"
    gpus = np.arange(1.0, 65.0)
    result = pm.sweep(fit, {"gpus": gpus}, top_k=3, precision="float64", progress=False)
    best = result.top.iloc[0]
    np.testing.assert_allclose(
        best["step_time_s"], fit.predict([best["gpus"]])["time_s"][0], rtol=1e-9
    )


def test_a_hybrid_space_with_legacy_options_says_which_model_it_runs(tmp_path):
    from perfmodel._sweep.space import load_space

    legacy = SPACE.replace('family = "hybrid_basic"', 'family = "hybrid"')
    space = load_space(_space(tmp_path, legacy))
    assert space.model.family == "hybrid_basic"
    (note,) = space.notes
    assert note.startswith("model.options flops: options of hybrid_basic (the legacy model")
    assert not load_space(_space(tmp_path, SPACE, "basic.toml")).notes  # said outright


def _distinct_top(model, kind, axes, fixed):
    """A sweep's top table against the brute-force order of the distinct layouts."""
    from perfmodel._sweep.noop import canonical_layouts

    top = pm.sweep(model, axes, fixed=fixed, top_k=40, pareto=False, progress=False).top
    layouts = canonical_layouts({n: top[n] for n in axes}, fixed)
    grid = np.array(list(itertools.product(*axes.values())), dtype=float)
    config = pm.Config(**fixed, **{n: grid[:, i] for i, n in enumerate(axes)})
    time_s = np.where(np.asarray(pm.layout_status(config, kind)) == 0, model(config), np.inf)
    distinct = canonical_layouts({n: grid[:, i] for i, n in enumerate(axes)}, fixed)
    first = {}  # each distinct feasible layout at its best copy, in the sweep's order
    for i in np.lexsort((np.arange(len(grid)), time_s)):
        if np.isfinite(time_s[i]):
            first.setdefault(distinct[i], time_s[i])
    assert len(set(layouts)) == len(layouts) == len(first) < int(np.isfinite(time_s).sum())
    assert layouts == list(first)
    np.testing.assert_allclose(top["step_time_s"], list(first.values()), rtol=1e-5)


@pytest.mark.slow  # 6 s, a sweep of its own: the default run stays under 4 minutes
def test_top_lists_each_layout_once():
    # Review of 2026-12-06: ZeRO at one replica does nothing, and the top table listed
    # such a layout once per ZeRO stage.
    from perfmodel._sweep.noop import canonical_layouts

    axes = {"gpus": [4, 8], "tp": [1, 2, 4], "pp": [1, 2], "zero": [0, 1, 2]}
    fixed = {**FIXED, "global_batch": 64.0, "microbatches": 4.0}
    _distinct_top(pm.hybrid_basic(**OPTIONS), "hybrid_basic", axes, fixed)
    assert canonical_layouts({"gpus": 4, "tp": 2, "pp": 2, "zero": 1}, {}) == [(4, 2, 2, 0)]
    assert canonical_layouts({"tp": [1, 2], "seq_parallel": 1}, {}) == [(1, 0), (2, 1)]
    assert canonical_layouts({"tp": np.zeros(0), "gpus": 8.0}, {}) == []  # no row left


@pytest.mark.slow  # 13 s: a hybrid sweep and its whole grid evaluated eagerly
def test_top_lists_each_layout_once_with_sequence_parallelism():
    # Sequence parallelism at tp 1 is off in Megatron-LM: one layout, listed once.
    axes = {"gpus": [4, 8], "tp": [1, 2, 4], "pp": [1, 2], "seq_parallel": [0, 1], "zero": [0, 1]}
    fixed = dict(layers=8, hidden=2048, heads=16, seq_len=2048, vocab=51200, global_batch=64)
    fixed |= dict(microbatch_size=2, gpus_per_node=8, gpu_memory_bytes=80e9)
    _distinct_top(pm.hybrid(gpu="H100-80GB"), "hybrid", axes, fixed)


def test_a_layout_search_names_the_options_it_holds_at_their_defaults():
    # gpt3_175b_dgx_h100.toml searched tp and pp without sequence parallelism, silently.
    from perfmodel._sweep.run import _request

    def warnings(axes, fixed):
        fixed = dict(layers=8, hidden=2048, heads=16, seq_len=2048, vocab=51200, **fixed)
        options = dict(objective="time", per=None, top_k=3, pareto=False, counts=True)
        options |= dict(chunk_size=None, max_configs=None, precision="float32", devices=None)
        request = _request(pm.hybrid(), axes, fixed={"global_batch": 64, **fixed}, **options)
        return [w for w in request.warnings if "layout search holds" in w]

    held = warnings({"gpus": [8], "tp": [1, 2], "zero": [0, 1]}, {"interleave": 2})
    assert held == [
        "the layout search holds microbatches = 1, recompute = none, seq_parallel = 0: the "
        "space neither sweeps nor fixes them; sweep under [axes] or fix under [fixed]"
    ]
    every = {"interleave": 1, "recompute": 1, "seq_parallel": 1, "microbatch_size": 1}
    assert warnings({"gpus": [8], "tp": [1, 2], "zero": [0, 1]}, every) == []
    assert warnings({"gpus": [8, 16]}, {"tp": 2}) == []  # not a layout search


def test_the_stream_keeps_room_for_copies_only_where_they_can_occur():
    # Sequence parallelism copies a layout only at tp 1, ZeRO only at one replica.
    from perfmodel._sweep.noop import copies_per_layout

    sp = {"seq_parallel": [0, 1]}
    assert copies_per_layout({"tp": [1, 2], **sp}, {}) == 2
    assert copies_per_layout({"tp": [2, 4], **sp}, {}) == 1
    assert copies_per_layout(sp, {"tp": 8.0}) == 1
    assert copies_per_layout(sp, {}) == 2  # tp 1 by default
    zero = {"zero": [0, 1, 2]}
    assert copies_per_layout({"gpus": [16, 32], "tp": [2, 8], "pp": [1, 2], **zero}, {}) == 3
    assert copies_per_layout({"gpus": [64, 128], "tp": [2, 8], "pp": [1, 2], **zero}, {}) == 1
    assert copies_per_layout({"tp": [1, 2], **sp, **zero}, {"gpus": 2.0}) == 6
    assert copies_per_layout(zero, {}) == 1  # no GPU count: `canonical_layouts` keeps ZeRO


@pytest.mark.slow  # a CLI sweep with alternatives: ~6 s
def test_the_best_layout_says_its_ranking_when_the_global_batch_varies(tmp_path, capsys):
    # "2.483 s per step" above a Pareto row of 2.446 s read as a contradiction: a larger
    # batch may take longer per step and still give more samples/s (review of 2026-12-07).
    body = SPACE.replace("gpus = [4, 8, 12, 16, 24, 32, 40, 64]", "gpus = [8, 16]")
    path = _space(tmp_path, body.replace('"allreduce.bandwidth_inter" = [12.5e9, 25e9, 50e9]', ""))
    assert main(["sweep", path, "--json", "--no-progress"]) == 0
    top = json.loads(capsys.readouterr().out)["top"][0]
    assert main(["sweep", path, "--no-progress"]) == 0
    (line,) = [s for s in capsys.readouterr().out.splitlines() if s.startswith("best layout:")]
    assert line.endswith(
        f"{top['step_time_s']:.4g} s per step, {top['samples_per_s']:.4g} samples/s "
        "(ranked by samples per second: the global batch varies)"
    )
    one_batch = body.replace("{ start = 64, stop = 192, step = 64 }", "[128]")
    assert main(["sweep", _space(tmp_path, one_batch, "fixed.toml"), "--no-progress"]) == 0
    (line,) = [s for s in capsys.readouterr().out.splitlines() if s.startswith("best layout:")]
    assert line.endswith(" s per step")


@pytest.mark.slow  # 4 s: two sweeps compiled
def test_a_parameter_float32_cannot_hold_is_refused_naming_it():
    # An edited fit's compute.time of 1e307 became inf in float32: "no valid layout".
    with jax.enable_x64(True):
        model = pm.amdahl().with_parameters({"serial.time": 0.1, "compute.time": 1e307})
        with pytest.raises(pm.InputError, match=r"parameter compute.time = 1e\+307 is beyond"):
            pm.sweep(model, {"gpus": [1, 8, 64]}, progress=False)
        found = pm.sweep(model, {"gpus": [1, 8, 64]}, progress=False, precision="float64")
    assert found.valid == 3
