"""One point of a design space: the quantities a step's cost depends on."""

from collections.abc import Mapping
import dataclasses
import inspect

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float
import numpy as np

from ._errors import InputError
from ._keywords import unknown_keywords


def _as_float(x: ArrayLike) -> Float[Array, "..."]:
    # Follows the default floating dtype, so float64 only when the caller enabled x64.
    return jnp.asarray(x, dtype=jnp.result_type(float))


def _field(default: float):
    return eqx.field(default=default, converter=_as_float)


def check_memory_unit(where: str, name: str, value: float) -> None:
    """Refuse a `gpu_memory_bytes` below 1 MiB as a unit slip: 80 (GB meant) answered "no
    configuration is valid and within memory", with nothing to say why (review round 12)."""
    if name == "gpu_memory_bytes" and 0 < value < 2.0**20:
        raise InputError(
            f"{where}: {value:g} bytes of GPU memory is below 1 MiB; the unit is bytes "
            "(80 GB is 80e9)"
        )


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
        microbatches: micro-batches per step and data-parallel replica, m; used when
            `microbatch_size` is 0.
        microbatch_size: samples per micro-batch, b (Megatron-LM's ``--micro-batch-size``);
            when given (> 0) the micro-batch count is derived, ``global_batch/(dp·b)``.
            0 (default): derived from `microbatches`, ``b = global_batch/(dp·m)``.

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
        zero: ZeRO stage 0, 1 (optimizer state sharded over dp), 2 (gradients too) or 3
            (weights too, all-gathered for every micro-batch; fully sharded data parallel).
        gpu_memory_bytes: memory of one GPU, bytes (inf: no limit).
        price_per_gpu_hour: currency per GPU-hour (1.0: costs come out in GPU-hours).

    Fields of the transformer and its training recipe, read by the `hybrid` family
    (Megatron-LM; Narayanan et al. SC'21, Korthikanti et al. 2022):
        heads: attention heads, a (0: unknown, taken as hidden/128, and tp need not
            divide it).
        query_groups: key/value heads, g, with grouped-query attention (Ainslie et al.
            2023; Megatron-LM's ``--num-query-groups``; 0: as many as `heads`, plain
            multi-head attention; 1: multi-query attention).
        ffn_hidden: width of the MLP's hidden layer, f (``--ffn-hidden-size``; 0: 4h).
        gated_mlp: 1 with a gated MLP (SwiGLU, Shazeer 2020; ``--swiglu``): fc1 produces
            2f values, their gated product f feeds fc2.
        untied_embeddings: 1 when the output layer has its own weights
            (``--untie-embeddings-and-output-weights``): V·h more parameters, no
            embedding all-reduce between the first and last pipeline stage.
        vocab: vocabulary size, V (0: no embedding or logit layer).
        interleave: model chunks per pipeline device, v (1: the plain 1F1B schedule).
        recompute: activation recomputation, 0 none, 1 selective (attention core only),
            2 full (every layer's forward again); see `RECOMPUTE`.
        seq_parallel: 1 with sequence parallelism (LayerNorm and dropout split over tp).

    Fields of the software stack, 0 or 1 (defaults: Megatron-Core; `STACKS` lists the
    published versions):
        async_tp: the tensor-parallel backward collectives run under the weight-gradient
            GEMMs (Megatron-LM since 2022).
        grad_accum_fusion: weight gradients accumulate inside the GEMM (no extra pass).
        dp_overlap: the data-parallel gradient reduction runs under the last micro-batch's
            backward pass, and with ZeRO-1 (Megatron-Core's distributed optimizer) the
            weight all-gather under the next iteration's first forward pass
            (``--overlap-grad-reduce --overlap-param-gather``).
        scatter_gather: pipeline sends are split over the tp ranks and re-gathered over
            NVLink (Narayanan et al. §4.1).
        flash_attention: fused attention, no s×s score tensor in memory.
        deallocate_outputs: a pipeline stage frees its output's data once sent (Megatron-LM
            since 2022); 0 keeps ``b·s·h`` per model chunk in flight until its backward.
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
    microbatch_size: Float[Array, "..."] = _field(0.0)
    heads: Float[Array, "..."] = _field(0.0)
    query_groups: Float[Array, "..."] = _field(0.0)
    ffn_hidden: Float[Array, "..."] = _field(0.0)
    gated_mlp: Float[Array, "..."] = _field(0.0)
    untied_embeddings: Float[Array, "..."] = _field(0.0)
    vocab: Float[Array, "..."] = _field(0.0)
    interleave: Float[Array, "..."] = _field(1.0)
    recompute: Float[Array, "..."] = _field(0.0)
    seq_parallel: Float[Array, "..."] = _field(0.0)
    async_tp: Float[Array, "..."] = _field(1.0)
    grad_accum_fusion: Float[Array, "..."] = _field(1.0)
    dp_overlap: Float[Array, "..."] = _field(1.0)
    scatter_gather: Float[Array, "..."] = _field(1.0)
    flash_attention: Float[Array, "..."] = _field(1.0)
    deallocate_outputs: Float[Array, "..."] = _field(1.0)

    def __check_init__(self):
        # Only concrete values can be checked: inside `jit`/`vmap` the field is a tracer,
        # and a sweep marks impossible layouts itself (`layout_status`).
        gpus = self.gpus
        if isinstance(gpus, jax.core.Tracer):
            return
        values = np.asarray(gpus)
        bad = ~(np.isfinite(values) & (values > 0.0))
        if bad.any():
            raise InputError(
                f"config.gpus: expected a positive finite number, got {values[bad].flat[0]:g}"
            )

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
    def samples_per_microbatch(self) -> Float[Array, "..."]:
        """b, samples per micro-batch: `microbatch_size` when given, else
        global_batch / (dp·microbatches)."""
        # (B/m)·(tp·pp/gpus): each factor varies along fewer axes of a sweep than B/(dp·m).
        derived = self.global_batch / self.microbatches * (self.tp * self.pp / self.gpus)
        return jnp.where(self.microbatch_size > 0.0, self.microbatch_size, derived)

    @property
    def num_microbatches(self) -> Float[Array, "..."]:
        """m, micro-batches per step and replica: global_batch / (dp·microbatch_size) when
        `microbatch_size` is given, else `microbatches`."""
        size = jnp.where(self.microbatch_size > 0.0, self.microbatch_size, 1.0)
        given = self.global_batch / size * (self.tp * self.pp / self.gpus)
        return jnp.where(self.microbatch_size > 0.0, given, self.microbatches)

    @property
    def head_count(self) -> Float[Array, "..."]:
        """a, attention heads: `heads`, or hidden/128 (a head dimension of 128) when 0."""
        return jnp.where(self.heads > 0.0, self.heads, self.hidden / 128.0)

    @property
    def group_count(self) -> Float[Array, "..."]:
        """g, key/value heads: `query_groups`, or `head_count` (multi-head attention) when 0."""
        return jnp.where(self.query_groups > 0.0, self.query_groups, self.head_count)

    @property
    def ffn_size(self) -> Float[Array, "..."]:
        """f, the MLP's hidden width: `ffn_hidden`, or 4h when 0."""
        return jnp.where(self.ffn_hidden > 0.0, self.ffn_hidden, 4.0 * self.hidden)

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

RECOMPUTE: dict[str, int] = {"none": 0, "selective": 1, "full": 2}
"""Codes of `Config.recompute`."""

FIELD_NAMES: dict[str, dict[str, int]] = {"recompute": RECOMPUTE}
"""Names a CSV may give instead of a field's code."""

FLAG_FIELDS: tuple[str, ...] = (
    "seq_parallel",
    "async_tp",
    "grad_accum_fusion",
    "dp_overlap",
    "scatter_gather",
    "flash_attention",
    "deallocate_outputs",
    "gated_mlp",
    "untied_embeddings",
)
CODED_FIELDS: dict[str, tuple[float, ...]] = {
    "zero": (0.0, 1.0, 2.0, 3.0),
    "recompute": (0.0, 1.0, 2.0),
    **{name: (0.0, 1.0) for name in FLAG_FIELDS},
}
"""Fields that take one of a few codes (0 among them)."""

UNKNOWN_AT_ZERO: tuple[str, ...] = (
    "microbatch_size",
    "heads",
    "query_groups",
    "ffn_hidden",
    "vocab",
)
"""Fields where 0 means "not given" (derived, or absent)."""

NONNEGATIVE_FIELDS: tuple[str, ...] = (*CODED_FIELDS, *UNKNOWN_AT_ZERO)
"""Fields for which 0 is a valid value; every other field is positive."""

COUNT_FIELDS: tuple[str, ...] = (
    "gpus",
    "gpus_per_node",
    "gpus_per_link",
    "tp",
    "pp",
    "microbatches",
    "global_batch",
    "layers",
    "interleave",
)
"""Counts a CSV column (and a fit file's field, `--set`) must give whole."""

WHOLE_FIELDS: tuple[str, ...] = (*COUNT_FIELDS, *NONNEGATIVE_FIELDS)
"""Fields that hold whole numbers (counts, sizes and codes)."""

LARGEST_VALUE = 1e18
"""The largest value a config field takes (`perfmodel sweep`'s axes, a fit file's
fields): past every physical quantity of a run (an exaflop/s per GPU, 10⁶ TB), and far
enough below float32's 3.4e38 that a cast does not overflow (`hidden = 1e300` answered
"0 fit in memory" with NumPy's overflow warnings; `layers = 1e308` hung the layout
search)."""

LAYOUT_FIELDS: tuple[str, ...] = (
    "tp",
    "pp",
    "microbatches",
    "microbatch_size",
    "interleave",
    "recompute",
    "seq_parallel",
    "zero",
)
"""The fields of a parallel layout, in the order they are shown: the axes a layout search
chooses (the rest of a space is the job and the hardware)."""

RECIPE_FIELDS: tuple[str, ...] = (
    *LAYOUT_FIELDS,
    *(f for f in FLAG_FIELDS if f not in (*LAYOUT_FIELDS, "gated_mlp", "untied_embeddings")),
)
"""How a run was run rather than what it trains: its layout and software switches."""

WORKLOAD_FIELDS: dict[str, tuple[str, ...]] = {
    "hybrid": ("layers", "hidden", "heads", "seq_len", "vocab", "global_batch"),
    "hybrid_basic": (
        "layers",
        "hidden",
        "seq_len",
        "parameters",
        "flops_per_sample",
        "global_batch",
    ),
}
"""The fields describing the model being trained, per family: left at their defaults,
a result describes a toy model (`sweep` warns)."""


def with_defaults(defaults: Mapping, given: Mapping) -> dict:
    """`defaults` (a fit's run) overridden by `given`; a micro-batch count given without
    a size drops the default size, which `Config` prefers when > 0: `--microbatches 3`
    on a fit of runs with `microbatch_size` 1 was read as size 1, whatever the count."""
    if "microbatches" in given and "microbatch_size" not in given:
        defaults = {k: v for k, v in defaults.items() if k != "microbatch_size"}
    return {**defaults, **given}


def check_one_microbatch_field(names, where: str) -> None:
    """Refuse a layout giving both `microbatches` and `microbatch_size`: the size wins
    (`Config.num_microbatches`), so the count was ignored (size 2 with 1000 micro-batches
    of a 16-sample replica batch answered "ok")."""
    if "microbatches" in names and "microbatch_size" in names:
        raise InputError(
            f"{where}: give microbatches or microbatch_size, not both: the size decides the "
            "count (global_batch/(dp·size)), and the count given would be ignored"
        )


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
