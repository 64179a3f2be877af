"""The basic hybrid model (`hybrid_basic`): tensor × pipeline × data parallelism with one
sustained compute rate, and its memory. It was the `hybrid` family before the Megatron-LM
model (`perfmodel._terms.hybrid.terms`) replaced it; fit files and spaces written for it
still load.

With ``dp = gpus/(tp·pp)`` data-parallel replicas, ``m`` micro-batches of
``b = global_batch/(dp·m)`` samples each and ``L/pp`` layers per pipeline stage, one
step costs (seconds):

| term | seconds per step | source |
| --- | --- | --- |
| ``serial`` | ``t_s`` | optimizer step, launch overheads |
| ``compute`` | ``flops_per_sample·global_batch / (gpus·R) · (m+pp−1)/m`` | GPipe / 1F1B |
| ``tensor`` | ``4·(L/pp)·(m+pp−1) · ring_all_reduce(tp, b·s·h·activation_bytes)`` | Megatron-LM |
| ``allreduce`` | hierarchical all-reduce of ``P·grad_bytes/(tp·pp)`` over dp ranks | α-β model |
| ``input`` | host→device copy of the replica's ``sample_bytes·global_batch/dp`` | PCIe |

The pipeline bubble is the fraction ``(pp−1)/(m+pp−1)`` of the pipelined time of each
stage; it stretches both the compute and the tensor-parallel all-reduces, which run on
the critical path of every micro-batch, so both terms carry the factor
``(m+pp−1)/m = 1/(1 − bubble)``. `pipeline_bubble` splits it out again.

Per-GPU memory (bytes, `basic_memory_per_gpu`), with ZeRO stage z sharding over dp:
weights ``P·weight_bytes/(tp·pp)``, gradients ``P·grad_bytes/(tp·pp)`` (÷dp if z ≥ 2),
optimizer state ``P·optimizer_bytes/(tp·pp)`` (÷dp if z ≥ 1), and activations of the
``min(m, pp)`` micro-batches a 1F1B schedule keeps in flight on the first stage,
``activation_factor·s·b·h·(L/pp)·min(m, pp)/tp`` (Korthikanti et al. 2022).
"""

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float

from ..._config import Config
from ..base import _positive, AbstractCostTerm, HostToDeviceTerm, ParamSpec, Role
from ..collectives import collective_time, HierarchicalAllReduce


def _pipelined(config: Config) -> Float[Array, "..."]:
    # (m + pp − 1)/m = 1/(1 − bubble): the busy time stretched by the bubble.
    return (config.num_microbatches + config.pp - 1.0) / config.num_microbatches


class PipelinedComputeTerm(AbstractCostTerm):
    """Compute of one step on the busiest GPU, stretched by the pipeline bubble.

    ``flops_per_sample · global_batch / (gpus · R) · (m + pp − 1)/m`` seconds, with R the
    sustained FLOP/s of one GPU. With ``pp = 1`` it is the ideal ``work / (gpus·R)``.

    Fields:
        log_flops: log of R, FLOP/s (samples/s when `flops_per_sample` is left at 1).
    """

    log_flops: Float[Array, ""]
    name: str = eqx.field(static=True, default="compute")
    role: ClassVar[Role] = "compute"
    params: ClassVar[dict[str, ParamSpec]] = {
        "flops": ParamSpec("log_flops", "FLOP/s", "bandwidth", "sustained FLOP/s of one GPU")
    }

    def __init__(self, flops: float = 4e14, name: str = "compute"):
        self.log_flops = _positive(flops)
        self.name = name

    def __call__(self, config: Config) -> Float[Array, "..."]:
        work = config.flops_per_sample * config.global_batch / config.gpus
        return work / jnp.exp(self.log_flops) * _pipelined(config)


class TensorParallelTerm(AbstractCostTerm):
    """Tensor-parallel activation all-reduces (Megatron-LM), on the intra-node link.

    Each layer all-reduces its activations twice forward and twice backward, so a GPU
    holding ``L/pp`` layers spends ``4·(L/pp)·(m+pp−1) · ring_all_reduce(tp, S)`` seconds
    per step, with ``S = b·s·h·activation_bytes`` bytes per micro-batch of b samples and
    the ring all-reduce ``2(tp−1)α + 2(tp−1)/tp · S/β``. The ``m+pp−1`` (rather than m)
    is the pipeline bubble. Layouts with tp larger than a node are invalid
    (`layout_status`), so the link is always NVLink/NVSwitch.

    Fields:
        log_latency: log α, seconds per ring step.
        log_bandwidth: log β, bytes/s (the bus bandwidth nccl-tests reports).
    """

    log_latency: Float[Array, ""]
    log_bandwidth: Float[Array, ""]
    name: str = eqx.field(static=True, default="tensor")
    role: ClassVar[Role] = "communication"
    params: ClassVar[dict[str, ParamSpec]] = {
        "latency": ParamSpec("log_latency", "s", "time", "intra-node latency per step"),
        "bandwidth": ParamSpec(
            "log_bandwidth", "B/s", "bandwidth", "intra-node (NVLink) bandwidth"
        ),
    }

    def __init__(self, latency: float = 5e-6, bandwidth: float = 3.6e11, name: str = "tensor"):
        self.log_latency = _positive(latency)
        self.log_bandwidth = _positive(bandwidth)
        self.name = name

    def __call__(self, config: Config) -> Float[Array, "..."]:
        size = (
            config.samples_per_microbatch * config.seq_len * config.hidden * config.activation_bytes
        )
        one = collective_time(
            "all_reduce",
            "ring",
            config.tp,
            size,
            jnp.exp(self.log_latency),
            jnp.exp(self.log_bandwidth),
        )
        count = 4.0 * config.layers / config.pp * (config.num_microbatches + config.pp - 1.0)
        return count * one


def _delegate(field: str) -> property:
    return property(lambda self: getattr(self.inner, field), doc=f"``inner.{field}``")


class AbstractDataParallelTerm(AbstractCostTerm):
    """A data-parallel term evaluated on `Config.data_parallel_view` of a hybrid layout.

    Its parameters are those of `inner`, under this term's name.
    """

    inner: eqx.AbstractVar[AbstractCostTerm]

    def __call__(self, config: Config) -> Float[Array, "..."]:
        return self.inner(config.data_parallel_view())


class DataParallelAllReduce(AbstractDataParallelTerm):
    """Gradient all-reduce over the dp ranks of each shard, hierarchical across nodes.

    `HierarchicalAllReduce` of ``P·grad_bytes/(tp·pp)`` bytes over ``dp`` ranks, of which
    ``min(dp, gpus_per_node/tp)`` share a node (see `Config.data_parallel_view`).
    ZeRO stages 1 and 2 move the same bytes (reduce-scatter plus all-gather).

    Fields:
        inner: the `HierarchicalAllReduce` (its four latencies and bandwidths).
    """

    inner: HierarchicalAllReduce
    name: str = eqx.field(static=True, default="allreduce")
    role: ClassVar[Role] = "communication"
    params: ClassVar[dict[str, ParamSpec]] = HierarchicalAllReduce.params
    log_latency_intra = _delegate("log_latency_intra")
    log_bandwidth_intra = _delegate("log_bandwidth_intra")
    log_latency_inter = _delegate("log_latency_inter")
    log_bandwidth_inter = _delegate("log_bandwidth_inter")

    def __init__(self, inner: HierarchicalAllReduce, name: str = "allreduce"):
        self.inner = inner
        self.name = name


class DataParallelInput(AbstractDataParallelTerm):
    """Host→device input of each replica's ``sample_bytes·global_batch/dp`` bytes.

    `HostToDeviceTerm` (strong scaling) on `Config.data_parallel_view`.

    Fields:
        inner: the `HostToDeviceTerm` (its link bandwidth).
    """

    inner: HostToDeviceTerm
    name: str = eqx.field(static=True, default="input")
    role: ClassVar[Role] = "communication"
    params: ClassVar[dict[str, ParamSpec]] = {
        "bandwidth": ParamSpec(
            "log_bandwidth", "B/s", "bandwidth", "host-to-device bandwidth of one link"
        )
    }
    log_bandwidth = _delegate("log_bandwidth")

    def __init__(self, inner: HostToDeviceTerm, name: str = "input"):
        self.inner = inner
        self.name = name


def basic_memory_per_gpu(config: Config) -> dict[str, Float[Array, "..."]]:
    """Bytes one GPU holds, by kind, and their ``"total"`` (see the module docstring).

    Example:
        >>> gpt = Config(gpus=8.0, tp=8.0, parameters=8e9, layers=32.0)
        >>> round(float(basic_memory_per_gpu(gpt)["weights"]) / 1e9, 3)  # 8e9 · 2 B / 8
        2.0
    """
    shards = config.tp * config.pp
    dp = config.dp
    per_shard = config.parameters / shards
    microbatch = config.samples_per_microbatch
    in_flight = jnp.minimum(config.num_microbatches, config.pp)
    parts = {
        "weights": per_shard * config.weight_bytes,
        "gradients": per_shard * config.grad_bytes / jnp.where(config.zero >= 2.0, dp, 1.0),
        "optimizer": per_shard * config.optimizer_bytes / jnp.where(config.zero >= 1.0, dp, 1.0),
        "activations": config.activation_factor
        * config.seq_len
        * microbatch
        * config.hidden
        * (config.layers / config.pp)
        * in_flight
        / config.tp,
    }
    parts["total"] = sum(parts.values())
    return parts
