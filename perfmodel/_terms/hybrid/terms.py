"""The cost terms of the `hybrid` family: one Megatron-LM training iteration on GPUs.

With ``m`` micro-batches of ``b`` samples per replica, ``v`` model chunks per device and
``slots = m + (p−1)/v`` (`schedule_slots`), one iteration costs (seconds):

| term | seconds per iteration (parameters) |
| --- | --- |
| ``compute`` | ``slots·(L/p)·GEMMs(layer) + m·3·GEMM(logits)`` (peak_flops, e_max, d0, |
| | hbm_bandwidth) |
| ``kernels`` | ``[slots·((L/p)·elementwise + accumulation) + m·loss + optimizer]/BW_hbm`` |
| ``tensor`` | ``slots·(L/p)·(sync + max(0, async − 2·dense)) + m·AR(logits)`` (latency, |
| | bandwidth: NVLink) |
| ``p2p`` | ``2(v·m + p − 1)`` blocking sends between stages |
| ``allreduce`` | exposed data-parallel reduction (or ZeRO-2/3 shards) + tied embedding |
| | (latency_inter, bandwidth_inter: the network per GPU) |

The busiest device's per-micro-batch work runs ``slots`` times (its share of the
pipeline bubble included: `pipeline_bubble` splits it out); the last stage's output
layer runs m times on top (the stage imbalance). Links: NVLink/NVSwitch inside a node is
the `tensor` term's, the network (one NIC per GPU) the `allreduce` term's. Formulas,
sources and units are in `shape`, `efficiency`, `kernels`, `collectives`, `schedule`.
"""

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from ..._config import Config
from ..base import _positive, AbstractCostTerm, ParamSpec, Role
from .collectives import (
    data_parallel_time,
    embedding_sync_time,
    Link,
    logit_all_reduce,
    p2p_time,
    tensor_parallel_times,
    zero2_time,
    zero3_time,
)
from .efficiency import Device, logit_gemm_time
from .kernels import grad_accumulation_bytes, loss_bytes, optimizer_bytes
from .layer import layer_gemm_seconds, layer_kernel_seconds
from .schedule import schedule_slots
from .shape import stage_parameters

SHAPE_FIELDS = ("layers", "hidden", "seq_len", "global_batch")


def _logit(x: float) -> Float[Array, ""]:
    x = jnp.asarray(x, dtype=jnp.result_type(float))
    return jnp.log(x) - jnp.log1p(-x)


def _device_params(config: Config) -> Float[Array, "..."]:
    layers, embedding = stage_parameters(config)
    return layers + embedding


class LayerGemmTerm(AbstractCostTerm):
    """GEMM seconds of one iteration on the busiest device, under a roofline.

    ``slots·(L/p)·G_layer + m·3·G_logits`` with ``G`` from `layer_gemm_seconds` and
    `logit_gemm_time`: the efficiency ``e_max / (1 + d0·(1/M + 1/N + 1/K))`` of each
    GEMM's shape. Owns the GPU's parameters, which the other terms read.

    Fields:
        log_peak_flops: log of the peak dense FLOP/s of one GPU (spec sheet).
        logit_e_max: logit of e_max, the fraction of peak large GEMMs sustain.
        log_d0: log of d0, elements: the GEMM size scale of the efficiency.
        log_hbm_bandwidth: log of the HBM bandwidth, B/s.
    """

    log_peak_flops: Float[Array, ""]
    logit_e_max: Float[Array, ""]
    log_d0: Float[Array, ""]
    log_hbm_bandwidth: Float[Array, ""]
    name: str = eqx.field(static=True, default="compute")
    role: ClassVar[Role] = "compute"
    requires: ClassVar[tuple[str, ...]] = SHAPE_FIELDS
    params: ClassVar[dict[str, ParamSpec]] = {
        "peak_flops": ParamSpec(
            "log_peak_flops", "FLOP/s", "bandwidth", "peak dense FLOP/s of one GPU"
        ),
        "e_max": ParamSpec("logit_e_max", "1", "fraction", "share of peak large GEMMs sustain"),
        "d0": ParamSpec(
            "log_d0", "elements", "bandwidth", "GEMM size scale: e = e_max/(1+d0·Σ1/dim)"
        ),
        "hbm_bandwidth": ParamSpec(
            "log_hbm_bandwidth", "B/s", "bandwidth", "HBM bandwidth of one GPU"
        ),
    }

    def __init__(
        self,
        peak_flops: float = 312e12,
        e_max: float = 0.889,
        d0: float = 338.0,
        hbm_bandwidth: float = 1.835e12,
        name: str = "compute",
    ):
        self.log_peak_flops = _positive(peak_flops)
        self.logit_e_max = _logit(e_max)
        self.log_d0 = _positive(d0)
        self.log_hbm_bandwidth = _positive(hbm_bandwidth)
        self.name = name

    @property
    def device(self) -> Device:
        """The GPU's physical parameters (`efficiency.Device`)."""
        return Device(
            jnp.exp(self.log_peak_flops),
            jnp.exp(self.log_hbm_bandwidth),
            jax.nn.sigmoid(self.logit_e_max),
            jnp.exp(self.log_d0),
        )

    def __call__(self, config: Config) -> Float[Array, "..."]:
        device = self.device
        layer, _, _ = layer_gemm_seconds(config, device)
        # The layout's factors multiplied first: one product per configuration in a sweep.
        layers_run = schedule_slots(config) * (config.layers / config.pp)
        return layers_run * layer + (3.0 * config.num_microbatches) * logit_gemm_time(
            config, device
        )


class MemoryBoundTerm(AbstractCostTerm):
    """Seconds of the memory-bound kernels of one iteration at the HBM bandwidth.

    ``[slots·((L/p)·E_layer + A) + m·loss + O] / BW_hbm``: the element-wise kernels of
    each layer (`layer_kernel_seconds`), the gradient accumulation of the device's
    parameters per micro-batch (A, `grad_accumulation_bytes`), the last stage's cross
    entropy (`loss_bytes`) and the optimizer step (O, `optimizer_bytes`). No parameters:
    it reads the HBM bandwidth of the `LayerGemmTerm`.
    """

    name: str = eqx.field(static=True, default="kernels")
    role: ClassVar[Role] = "compute"
    params: ClassVar[dict[str, ParamSpec]] = {}
    reads: ClassVar[tuple[type, ...]] = (LayerGemmTerm,)

    def __init__(self, name: str = "kernels"):
        self.name = name

    def __call__(self, config: Config, compute: LayerGemmTerm) -> Float[Array, "..."]:
        bandwidth = jnp.exp(compute.log_hbm_bandwidth)
        layer, _ = layer_kernel_seconds(config, bandwidth)
        params = _device_params(config)
        accumulate = grad_accumulation_bytes(config, params) / bandwidth
        stage = config.layers / config.pp * layer + accumulate
        loss = config.num_microbatches * loss_bytes(config) / bandwidth
        return schedule_slots(config) * stage + loss + optimizer_bytes(config, params) / bandwidth


class TensorCollectiveTerm(AbstractCostTerm):
    """Exposed tensor-parallel collectives of one iteration, on NVLink.

    ``slots·(L/p)·(sync + max(0, async − 2·dense)) + m·AR(logits)``: the synchronous
    collectives of each layer and micro-batch and what the asynchronous ones do not hide
    under the backward weight-gradient GEMMs (`tensor_parallel_times`), and the logit
    layer's input-gradient all-reduce (`logit_all_reduce`). Owns the intra-node link.

    Fields:
        log_latency: log α of NVLink/NVSwitch, seconds per ring step.
        log_bandwidth: log β, the all-reduce bus bandwidth nccl-tests reports, B/s.
    """

    log_latency: Float[Array, ""]
    log_bandwidth: Float[Array, ""]
    name: str = eqx.field(static=True, default="tensor")
    role: ClassVar[Role] = "communication"
    params: ClassVar[dict[str, ParamSpec]] = {
        "latency": ParamSpec("log_latency", "s", "time", "intra-node latency per ring step"),
        "bandwidth": ParamSpec(
            "log_bandwidth", "B/s", "bandwidth", "intra-node (NVLink) bus bandwidth"
        ),
    }
    reads: ClassVar[tuple[type, ...]] = (LayerGemmTerm,)

    def __init__(self, latency: float = 1e-6, bandwidth: float = 200e9, name: str = "tensor"):
        self.log_latency = _positive(latency)
        self.log_bandwidth = _positive(bandwidth)
        self.name = name

    @property
    def link(self) -> Link:
        return Link(jnp.exp(self.log_latency), jnp.exp(self.log_bandwidth))

    def layer_exposed(self, config: Config, compute: LayerGemmTerm) -> Float[Array, "..."]:
        """Exposed collective seconds of one layer and micro-batch."""
        sync, overlappable = tensor_parallel_times(config, self.link)
        _, _, dense = layer_gemm_seconds(config, compute.device)
        # sync + max(0, overlappable − 2·dense), with the layout's sum first.
        return jnp.maximum(sync, (sync + overlappable) - 2.0 * dense)

    def __call__(self, config: Config, compute: LayerGemmTerm) -> Float[Array, "..."]:
        layers_run = schedule_slots(config) * (config.layers / config.pp)
        logits = config.num_microbatches * logit_all_reduce(config, self.link)
        return layers_run * self.layer_exposed(config, compute) + logits


def stage_seconds(
    config: Config, compute: LayerGemmTerm, tensor: TensorCollectiveTerm
) -> Float[Array, "..."]:
    """Seconds of one micro-batch on the busiest device (its layers and gradient
    accumulation): what each of the ``slots`` of the schedule takes."""
    device = compute.device
    layer, _, _ = layer_gemm_seconds(config, device)
    kernel, _ = layer_kernel_seconds(config, device.hbm_bandwidth)
    exposed = tensor.layer_exposed(config, compute)
    accumulate = grad_accumulation_bytes(config, _device_params(config)) / device.hbm_bandwidth
    stage = config.layers / config.pp
    # The layout's parts (kernels, accumulation) summed apart from the hardware's.
    return stage * (layer + exposed) + (stage * kernel + accumulate)


class DataParallelTerm(AbstractCostTerm):
    """Exposed data-parallel gradient reduction of one iteration, and the tied embedding.

    Without ZeRO, the hierarchical all-reduce of the device's gradients
    (`data_parallel_time`), all of it exposed unless `Config.dp_overlap`, then what
    exceeds the last micro-batch's backward on the device. With ZeRO-1 (Megatron-Core's
    distributed optimizer, Rajbhandari et al. 2020 §5.1) a reduce-scatter of the
    gradients, exposed beyond that backward as above, and after the optimizer step an
    all-gather of the 2-byte weights (`zero2_time`), exposed beyond the next iteration's
    first forward pass on the device with `Config.dp_overlap` (Megatron-Core's
    ``--overlap-param-gather`` launches each bucket's all-gather in the forward pre-hook
    of the one before), all of it without. With ZeRO-2 a gradient
    reduce-scatter after every micro-batch, each exposed beyond that micro-batch's
    backward (as above), and the weight all-gather after the step (`zero2_time`). With
    ZeRO-3 the weight all-gathers and gradient reduce-scatters (`zero3_time`), exposed
    beyond the pipeline they overlap (prefetched), all of it without `Config.dp_overlap`.
    Plus the tied-embedding all-reduce
    (`embedding_sync_time`). Owns the network link (per GPU).

    Fields:
        log_latency_inter: log α of the network, seconds per ring step.
        log_bandwidth_inter: log β of the network per GPU, B/s.
    """

    log_latency_inter: Float[Array, ""]
    log_bandwidth_inter: Float[Array, ""]
    name: str = eqx.field(static=True, default="allreduce")
    role: ClassVar[Role] = "communication"
    params: ClassVar[dict[str, ParamSpec]] = {
        "latency_inter": ParamSpec(
            "log_latency_inter", "s", "time", "inter-node latency per ring step"
        ),
        "bandwidth_inter": ParamSpec(
            "log_bandwidth_inter", "B/s", "bandwidth", "inter-node bandwidth per GPU"
        ),
    }
    reads: ClassVar[tuple[type, ...]] = (LayerGemmTerm, MemoryBoundTerm, TensorCollectiveTerm)

    def __init__(self, latency: float = 5e-6, bandwidth: float = 24e9, name: str = "allreduce"):
        self.log_latency_inter = _positive(latency)
        self.log_bandwidth_inter = _positive(bandwidth)
        self.name = name

    @property
    def link(self) -> Link:
        return Link(jnp.exp(self.log_latency_inter), jnp.exp(self.log_bandwidth_inter))

    def __call__(
        self,
        config: Config,
        compute: LayerGemmTerm,
        kernels: MemoryBoundTerm,
        tensor: TensorCollectiveTerm,
    ) -> Float[Array, "..."]:
        device, nvlink, network = compute.device, tensor.link, self.link
        params = _device_params(config)
        gemm, gemm_window, _ = layer_gemm_seconds(config, device)
        kernel, kernel_window = layer_kernel_seconds(config, device.hbm_bandwidth)
        overlap = config.dp_overlap > 0.0
        layers = config.layers / config.pp
        window = jnp.where(overlap, layers * (gemm_window + kernel_window), 0.0)
        forward = layers * ((gemm - gemm_window) + (kernel - kernel_window))
        allreduce = data_parallel_time(config, params * config.grad_bytes, nvlink, network)
        pipeline = schedule_slots(config) * stage_seconds(config, compute, tensor)
        zero3 = zero3_time(config, params, nvlink, network)
        scatter, gather = zero2_time(config, allreduce, params, nvlink, network)
        zero2 = config.num_microbatches * jnp.maximum(0.0, scatter - window) + gather
        gathered = jnp.maximum(0.0, gather - jnp.where(overlap, forward, 0.0))
        zero1 = jnp.maximum(0.0, scatter - window) + gathered
        zero3_on = config.zero >= 3.0
        hidden = jnp.where(zero3_on, jnp.where(overlap, pipeline, 0.0), window)
        dp = jnp.maximum(0.0, jnp.where(zero3_on, zero3, allreduce) - hidden)
        dp = jnp.where(config.zero == 1.0, zero1, dp)
        dp = jnp.where((config.zero >= 2.0) & ~zero3_on, zero2, dp)
        return dp + embedding_sync_time(config, network)


class PipelineTransferTerm(AbstractCostTerm):
    """Blocking sends between pipeline stages (`p2p_time`), on the network when the stages
    span nodes, else NVLink. No parameters: it reads both links."""

    name: str = eqx.field(static=True, default="p2p")
    role: ClassVar[Role] = "communication"
    params: ClassVar[dict[str, ParamSpec]] = {}
    reads: ClassVar[tuple[type, ...]] = (TensorCollectiveTerm, DataParallelTerm)

    def __init__(self, name: str = "p2p"):
        self.name = name

    def __call__(
        self, config: Config, tensor: TensorCollectiveTerm, network: DataParallelTerm
    ) -> Float[Array, "..."]:
        return p2p_time(config, tensor.link, network.link)
