"""The GPUs `pm.hybrid` knows (`pm.GPUS`) and the memory budget a sweep of one assumes."""

import numpy as np
import pytest

import perfmodel as pm

GPT_13B = dict(layers=40, hidden=5120, heads=40, seq_len=2048, vocab=51200, global_batch=64)
AXES = {"gpus": [8], "tp": [1, 2, 4, 8], "pp": [1, 2], "recompute": [0, 2]}


def test_every_known_gpu_builds_a_model_with_its_published_numbers():
    expected = {  # peak dense BF16 FLOP/s, memory GiB (datasheets, see hardware.py)
        "A100-80GB": (312e12, 80),
        "A100-40GB": (312e12, 40),
        "H100-80GB": (989e12, 80),
        "H200-141GB": (989e12, 141),
        "B200-180GB": (2.25e15, 180),
    }
    assert set(pm.GPUS) == set(expected)
    for gpu, (peak, gib) in expected.items():
        parameters = pm.hybrid(gpu=gpu).parameters()
        assert float(parameters["compute.peak_flops"]) == pytest.approx(peak)
        assert pm.GPUS[gpu]["memory_bytes"] == gib * 2**30
    # An H200 is an H100 with more and faster memory: same chip and links.
    h100, h200 = pm.GPUS["H100-80GB"], pm.GPUS["H200-141GB"]
    assert {k: h200[k] for k in ("peak_flops", "nvlink_bandwidth", "network_bandwidth")} == {
        k: h100[k] for k in ("peak_flops", "nvlink_bandwidth", "network_bandwidth")
    }
    assert h200["hbm_bandwidth"] / h100["hbm_bandwidth"] == pytest.approx(4.8 / 3.35)


@pytest.fixture(scope="module")
def h200_sweeps():
    model = pm.hybrid(gpu="H200")
    assumed = pm.sweep(model, AXES, fixed=GPT_13B, top_k=3)
    given = pm.sweep(model, AXES, fixed=GPT_13B | {"gpu_memory_bytes": 40 * 2**30}, top_k=3)
    return assumed, given


@pytest.mark.slow  # 12 s with the next: two layout sweeps compiled
def test_a_sweep_without_a_budget_holds_layouts_to_the_gpus_usable_memory(h200_sweeps):
    assumed, given = h200_sweeps
    (line,) = [w for w in assumed.warnings if "gpu_memory_bytes" in w]
    assert "126.9 GiB per GPU, 90% of the H200-141GB's 141 GiB" in line
    budget = 0.9 * 141 * 2**30
    feasible = assumed.best[assumed.best.feasible]
    assert (feasible.memory_gb * 1e9 <= budget).all()
    # A budget given is the one used, and no line says otherwise.
    assert not [w for w in given.warnings if "gpu_memory_bytes" in w]
    assert given.feasible < assumed.feasible <= assumed.valid


@pytest.mark.slow  # the sweeps of the test above
def test_the_assumed_budget_rules_out_what_does_not_fit(h200_sweeps):
    assumed, _ = h200_sweeps
    layouts = pm.Config(gpus=np.array([8.0]), tp=np.array([1.0]), pp=np.array([1.0]), **GPT_13B)
    memory = pm.memory_per_gpu(layouts)
    # 13B parameters on one GPU need 18 bytes each (weights, gradients, Adam): > 141 GiB.
    assert float(np.asarray(memory["layer_states"]).reshape(-1)[0]) > 141 * 2**30
    ranked = assumed.top  # only layouts within the assumed budget are ranked
    assert len(ranked) and (ranked.memory_gb * 1e9 <= 0.9 * 141 * 2**30).all()
    assert assumed.feasible < assumed.valid
