"""How many configurations per second does `perfmodel.sweep` evaluate, against baselines?

The space is GPT-3 175B under the full `hybrid` model (Megatron-LM: GEMMs under the
saturating efficiency and the HBM roofline, memory-bound kernels, tensor-parallel
collectives with their overlap, pipeline sends and bubble, the data-parallel reduction
with its overlap, the layout checks and the per-GPU memory check) on DGX H100 nodes:
every GPU count up to 4096 × tp × pp × micro-batches × global batch × ZeRO stage × NIC
bandwidth × GPU memory × peak FLOP/s, the last axis sized to reach ``--configs``.

In the same run, before it, the same space under `hybrid_basic` (the model the `hybrid`
family was until the Megatron-LM model replaced it: one sustained FLOP/s, its axis at
40% of the peak), and the ratio of the two rates.

In the same run, on the first configurations of the same space, the same formula:

* NumPy with broadcasting (every axis its own dimension, so each operation runs on the
  sub-grid of the axes it depends on: the fastest NumPy we know), float32;
* NumPy on blocks of configurations decoded from flat indices (every operation on the
  whole block: the straightforward vectorisation), float32;
* a plain Python loop over configurations (as analytical tools such as Calculon do),
  on a subsample, extrapolated.

The baselines are first checked against perfmodel's model (float64) on random
configurations: same seconds per sample, same valid and feasible ones. Rates include
compilation (``configs_per_s``) or not (``steady_configs_per_s``); ratios use the
former. The last line printed is one JSON object (configs, configs_per_s,
numpy_configs_per_s, numpy_flat_configs_per_s, python_loop_configs_per_s, ratios,
peak_rss_mb, device, flops_per_config, …).

The device is whatever JAX sees: on a GPU machine the sweep runs there. On a CPU, all
cores are used by exposing each as a JAX device (``--xla_force_host_platform_device_count``,
set here before JAX starts unless XLA_FLAGS is already set).

Run from the repository root (under 5 minutes on 2 CPU cores)::

    python benchmarks/sweep.py                 # 1e10 configurations on a CPU
    python benchmarks/sweep.py --configs 1e12  # a GPU
"""

import argparse
import itertools
import json
import math
import os
import platform
import resource
import sys
import time

if "XLA_FLAGS" not in os.environ:
    # One JAX CPU device per core, so the sweep shards over all of them.
    os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={os.cpu_count() or 1}"

import jax  # noqa: E402
import numpy as np  # noqa: E402

import perfmodel as pm  # noqa: E402

GPT3 = dict(
    layers=96.0,
    hidden=12288.0,
    heads=96.0,
    vocab=51200.0,
    seq_len=2048.0,
    parameters=175e9,
    flops_per_sample=6 * 175e9 * 2048,
    sample_bytes=8192.0,
    gpus_per_node=8.0,
    price_per_gpu_hour=2.5,
)
# The hybrid model's DGX H100 (`perfmodel.GPUS`; its peak FLOP/s is an axis).
GPU = "H100-80GB"
HARDWARE = dict(pm.GPUS[GPU])
# The basic model it replaced, as this benchmark ran it before (DGX H100-like, one
# sustained FLOP/s): swept on the same space for the before/after ratio.
BASIC_HARDWARE = dict(
    serial_time=5e-3,
    nvlink_bandwidth=3.6e11,
    nvlink_latency=5e-6,
    network_bandwidth=4.5e10,
    network_latency=1e-5,
    host_bandwidth=5e10,
)
# The basic model's axis of sustained FLOP/s is the hybrid model's peak at 40%.
SUSTAINED = 0.4


def space(
    target: float,
    order: str = "hardware-first",
    rate: str = "compute.peak_flops",
    micro: str = "microbatches",
) -> dict[str, np.ndarray]:
    """The axes; the FLOP/s axis is sized to reach about `target` configs.

    `rate` names it: ``compute.peak_flops`` (the hybrid model, 5·10¹⁴–1.5·10¹⁵) or
    ``compute.flops`` (the basic model's sustained rate, 40% of those). `micro` names the
    micro-batching axis, 1 to 128: ``microbatches`` (m; the micro-batch size b follows)
    or ``microbatch_size`` (b, Megatron-LM's knob; m follows).

    ``hardware-first``: the layout axes come last, so the layout varies inside each row
    of the walk and every configuration goes through the whole model, the slow case
    for perfmodel. ``layout-first``: the layout axes vary per row and the hardware axes
    inside rows, so `sweep` computes the layout-dependent quantities once per row.
    """
    axes = {
        rate: None,
        "gpu_memory_bytes": np.array([40e9, 80e9, 141e9]),
        "allreduce.bandwidth_inter": np.array([12.5e9, 25e9, 50e9, 100e9]),
        "zero": np.array([0.0, 1.0]),
        "gpus": np.arange(1.0, 4097.0),
        "tp": np.array([1.0, 2.0, 4.0, 8.0]),
        "pp": np.array([1.0, 2.0, 4.0, 6.0, 8.0, 12.0, 16.0, 24.0]),
        micro: 2.0 ** np.arange(8),
        "global_batch": np.array([512.0, 1024.0, 1536.0, 2048.0, 3072.0]),
    }
    base = math.prod(len(v) for v in axes.values() if v is not None)
    peak = np.linspace(2e14, 6e14, max(1, round(target / base))) / SUSTAINED
    axes[rate] = peak * (SUSTAINED if rate == "compute.flops" else 1.0)
    if order == "layout-first":
        return dict(reversed(axes.items()))
    return axes


# The same formula in NumPy and in plain Python --------------------------------------


def _ring(p, size, latency, bandwidth):
    return 2 * (p - 1) * latency + 2 * (p - 1) / p * size / bandwidth


def _gather(p, size, latency, bandwidth):
    return (p - 1) * latency + (p - 1) / p * size / bandwidth


def _gemm(M, N, K, peak, h, xp):
    surface = M * K + K * N + M * N
    compute = 2 * (M * N * K + h["d0"] * surface) / (peak * h["e_max"])
    return xp.maximum(compute, 2 * surface / h["hbm_bandwidth"])


def hybrid_formula(v: dict, h: dict, xp):
    """(seconds per sample, valid layout, valid and fits in memory) of the hybrid model.

    `v` holds the configuration (NumPy arrays that broadcast with ``xp=_NumPyOps``, or
    Python floats with ``xp=_MathOps``), `h` the hardware. Mirrors `perfmodel.hybrid`
    (`perfmodel._terms.hybrid.terms`) term by term for this space: the Megatron-Core
    defaults of `perfmodel.Config` (flash attention, asynchronous tensor-parallel
    collectives, fused gradient accumulation, overlapped data-parallel reduction,
    scatter/gather sends), no recomputation or sequence parallelism, the 1F1B schedule
    and ZeRO 0 or 1.
    """
    L, H, S, V = GPT3["layers"], GPT3["hidden"], GPT3["seq_len"], GPT3["vocab"]
    a, G, peak = GPT3["heads"], GPT3["gpus_per_node"], v["compute.peak_flops"]
    g, t, p, m, batch = v["gpus"], v["tp"], v["pp"], v["microbatches"], v["global_batch"]
    dp = g / (t * p)
    b = batch / (dp * m)
    M = b * S
    dense = (
        _gemm(M, 3 * H / t, H, peak, h, xp)
        + _gemm(M, H, H / t, peak, h, xp)
        + _gemm(M, 4 * H / t, H, peak, h, xp)
        + _gemm(M, H, 4 * H / t, peak, h, xp)
    )
    d = H / a
    efficiency = h["e_max"] / (1 + h["d0"] * (2 / S + 1 / d))
    attention = b * a / t * 4 * S * S * d / (peak * efficiency)  # flash attention
    gemm_window = 2 * dense + 2.5 * attention
    gemm = dense + attention + gemm_window
    tokens, hbm = b * S, h["hbm_bandwidth"]
    kernel_window = (22 * tokens * H + 24 * tokens * H / t) / hbm
    kernel = (22 * tokens * H + 16 * tokens * H / t) / hbm + kernel_window
    size = b * S * H * 2.0
    nv = (h["nvlink_latency"], h["nvlink_bandwidth"])
    ib = (h["network_latency"], v["allreduce.bandwidth_inter"])
    ar = _ring(t, size, *nv)
    exposed = 2 * ar + xp.maximum(0.0, 2 * ar - 2 * dense)  # 2 fwd, 2 bwd asynchronous
    layers = (12 * H * H + 13 * H) * L / (p * t)
    embedding = V * H / t + S * H
    params = layers + embedding
    slots, stage = m + (p - 1), L / p
    logits = 3 * _gemm(M, V / t, H, peak, h, xp) + 24 * b * S * V / t / hbm + ar
    optimizer = params * (34 + 3 * 4.0) / xp.where(v["zero"] >= 1, dp, 1.0) / hbm
    one = (
        xp.where(g > G, ib[0], nv[0])
        + size / t / xp.where(g > G, ib[1], nv[1])
        + xp.where(t > 1, _gather(t, size, *nv), 0.0)
    )
    p2p = xp.where(p > 1, 2 * (m + p - 1) * one, 0.0)
    local = xp.minimum(dp, xp.maximum(G / t, 1.0))
    grads = params * 4.0
    reduce = 2 * _gather(local, grads, *nv) + _ring(dp / local, grads / local, *ib)
    reduce = xp.where(dp > 1, reduce, 0.0)
    backward = stage * (gemm_window + kernel_window)
    data = xp.maximum(0.0, reduce - backward)
    # ZeRO-1: the gradients reduce-scattered under the last backward, the 2-byte weights
    # all-gathered under the first forward (--overlap-param-gather).
    weights = params * 2.0
    gather = 2 * _gather(local, weights, *nv) + _ring(dp / local, weights / local, *ib)
    gather = xp.where(dp > 1, gather, 0.0) / 2
    forward = stage * (gemm - gemm_window + kernel - kernel_window)
    zero1 = xp.maximum(0.0, reduce / 2 - backward) + xp.maximum(0.0, gather - forward)
    data = xp.where(v["zero"] == 1, zero1, data)
    data = data + xp.where(p > 1, _ring(2.0, V * H / t * 4.0, *ib), 0.0)
    step = slots * stage * (gemm + kernel + exposed) + m * logits + optimizer + p2p + data
    per_param = 2.0 + 4.0 + 12.0 / xp.where(v["zero"] >= 1, dp, 1.0)
    in_flight = xp.minimum(m, p)
    activations = S * b * H * (10 + 24 / t) * stage * in_flight
    extra = S * b * H * in_flight + xp.where(p <= 1, 6 * b * S * V / t, 0.0)
    memory = (layers + embedding) * per_param + activations + extra
    valid = xp.whole(dp) & xp.whole(G / t) & xp.whole(L / p) & xp.whole(b) & xp.whole(a / t)
    return step / batch, valid, valid & (memory <= v["gpu_memory_bytes"])


def numpy_step(v: dict, h: dict, xp):
    """Seconds per sample, or inf where invalid or out of memory (never ranked)."""
    per_sample, _, ok = hybrid_formula(v, h, xp)
    return xp.where(ok, per_sample, math.inf)


class NumPyReductions:
    """What `perfmodel.sweep` keeps, kept by NumPy as a careful NumPy user would.

    Counts of valid and feasible configurations, the best per GPU count, the top k
    (candidates under the current k-th best only, then a partition).
    """

    def __init__(self, k: int = 10, max_gpus: int = 4096):
        self.k, self.valid, self.feasible = k, 0, 0
        self.per_gpus = np.full(max_gpus + 1, np.inf)
        self.top = np.full(k, np.inf)

    def add(self, values: dict, gpus) -> None:
        per_sample, valid, ok = hybrid_formula(values, HARDWARE, _NumPyOps)
        score = np.where(ok, per_sample, np.inf)
        # Masks may cover a sub-grid only: each of their entries stands for size/len.
        self.valid += int(np.count_nonzero(valid)) * (score.size // np.size(valid))
        self.feasible += int(np.count_nonzero(ok)) * (score.size // np.size(ok))
        flat = score.ravel()
        if np.ndim(gpus) == 0:
            self.per_gpus[int(gpus)] = min(self.per_gpus[int(gpus)], float(flat.min()))
        else:  # runs of equal GPU counts: one minimum per run
            starts = np.r_[0, np.flatnonzero(gpus[1:] != gpus[:-1]) + 1]
            runs = np.minimum.reduceat(flat, starts)
            np.minimum.at(self.per_gpus, gpus[starts].astype(np.int64), runs)
        candidates = flat[flat < self.top[-1]]
        if candidates.size > self.k:
            candidates = candidates[np.argpartition(candidates, self.k)[: self.k]]
        self.top = np.sort(np.concatenate([self.top, candidates]))[: self.k]


class _NumPyOps:
    minimum, maximum, where = np.minimum, np.maximum, np.where

    @staticmethod
    def whole(x):
        return (x == np.floor(x)) & (x >= 1)


class _MathOps:
    """The operations `numpy_step` needs, on Python floats."""

    minimum, maximum = min, max

    @staticmethod
    def where(c, a, b):
        return a if c else b

    @staticmethod
    def whole(x):
        return x == math.floor(x) and x >= 1


def numpy_rate(axes: dict, seconds: float) -> tuple[float, int]:
    """Configurations/s of NumPy (float32, broadcasting) on the first GPU counts.

    Every axis is its own dimension, so NumPy computes each operation on the sub-grid
    of the axes it depends on, as idiomatic vectorised NumPy does: the fastest NumPy.
    It keeps what the sweep keeps (`NumPyReductions`).
    """
    names = [n for n in axes if n != "gpus"]
    shaped = {
        n: axes[n].astype(np.float32).reshape([-1 if m == n else 1 for m in names]) for n in names
    }
    width = math.prod(len(axes[n]) for n in names)
    done, began, kept = 0, time.perf_counter(), NumPyReductions()
    for gpus in axes["gpus"]:
        kept.add(dict(shaped, gpus=np.float32(gpus)), np.float32(gpus))
        done += width
        if time.perf_counter() - began > seconds:
            break
    return done / (time.perf_counter() - began), done


def numpy_flat_rate(axes: dict, seconds: float, block: int = 2**20) -> tuple[float, int]:
    """Configurations/s of NumPy (float32) on configurations decoded from flat indices.

    The straightforward vectorisation: a block of indices, each axis's value by div/mod,
    every operation on the whole block.
    """
    names = list(axes)
    sizes = [len(axes[n]) for n in names]
    strides = [math.prod(sizes[i + 1 :]) for i in range(len(sizes))]
    tables = [axes[n].astype(np.float32) for n in names]
    done, began, kept = 0, time.perf_counter(), NumPyReductions()
    while time.perf_counter() - began < seconds and done < math.prod(sizes):
        index = np.arange(done, done + block, dtype=np.int64)
        values = {n: t[(index // s) % len(t)] for n, t, s in zip(names, tables, strides)}
        kept.add(values, values["gpus"])
        done += block
    return done / (time.perf_counter() - began), done


def python_rate(axes: dict, seconds: float) -> tuple[float, int]:
    """Configurations/s of a plain Python loop over the same space, on a subsample."""
    names = list(axes)
    done, best, began = 0, math.inf, time.perf_counter()
    for combo in itertools.product(*(a.tolist() for a in axes.values())):
        best = min(best, numpy_step(dict(zip(names, combo)), HARDWARE, _MathOps))
        done += 1
        if done % 4096 == 0 and time.perf_counter() - began > seconds:
            break
    return done / (time.perf_counter() - began), done


def _even_layouts(picks: dict, axes: dict, rng, count: int) -> None:
    """Make the first `count` of `picks` layouts that divide evenly: gpus = tp·pp·dp with
    dp dividing the global batch over the micro-batches. Feasible configurations are
    about 6·10⁻⁵ of the space; on these, memory decides, so the feasibility check
    compares something in either axis order."""
    micro = "microbatches" if "microbatches" in axes else "microbatch_size"
    largest = float(axes["gpus"].max())
    for i in range(count):
        per_dp = picks["global_batch"][i] / picks[micro][i]  # m·dp (or dp·b) divides it
        room = largest / (picks["tp"][i] * picks["pp"][i])
        choices = [d for d in range(1, int(min(per_dp, room)) + 1) if per_dp % d == 0]
        if choices:
            picks["gpus"][i] = picks["tp"][i] * picks["pp"][i] * float(rng.choice(choices))


def check_baselines(axes: dict, samples: int = 20000) -> float:
    """Largest relative difference of the NumPy and Python formula from perfmodel.

    On random configurations, in float64: the seconds per sample (valid or not) and
    which configurations are valid and fit in memory must agree.
    """
    rng = np.random.default_rng(0)
    # In name order, so that both axis orders check the same configurations.
    picks = {n: rng.choice(axes[n], samples) for n in sorted(axes)}
    _even_layouts(picks, axes, rng, samples // 2)
    with jax.enable_x64(True):
        model = pm.hybrid(gpu=GPU)  # parameters in float64 too
        params = {n: picks[n] for n in ("allreduce.bandwidth_inter", "compute.peak_flops")}
        fields = {n: v for n, v in picks.items() if n not in params}
        config = pm.Config(**GPT3, **fields)
        ok = np.asarray(pm.layout_status(config)) == 0
        exact = np.asarray(model.with_parameters(params)(config)) / picks["global_batch"]
    mirror, _, mirror_ok = hybrid_formula(picks, HARDWARE, _NumPyOps)
    assert (mirror_ok == ok).all() and ok.any(), "NumPy feasibility differs from perfmodel"
    for i in range(0, samples, 97):
        one = {n: float(v[i]) for n, v in picks.items()}
        assert numpy_step(one, HARDWARE, _MathOps) == np.where(ok[i], mirror[i], np.inf)
    return float(np.max(np.abs(mirror / exact - 1)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configs", type=float, help="space size (1e10 on CPU, 1e12 else)")
    parser.add_argument(
        "--baseline-seconds", type=float, default=20.0, help="time given to each baseline (20)"
    )
    parser.add_argument(
        "--precision", choices=("float32", "float64"), default="float32", help="of the sweep"
    )
    parser.add_argument(
        "--order",
        choices=("hardware-first", "layout-first"),
        default="hardware-first",
        help="axis order (see `space`; hardware-first is the slow case)",
    )
    parser.add_argument(
        "--peak-gflops",
        type=float,
        help="the device's peak FP32 GFLOP/s, to report the fraction reached",
    )
    args = parser.parse_args()
    devices = jax.devices()
    kind = devices[0].platform
    target = args.configs or (1e10 if kind == "cpu" else 1e12)
    axes = space(target, args.order)
    model = pm.hybrid(gpu=GPU)
    fixed = {n: v for n, v in GPT3.items()}
    print(
        f"device: {len(devices)} × {devices[0].device_kind} ({kind}); "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs",
        file=sys.stderr,
    )

    # Before: the basic model this benchmark swept until the Megatron-LM one replaced it,
    # on the same space (its FLOP/s axis the sustained rate), in the same run.
    basic_axes = space(target, args.order, rate="compute.flops")
    basic = pm.sweep(
        pm.hybrid_basic(**BASIC_HARDWARE),
        basic_axes,
        fixed=fixed,
        progress=True,
        precision=args.precision,
    )
    basic_steady = basic.timings.get("steady_configs_per_s", basic.rate)
    print(
        f"before (hybrid_basic): {basic.evaluated:.4g} configurations in {basic.seconds:.1f} s "
        f"({basic.rate:.3g}/s overall, {basic_steady:.3g}/s after compilation)",
        file=sys.stderr,
    )
    result = pm.sweep(model, axes, fixed=fixed, progress=True, precision=args.precision)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    rate = result.rate
    steady = result.timings.get("steady_configs_per_s", rate)
    print(
        f"perfmodel: {result.evaluated:.4g} configurations in {result.seconds:.1f} s "
        f"({rate:.3g}/s overall, {steady:.3g}/s after compilation), {result.precision}, "
        f"peak RSS {rss_mb:.0f} MB; {result.feasible:.4g} feasible",
        file=sys.stderr,
    )
    best = result.top.iloc[0]
    print(
        "best: "
        + ", ".join(f"{n}={best[n]:g}" for n in axes)
        + f", {best['step_time_s']:.4g} s/step",
        file=sys.stderr,
    )
    print(
        f"after/before (hybrid/hybrid_basic): {rate / basic.rate:.3g} overall, "
        f"{steady / basic_steady:.3g} after compilation (the issue's bound: ≥ 0.5)",
        file=sys.stderr,
    )

    difference = check_baselines(axes)
    numpy_per_s, numpy_done = numpy_rate(axes, args.baseline_seconds)
    flat_per_s, flat_done = numpy_flat_rate(axes, args.baseline_seconds / 2)
    loop_per_s, loop_done = python_rate(axes, args.baseline_seconds / 2)
    flops = result.flops_per_config
    document = {
        "configs": result.evaluated,
        "seconds": result.seconds,
        "configs_per_s": rate,
        "steady_configs_per_s": steady,
        "model": f"hybrid (gpu={GPU})",
        "basic_configs_per_s": basic.rate,
        "basic_steady_configs_per_s": basic_steady,
        "basic_seconds": basic.seconds,
        "ratio_to_basic": rate / basic.rate,
        "steady_ratio_to_basic": steady / basic_steady,
        "numpy_configs_per_s": numpy_per_s,
        "numpy_configs_evaluated": numpy_done,
        "numpy_flat_configs_per_s": flat_per_s,
        "numpy_flat_configs_evaluated": flat_done,
        "python_loop_configs_per_s": loop_per_s,
        "python_loop_configs_evaluated": loop_done,
        "speedup_vs_numpy": rate / numpy_per_s,
        "speedup_vs_numpy_flat": rate / flat_per_s,
        "speedup_vs_python_loop": rate / loop_per_s,
        "baseline_max_relative_difference": difference,
        "valid": result.valid,
        "feasible": result.feasible,
        "precision": result.precision,
        "peak_rss_mb": rss_mb,
        "device": f"{len(devices)} x {devices[0].device_kind} ({kind})",
        "flops_per_config": flops,
        "achieved_gflops": None if flops is None else flops * steady / 1e9,
        "fraction_of_peak": None
        if flops is None or not args.peak_gflops
        else flops * steady / 1e9 / args.peak_gflops,
        "best": {n: float(best[n]) for n in axes} | {"step_time_s": float(best["step_time_s"])},
        "order": args.order,
        "jax": jax.__version__,
    }
    print(
        f"NumPy broadcasting: {numpy_per_s:.3g}/s on {numpy_done:.3g} configurations; NumPy "
        f"flat: {flat_per_s:.3g}/s on {flat_done:.3g}; Python loop: {loop_per_s:.3g}/s on "
        f"{loop_done:.3g}. perfmodel is {rate / numpy_per_s:.1f}× NumPy broadcasting, "
        f"{rate / flat_per_s:.0f}× NumPy flat and {rate / loop_per_s:.0f}× the loop",
        file=sys.stderr,
    )
    print(json.dumps(document))


if __name__ == "__main__":
    main()
