"""Weak scaling measured as throughput: each GPU keeps its batch, the work grows with N.

A throughput fit models seconds per unit of work, ``T(N) = step(N) / (b·N)`` for a
per-GPU batch of b samples. With a data-parallel step of compute plus a ring all-reduce
of the gradient, ``step(N) = t + 2(N−1)α + 2(N−1)/N · S/β``, that is

``T(N) = t_c/N + t_lat·(N−1)/N + t_bw·(N−1)/N²``

with ``t_c = t/b``, ``t_lat = 2α/b`` and ``t_bw = 2S/(β·b)``, all seconds per unit of
work. The per-GPU throughput falls when the all-reduce appears (N = 2) and then levels
off, as in most published data-parallel tables, instead of falling on like Amdahl's
law; the latency term keeps Amdahl's law as the special case ``t_bw = 0``. With a tree
all-reduce (``2·log2(N)·α`` latency) the latency term is ``t_lat·log2(N)/N`` instead.

Across nodes, `weak_hierarchical` replaces the ring by a two-level all-reduce (inside
each node, then between nodes), whose per-GPU throughput levels off twice.
"""

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float

from .. import _closed
from .._config import Config
from .base import _positive, AbstractCostTerm, ParamSpec, Role


class WeakAllReduceTerm(AbstractCostTerm):
    """A weak-scaled step's all-reduce, in seconds per unit of work.

    Ring: ``t_lat·(N−1)/N + t_bw·(N−1)/N²``, the all-reduce of one step,
    ``2(N−1)α + 2(N−1)/N · S/β``, shared by the ``b·N`` units of work the N GPUs do.
    Tree: the latency part is ``2·log2(N)·α`` per step, ``t_lat·log2(N)/N`` per unit.

    Fields:
        log_latency: log t_lat = log(2α/b), seconds per unit of work.
        log_transfer: log t_bw = log(2S/(β·b)), seconds per unit of work.
        algorithm: ``"ring"`` or ``"tree"``.
    """

    log_latency: Float[Array, ""]
    log_transfer: Float[Array, ""]
    algorithm: str = eqx.field(static=True, default="ring")
    name: str = eqx.field(static=True, default="allreduce")
    role: ClassVar[Role] = "communication"
    params: ClassVar[dict[str, ParamSpec]] = {
        "latency": ParamSpec(
            "log_latency", "s", "time", "all-reduce latency per unit of work, 2α/b"
        ),
        "transfer": ParamSpec(
            "log_transfer", "s", "time", "gradient transfer per unit of work, 2S/(β·b)"
        ),
    }

    def __init__(
        self,
        latency: float = 1.0,
        transfer: float = 1.0,
        algorithm: str = "ring",
        name: str = "allreduce",
    ):
        self.log_latency = _positive(latency)
        self.log_transfer = _positive(transfer)
        self.algorithm = algorithm
        self.name = name

    def __check_init__(self):
        if self.algorithm not in ("ring", "tree"):
            raise ValueError(f"algorithm must be 'ring' or 'tree', got {self.algorithm!r}")

    def __call__(self, config: Config) -> Float[Array, "..."]:
        return _closed.weak_allreduce(
            jnp, self.value("latency"), self.value("transfer"), config.gpus, self.algorithm
        )


class WeakHierarchicalAllReduceTerm(AbstractCostTerm):
    """A weak-scaled step's two-level all-reduce, in seconds per unit of work.

    With G = gpus_per_node, l = min(N, G) ranks per node and m = max(N/G, 1) nodes, as in
    `HierarchicalAllReduce`: the reduce-scatter and all-gather inside each node,
    ``2(l−1)/l · S/β_intra``, and the ring all-reduce of each rank's ``S/l`` share
    across the nodes, ``2(m−1)/m · S/(l·β_inter)``, shared by the ``b·N`` units of work:

    ``t_intra·(l−1)/(l·N) + t_inter·(m−1)/(m·l·N)``

    Both parts level off, so per-GPU throughput drops inside the first node, drops again
    when the all-reduce leaves it, and then stays nearly flat: it never saturates, and
    the fastest GPU count is always the search limit. Latencies, whose growth with N
    would make it saturate, are left out (with three or four GPU counts they cannot be
    told apart from the transfers); `weak_data_parallel` keeps a latency term.

    Fields:
        log_transfer_intra: log t_intra = log(2S/(β_intra·b)), seconds per unit of work.
        log_transfer_inter: log t_inter = log(2S/(β_inter·b)), seconds per unit of work.
    """

    log_transfer_intra: Float[Array, ""]
    log_transfer_inter: Float[Array, ""]
    name: str = eqx.field(static=True, default="allreduce")
    role: ClassVar[Role] = "communication"
    # Config fields a fit's data must give: Config's default of 8 GPUs per node would
    # place the node boundary silently.
    requires: ClassVar[tuple[str, ...]] = ("gpus_per_node",)
    params: ClassVar[dict[str, ParamSpec]] = {
        "transfer_intra": ParamSpec(
            "log_transfer_intra",
            "s",
            "time",
            "gradient transfer inside a node per unit of work, 2S/(β_intra·b)",
        ),
        "transfer_inter": ParamSpec(
            "log_transfer_inter",
            "s",
            "time",
            "gradient transfer between nodes per unit of work, 2S/(β_inter·b)",
        ),
    }

    def __init__(
        self, transfer_intra: float = 1.0, transfer_inter: float = 1.0, name: str = "allreduce"
    ):
        self.log_transfer_intra = _positive(transfer_intra)
        self.log_transfer_inter = _positive(transfer_inter)
        self.name = name

    def __call__(self, config: Config) -> Float[Array, "..."]:
        return _closed.weak_hierarchical_allreduce(
            jnp,
            self.value("transfer_intra"),
            self.value("transfer_inter"),
            config.gpus,
            config.gpus_per_node,
        )
