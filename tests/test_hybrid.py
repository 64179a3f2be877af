import dataclasses
import json

import equinox as eqx
from helpers import exact_fit as fitted
from helpers import ring_allreduce
import jax
import jax.numpy as jnp
from jax.test_util import check_grads
import numpy as np
import pytest

import perfmodel as pm

# A 7B-parameter GPT on 8-GPU nodes: every hybrid term is non-zero at these layouts.
MODEL = dict(
    layers=32.0,
    hidden=4096.0,
    seq_len=2048.0,
    parameters=7e9,
    flops_per_sample=6 * 7e9 * 2048,
    sample_bytes=8192.0,
    gpus_per_node=8.0,
)
# gpus, tp, pp, microbatches, global_batch
LAYOUTS = np.array(
    [
        [8, 8, 1, 1, 8],
        [16, 2, 2, 4, 64],
        [64, 4, 4, 8, 256],
        [256, 8, 4, 16, 1024],
        [1, 1, 1, 1, 4],
    ],
    dtype=float,
)
LINKS = dict(latency_intra=3e-6, bandwidth_intra=3e11, latency_inter=1e-5, bandwidth_inter=4e10)


def layout_config(**extra):
    gpus, tp, pp, m, batch = LAYOUTS.T
    fields = {**MODEL, **extra}
    return pm.Config(gpus=gpus, tp=tp, pp=pp, microbatches=m, global_batch=batch, **fields)


@pytest.fixture(scope="module")
def model():
    return pm.hybrid_basic(
        serial_time=2e-3,
        flops=3e14,
        nvlink_bandwidth=LINKS["bandwidth_intra"],
        nvlink_latency=LINKS["latency_intra"],
        network_bandwidth=LINKS["bandwidth_inter"],
        network_latency=LINKS["latency_inter"],
        host_bandwidth=2e10,
    )


def test_hybrid_basic_is_a_registered_preset_with_named_parameters(model):
    assert pm.hybrid_basic().family == "hybrid_basic"
    from perfmodel._presets import build

    assert build("hybrid_basic").parameter_specs().keys() == model.parameter_specs().keys()
    assert set(model.parameter_specs()) == {
        "serial.time",
        "compute.flops",
        "tensor.latency",
        "tensor.bandwidth",
        "allreduce.latency_intra",
        "allreduce.bandwidth_intra",
        "allreduce.latency_inter",
        "allreduce.bandwidth_inter",
        "input.bandwidth",
    }
    assert model.parameters()["allreduce.bandwidth_inter"] == pytest.approx(4e10, rel=1e-12)


def test_bubble_fraction_closed_form():
    pp = np.array([1.0, 2.0, 4.0, 8.0, 8.0])
    m = np.array([1.0, 1.0, 4.0, 8.0, 64.0])
    expected = (pp - 1) / (m + pp - 1)  # GPipe: 0 at pp = 1, 7/15 at pp = m = 8
    got = pm.bubble_fraction(pm.Config(gpus=8.0, pp=pp, microbatches=m))
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert float(got[3]) == pytest.approx(7 / 15)


def test_compute_is_the_ideal_work_stretched_by_the_bubble(model):
    gpus, tp, pp, m, batch = LAYOUTS.T
    term = model.terms[1]
    ideal = 6 * 7e9 * 2048 * batch / (gpus * 3e14)
    np.testing.assert_allclose(term(layout_config()), ideal * (m + pp - 1) / m, rtol=1e-12)
    # The bubble is the fraction (pp−1)/(m+pp−1) of that pipelined time.
    bubble = term(layout_config()) - ideal
    fraction = (pp - 1) / (m + pp - 1)
    np.testing.assert_allclose(bubble, fraction * term(layout_config()), rtol=1e-10, atol=1e-12)


def test_tensor_parallel_is_four_ring_all_reduces_per_layer_and_microbatch(model):
    gpus, tp, pp, m, batch = LAYOUTS.T
    dp = gpus / (tp * pp)
    size = batch / (dp * m) * 2048 * 4096 * 2.0  # b·s·h·2 bytes per micro-batch
    count = 4 * (32 / pp) * (m + pp - 1)  # 4 per layer per micro-batch, plus the bubble
    ring = ring_allreduce(tp, size, LINKS["latency_intra"], LINKS["bandwidth_intra"])
    np.testing.assert_allclose(model.terms[2](layout_config()), count * ring, rtol=1e-12)
    assert float(model.terms[2](layout_config())[-1]) == 0.0  # tp = 1: nothing to reduce


def test_data_parallel_all_reduce_of_the_gradient_share_over_dp_ranks(model):
    gpus, tp, pp, m, batch = LAYOUTS.T
    dp = gpus / (tp * pp)
    share = 7e9 * 4.0 / (tp * pp)  # fp32 gradients, one shard per tp·pp group
    local = np.minimum(dp, 8 / tp)  # dp ranks inside one node (tp ranks go first)
    nodes = dp / local
    a, b = LINKS["latency_intra"], LINKS["bandwidth_intra"]
    a2, b2 = LINKS["latency_inter"], LINKS["bandwidth_inter"]
    expected = 2 * ((local - 1) * a + (local - 1) / local * share / b)
    expected += ring_allreduce(nodes, share / local, a2, b2)
    np.testing.assert_allclose(model.terms[3](layout_config()), expected, rtol=1e-12)
    # tp = 8 fills the node, so the first layout's dp = 1 and the 16-GPU one crosses nodes.
    assert float(model.terms[3](layout_config())[0]) == 0.0


def test_input_is_each_replicas_share_of_the_batch(model):
    gpus, tp, pp, m, batch = LAYOUTS.T
    dp = gpus / (tp * pp)
    expected = np.minimum(dp, 1.0) * 8192 * batch / dp / 2e10  # one GPU per host link
    np.testing.assert_allclose(model.terms[4](layout_config()), expected, rtol=1e-12)


def test_step_time_is_the_sum_of_the_breakdown_and_the_bubble_is_inside(model):
    config = layout_config()
    parts = model.breakdown(config)
    np.testing.assert_allclose(model(config), sum(parts.values()), rtol=1e-12)
    staged = parts["compute"] + parts["tensor"]
    fraction = pm.bubble_fraction(config)
    np.testing.assert_allclose(pm.pipeline_bubble(model, config), fraction * staged, rtol=1e-12)


@pytest.mark.parametrize("zero", [0.0, 1.0, 2.0])
def test_memory_per_gpu_hand_computed(zero):
    # 16 GPUs = tp 2 × pp 2 × dp 4; micro-batch 64/(4·4) = 4 samples; 1F1B keeps 2 in flight.
    config = pm.Config(
        gpus=16.0, tp=2.0, pp=2.0, microbatches=4.0, global_batch=64.0, zero=zero, **MODEL
    )
    memory = {k: float(v) for k, v in pm.basic_memory_per_gpu(config).items()}
    shard = 7e9 / 4
    assert memory["weights"] == pytest.approx(shard * 2)
    assert memory["gradients"] == pytest.approx(shard * 4 / (4 if zero >= 2 else 1))
    assert memory["optimizer"] == pytest.approx(shard * 12 / (4 if zero >= 1 else 1))
    activations = 34 * 2048 * 4 * 4096 * (32 / 2) * 2 / 2
    assert memory["activations"] == pytest.approx(activations)
    parts = memory["weights"] + memory["gradients"] + memory["optimizer"] + activations
    assert memory["total"] == pytest.approx(parts)


@pytest.mark.parametrize(
    "fields, reason",
    [
        (dict(gpus=16.0, tp=2.0, pp=2.0, microbatches=4.0, global_batch=64.0), ""),
        (dict(gpus=12.0, tp=8.0, pp=1.0), "tp·pp does not divide gpus"),
        (dict(gpus=24.0, tp=3.0, pp=1.0, global_batch=8.0), "tp does not divide gpus_per_node"),
        (dict(gpus=16.0, tp=16.0, pp=1.0), "tp does not divide gpus_per_node"),
        (dict(gpus=24.0, tp=1.0, pp=3.0, global_batch=8.0), "pp does not divide layers"),
        (
            dict(gpus=16.0, tp=2.0, pp=2.0, microbatches=4.0, global_batch=40.0),
            "global_batch does not split into whole micro-batches per replica",
        ),
        (
            dict(
                gpus=16.0,
                tp=2.0,
                pp=2.0,
                microbatches=4.0,
                global_batch=64.0,
                gpu_memory_bytes=30e9,
            ),
            "out of memory",
        ),
        (dict(gpus=1.0, global_batch=4.0, gpu_memory_bytes=80e9), "out of memory"),
    ],
)
def test_layout_status_names_the_first_failed_check(fields, reason):
    config = pm.Config(**{**MODEL, **fields})
    assert pm.REASONS[int(pm.layout_status(config, "hybrid_basic"))] == reason


def test_first_invalid_layout_skips_valid_and_out_of_memory_runs():
    from perfmodel._terms import first_invalid_layout

    runs = pm.Config(
        **{
            **MODEL,
            "gpus": np.array([1.0, 8.0, 8.0]),
            "tp": np.array([1.0, 2.0, 3.0]),
            "global_batch": np.array([4.0, 64.0, 64.0]),
            "gpu_memory_bytes": np.array([1e9, 1e15, 1e15]),
        }
    )
    status = np.asarray(pm.layout_status(runs))
    assert pm.REASONS[int(status[0])] == "out of memory" and status[1] == 0
    assert first_invalid_layout(runs) == (2, "tp·pp does not divide gpus")
    assert (
        first_invalid_layout(pm.Config(**{**MODEL, "gpus": 8.0, "tp": 2.0, "global_batch": 64.0}))
        is None
    )


def test_jit_and_vmap_equal_plain_evaluation(model):
    config = layout_config()
    plain = np.array(
        [
            float(model(pm.Config(gpus=g, tp=t, pp=p, microbatches=m, global_batch=b, **MODEL)))
            for g, t, p, m, b in LAYOUTS
        ]
    )
    np.testing.assert_allclose(model(config), plain, rtol=1e-12)
    np.testing.assert_allclose(eqx.filter_jit(model)(config), plain, rtol=1e-12)
    vmapped = jax.vmap(model, in_axes=(0,))(config.broadcast())
    np.testing.assert_allclose(vmapped, plain, rtol=1e-12)
    status = jax.vmap(lambda c: pm.layout_status(c, "hybrid_basic"))(config.broadcast())
    np.testing.assert_array_equal(status, pm.layout_status(config, "hybrid_basic"))


def test_gradients_are_finite_and_match_finite_differences(model):
    config = layout_config()
    params, static = eqx.partition(model, eqx.is_inexact_array)

    @jax.jit
    def total(p):
        return jnp.sum(jnp.log(eqx.combine(p, static)(config)))

    grads = jax.grad(total)(params)
    assert all(np.isfinite(g).all() for g in jax.tree_util.tree_leaves(grads))
    check_grads(total, (params,), order=1, modes=("rev",), atol=1e-6, rtol=1e-6)
    # At tp = pp = dp = 1 (the last layout) the collectives vanish, gradients stay finite.
    one = pm.Config(gpus=1.0, global_batch=4.0, **MODEL)
    g1 = jax.jit(jax.grad(lambda p: eqx.combine(p, static)(one)))(params)
    assert all(np.isfinite(g).all() for g in jax.tree_util.tree_leaves(g1))


def test_with_parameters_reaches_the_wrapped_links(model):
    faster = model.with_parameters({"allreduce.bandwidth_inter": 8e10})
    assert faster.terms[3].inner.log_bandwidth_inter == pytest.approx(np.log(8e10))
    config = layout_config()
    assert float(faster.breakdown(config)["allreduce"][3]) < float(
        model.breakdown(config)["allreduce"][3]
    )
    mask = model.raw_leaf_mask({"allreduce.bandwidth_inter"})
    assert sum(jax.tree_util.tree_leaves(mask)) == 1


def test_hybrid_basic_fit_files_round_trip(tmp_path, model):
    # A fit of the basic family saves and loads like any preset (options included).
    gpus, tp, pp, m, batch = LAYOUTS.T
    config = dict(tp=tp, pp=pp, microbatches=m, global_batch=batch, **MODEL)
    data = pm.from_arrays(gpus, np.asarray(model(layout_config())), **config)
    defaults = {k: float(np.asarray(v)[0]) for k, v in data.config.items()}
    result = dataclasses.replace(fitted(model, data), config_defaults=defaults)
    pm.save_fit(result, tmp_path / "hybrid.json")
    loaded = pm.load_fit(tmp_path / "hybrid.json")
    assert loaded.family == "hybrid_basic"
    assert loaded.parameters() == pytest.approx(result.parameters(), rel=1e-12)
    np.testing.assert_allclose(loaded.model(layout_config()), model(layout_config()), rtol=1e-12)


def test_fit_files_of_the_former_hybrid_family_load_as_hybrid_basic(tmp_path, model):
    # Written before the Megatron-LM model took the name: family "hybrid", basic options.
    gpus, tp, pp, m, batch = LAYOUTS.T
    config = dict(tp=tp, pp=pp, microbatches=m, global_batch=batch, **MODEL)
    data = pm.from_arrays(gpus, np.asarray(model(layout_config())), **config)
    pm.save_fit(fitted(model, data), tmp_path / "old.json")
    document = json.loads((tmp_path / "old.json").read_text())
    document["model"]["family"] = "hybrid"
    (tmp_path / "old.json").write_text(json.dumps(document))
    loaded = pm.load_fit(tmp_path / "old.json")
    assert loaded.family == "hybrid_basic"
    np.testing.assert_allclose(loaded.model(layout_config()), model(layout_config()), rtol=1e-12)
