"""The NumPy and Python mirrors of `benchmarks/sweep.py` agree with perfmodel's hybrid
model, feasibility included, in both axis orders (the benchmark's baselines must compute
the same thing to be compared)."""

from helpers import load_benchmark
import pytest


@pytest.fixture(scope="module")
def sweep_benchmark():
    return load_benchmark("sweep")


@pytest.mark.slow  # compiles the hybrid model: ~6 s
@pytest.mark.parametrize("order", ["hardware-first", "layout-first"])
def test_the_mirrors_match_perfmodel_on_feasible_and_infeasible_layouts(sweep_benchmark, order):
    axes = sweep_benchmark.space(1e6, order=order)
    # Raises when feasibility differs or no sampled configuration is feasible.
    assert sweep_benchmark.check_baselines(axes, samples=4000) < 1e-9
