"""Reference cases with known answers, written in plain NumPy."""

import numpy as np


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
