"""Reference cases with known answers, written in plain NumPy, and shared test fixtures."""

import importlib.util
from pathlib import Path

import numpy as np

import perfmodel as pm

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def load_benchmark(name: str):
    """The script ``benchmarks/<name>.py`` as a module (not on the import path)."""
    spec = importlib.util.spec_from_file_location(f"_benchmark_{name}", BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def amdahl_speedup(serial_fraction, n):
    """Amdahl: 1 / (s + (1 − s)/N)."""
    return 1.0 / (serial_fraction + (1.0 - serial_fraction) / n)


def ring_allreduce(n, size, latency, bandwidth):
    """2(p−1)α + 2(p−1)/p · S/β."""
    return 2 * (n - 1) * latency + 2 * (n - 1) / n * size / bandwidth


def usl_throughput(n, sigma, kappa, gamma):
    """Gunther: γN / (1 + σ(N−1) + κN(N−1))."""
    return gamma * n / (1 + sigma * (n - 1) + kappa * n * (n - 1))


def busbw_factor(op, n):
    """nccl-tests' factors, as printed in its PERFORMANCE.md."""
    return {
        "all_reduce": 2 * (n - 1) / n,
        "all_gather": (n - 1) / n,
        "reduce_scatter": (n - 1) / n,
        "all_to_all": (n - 1) / n,
        "broadcast": 1.0,
        "reduce": 1.0,
    }[op]


def tree_allclose(a, b, rtol=1e-10, atol=0.0):
    import jax

    leaves_a, leaves_b = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    return len(leaves_a) == len(leaves_b) and all(
        np.allclose(np.asarray(x), np.asarray(y), rtol=rtol, atol=atol)
        for x, y in zip(leaves_a, leaves_b)
    )


def exact_fit(model, data=None) -> "pm.FitResult":
    """A FitResult around a known model (no fitting), for exact closed-form checks."""
    data = data or pm.from_arrays([1, 2, 4, 8], [1.0, 0.6, 0.4, 0.3])
    return pm.FitResult(
        model=model,
        data=data,
        loss_kind="log",
        loss=0.0,
        converged=True,
        message="",
        num_steps=0,
        r2=1.0,
        mape=0.0,
        residuals=np.zeros(data.gpus.size),
        free=(),
        fixed={},
        bounds={},
        raw_covariance=None,
        warnings=(),
        config_defaults={},
    )


# The catalogue: every cost term against its closed form --------------------------------

GPUS = np.array([1.0, 2.0, 3.0, 8.0, 16.0, 64.0, 1024.0])


def _hierarchical(n, g, size, a_intra, b_intra, a_inter, b_inter):
    local, nodes = np.minimum(n, g), np.maximum(n / g, 1.0)
    intra = ring_allreduce(local, size, a_intra, b_intra)
    inter = np.where(
        nodes > 1, ring_allreduce(np.maximum(nodes, 1.0), size / local, a_inter, b_inter), 0
    )
    return intra + inter


class TermCase:
    """A term, a configuration and the term's seconds at each GPU count in NumPy."""

    def __init__(self, name, make, config, expected):
        self.name, self.make, self.config, self.expected = name, make, config, expected

    def __repr__(self):
        return self.name


TERM_CASES = [
    TermCase("serial", lambda: pm.SerialTerm(0.02), {}, lambda n: np.full_like(n, 0.02)),
    TermCase("compute/strong", lambda: pm.ComputeTerm(3.0), {}, lambda n: 3.0 / n),
    TermCase(
        "compute/weak", lambda: pm.ComputeTerm(3.0, weak=True), {}, lambda n: np.full_like(n, 3.0)
    ),
    TermCase("coherency", lambda: pm.CoherencyTerm(1e-4), {}, lambda n: 1e-4 * (n - 1)),
    TermCase(
        "host input shared by 4 GPUs",
        lambda: pm.HostToDeviceTerm(1e10),
        {"gpus_per_link": 4.0, "input_bytes": 1e9},
        lambda n: np.minimum(n, 4.0) * 1e9 / n / 1e10,
    ),
    TermCase(
        "ring all-reduce",
        lambda: pm.Collective(latency=5e-6, bandwidth=2e10),
        {"message_bytes": 4e8},
        lambda n: ring_allreduce(n, 4e8, 5e-6, 2e10),
    ),
    TermCase(
        "tree all-reduce",
        lambda: pm.Collective(latency=5e-6, bandwidth=2e10, algorithm="tree"),
        {"message_bytes": 4e8},
        lambda n: np.where(n > 1, 2 * (np.log2(n) * 5e-6 + 4e8 / 2e10), 0.0),
    ),
    TermCase(
        "hierarchical all-reduce",
        lambda: pm.HierarchicalAllReduce(1e-6, 1e11, 1e-5, 1e10),
        {"gpus_per_node": 8.0, "message_bytes": 1e9},
        lambda n: _hierarchical(n, 8.0, 1e9, 1e-6, 1e11, 1e-5, 1e10),
    ),
    TermCase(
        "weak ring all-reduce per unit of work",
        lambda: pm.WeakAllReduceTerm(latency=2e-3, transfer=5e-2),
        {},
        lambda n: 2e-3 * (n - 1) / n + 5e-2 * (n - 1) / n**2,
    ),
    TermCase(
        "weak tree all-reduce per unit of work",
        lambda: pm.WeakAllReduceTerm(latency=2e-3, transfer=5e-2, algorithm="tree"),
        {},
        lambda n: 2e-3 * np.log2(n) / n + 5e-2 * (n - 1) / n**2,
    ),
    TermCase(
        "weak two-level all-reduce per unit of work",
        lambda: pm.WeakHierarchicalAllReduceTerm(transfer_intra=1e-2, transfer_inter=4e-2),
        {"gpus_per_node": 8.0},
        lambda n: (
            (
                1e-2 * (np.minimum(n, 8) - 1) / np.minimum(n, 8)
                + 4e-2 * (np.maximum(n / 8, 1) - 1) / (np.maximum(n / 8, 1) * np.minimum(n, 8))
            )
            / n
        ),
    ),
    TermCase(
        "batch compute c·B/N",
        lambda: pm.BatchComputeTerm(2e-3),
        {"global_batch": 4096.0},
        lambda n: 2e-3 * 4096.0 / n,
    ),
    TermCase(
        "PMNF c·N^(-1/2)·log2(N)",
        lambda: pm.PowerLogTerm(0.7, exponent=-0.5, log_exponent=1),
        {},
        lambda n: 0.7 * n**-0.5 * np.log2(n),
    ),
]


def run_cli(*argv) -> tuple[int, str, str]:
    """``(exit status, stdout, stderr)`` of ``perfmodel ARGV`` run in this process."""
    import contextlib
    import io

    from perfmodel._cli import app

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = app.main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def refused(code: int, err: str, *parts: str) -> None:
    """A refusal as the project promises: exit 2, one line, no traceback, naming `parts`."""
    assert code == 2 and len(err.strip().splitlines()) == 1, (code, err)
    assert "Traceback" not in err and all(p in err for p in parts), err
