"""Collective communication in the α-β (Hockney) model, in the conventions of nccl-tests.

For a message of S bytes among p ranks, a link latency α (seconds) and bandwidth β (bytes/s):

| op | ring | tree |
| --- | --- | --- |
| all_reduce | 2(p−1)α + 2(p−1)/p · S/β | 2·log2(p)·α + 2·S/β |
| all_gather, reduce_scatter, all_to_all | (p−1)α + (p−1)/p · S/β | — |
| broadcast, reduce | (p−1)α + S/β | log2(p)·α + S/β |

nccl-tests reports bus bandwidth busbw = algbw · factor with algbw = S / t; the factor is
2(n−1)/n for all-reduce, (n−1)/n for all-gather, reduce-scatter and all-to-all, and 1 for
broadcast, reduce and send/recv, so that a bandwidth-bound ring reaches busbw = β.
"""

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float

from .. import _closed
from .._config import Config
from .._errors import InputError
from .base import _positive, AbstractCostTerm, ParamSpec, Role

# busbw = algbw · a(n − b)/n, as in the GetBw functions of nccl-tests' src/*.cu.
BUS_FACTOR_COEFFICIENTS: dict[str, tuple[float, float]] = (
    {"all_reduce": (2.0, 1.0)}
    | dict.fromkeys(("all_gather", "reduce_scatter", "all_to_all"), (1.0, 1.0))
    | dict.fromkeys(("broadcast", "reduce", "send_recv"), (1.0, 0.0))
)
OPS: tuple[str, ...] = tuple(BUS_FACTOR_COEFFICIENTS)
_TREE_OPS = ("all_reduce", "broadcast", "reduce")


def bus_bandwidth_factor(op: str, n: ArrayLike) -> Float[Array, "..."]:
    """nccl-tests factor from algorithm bandwidth to bus bandwidth for `n` ranks.

    busbw = algbw · factor, with factor 2(n−1)/n for all_reduce; (n−1)/n for all_gather,
    reduce_scatter and all_to_all; 1 for broadcast, reduce and send_recv.

    Args:
        op: the collective (a static string, also under `jax.jit`).
        n: number of ranks (≥ 1), any shape; integers become the default float dtype,
            floats keep theirs.

    Example:
        >>> float(bus_bandwidth_factor("all_reduce", 4))
        1.5
    """
    if op not in BUS_FACTOR_COEFFICIENTS:
        raise InputError(f"unknown collective {op!r}; expected one of {', '.join(OPS)}")
    a, b = BUS_FACTOR_COEFFICIENTS[op]
    n = jnp.asarray(n)
    if not jnp.issubdtype(n.dtype, jnp.inexact):
        n = n.astype(jnp.result_type(float))
    if b == 0.0:
        return jnp.ones_like(n)
    return a * (n - b) / n


def collective_time(
    op: str,
    algorithm: str,
    ranks: Float[ArrayLike, "..."],
    message_bytes: Float[ArrayLike, "..."],
    latency: Float[ArrayLike, "..."],
    bandwidth: Float[ArrayLike, "..."],
) -> Float[Array, "..."]:
    """Seconds for one collective (see the module docstring for the formulas).

    Args:
        op: the collective, one of `OPS`.
        algorithm: ``"ring"`` or ``"tree"``.
        ranks: participants p (≥ 1); one rank costs nothing.
        message_bytes: S, bytes in the nccl-tests convention (the buffer size).
        latency: α, seconds per step of the algorithm.
        bandwidth: β, bytes/s of one link.
    """
    p = jnp.asarray(ranks, dtype=jnp.result_type(float))
    steps = p - 1.0
    if algorithm == "ring":
        if op == "all_reduce":
            return 2.0 * steps * latency + 2.0 * steps / p * message_bytes / bandwidth
        if op in ("all_gather", "reduce_scatter", "all_to_all"):
            return steps * latency + steps / p * message_bytes / bandwidth
        if op in ("broadcast", "reduce", "send_recv"):
            t = steps * latency + message_bytes / bandwidth
            return jnp.where(p > 1.0, t, 0.0)
    elif algorithm == "tree" and op in _TREE_OPS:
        hops = jnp.log2(jnp.maximum(p, 1.0))
        rounds = 2.0 if op == "all_reduce" else 1.0
        t = rounds * (hops * latency + message_bytes / bandwidth)
        return jnp.where(p > 1.0, t, 0.0)
    raise ValueError(f"no {algorithm!r} algorithm for {op!r} in the α-β model")


def node_split(ranks: ArrayLike, gpus_per_node: ArrayLike) -> tuple[Array, Array]:
    """``(l, m)`` of `ranks` GPUs placed on nodes of `gpus_per_node`: ``l = min(ranks, G)``
    ranks per node and ``m = max(ranks / G, 1)`` nodes."""
    return _closed.node_split(jnp, ranks, gpus_per_node)


def _latency(scope: str) -> ParamSpec:
    return ParamSpec(f"log_latency{scope}", "s", "time", "latency per step")


def _bandwidth(scope: str) -> ParamSpec:
    return ParamSpec(f"log_bandwidth{scope}", "B/s", "bandwidth", "link bandwidth")


class Collective(AbstractCostTerm):
    """One collective per step over the data-parallel group, flat (single level).

    Seconds: ``collective_time(op, algorithm, dp, message_bytes, α, β)``.

    Fields:
        log_latency: log α, seconds.
        log_bandwidth: log β, bytes/s.
        op: the collective, e.g. ``"all_reduce"``.
        algorithm: ``"ring"`` or ``"tree"``.
    """

    log_latency: Float[Array, ""]
    log_bandwidth: Float[Array, ""]
    op: str = eqx.field(static=True, default="all_reduce")
    algorithm: str = eqx.field(static=True, default="ring")
    name: str = eqx.field(static=True, default="allreduce")
    role: ClassVar[Role] = "communication"
    params: ClassVar[dict[str, ParamSpec]] = {
        "latency": _latency(""),
        "bandwidth": _bandwidth(""),
    }

    def __init__(
        self,
        latency: float = 1e-5,
        bandwidth: float = 1e10,
        op: str = "all_reduce",
        algorithm: str = "ring",
        name: str = "allreduce",
    ):
        self.log_latency = _positive(latency)
        self.log_bandwidth = _positive(bandwidth)
        self.op = op
        self.algorithm = algorithm
        self.name = name

    def __check_init__(self):
        if self.op not in OPS:
            raise ValueError(f"unknown op {self.op!r}; expected one of {OPS}")
        if self.algorithm == "tree" and self.op not in _TREE_OPS:
            raise ValueError(f"no tree algorithm for {self.op!r}; use 'ring'")
        if self.algorithm not in ("ring", "tree"):
            raise ValueError(f"algorithm must be 'ring' or 'tree', got {self.algorithm!r}")

    def __call__(self, config: Config) -> Float[Array, "..."]:
        return collective_time(
            self.op,
            self.algorithm,
            config.dp,
            config.message_bytes,
            jnp.exp(self.log_latency),
            jnp.exp(self.log_bandwidth),
        )


class HierarchicalAllReduce(AbstractCostTerm):
    """All-reduce in two levels: inside each node, then across nodes.

    With G = gpus_per_node, local ranks l = min(p, G) and nodes m = max(p / G, 1):
    reduce-scatter inside the node, ring all-reduce of S/l across the m nodes, all-gather
    inside the node:
    ``2[(l−1)α_intra + (l−1)/l · S/β_intra] + 2(m−1)α_inter + 2(m−1)/m · (S/l)/β_inter``.

    β_inter is one GPU's network bandwidth, not a bus bandwidth: bandwidth-bound, nccl-tests
    would print ``busbw = l·β_inter·(p−1)/p·m/(m−1)`` for p = l·m ranks, 2× its many-node
    value at 2 nodes (as NVLink SHARP and trees, not NCCL's flat ring, whose busbw stays
    level; docs/collectives.md).

    Fields:
        log_latency_intra, log_bandwidth_intra: α (s) and β (B/s) inside a node.
        log_latency_inter, log_bandwidth_inter: α (s) and β (B/s) between nodes, per GPU.
    """

    log_latency_intra: Float[Array, ""]
    log_bandwidth_intra: Float[Array, ""]
    log_latency_inter: Float[Array, ""]
    log_bandwidth_inter: Float[Array, ""]
    name: str = eqx.field(static=True, default="allreduce")
    role: ClassVar[Role] = "communication"
    requires: ClassVar[tuple[str, ...]] = ("gpus_per_node",)
    params: ClassVar[dict[str, ParamSpec]] = {
        "latency_intra": _latency("_intra"),
        "bandwidth_intra": _bandwidth("_intra"),
        "latency_inter": _latency("_inter"),
        "bandwidth_inter": _bandwidth("_inter"),
    }

    def __init__(
        self,
        latency_intra: float = 1e-5,
        bandwidth_intra: float = 1e11,
        latency_inter: float = 1e-5,
        bandwidth_inter: float = 1e10,
        name: str = "allreduce",
    ):
        self.log_latency_intra = _positive(latency_intra)
        self.log_bandwidth_intra = _positive(bandwidth_intra)
        self.log_latency_inter = _positive(latency_inter)
        self.log_bandwidth_inter = _positive(bandwidth_inter)
        self.name = name

    def __call__(self, config: Config) -> Float[Array, "..."]:
        p = config.dp
        local, nodes = node_split(p, config.gpus_per_node)
        size = config.message_bytes
        intra = 2.0 * collective_time(
            "reduce_scatter",
            "ring",
            local,
            size,
            jnp.exp(self.log_latency_intra),
            jnp.exp(self.log_bandwidth_intra),
        )
        inter = collective_time(
            "all_reduce",
            "ring",
            nodes,
            size / local,
            jnp.exp(self.log_latency_inter),
            jnp.exp(self.log_bandwidth_inter),
        )
        return intra + inter
