"""Compute that grows with the global batch: the step time of data-parallel training whose
batch is split over the GPUs."""

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float

from .._config import Config
from .base import AbstractCostTerm, ParamSpec, Role


class BatchComputeTerm(AbstractCostTerm):
    """Compute of the per-GPU share of the global batch: ``c · global_batch / N`` seconds.

    With `SerialTerm` (a, seconds per step that neither more GPUs nor a smaller batch
    shorten: all-reduce latency, optimizer, launch) it is the step time
    ``T = a + c·B/N`` (`perfmodel.batch_linear`), the one that extrapolates runs whose
    global batch grows with N (MLPerf Training's, and most large-scale recipes'). At a
    fixed N it is the ``a + b·B`` of the time-optimal batch ``B* = sqrt(a·B_noise/b)``
    with ``b = c/N`` (McCandlish et al. 2018; `_convergence.optimal_batch`).

    Fields:
        log_time: log of c, the compute seconds of one sample on one GPU.
    """

    log_time: Float[Array, ""]
    name: str = eqx.field(static=True, default="batch")
    role: ClassVar[Role] = "compute"
    params: ClassVar[dict[str, ParamSpec]] = {
        "sample_time": ParamSpec("log_time", "s", "time", "compute seconds per sample, one GPU")
    }
    requires: ClassVar[tuple[str, ...]] = ("global_batch",)

    def __init__(self, sample_time: float = 1e-3, name: str = "batch"):
        self.log_time = jnp.log(jnp.asarray(sample_time, dtype=jnp.result_type(float)))
        self.name = name

    def __call__(self, config: Config) -> Float[Array, "..."]:
        return jnp.exp(self.log_time) * config.global_batch / config.gpus
