"""HBM bytes of the memory-bound kernels of a Megatron-LM iteration, on one GPU.

Their seconds are these bytes over the HBM bandwidth (`LayerGemmTerm.hbm_bandwidth`).
Counts are for 2-byte activations and Megatron-LM's fused kernels (fused LayerNorm,
bias-dropout-add, bias-GeLU, scale-mask-softmax); sources per function.
"""

import jax.numpy as jnp
from jaxtyping import Array, Float

from ..._config import Config

ELEMENTWISE_BYTES: dict[str, float] = dict(
    rep_fwd=22.0,
    rep_bwd=22.0,
    col_fwd=4.0,
    col_bwd=6.0,
    glu_fwd=6.0,
    glu_bwd=10.0,
    att_fwd=9.0,
    att_bwd=11.0,
)
"""Bytes per element of one layer's element-wise kernels, forward / backward:

* ``rep`` per token × h (replicated over t unless sequence parallel): forward 2 LayerNorms
  × (read 2 + write 2) + 2 bias-dropout-adds × (read 2 + 2, write 2, mask 1) = 22;
  backward LayerNorm (read grad 2, input 2, write 2) × 2 + bias-dropout-add (read 2,
  mask 1, write 2) × 2 = 22.
* ``col`` per token × f/t (the MLP's hidden width, 4h for GPT): bias-GeLU forward read
  2 + write 2 = 4 (16 per token × h/t for f = 4h), backward read grad, read input, write
  grad = 6.
* ``glu`` the same with a gated MLP (SwiGLU): forward read gate and value 4 + write 2 = 6,
  backward read grad 2 and both inputs 4, write both gradients 4 = 10.
* ``att`` per attention score (b·a·s²/t): softmax read 2, write 2 + dropout read 2,
  write 2, mask 1 = 9 forward; 11 backward.
"""


def layer_elementwise_bytes(
    config: Config,
) -> tuple[Float[Array, "..."], Float[Array, "..."], Float[Array, "..."]]:
    """HBM bytes of one layer's element-wise kernels per micro-batch on one GPU.

    Returns ``(forward, backward, attention_forward)``; the last is what selective
    recomputation repeats. The LayerNorm and dropout regions split over t only with
    sequence parallelism [Korthikanti et al. 2022 §4.2.2]; flash attention removes the
    s × s tensors.
    """
    k = ELEMENTWISE_BYTES
    b, s, h, t = config.samples_per_microbatch, config.seq_len, config.hidden, config.tp
    # b times a coefficient of the other fields: one product per configuration in a sweep.
    rep = b * (s * h / jnp.where(config.seq_parallel > 0.0, t, 1.0))
    col = b * (s * config.ffn_size / t)
    gated = config.gated_mlp > 0.0
    col_fwd = jnp.where(gated, k["glu_fwd"], k["col_fwd"])
    col_bwd = jnp.where(gated, k["glu_bwd"], k["col_bwd"])
    scores = b * (config.head_count * s * s / t)
    att = jnp.where(config.flash_attention > 0.0, 0.0, scores)
    forward = k["rep_fwd"] * rep + col_fwd * col + k["att_fwd"] * att
    backward = k["rep_bwd"] * rep + col_bwd * col + k["att_bwd"] * att
    return forward, backward, k["att_fwd"] * att


def loss_bytes(config: Config) -> Float[Array, "..."]:
    """HBM bytes of the vocabulary-parallel cross entropy per micro-batch on the last stage.

    24 bytes per logit of b·s·V/t (fp16 → fp32 copy, max, exp, sum, normalise, gradient)
    [Narayanan et al. SC'21 §3, the stage imbalance of the output layer].
    """
    return config.samples_per_microbatch * (24.0 * config.seq_len * config.vocab / config.tp)


def grad_accumulation_bytes(config: Config, params: Float[Array, "..."]) -> Float[Array, "..."]:
    """HBM bytes per micro-batch to add fresh weight gradients into the main gradients.

    Unfused (Megatron-LM 2021, ``main_grad.add_(grad)``): read the 2-byte gradient, read
    and write the main gradient, ``params·(2 + 2·grad_bytes)``. Fused into the
    weight-gradient GEMM (`Config.grad_accum_fusion`, Megatron-LM 2022): 0.
    """
    bytes_ = params * (2.0 + 2.0 * config.grad_bytes)
    return jnp.where(config.grad_accum_fusion > 0.0, 0.0, bytes_)


def optimizer_bytes(config: Config, params: Float[Array, "..."]) -> Float[Array, "..."]:
    """HBM bytes of the mixed-precision Adam step on one GPU.

    Fused Adam reads the fp32 master weights, gradient, m and v and writes master, m and
    v (28 bytes), copies fp32 → 2-byte weights (6) and unscales, checks and clips the
    gradient (3 passes of grad_bytes): ``params·(34 + 3·grad_bytes)``; ZeRO ≥ 1 shards it
    over dp (Rajbhandari et al. 2020).
    """
    bytes_ = params * (34.0 + 3.0 * config.grad_bytes)
    return bytes_ / jnp.where(config.zero >= 1.0, config.dp, 1.0)
