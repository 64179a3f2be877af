import equinox as eqx
from helpers import amdahl_speedup, busbw_factor, ring_allreduce, tree_allclose
import jax
import jax.numpy as jnp
from jax.test_util import check_grads
import numpy as np
import pytest

import perfmodel as pm

GPUS = np.array([1.0, 2.0, 3.0, 8.0, 16.0, 64.0, 1024.0])


def test_amdahl_twenty_percent_serial_tends_to_five():
    model = pm.amdahl().with_parameters({"serial.time": 0.2, "compute.time": 0.8})
    config = pm.Config(gpus=GPUS)
    np.testing.assert_allclose(model.speedup(config), amdahl_speedup(0.2, GPUS), rtol=1e-12)
    assert float(model.speedup(pm.Config(gpus=1e9))) == pytest.approx(5.0, rel=1e-8)
    assert float(model.speedup(pm.Config(gpus=1e9))) < 5.0


@pytest.mark.parametrize("size", [1.0, 4e6, 1e9])
def test_ring_allreduce_closed_form(size):
    term = pm.Collective(latency=5e-6, bandwidth=2e10)
    config = pm.Config(gpus=GPUS, message_bytes=size)
    np.testing.assert_allclose(term(config), ring_allreduce(GPUS, size, 5e-6, 2e10), rtol=1e-12)
    assert float(term(pm.Config(gpus=1.0, message_bytes=size))) == 0.0


@pytest.mark.parametrize(
    "op",
    ["all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce"],
)
def test_bus_bandwidth_factor_matches_nccl_tests(op):
    n = np.array([2.0, 4.0, 8.0, 16.0, 256.0])
    np.testing.assert_allclose(pm.bus_bandwidth_factor(op, n), busbw_factor(op, n), rtol=1e-12)


@pytest.mark.parametrize(
    "op",
    ["all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce"],
)
def test_bandwidth_bound_ring_reaches_busbw_equal_link_bandwidth(op):
    # With no latency, busbw = (S / t) · factor must equal β for every ring collective.
    n = np.array([2.0, 4.0, 8.0, 64.0])
    size, beta = 1e9, 3e10
    t = pm.collective_time(op, "ring", n, size, 0.0, beta)
    np.testing.assert_allclose(size / t * busbw_factor(op, n), beta, rtol=1e-12)


def test_tree_allreduce_closed_form():
    n = np.array([2.0, 8.0, 64.0])
    t = pm.collective_time("all_reduce", "tree", n, 1e8, 1e-5, 1e10)
    np.testing.assert_allclose(t, 2 * np.log2(n) * 1e-5 + 2 * 1e8 / 1e10, rtol=1e-12)
    assert float(pm.collective_time("all_reduce", "tree", 1.0, 1e8, 1e-5, 1e10)) == 0.0


def test_hierarchical_allreduce_inside_one_node_is_the_intra_ring():
    term = pm.HierarchicalAllReduce(1e-6, 1e11, 1e-5, 1e10)
    n = np.array([1.0, 2.0, 4.0, 8.0])
    config = pm.Config(gpus=n, gpus_per_node=8.0, message_bytes=1e9)
    np.testing.assert_allclose(term(config), ring_allreduce(n, 1e9, 1e-6, 1e11), rtol=1e-12)


def test_hierarchical_allreduce_across_nodes():
    term = pm.HierarchicalAllReduce(1e-6, 1e11, 1e-5, 1e10)
    n, g, s = np.array([16.0, 64.0]), 8.0, 1e9
    nodes = n / g
    expected = ring_allreduce(g, s, 1e-6, 1e11) + ring_allreduce(nodes, s / g, 1e-5, 1e10)
    config = pm.Config(gpus=n, gpus_per_node=g, message_bytes=s)
    np.testing.assert_allclose(term(config), expected, rtol=1e-12)


def test_host_to_device_link_sharing():
    # Four GPUs behind one link: the input time stays flat until the link is split.
    term = pm.HostToDeviceTerm(bandwidth=1e10)
    n = np.array([1.0, 2.0, 4.0, 8.0])
    config = pm.Config(gpus=n, gpus_per_link=4.0, input_bytes=1e9)
    np.testing.assert_allclose(term(config), np.minimum(n, 4) * 1e9 / n / 1e10, rtol=1e-12)


def test_overlap_hides_the_smaller_of_compute_and_communication():
    model = pm.data_parallel(overlap=True).with_parameters(
        {
            "serial.time": 0.1,
            "compute.time": 1.0,
            "allreduce.latency": 1e-3,
            "allreduce.bandwidth": 1.0,
            "overlap": 0.25,
        }
    )
    config = pm.Config(gpus=GPUS)
    compute, comm = 1.0 / GPUS, ring_allreduce(GPUS, 1.0, 1e-3, 1.0)
    expected = 0.1 + compute + comm - 0.25 * np.minimum(compute, comm)
    np.testing.assert_allclose(model(config), expected, rtol=1e-12)
    parts = model.breakdown(config)
    np.testing.assert_allclose(sum(parts.values()), model(config), rtol=1e-12)
    assert set(parts) == {"serial", "compute", "allreduce", "overlap"}


def test_weak_scaling_compute_stays_constant():
    model = pm.amdahl(weak=True).with_parameters({"serial.time": 0.5, "compute.time": 2.0})
    np.testing.assert_allclose(model(pm.Config(gpus=GPUS)), 2.5, rtol=1e-12)


def _full_model():
    return pm.ScalingModel(
        terms=(
            pm.SerialTerm(0.05),
            pm.ComputeTerm(2.0),
            pm.HostToDeviceTerm(5e9),
            pm.HierarchicalAllReduce(),
            pm.CoherencyTerm(1e-4),
        ),
        logit_overlap=jnp.asarray(0.3),
    )


def test_jit_and_vmap_equal_plain_evaluation():
    model = _full_model()
    config = pm.Config(gpus=GPUS, gpus_per_node=8.0, message_bytes=1e8, input_bytes=1e7)
    loop = np.array(
        [
            float(model(pm.Config(gpus=n, gpus_per_node=8.0, message_bytes=1e8, input_bytes=1e7)))
            for n in GPUS
        ]
    )
    np.testing.assert_allclose(model(config), loop, rtol=1e-12)
    np.testing.assert_allclose(eqx.filter_jit(lambda m, c: m(c))(model, config), loop, rtol=1e-12)
    np.testing.assert_allclose(jax.vmap(model)(config.broadcast()), loop, rtol=1e-12)
    leaves, treedef = jax.tree_util.tree_flatten(model)
    rebuilt = jax.jit(lambda ls: jax.tree_util.tree_unflatten(treedef, ls))(leaves)
    assert tree_allclose(rebuilt, model)


def test_gradients_match_finite_differences():
    model = _full_model()
    params, static = eqx.partition(model, eqx.is_inexact_array)
    config = pm.Config(gpus=GPUS[1:], gpus_per_node=8.0, message_bytes=1e8, input_bytes=1e7)

    def total(p):
        return jnp.sum(jnp.log(eqx.combine(p, static)(config)))

    check_grads(total, (params,), order=2, modes=["rev"], eps=1e-4)


def test_gradient_wrt_gpus_is_finite_at_one_gpu():
    model = _full_model()

    def time_at(n):
        return model(pm.Config(gpus=n, gpus_per_node=8.0, message_bytes=1e8))

    grad = jax.grad(time_at)(1.0)
    assert np.isfinite(grad)
    check_grads(time_at, (3.0,), order=1, modes=["rev"], eps=1e-3)


def test_parameters_round_trip_and_unknown_name():
    model = pm.usl().with_parameters({"serial.time": 0.3, "coherency.time": 2e-3})
    values = model.parameters()
    assert float(values["serial.time"]) == pytest.approx(0.3)
    assert float(values["coherency.time"]) == pytest.approx(2e-3)
    with pytest.raises(KeyError, match="valid: serial.time"):
        model.with_parameters({"bandwidth": 1.0})


def test_collective_rejects_tree_all_gather():
    with pytest.raises(ValueError, match="no tree algorithm"):
        pm.Collective(op="all_gather", algorithm="tree")


def test_docstring_examples():
    import doctest

    from perfmodel._terms import collectives as _collectives

    failures, tried = doctest.testmod(_collectives)
    assert tried > 0 and failures == 0
