"""Configurations/s of the reference model in NumPy against the sweep benchmark's mirror.

Same broadcasting layout as `benchmarks/sweep.py` ``numpy_rate`` (each axis its own
dimension), float64, one core: the ratio estimates how much more arithmetic per
configuration the library's sweep would do once these terms are ported.

    PYTHONPATH=. python benchmarks/megatron_research/throughput.py
"""

import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "benchmarks"))
import _megatron_reference as ref  # noqa: E402


def axes():
    shape = [1] * 5
    values = [
        np.arange(8.0, 4097.0, 8.0),
        np.array([1.0, 2.0, 4.0, 8.0]),
        np.array([1.0, 2.0, 4.0, 6.0, 8.0, 12.0, 16.0, 24.0]),
        np.array([1.0, 2.0, 4.0, 8.0]),
        np.array([1.0, 2.0, 3.0, 4.0]),
    ]
    out = []
    for i, x in enumerate(values):
        s = list(shape)
        s[i] = -1
        out.append(x.reshape(s))
    return out


def reference(g, tp, pp, b, v):
    d = g / (tp * pp)
    st = ref.STACKS["megatron-2022"]
    args = (12288.0, 96.0, 2048.0, 51200.0, 96.0, b, tp, pp, d, v)
    t = ref.iteration_time(*args, 1536.0, ref.SELECTIVE, 1.0, 1.0, st)["total"]
    m = ref.memory_per_gpu(*args, 1536.0 / (d * b), ref.SELECTIVE, 1.0, 1.0, st)["total"]
    return np.where(m <= ref.A100_SELENE["memory_bytes"], t, np.inf)


def rate(fn, repeat=3):
    a = axes()
    n = np.broadcast(*a).size
    best = np.inf
    for _ in range(repeat):
        start = time.perf_counter()
        fn(*a)
        best = min(best, time.perf_counter() - start)
    return n / best


if __name__ == "__main__":
    os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=1")
    import sweep  # benchmarks/sweep.py

    def mirror(g, tp, pp, b, v):
        values = {
            "gpus": g,
            "tp": tp,
            "pp": pp,
            "microbatches": 1536.0 / (g / (tp * pp)) / b + 0 * v,
            "global_batch": 1536.0,
            "zero": 1.0,
            "gpu_memory_bytes": 80e9,
            "compute.flops": 4e14,
            "allreduce.bandwidth_inter": 2.5e10,
        }
        return sweep.numpy_step(values, sweep.HARDWARE, sweep._NumPyOps)

    r_ref, r_mirror = rate(reference), rate(mirror)
    print(
        f"reference: {r_ref:.3g} configs/s; sweep.py NumPy mirror: {r_mirror:.3g} configs/s;"
        f" mirror/reference {r_mirror / r_ref:.1f}x"
    )
