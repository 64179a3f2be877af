"""The pipeline schedule: how many micro-batch slots an iteration takes, and how many
activations the first device keeps in flight (Narayanan et al. SC'21 §2.2 [N21];
Korthikanti et al. 2022 §4.2.3 [K22])."""

import jax.numpy as jnp
from jaxtyping import Array, Float

from ..._config import Config


def schedule_slots(config: Config) -> Float[Array, "..."]:
    """Micro-batch slots of the busiest device's timeline, ``m + (p−1)/v``.

    1F1B takes ``(m + p − 1)`` slots of one micro-batch's forward and backward on a
    stage; interleaving v model chunks per device shrinks the fill and drain to
    ``(p − 1)/v`` slots [N21 §2.2.2].
    """
    return config.num_microbatches + (config.pp - 1.0) / config.interleave


def bubble_fraction(config: Config) -> Float[Array, "..."]:
    """Share of a stage's pipelined time spent idle, ``((p−1)/v) / (m + (p−1)/v)``.

    GPipe and 1F1B (v = 1): ``(p−1)/(m+p−1)``; the interleaved schedule divides the
    bubble by v [N21 §2.2.2] (it is ``(p−1)/(v·m)`` of the ideal time).

    Example:
        >>> import perfmodel as pm
        >>> round(float(bubble_fraction(pm.Config(gpus=8.0, pp=8.0, microbatches=8.0))), 4)
        0.4667
    """
    fill = (config.pp - 1.0) / config.interleave
    return fill / (config.num_microbatches + fill)


def inflight_layers(config: Config) -> Float[Array, "..."]:
    """Layer-activations the first pipeline device holds at its peak (layers × micro-batches).

    1F1B [N21 §2.2.1]: ``min(m, p)`` micro-batches of L/p layers. Interleaved with v
    chunks [N21 §2.2.2]: Megatron-LM's warm-up keeps ``2(p−1) + (v−1)·p + 1`` chunks of
    L/(p·v) layers, i.e. ``L·(1 + (p−1)/(p·v))`` layers [K22 §4.2.3]; at most m·v chunks.
    """
    p, v, m = config.pp, config.interleave, config.num_microbatches
    chunks = jnp.where(v > 1.0, (v + 1.0) * p - 1.0, p)
    return config.layers / (p * v) * jnp.minimum(m * v, chunks)
