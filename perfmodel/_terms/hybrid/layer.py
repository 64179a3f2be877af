"""Seconds of one transformer layer for one micro-batch on one GPU, by resource.

The pieces the `hybrid` terms share: GEMMs (`efficiency`), memory-bound kernels
(`kernels`) and, for the overlap windows, the backward share of each.
"""

import jax.numpy as jnp
from jaxtyping import Array, Float

from ..._config import Config
from .efficiency import Device, layer_gemm_times
from .kernels import layer_elementwise_bytes
from .shape import recompute_passes


def layer_gemm_seconds(
    config: Config, device: Device
) -> tuple[Float[Array, "..."], Float[Array, "..."], Float[Array, "..."]]:
    """GEMM seconds of one layer and micro-batch: ``(total, backward window, dense fwd)``.

    Forward 1×, backward 2× (flash attention's backward recomputes the scores: 2.5× its
    forward), recomputation (`recompute_passes`) 1× the dense and/or attention forward.
    The backward window (backward plus recomputation) is what the data-parallel
    reduction can hide under; the dense forward sets what asynchronous tensor-parallel
    collectives hide under (the backward's weight-gradient GEMMs, 2× it).
    """
    dense, attention = layer_gemm_times(config, device)
    rd, ra = recompute_passes(config.recompute)
    attention_bwd = jnp.where(config.flash_attention > 0.0, 2.5, 2.0)
    # backward + recomputed, each GEMM time with one coefficient (the same sums: two
    # products per configuration in a sweep instead of four, even without recomputation).
    window = (2.0 + rd) * dense + (attention_bwd + ra) * attention
    return dense + attention + window, window, dense


def layer_kernel_seconds(
    config: Config, hbm_bandwidth: Float[Array, ""]
) -> tuple[Float[Array, "..."], Float[Array, "..."]]:
    """Memory-bound seconds of one layer and micro-batch: ``(total, backward window)``.

    `layer_elementwise_bytes` at the HBM bandwidth: forward, backward, and what
    recomputation repeats (the whole forward with full recomputation, the attention
    kernels with selective).
    """
    forward, backward, attention = layer_elementwise_bytes(config)
    rd, ra = recompute_passes(config.recompute)
    recomputed = rd * forward + ra * jnp.where(rd > 0.0, 0.0, attention)
    seconds_per_byte = 1.0 / hbm_bandwidth
    window = (backward + recomputed) * seconds_per_byte
    return forward * seconds_per_byte + window, window
