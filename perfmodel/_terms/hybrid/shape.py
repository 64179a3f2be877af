"""FLOPs and parameters of a GPT transformer from its shape (Megatron-LM).

Symbols: h `Config.hidden`, s `seq_len`, L `layers`, V `vocab`, B `global_batch`, b the
samples per micro-batch (`Config.samples_per_microbatch`), t `tp`, p `pp`, a the heads
(`Config.head_count`), g the key/value heads (`Config.group_count`: a unless grouped-query
attention), f the MLP width (`Config.ffn_size`, 4h by default), γ 1 with a gated MLP
(`Config.gated_mlp`, SwiGLU) else 0. Sources: Narayanan et al., SC'21 (arXiv 2104.04473)
§5.1 and eq. 3 [N21]; Korthikanti et al. 2022 (arXiv 2205.05198) §5 [K22]; grouped-query
attention, Ainslie et al. 2023 (arXiv 2305.13245) [GQA]; SwiGLU, Shazeer 2020 (arXiv
2002.05202) [GLU]; Megatron-LM's ``--num-query-groups``, ``--ffn-hidden-size``,
``--swiglu`` (``megatron/core/transformer``).
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


def qkv_width(config: Config) -> Float[Array, "..."]:
    """Outputs of the QKV projection per token, ``h + 2·g·h/a``: the a query heads and
    the g key and value heads of h/a channels each; 3h with multi-head attention [GQA]."""
    h = config.hidden
    return h + 2.0 * h * (config.group_count / config.head_count)


def mlp_widths(config: Config) -> tuple[Float[Array, "..."], Float[Array, "..."]]:
    """Outputs of fc1 and inputs of fc2 per token: ``((1+γ)·f, f)``; 4h and 4h for the
    GPT MLP, 2f and f with SwiGLU (gate and value, multiplied) [GLU]."""
    f = config.ffn_size
    return (1.0 + config.gated_mlp) * f, f


def dense_flops_per_token(config: Config) -> Float[Array, "..."]:
    """Forward FLOPs of one layer's dense GEMMs per token, all t GPUs together.

    ``2h·(qkv + h + (1+γ)·f + f)`` (`qkv_width`, `mlp_widths`): QKV, projection, fc1 and
    fc2; ``24h²`` for GPT [N21 §5.1].
    """
    fc1, fc2 = mlp_widths(config)
    return 2.0 * config.hidden * (qkv_width(config) + config.hidden + fc1 + fc2)


def layer_forward_flops(config: Config) -> tuple[Float[Array, "..."], Float[Array, "..."]]:
    """Forward FLOPs of one layer for one micro-batch on one of the t GPUs.

    ``(b·s·dense/t, 4·b·s²·h/t)``: dense GEMMs (`dense_flops_per_token`, 24h² per token
    for GPT: QKV 6h², projection 2h², MLP 16h²) and the attention batched matmuls (QKᵀ
    and scores·V, a query heads whatever g) [N21 §5.1].
    """
    b, s, h, t = config.samples_per_microbatch, config.seq_len, config.hidden, config.tp
    return b * s * dense_flops_per_token(config) / t, 4.0 * b * s * s * h / t


def iteration_flops(config: Config) -> Float[Array, "..."]:
    """Hardware FLOPs of one iteration, all GPUs together (FLOPs).

    ``B·L·[(3+r_d)·s·dense + (3+r_a)·4s²h] + 6·B·s·h·V``: forward, backward (2×) and the
    recomputation (`recompute_passes`) of every layer, plus the logit GEMM forward and
    backward; dense is `dense_flops_per_token` (24h² for GPT). For GPT with full
    recomputation this is [N21] eq. 3, ``96·B·s·L·h²·(1 + s/6h + V/16Lh)``; with none it
    is the model FLOPs of [K22] §6.

    Example:
        >>> import perfmodel as pm
        >>> gpt3 = pm.Config(gpus=1.0, hidden=12288, seq_len=2048, layers=96, vocab=51200,
        ...                  global_batch=1, recompute=2)
        >>> round(float(iteration_flops(gpt3)) / 1e15, 2)  # 96·s·L·h²·(1 + s/6h + V/16Lh)
        2.9
    """
    h, s, B = config.hidden, config.seq_len, config.global_batch
    rd, ra = recompute_passes(config.recompute)
    dense, attention = B * s * dense_flops_per_token(config), 4.0 * B * s * s * h
    logits = 2.0 * B * s * h * config.vocab
    return config.layers * ((3.0 + rd) * dense + (3.0 + ra) * attention) + 3.0 * logits


def layer_parameters(config: Config) -> Float[Array, "..."]:
    """Parameters of one transformer layer: ``(h+1)·(qkv + (1+γ)f) + (f+1)·h + (h+1)·h + 4h``.

    Weights and biases of QKV, fc1, fc2 and the projection, and two LayerNorms (scale
    and shift); ``12h² + 13h`` for GPT [N21 §5.1, K22 §3]. Models without biases or with
    RMSNorm (Llama) have ~10⁻⁴ fewer.
    """
    h = config.hidden
    fc1, fc2 = mlp_widths(config)
    return (h + 1.0) * (qkv_width(config) + fc1) + (fc2 + 1.0) * h + (h + 1.0) * h + 4.0 * h


def model_parameters(config: Config) -> Float[Array, "..."]:
    """Parameters of the model: ``L·layer + V·h·(1 + untied) + s·h``.

    The word embedding, tied to the output layer unless `Config.untied_embeddings`, and
    learned position embeddings (s·h).
    """
    h = config.hidden
    words = config.vocab * h * (1.0 + config.untied_embeddings)
    return config.layers * layer_parameters(config) + words + config.seq_len * h


def stage_parameters(config: Config) -> tuple[Float[Array, "..."], Float[Array, "..."]]:
    """Parameters one GPU of the first pipeline stage holds: ``(layers, embedding)``.

    L/p layers split over t, and the word embedding (V·h/t, vocabulary parallel) with the
    position embedding (s·h); the last stage holds a tied copy of the word embedding for
    the logits [N21 §3], or the output layer's own weights: with one stage and
    `Config.untied_embeddings` both are on this GPU.
    """
    h, t = config.hidden, config.tp
    layers = layer_parameters(config) * config.layers / config.pp / t
    words = jnp.where((config.pp <= 1.0) & (config.untied_embeddings > 0.0), 2.0, 1.0)
    return layers, words * config.vocab * h / t + config.seq_len * h
