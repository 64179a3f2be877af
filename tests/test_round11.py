"""What the eleventh round of review (2026-12-05) and the items left open by the tenth
found answered with misleading words, a traceback or a silent wrong number; each now
gets the answer it should."""

import pytest

import perfmodel as pm
from perfmodel._questions.whatif import compare_fits


@pytest.fixture(scope="module")
def batch_capped_fit(tmp_path_factory):
    """Amdahl on a fixed global batch of 64: the fastest count is the batch itself."""
    csv = tmp_path_factory.mktemp("batch") / "strong.csv"
    csv.write_text("gpus,time_s,global_batch\n1,1.0,64\n2,0.51,64\n4,0.26,64\n8,0.135,64\n")
    return pm.fit("amdahl", pm.load_benchmarks(csv))


def test_an_optimum_at_a_fixed_global_batch_says_so_not_the_search_limit(batch_capped_fit):
    # "64 GPUs (the search limit: more GPUs may still help)" of a 64-sample batch.
    best = pm.optimal_gpus(batch_capped_fit)
    assert best.at_limit and best.global_batch == 64
    assert "fixed global batch of 64" in best.summary()
    assert "search limit" not in best.summary()
    after = pm.what_if(batch_capped_fit, {"compute.time": 0.5})
    line = compare_fits(batch_capped_fit, after).optimum_line()
    assert "64 (global batch) → 64 (global batch)" in line


def test_an_optimum_at_the_search_limit_still_says_so(batch_capped_fit):
    best = pm.optimal_gpus(batch_capped_fit, max_gpus=32)
    assert best.at_limit and best.global_batch is None
    assert "the search limit: more GPUs may still help" in best.summary()


@pytest.mark.parametrize("nodes", [2, 4, 32])
def test_the_hierarchical_all_reduce_prints_the_bus_bandwidth_the_docs_give(nodes):
    # docs/collectives.md: busbw = l·β·(p−1)/p·m/(m−1), β one GPU's network bandwidth.
    import jax
    import numpy as np

    beta, local, size = 25e9, 8, 2.0**30
    term = pm.HierarchicalAllReduce(
        latency_intra=1e-300, bandwidth_intra=1e300, latency_inter=1e-300, bandwidth_inter=beta
    )
    ranks = local * nodes
    with jax.enable_x64(True):
        seconds = float(term(pm.Config(gpus=ranks, gpus_per_node=local, message_bytes=size)))
    busbw = size / seconds * 2 * (ranks - 1) / ranks
    assert np.isclose(busbw, local * beta * (ranks - 1) / ranks * nodes / (nodes - 1), rtol=1e-9)
