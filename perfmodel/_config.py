"""One point of a design space: the quantities a step's cost depends on."""

import dataclasses
import inspect

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float

from ._keywords import unknown_keywords


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

    Fields of the model and hardware, read by the `hybrid` family and by `sweep`:
        layers: transformer layers, L.
        hidden: hidden size, h (activation elements per token).
        seq_len: tokens per sample, s.
        parameters: number of model parameters (weights), P.
        flops_per_sample: floating-point operations of one sample's forward and backward
            pass (≈ 6·P·s for a transformer). When unknown it stays 1.0 and a fitted
            compute rate is then in samples/s.
        sample_bytes: bytes of one sample's input copied host→device.
        activation_bytes: bytes of one activation element sent by tensor parallelism
            (2 for bf16).
        activation_factor: bytes of stored activations per token, per unit of hidden
            size and per layer before tensor-parallel sharding (34 for bf16 with sequence
            parallelism and selective recomputation, Korthikanti et al. 2022; 2 with full
            recomputation).
        weight_bytes, grad_bytes, optimizer_bytes: bytes per parameter of the weights
            (2, bf16), the gradients (4, fp32 accumulation, also what data parallelism
            all-reduces) and the optimizer state (12: fp32 master copy and Adam's two
            moments).
        zero: ZeRO stage 0, 1 (optimizer state sharded over dp) or 2 (gradients too).
        gpu_memory_bytes: memory of one GPU, bytes (inf: no limit).
        price_per_gpu_hour: currency per GPU-hour (1.0: costs come out in GPU-hours).
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
    layers: Float[Array, "..."] = _field(1.0)
    hidden: Float[Array, "..."] = _field(1.0)
    seq_len: Float[Array, "..."] = _field(1.0)
    parameters: Float[Array, "..."] = _field(1.0)
    flops_per_sample: Float[Array, "..."] = _field(1.0)
    sample_bytes: Float[Array, "..."] = _field(1.0)
    activation_bytes: Float[Array, "..."] = _field(2.0)
    activation_factor: Float[Array, "..."] = _field(34.0)
    weight_bytes: Float[Array, "..."] = _field(2.0)
    grad_bytes: Float[Array, "..."] = _field(4.0)
    optimizer_bytes: Float[Array, "..."] = _field(12.0)
    zero: Float[Array, "..."] = _field(0.0)
    gpu_memory_bytes: Float[Array, "..."] = _field(float("inf"))
    price_per_gpu_hour: Float[Array, "..."] = _field(1.0)

    def broadcast(self) -> "Config":
        """This config with every field broadcast to one shape, ready for `jax.vmap`."""
        leaves = jax.tree_util.tree_leaves(self)
        shape = jnp.broadcast_shapes(*(jnp.shape(x) for x in leaves))
        return jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, shape), self)

    @property
    def dp(self) -> Float[Array, "..."]:
        """Data-parallel degree, gpus / (tp·pp)."""
        return self.gpus / (self.tp * self.pp)

    @property
    def microbatch_size(self) -> Float[Array, "..."]:
        """Samples per micro-batch on one data-parallel replica, global_batch / (dp·m)."""
        return self.global_batch / (self.dp * self.microbatches)

    def data_parallel_view(self) -> "Config":
        """The data-parallel group of a hybrid layout, as a plain data-parallel `Config`.

        Megatron-LM orders ranks tensor-parallel first, then data-parallel, then
        pipeline: a node of G GPUs holds ``min(dp, G/tp)`` ranks of one data-parallel
        group. In the view, ``gpus = dp``, ``gpus_per_node`` is that count,
        ``message_bytes = parameters·grad_bytes/(tp·pp)`` (each rank's share of the
        gradient, bytes) and ``input_bytes = sample_bytes·global_batch`` (bytes), so
        the data-parallel terms (`HierarchicalAllReduce`, `HostToDeviceTerm`) apply
        unchanged.
        """
        dp = self.dp
        return Config(
            gpus=dp,
            gpus_per_node=jnp.minimum(dp, jnp.maximum(self.gpus_per_node / self.tp, 1.0)),
            gpus_per_link=self.gpus_per_link,
            message_bytes=self.parameters * self.grad_bytes / (self.tp * self.pp),
            input_bytes=self.sample_bytes * self.global_batch,
            global_batch=self.global_batch,
        )


CONFIG_FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Config))


def _checked_init(init):
    """Equinox's generated ``__init__``, behind a check that a misspelt field
    (``Config(gpu=8)``) names the valid ones rather than only "unexpected keyword"."""

    def __init__(self, *args, **kwargs):
        unknown = [k for k in kwargs if k not in CONFIG_FIELDS]
        if unknown:
            raise unknown_keywords("Config()", unknown, CONFIG_FIELDS)
        init(self, *args, **kwargs)

    __init__.__signature__ = inspect.signature(init)
    __init__.__doc__ = init.__doc__
    return __init__


Config.__init__ = _checked_init(Config.__init__)
