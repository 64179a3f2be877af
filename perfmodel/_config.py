"""One point of a design space: the quantities a step's cost depends on."""

import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float


def _as_float(x: ArrayLike) -> Float[Array, "..."]:
    # Follows the default floating dtype, so float64 only when the caller enabled x64.
    return jnp.asarray(x, dtype=jnp.result_type(float))


def _field(default: float):
    return eqx.field(default=default, converter=_as_float)


class Config(eqx.Module):
    """A configuration to evaluate; every field is an array and all fields broadcast.

    Fields:
        gpus: total number of GPUs, N (≥ 1).
        gpus_per_node: GPUs inside one node, where the fast intra-node link ends.
        gpus_per_link: GPUs that share one host→device link (PCIe switch or host).
        message_bytes: bytes each data-parallel rank all-reduces per step (the gradient).
            When unknown it stays 1.0 and a fitted bandwidth is then in messages/s.
        input_bytes: bytes copied host→device per step for the whole global batch.
            When unknown it stays 1.0 and a fitted bandwidth is then in batches/s.
        global_batch: samples per step, all GPUs together.
        tp: tensor-parallel degree.
        pp: pipeline-parallel degree.
        microbatches: micro-batches per step in the pipeline.
    """

    gpus: Float[Array, "..."] = eqx.field(converter=_as_float)
    gpus_per_node: Float[Array, "..."] = _field(8.0)
    gpus_per_link: Float[Array, "..."] = _field(1.0)
    message_bytes: Float[Array, "..."] = _field(1.0)
    input_bytes: Float[Array, "..."] = _field(1.0)
    global_batch: Float[Array, "..."] = _field(1.0)
    tp: Float[Array, "..."] = _field(1.0)
    pp: Float[Array, "..."] = _field(1.0)
    microbatches: Float[Array, "..."] = _field(1.0)

    def broadcast(self) -> "Config":
        """This config with every field broadcast to one shape, ready for `jax.vmap`."""
        leaves = jax.tree_util.tree_leaves(self)
        shape = jnp.broadcast_shapes(*(jnp.shape(x) for x in leaves))
        return jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, shape), self)

    @property
    def dp(self) -> Float[Array, "..."]:
        """Data-parallel degree, gpus / (tp·pp)."""
        return self.gpus / (self.tp * self.pp)


CONFIG_FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Config))
