"""Seconds of the GEMMs of a transformer layer: a saturating efficiency under a roofline.

A GPU sustains the fraction ``e = e_max / (1 + d0·(1/M + 1/N + 1/K))`` of its peak on an
(M×K)·(K×N) GEMM: it tends to e_max for large matrices and drops when a side nears d0
(tiles under-filled, waves quantised for small M or N; per-tile prologue and epilogue not
amortised over a short K loop). e_max (dimensionless) and d0 (elements) are the two
fitted parameters of the `hybrid` family; the micro-batch size enters through M = b·s.
A GEMM also moves its operands and result through HBM once, so its time is the larger of
the two (the roofline of Williams et al., CACM 2009).
"""

from typing import NamedTuple

import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float

from ..._config import Config
from .shape import mlp_widths, qkv_width


class Device(NamedTuple):
    """One GPU: peak FLOP/s, HBM bytes/s and the GEMM efficiency (e_max, d0 elements)."""

    peak_flops: Float[Array, ""]
    hbm_bandwidth: Float[Array, ""]
    e_max: Float[Array, ""]
    d0: Float[Array, ""]


def gemm_efficiency(
    M: Float[ArrayLike, "..."],
    N: Float[ArrayLike, "..."],
    K: Float[ArrayLike, "..."],
    e_max: Float[ArrayLike, ""],
    d0: Float[ArrayLike, ""],
) -> Float[Array, "..."]:
    """Fraction of peak one (M×K)·(K×N) GEMM sustains, ``e_max / (1 + d0·(1/M+1/N+1/K))``."""
    return e_max / (1.0 + d0 * (1.0 / M + 1.0 / N + 1.0 / K))


def gemm_time(
    M: Float[ArrayLike, "..."],
    N: Float[ArrayLike, "..."],
    K: Float[ArrayLike, "..."],
    device: Device,
    batch: Float[ArrayLike, "..."] = 1.0,
) -> Float[Array, "..."]:
    """Seconds of `batch` GEMMs of (M×K)·(K×N) in 2-byte precision.

    ``batch · max(2MNK / (peak·e), 2(MK + KN + MN) / BW_hbm)`` with e from
    `gemm_efficiency`, written without a division by e (fewer operations per
    configuration in a sweep): ``2MNK/(peak·e) = (MNK + d0·(NK + MK + MN)) ·
    2/(peak·e_max)``, the shape's part grouped by powers of M.
    """
    # The shape's part first, the device's rate last: in a sweep over both the layout and
    # the peak FLOP/s, the first depends on the layout alone and the rate on the hardware
    # alone, so each configuration costs one product (and the max), not the coefficients.
    rate = 2.0 / (device.peak_flops * device.e_max)
    compute = (M * (N * K + device.d0 * (K + N)) + device.d0 * K * N) * rate
    byte_time = 2.0 / device.hbm_bandwidth
    memory = M * ((K + N) * byte_time) + K * N * byte_time
    return batch * jnp.maximum(compute, memory)


def layer_gemm_times(
    config: Config, device: Device
) -> tuple[Float[Array, "..."], Float[Array, "..."]]:
    """Forward seconds of one layer's GEMMs for a micro-batch on one GPU: ``(dense, attention)``.

    Dense, split as Megatron-LM's column/row-parallel layers [N21 §2.3]: QKV
    (bs × h)·(h × q/t) with q = h + 2g·h/a (`shape.qkv_width`: 3h, or fewer key/value
    heads with grouped-query attention), projection (bs × h/t)·(h/t × h), fc1
    (bs × h)·(h × (1+γ)f/t), fc2 (bs × f/t)·(f/t × h) (`shape.mlp_widths`: f = 4h, γ = 0
    for GPT; γ = 1 with SwiGLU). Attention: b·a/t batched (s × d)·(d × s) and
    (s × s)·(s × d) with d = h/a (every query head, whatever g); with flash attention the
    same FLOPs in one kernel that keeps the s × s scores on chip. The backward pass runs
    two GEMMs of the same {M, N, K} per forward GEMM (input and weight gradients), so it
    takes twice these times.
    """
    h, s, t = config.hidden, config.seq_len, config.tp
    a = config.head_count
    M = config.samples_per_microbatch * s
    fc1, fc2 = mlp_widths(config)
    dense = (
        gemm_time(M, qkv_width(config) / t, h, device)
        + gemm_time(M, h, h / t, device)
        + gemm_time(M, fc1 / t, h, device)
        + gemm_time(M, h, fc2 / t, device)
    )
    d = h / a
    heads = config.samples_per_microbatch * a / t
    plain = gemm_time(s, s, d, device, heads) + gemm_time(s, d, s, device, heads)
    fused = heads * (4.0 * s * s * d / (device.peak_flops * gemm_efficiency(s, s, d, *device[2:])))
    return dense, jnp.where(config.flash_attention > 0.0, fused, plain)


def logit_gemm_time(config: Config, device: Device) -> Float[Array, "..."]:
    """Forward seconds of the output layer's (bs × h)·(h × V/t) GEMM on one GPU [N21 §3];
    0 without a vocabulary."""
    M = config.samples_per_microbatch * config.seq_len
    N = jnp.maximum(config.vocab, 1.0) / config.tp
    return jnp.where(config.vocab > 0.0, gemm_time(M, N, config.hidden, device), 0.0)
