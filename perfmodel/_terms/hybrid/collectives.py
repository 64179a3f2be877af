"""Seconds of the collectives of a Megatron-LM iteration: tensor-parallel, pipeline sends,
data-parallel gradients, ZeRO-2 and ZeRO-3 shards and the tied embedding.

Every collective is a ring in the α-β model with the nccl-tests bus-bandwidth convention
(`perfmodel.collective_time`): all-reduce ``2(n−1)α + 2(n−1)/n·S/β``, all-gather and
reduce-scatter ``(n−1)α + (n−1)/n·S/β``. Two links: NVLink/NVSwitch inside a node and
the network (one NIC per GPU) across nodes, each a `Link` of latency α (s) and bus
bandwidth β (B/s). Megatron-LM orders ranks tensor-parallel first, then data-parallel,
then pipeline, which sets who shares a node. Sources: Narayanan et al. SC'21 [N21];
Korthikanti et al. 2022 [K22]; Megatron-LM @50a4b5fa (2021) and @83b1e42f, @739cb43d
(2022) [MLM21, MLM22]; Rajbhandari et al. 2020 (ZeRO).
"""

from typing import NamedTuple

import jax.numpy as jnp
from jaxtyping import Array, Float

from ..._config import Config
from .shape import recompute_passes


class Link(NamedTuple):
    """A link: α seconds per ring step and β bytes/s of bus bandwidth."""

    latency: Float[Array, ""]
    bandwidth: Float[Array, ""]


def all_reduce(n, size, link: Link) -> Float[Array, "..."]:
    """Ring all-reduce of `size` bytes over `n` ranks, seconds (0 for one rank).

    `perfmodel.collective_time`'s ``2(n−1)α + 2(n−1)/n·S/β``, the bytes ``2(n−1)/n·S``
    first (in a sweep over layouts and links, a quantity of the layout alone), then the
    bandwidth: one operation per configuration where the link varies.
    """
    n = jnp.asarray(n)
    return 2.0 * (n - 1.0) * link.latency + size * (2.0 * (n - 1.0) / n) / link.bandwidth


def all_gather(n, size, link: Link) -> Float[Array, "..."]:
    """Ring all-gather (or reduce-scatter) of a `size`-byte buffer over `n` ranks, seconds:
    ``(n−1)α + (n−1)/n·S/β``, grouped as `all_reduce`."""
    n = jnp.asarray(n)
    return (n - 1.0) * link.latency + size * ((n - 1.0) / n) / link.bandwidth


def activation_message(config: Config) -> Float[Array, "..."]:
    """Bytes of one micro-batch's activations, ``S = b·s·h·activation_bytes``."""
    b = config.samples_per_microbatch
    return b * (config.seq_len * config.hidden * config.activation_bytes)


def tensor_parallel_times(
    config: Config, nvlink: Link
) -> tuple[Float[Array, "..."], Float[Array, "..."]]:
    """Tensor-parallel seconds per layer and micro-batch: ``(synchronous, overlappable)``.

    Without sequence parallelism [N21 §2.3]: 2 all-reduces of S forward (after the
    row-parallel projection and fc2), 2 more with full recomputation, 2 backward (input
    gradients of the column-parallel QKV and fc1). With sequence parallelism [K22
    §4.2.2] each becomes a reduce-scatter plus an all-gather (one all-reduce's volume),
    and the backward also re-does the 2 all-gathers of the layer inputs [MLM22]. The
    column-parallel backward collectives (2 all-reduces, or 2 reduce-scatters and 2
    re-done all-gathers) run under the weight-gradient GEMMs with `Config.async_tp`
    (always with sequence parallelism); the rest are on the critical path.
    """
    t, sp = config.tp, config.seq_parallel > 0.0
    size = activation_message(config)
    ar, ag = all_reduce(t, size, nvlink), all_gather(t, size, nvlink)
    rd, _ = recompute_passes(config.recompute)
    forward = 2.0 * ar * (1.0 + rd)
    col_bwd = jnp.where(sp, 4.0 * ag, 2.0 * ar)
    row_bwd = jnp.where(sp, 2.0 * ag, 0.0)
    overlapped = jnp.where(sp | (config.async_tp > 0.0), col_bwd, 0.0)
    return forward + row_bwd + col_bwd - overlapped, overlapped


def logit_all_reduce(config: Config, nvlink: Link) -> Float[Array, "..."]:
    """All-reduce of the logit layer's input gradient over t, seconds per micro-batch."""
    ar = all_reduce(config.tp, activation_message(config), nvlink)
    return jnp.where(config.vocab > 0.0, ar, 0.0)


def p2p_time(config: Config, nvlink: Link, network: Link) -> Float[Array, "..."]:
    """Seconds of pipeline sends and receives on the critical path of one iteration.

    Each moves one micro-batch's activations S, split over the t ranks with the
    scatter/gather optimisation [N21 §4.1] or sequence parallelism (then, without
    sequence parallelism, re-gathered over NVLink with an all-gather of S). Adjacent
    stages are tp·dp ranks apart: when the p stages span more than one node some boundary
    is on the network and paces the lock-stepped schedule, else all are on NVLink.
    Transfers block [MLM21 schedules.py]: one after every chunk's forward and backward,
    ``2·(v·m + p − 1)`` per iteration; none with p = 1.
    """
    t, p = config.tp, config.pp
    size = activation_message(config)
    split = (config.scatter_gather > 0.0) | (config.seq_parallel > 0.0)
    remote = config.gpus > config.gpus_per_node  # p·t·dp GPUs
    latency = jnp.where(remote, network.latency, nvlink.latency)
    bandwidth = jnp.where(remote, network.bandwidth, nvlink.bandwidth)
    regather = (config.scatter_gather > 0.0) & (config.seq_parallel <= 0.0) & (t > 1.0)
    fixed = latency + jnp.where(regather, all_gather(t, size, nvlink), 0.0)
    count = jnp.where(p > 1.0, 2.0 * (config.interleave * config.num_microbatches + p - 1.0), 0.0)
    # count·(fixed + send), the layout's quantities first and the bandwidth last (few
    # operations per configuration in a sweep over both).
    return count * fixed + count * size * jnp.where(split, 1.0 / t, 1.0) / bandwidth


def data_parallel_time(
    config: Config, size: Float[Array, "..."], nvlink: Link, network: Link
) -> Float[Array, "..."]:
    """Seconds of the gradient all-reduce of `size` bytes over the dp replicas (per GPU).

    Hierarchical: ``l = min(dp, G/t)`` replicas share a node (tensor-parallel ranks come
    first); a reduce-scatter and an all-gather inside the node on NVLink around a ring
    all-reduce of S/l across the dp/l nodes on the network. ZeRO-1/2 move the same bytes
    (gradient reduce-scatter, weight all-gather).
    """
    d = config.dp
    local = jnp.minimum(d, jnp.maximum(config.gpus_per_node / config.tp, 1.0))
    intra = 2.0 * all_gather(local, size, nvlink)
    # `all_reduce` of S/l over d/l, its network bandwidth last: the layout's terms (0 for
    # one replica) then one division, few operations per configuration in a sweep.
    n, many = d / local, d > 1.0
    latency = jnp.where(many, intra + 2.0 * (n - 1.0) * network.latency, 0.0)
    return latency + jnp.where(many, size / local * (2.0 * (n - 1.0) / n), 0.0) / network.bandwidth


def zero2_time(
    config: Config,
    gradients: Float[Array, "..."],
    params: Float[Array, "..."],
    nvlink: Link,
    network: Link,
) -> tuple[Float[Array, "..."], Float[Array, "..."]]:
    """Seconds of ZeRO-2's collectives: ``(per micro-batch, per iteration)``.

    Each rank keeps only its shard of the gradients, so the gradients are reduce-scattered
    after every micro-batch's backward, not once per iteration (DeepSpeed, issue #2252:
    "gradient reduction is required after every backward because of gradient
    partitioning"): one reduce-scatter of params·grad_bytes per micro-batch, half the
    gradients' hierarchical all-reduce `gradients` (`data_parallel_time`, seconds); and
    once per iteration the 2-byte weights are all-gathered after the sharded optimizer
    step [Rajbhandari et al. 2020 §5.2].
    """
    gather = data_parallel_time(config, params * 2.0, nvlink, network) / 2.0
    return gradients / 2.0, gather


def zero3_time(
    config: Config, params: Float[Array, "..."], nvlink: Link, network: Link
) -> Float[Array, "..."]:
    """Seconds of ZeRO-3 weight all-gathers and gradient reduce-scatters per iteration.

    Every micro-batch all-gathers the 2-byte weights for the forward, again for the
    backward (and for the recomputed forward with full recomputation), and
    reduce-scatters the gradients: ``m·(3 + r_full)`` collectives of params·2 bytes over
    dp, each half a hierarchical all-reduce [Rajbhandari et al. 2020 §5; FSDP]. They go
    layer by layer (FSDP's unit, ZeRO-3's prefetch), so each pays its latency L/p
    times: the all-reduce of the bytes plus L/p − 1 more of nothing (its latency).
    """
    rd, _ = recompute_passes(config.recompute)
    count = config.num_microbatches * (3.0 + rd) / 2.0
    size = data_parallel_time(config, params * 2.0, nvlink, network)
    latency = data_parallel_time(config, jnp.zeros_like(params), nvlink, network)
    return (size + (config.layers / config.pp - 1.0) * latency) * count


def embedding_sync_time(config: Config, network: Link) -> Float[Array, "..."]:
    """Seconds of the tied-embedding gradient all-reduce between the first and last stage.

    V·h/t gradients of grad_bytes over 2 ranks on different nodes, when p > 1 and the
    output layer shares the embedding's weights (not `Config.untied_embeddings`) [N21 §3].
    """
    size = config.vocab * config.hidden / config.tp * config.grad_bytes
    # `all_reduce` over 2 ranks, the bandwidth last (as `data_parallel_time`).
    two = (config.pp > 1.0) & (config.untied_embeddings <= 0.0)
    latency = jnp.where(two, 2.0 * network.latency, 0.0)
    return latency + jnp.where(two, size, 0.0) / network.bandwidth
