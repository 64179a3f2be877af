"""The NumPy and Python mirrors of `benchmarks/sweep.py` agree with perfmodel's hybrid
model, feasibility included, in both axis orders (the benchmark's baselines must compute
the same thing to be compared)."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def sweep_benchmark():
    spec = importlib.util.spec_from_file_location("_sweep_bench", ROOT / "benchmarks" / "sweep.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("order", ["hardware-first", "layout-first"])
def test_the_mirrors_match_perfmodel_on_feasible_and_infeasible_layouts(sweep_benchmark, order):
    axes = sweep_benchmark.space(1e6, order=order)
    # Raises when feasibility differs or no sampled configuration is feasible.
    assert sweep_benchmark.check_baselines(axes, samples=4000) < 1e-9
