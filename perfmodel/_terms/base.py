"""Cost terms: each maps one `Config` to seconds per step and holds positive parameters.

Parameters are stored unconstrained (`log_time`, `logit_overlap`); `AbstractCostTerm.value`
returns the physical value. Each term declares its parameters in `params`, which is what
fitting, saving and reporting iterate over.
"""

import abc
import dataclasses
from typing import ClassVar, Literal

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float
import numpy as np

from .. import _closed
from .._config import Config
from .._errors import InputError

Role = Literal["overhead", "compute", "communication"]


@dataclasses.dataclass(frozen=True)
class ParamSpec:
    """How one parameter is stored and what it means.

    Attributes:
        field: name of the unconstrained leaf on the term, e.g. ``"log_time"``.
        unit: physical unit of the value, e.g. ``"s"`` or ``"B/s"``.
        kind: ``"time"``, ``"bandwidth"`` or ``"fraction"``; sets the transform
            (log for the first two, logit for fractions) and the scale of fit starts.
        description: one line for tables and reports.
    """

    field: str
    unit: str
    kind: Literal["time", "bandwidth", "fraction"]
    description: str

    def to_physical(self, raw: Float[ArrayLike, "..."]) -> Float[Array, "..."]:
        return jax.nn.sigmoid(raw) if self.kind == "fraction" else jnp.exp(raw)

    def to_raw(self, value: Float[ArrayLike, "..."]) -> Float[Array, "..."]:
        value = jnp.asarray(value, dtype=jnp.result_type(float))
        if self.kind == "fraction":
            return jnp.log(value) - jnp.log1p(-value)
        return jnp.log(value)


def _time(description: str) -> ParamSpec:
    return ParamSpec("log_time", "s", "time", description)


class AbstractCostTerm(eqx.Module):
    """A cost term: seconds per step for one `Config`.

    Subclasses declare `name` (a static string, unique inside a model, that prefixes
    parameter names), `role` (how the model combines the term), `params` and `__call__`,
    and may list in `requires` the `Config` fields a fit's data must give. A term whose
    time depends on another term's parameters (a collective hidden under the compute it
    overlaps) names those terms' classes in `reads`; `ScalingModel` then calls it as
    ``term(config, *siblings)`` with the model's one term of each class, so every
    parameter keeps a single owner.
    """

    name: eqx.AbstractVar[str]
    role: ClassVar[Role]
    params: ClassVar[dict[str, ParamSpec]]
    requires: ClassVar[tuple[str, ...]] = ()
    reads: ClassVar[tuple[type, ...]] = ()

    @abc.abstractmethod
    def __call__(self, config: Config) -> Float[Array, "..."]:
        """Seconds per step spent in this term."""

    def value(self, param: str) -> Float[Array, ""]:
        """Physical value of `param` (in its `ParamSpec.unit`)."""
        spec = self.params[param]
        return spec.to_physical(getattr(self, spec.field))


def _positive(x: float) -> Float[Array, ""]:
    """log of a term's time or rate given in physical units, which must be positive and
    finite (`SerialTerm(-1.0)` evaluated to NaN, `ComputeTerm(inf)` to inf, silently)."""
    if not isinstance(x, jax.core.Tracer):
        values = np.asarray(x, dtype=np.float64)
        if not np.all(np.isfinite(values) & (values > 0)):
            raise InputError(
                f"a cost term's time or rate: expected a positive finite number, got {x!r}"
            )
    return jnp.log(jnp.asarray(x, dtype=jnp.result_type(float)))


class SerialTerm(AbstractCostTerm):
    """Work no GPU count shortens (Amdahl): ``t_serial`` seconds at every N.

    Fields:
        log_time: log of the serial time in seconds.
    """

    log_time: Float[Array, ""]
    name: str = eqx.field(static=True, default="serial")
    role: ClassVar[Role] = "overhead"
    params: ClassVar[dict[str, ParamSpec]] = {"time": _time("serial time per step")}

    def __init__(self, time: float = 1.0, name: str = "serial"):
        self.log_time = _positive(time)
        self.name = name

    def __call__(self, config: Config) -> Float[Array, "..."]:
        return _closed.serial(jnp, jnp.exp(self.log_time), config.gpus)


class ComputeTerm(AbstractCostTerm):
    """Parallel work: ``t_compute / N`` (strong scaling) or ``t_compute`` (weak scaling).

    Fields:
        log_time: log of the compute time of one step on one GPU, seconds.
        weak: True when each GPU keeps its own share of work as N grows.
    """

    log_time: Float[Array, ""]
    weak: bool = eqx.field(static=True, default=False)
    name: str = eqx.field(static=True, default="compute")
    role: ClassVar[Role] = "compute"
    params: ClassVar[dict[str, ParamSpec]] = {"time": _time("parallel compute time on one GPU")}

    def __init__(self, time: float = 1.0, weak: bool = False, name: str = "compute"):
        self.log_time = _positive(time)
        self.weak = weak
        self.name = name

    def __call__(self, config: Config) -> Float[Array, "..."]:
        return _closed.compute(jnp, jnp.exp(self.log_time), config.gpus, self.weak)


class HostToDeviceTerm(AbstractCostTerm):
    """Input copied from host memory to the GPUs over PCIe or NVLink-C2C.

    GPUs behind one host link share its bandwidth, so with ``k = min(N, gpus_per_link)``:
    ``k · bytes_per_gpu / bandwidth`` seconds, where ``bytes_per_gpu`` is
    ``input_bytes / N`` (strong scaling: the global batch is split) or ``input_bytes``
    (weak scaling: every GPU reads its own batch).

    Fields:
        log_bandwidth: log of one host link's bandwidth, bytes/s.
        weak: as for `ComputeTerm`.
    """

    log_bandwidth: Float[Array, ""]
    weak: bool = eqx.field(static=True, default=False)
    name: str = eqx.field(static=True, default="input")
    role: ClassVar[Role] = "communication"
    params: ClassVar[dict[str, ParamSpec]] = {
        "bandwidth": ParamSpec(
            "log_bandwidth", "B/s", "bandwidth", "host-to-device bandwidth of one link"
        )
    }

    def __init__(self, bandwidth: float = 1.0, weak: bool = False, name: str = "input"):
        self.log_bandwidth = _positive(bandwidth)
        self.weak = weak
        self.name = name

    def __call__(self, config: Config) -> Float[Array, "..."]:
        sharing = jnp.minimum(config.gpus, config.gpus_per_link)
        per_gpu = config.input_bytes if self.weak else config.input_bytes / config.gpus
        return sharing * per_gpu / jnp.exp(self.log_bandwidth)


class CoherencyTerm(AbstractCostTerm):
    """Pairwise coordination that grows with N (the USL's κ): ``t_coherency · (N − 1)``.

    Fields:
        log_time: log of the cost each added GPU brings to a step, seconds.
    """

    log_time: Float[Array, ""]
    name: str = eqx.field(static=True, default="coherency")
    role: ClassVar[Role] = "overhead"
    params: ClassVar[dict[str, ParamSpec]] = {"time": _time("coherency cost per added GPU")}

    def __init__(self, time: float = 1.0, name: str = "coherency"):
        self.log_time = _positive(time)
        self.name = name

    def __call__(self, config: Config) -> Float[Array, "..."]:
        return _closed.coherency(jnp, jnp.exp(self.log_time), config.gpus)
