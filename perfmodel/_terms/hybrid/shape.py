"""FLOPs and parameters of a GPT transformer from its shape (Megatron-LM).

Symbols: h `Config.hidden`, s `seq_len`, L `layers`, V `vocab`, B `global_batch`, b the
samples per micro-batch (`Config.samples_per_microbatch`), t `tp`, p `pp`. Sources:
Narayanan et al., SC'21 (arXiv 2104.04473) §5.1 and eq. 3 [N21]; Korthikanti et al.
2022 (arXiv 2205.05198) §5 [K22].
"""

import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float

from ..._config import Config

FULL, SELECTIVE = 2.0, 1.0


def recompute_passes(
    recompute: Float[ArrayLike, "..."],
) -> tuple[Float[Array, "..."], Float[Array, "..."]]:
    """Extra forward passes ``(r_dense, r_attention)`` that recomputation adds (0 or 1 each).

    none (0): (0, 0); selective (1): (0, 1), only QKᵀ, softmax, dropout and scores·V are
    recomputed [K22 §5]; full (2): (1, 1), the whole layer forward [N21 §3.5].
    """
    r = jnp.asarray(recompute)
    one = jnp.ones_like(r)
    return jnp.where(r >= FULL, one, 0.0 * one), jnp.where(r >= SELECTIVE, one, 0.0 * one)


def layer_forward_flops(config: Config) -> tuple[Float[Array, "..."], Float[Array, "..."]]:
    """Forward FLOPs of one layer for one micro-batch on one of the t GPUs.

    ``(24·b·s·h²/t, 4·b·s²·h/t)``: dense GEMMs (QKV 6bsh², projection 2bsh², MLP 16bsh²)
    and the attention batched matmuls (QKᵀ and scores·V) [N21 §5.1].
    """
    b, s, h, t = config.samples_per_microbatch, config.seq_len, config.hidden, config.tp
    return 24.0 * b * s * h * h / t, 4.0 * b * s * s * h / t


def iteration_flops(config: Config) -> Float[Array, "..."]:
    """Hardware FLOPs of one iteration, all GPUs together (FLOPs).

    ``B·L·[(3+r_d)·24sh² + (3+r_a)·4s²h] + 6·B·s·h·V``: forward, backward (2×) and the
    recomputation (`recompute_passes`) of every layer, plus the logit GEMM forward and
    backward. With full recomputation this is [N21] eq. 3,
    ``96·B·s·L·h²·(1 + s/6h + V/16Lh)``; with none it is the model FLOPs of [K22] §6.

    Example:
        >>> import perfmodel as pm
        >>> gpt3 = pm.Config(gpus=1.0, hidden=12288, seq_len=2048, layers=96, vocab=51200,
        ...                  global_batch=1, recompute=2)
        >>> round(float(iteration_flops(gpt3)) / 1e15, 2)  # 96·s·L·h²·(1 + s/6h + V/16Lh)
        2.9
    """
    h, s, B = config.hidden, config.seq_len, config.global_batch
    rd, ra = recompute_passes(config.recompute)
    dense, attention = 24.0 * B * s * h * h, 4.0 * B * s * s * h
    logits = 2.0 * B * s * h * config.vocab
    return config.layers * ((3.0 + rd) * dense + (3.0 + ra) * attention) + 3.0 * logits


def layer_parameters(hidden: Float[ArrayLike, "..."]) -> Float[Array, "..."]:
    """Parameters of one transformer layer, ``12h² + 13h`` [N21 §5.1, K22 §3]."""
    h = jnp.asarray(hidden)
    return 12.0 * h * h + 13.0 * h


def model_parameters(config: Config) -> Float[Array, "..."]:
    """Parameters of the model: ``L·(12h² + 13h) + V·h + s·h`` (tied output embedding)."""
    h = config.hidden
    return config.layers * layer_parameters(h) + config.vocab * h + config.seq_len * h


def stage_parameters(config: Config) -> tuple[Float[Array, "..."], Float[Array, "..."]]:
    """Parameters one GPU of the first pipeline stage holds: ``(layers, embedding)``.

    L/p layers split over t, and the word embedding (V·h/t, vocabulary parallel) with the
    position embedding (s·h); the last stage holds a tied copy of the word embedding for
    the logits [N21 §3].
    """
    h, t = config.hidden, config.tp
    layers = layer_parameters(h) * config.layers / config.pp / t
    return layers, config.vocab * h / t + config.seq_len * h
