"""Bytes one GPU holds while training a transformer with Megatron-LM (Korthikanti et al.
2022, "Reducing Activation Recomputation in Large Transformer Models" [K22])."""

import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float
import numpy as np

from ..._config import Config
from ..._errors import InputError
from .schedule import inflight_layers
from .shape import FULL, mlp_widths, SELECTIVE, stage_parameters


def activation_bytes_per_layer(
    config: Config, recompute: Float[ArrayLike, "..."] | None = None
) -> Float[Array, "..."]:
    """Bytes of activations one layer stores for one micro-batch on one GPU [K22 Table 2].

    none: ``sbh·(10 + 24/t + 5as/(ht))``; with sequence parallelism
    ``sbh/t·(34 + 5as/h)``; selective recomputation (and flash attention) drops the
    5as/h term; full keeps the layer input, ``2sbh`` (÷t with sequence parallelism).
    The 24 split over t are Q, K, V (6), the projection's input (2) and the MLP's GeLU
    and fc2 inputs (16); with g key/value heads and an MLP of width f they are
    ``4 + 4g/a + 2·((1+γ)f + f)/h`` (`shape.mlp_widths`), which is 24 for GPT.
    `recompute` overrides `Config.recompute`.
    """
    r = config.recompute if recompute is None else jnp.asarray(recompute)
    s, b, h, t = config.seq_len, config.samples_per_microbatch, config.hidden, config.tp
    sp = config.seq_parallel > 0.0
    attention = 5.0 * config.head_count * s / h
    score = jnp.where((r >= SELECTIVE) | (config.flash_attention > 0.0), 0.0, attention)
    fc1, fc2 = mlp_widths(config)
    split = 4.0 + 4.0 * (config.group_count / config.head_count) + 2.0 * ((fc1 + fc2) / h)
    plain = jnp.where(sp, (10.0 + split + score) / t, 10.0 + split / t + score / t)
    full = 2.0 / jnp.where(sp, t, 1.0)
    # sbh times a coefficient of the other fields (one product per sweep configuration).
    return b * (s * h * jnp.where(r >= FULL, full, plain))


# Fields whose values must be positive for memory to mean anything (a GPU count of 0 gave
# NaN bytes, a negative one negative bytes, from Python without a word: fuzz round 10).
# (`heads` is not among them: 0 means unknown, taken as hidden/128.)
POSITIVE_FIELDS = ("gpus", "tp", "pp", "layers", "hidden", "seq_len", "global_batch")


def check_memory_config(config) -> None:
    """Refuse what `memory_per_gpu` cannot answer for, when called on concrete values: no
    `Config`, or a `POSITIVE_FIELDS` value that is not a positive finite number (traced
    values, inside `jit` or a sweep, go through; `layout_status` judges layouts)."""
    if not isinstance(config, Config):
        raise InputError(f"config: expected a perfmodel.Config, got {type(config).__name__}")
    for name in POSITIVE_FIELDS:
        try:
            values = np.asarray(getattr(config, name), dtype=np.float64)
        except TypeError:  # a traced value (JAX's conversion errors are TypeErrors)
            continue
        bad = ~(np.isfinite(values) & (values > 0.0))
        if bad.any():
            raise InputError(
                f"config.{name}: expected a positive finite number, got {values[bad].flat[0]:g}"
            )


def memory_per_gpu(config: Config) -> dict[str, Float[Array, "..."]]:
    """Bytes the busiest (first) pipeline GPU holds, by part, and their ``"total"``.

    * ``layer_states``: the L/p layers' parameters over t × (weight_bytes + grad_bytes +
      optimizer_bytes), 2 + 4 + 12 = 18 bytes per parameter by default as in [K22]
      Figure 1; ZeRO-1 shards the optimizer state over dp, ZeRO-2 the gradients too,
      ZeRO-3 the weights too.
    * ``embedding_states``: the same for the first stage's embeddings.
    * ``layer_activations``: `activation_bytes_per_layer` × `inflight_layers` [K22 §4].
    * ``extra_activations``: with full recomputation, the working set of the one layer
      recomputed without checkpoints; the embedding dropout mask (1 byte per element
      of the in-flight micro-batches); with p = 1, the fp32 logits and their gradient
      for one micro-batch, ``6·b·s·V/t`` [K22 §4.3]; without
      `Config.deallocate_outputs` and with p > 1, each model chunk in flight keeps its
      output, ``activation_bytes·b·s·h`` (÷t with sequence parallelism), until its backward
      (Megatron-LM @50a4b5fa schedules.py appends it to ``output_tensors``; since 2022-01
      ``deallocate_output_tensor`` frees its data once sent).

    Example:
        >>> import perfmodel as pm
        >>> gpt = pm.Config(gpus=8.0, tp=8.0, layers=48, hidden=6144, heads=64,
        ...                 seq_len=2048, vocab=51200, global_batch=4, microbatch_size=4)
        >>> round(float(memory_per_gpu(gpt)["layer_states"]) / 2**30, 2)  # K22 Figure 1
        45.57

    Raises:
        InputError: `check_memory_config`.
    """
    check_memory_config(config)
    z, d = config.zero, config.dp
    layers, embedding = stage_parameters(config)
    per_param = (
        config.weight_bytes / jnp.where(z >= 3.0, d, 1.0)
        + config.grad_bytes / jnp.where(z >= 2.0, d, 1.0)
        + config.optimizer_bytes / jnp.where(z >= 1.0, d, 1.0)
    )
    layers_in_flight = inflight_layers(config)
    s, b, h, t = config.seq_len, config.samples_per_microbatch, config.hidden, config.tp
    working = jnp.where(
        config.recompute >= FULL, activation_bytes_per_layer(config, 0.0 * config.recompute), 0.0
    )
    micro_in_flight = layers_in_flight / (config.layers / config.pp)
    dropout = b * (s * h * micro_in_flight / jnp.where(config.seq_parallel > 0.0, t, 1.0))
    logits = b * jnp.where(config.pp <= 1.0, 6.0 * s * config.vocab / t, 0.0)
    kept = (config.pp > 1.0) & (config.deallocate_outputs <= 0.0)
    outputs = jnp.where(kept, config.activation_bytes * config.interleave * dropout, 0.0)
    parts = {
        "layer_states": layers * per_param,
        "embedding_states": embedding * per_param,
        "layer_activations": activation_bytes_per_layer(config) * layers_in_flight,
        "extra_activations": working + dropout + logits + outputs,
    }
    parts["total"] = sum(parts.values())
    return parts
