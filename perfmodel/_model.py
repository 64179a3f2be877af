"""ScalingModel: cost terms put together into seconds per step; `AbstractScalingModel`, what
every model a fit can hold offers (`ScalingModel`, and the default's `Blend`)."""

import abc

import equinox as eqx
from equinox import AbstractVar
import jax
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float

from ._config import Config
from ._terms import AbstractCostTerm, ParamSpec

OVERLAP = ParamSpec(
    "logit_overlap", "1", "fraction", "share of communication hidden behind compute"
)


class AbstractScalingModel(eqx.Module):
    """Seconds per step (or per unit of work) at a `Config`, with named parameters.

    Subclasses give the curve (`__call__`), its share by cost term (`breakdown`, keyed by
    the names of `terms`), their parameters by name (`parameter_specs`, `parameters`) and
    where each is stored (`leaf_getter`); the rest follows from those.

    Fields:
        terms: the cost terms, one per name of `breakdown` (their roles and kinds).
        family: the preset name this model came from (for saving and reports).
        options: the preset's keyword arguments, as ``(name, value)`` pairs.
    """

    terms: AbstractVar[tuple[AbstractCostTerm, ...]]
    family: AbstractVar[str]
    options: AbstractVar[tuple[tuple[str, object], ...]]

    @abc.abstractmethod
    def __call__(self, config: Config) -> Float[Array, "..."]:
        """Seconds per step at `config`."""

    @abc.abstractmethod
    def breakdown(self, config: Config) -> dict[str, Float[Array, "..."]]:
        """Seconds per step of each term (they add up to the step time)."""

    @abc.abstractmethod
    def parameter_specs(self) -> dict[str, ParamSpec]:
        """Every parameter by name → its spec."""

    @abc.abstractmethod
    def parameters(self) -> dict[str, Float[Array, ""]]:
        """Physical values of every parameter, keyed as in `parameter_specs`."""

    @abc.abstractmethod
    def leaf_getter(self, name: str):
        """A function returning the stored (unconstrained) leaf of parameter `name`, for
        `eqx.tree_at`; a KeyError lists the valid names."""

    def step_time(self, config: Config) -> Float[Array, "..."]:
        """Seconds per step at `config` (same as calling the model)."""
        return self(config)

    def speedup(self, config: Config, baseline: ArrayLike = 1.0) -> Float[Array, "..."]:
        """T(baseline GPUs) / T(config)."""
        base = eqx.tree_at(lambda c: c.gpus, config, jnp.full_like(config.gpus, baseline))
        return self(base) / self(config)

    def efficiency(self, config: Config, baseline: ArrayLike = 1.0) -> Float[Array, "..."]:
        """Speedup per GPU relative to the baseline: speedup · baseline / N."""
        return self.speedup(config, baseline) * baseline / config.gpus

    def with_parameters(self, values: dict[str, ArrayLike]) -> "AbstractScalingModel":
        """A copy with the named parameters set to physical `values`."""
        specs = self.parameter_specs()
        model = self
        for name, value in values.items():
            getter = self.leaf_getter(name)
            model = eqx.tree_at(getter, model, specs[name].to_raw(value))
        return model

    def with_raw(self, raw: dict[str, ArrayLike]) -> "AbstractScalingModel":
        """A copy with the named parameters set to stored (log/logit) values `raw`."""
        model = self
        for name, value in raw.items():
            model = eqx.tree_at(self.leaf_getter(name), model, jnp.asarray(value))
        return model

    def raw_leaf_mask(self, names: set[str]) -> "AbstractScalingModel":
        """A pytree like the model with True at the leaves of the named parameters."""
        mask = jax.tree_util.tree_map(lambda _: False, self)
        for name in names:
            mask = eqx.tree_at(self.leaf_getter(name), mask, True)
        return mask


class ScalingModel(AbstractScalingModel):
    """Seconds per step as a sum of cost terms, with communication/compute overlap.

    ``T = overhead + compute + comm − overlap · min(compute, comm)`` where `overhead`,
    `compute` and `comm` sum the terms of each role and ``overlap ∈ [0, 1]``.

    Fields:
        terms: the cost terms; their names are unique and prefix parameter names.
        logit_overlap: logit of the overlap fraction, or None for no overlap.
        family: the preset name this model came from (for saving and reports).
        options: the preset's keyword arguments, as ``(name, value)`` pairs.
    """

    terms: tuple[AbstractCostTerm, ...]
    logit_overlap: Float[Array, ""] | None = None
    family: str = eqx.field(static=True, default="custom")
    options: tuple[tuple[str, object], ...] = eqx.field(static=True, default=())

    def __check_init__(self):
        names = [t.name for t in self.terms]
        if len(set(names)) != len(names):
            raise ValueError(f"term names must be unique, got {names}")

    def sibling(self, kind: type) -> AbstractCostTerm:
        """The model's one term of class `kind` (for terms that read it, `reads`)."""
        found = [term for term in self.terms if isinstance(term, kind)]
        if len(found) != 1:
            raise ValueError(f"expected one {kind.__name__} term in the model, got {len(found)}")
        return found[0]

    def term_time(self, term: AbstractCostTerm, config: Config) -> Float[Array, "..."]:
        """Seconds of one of the model's terms at `config` (given the terms it reads)."""
        return term(config, *(self.sibling(kind) for kind in term.reads))

    def _by_role(self, config: Config) -> tuple[Array, Array, Array]:
        zero = jnp.zeros_like(config.gpus)
        sums = {"overhead": zero, "compute": zero, "communication": zero}
        for term in self.terms:
            sums[term.role] = sums[term.role] + self.term_time(term, config)
        return sums["overhead"], sums["compute"], sums["communication"]

    @property
    def overlap(self) -> Float[Array, ""]:
        """Fraction of min(compute, comm) hidden by overlap (0 when disabled)."""
        if self.logit_overlap is None:
            return jnp.zeros((), dtype=jnp.result_type(float))
        return jax.nn.sigmoid(self.logit_overlap)

    def __call__(self, config: Config) -> Float[Array, "..."]:
        """Seconds per step at `config`."""
        overhead, compute, comm = self._by_role(config)
        if self.logit_overlap is None:  # no overlap: skip min(compute, comm) in sweeps
            return overhead + compute + comm
        return overhead + compute + comm - self.overlap * jnp.minimum(compute, comm)

    def breakdown(self, config: Config) -> dict[str, Float[Array, "..."]]:
        """Seconds per step of each term, plus ``"overlap"`` (≤ 0) when enabled.

        The values add up to `step_time`.
        """
        parts = {term.name: self.term_time(term, config) for term in self.terms}
        if self.logit_overlap is not None:
            _, compute, comm = self._by_role(config)
            parts["overlap"] = -self.overlap * jnp.minimum(compute, comm)
        return parts

    # Parameters by name ------------------------------------------------------------

    def parameter_specs(self) -> dict[str, ParamSpec]:
        """Every parameter as ``"term.param"`` (and ``"overlap"``) → its spec."""
        specs = {
            f"{term.name}.{name}": spec for term in self.terms for name, spec in term.params.items()
        }
        if self.logit_overlap is not None:
            specs["overlap"] = OVERLAP
        return specs

    def parameters(self) -> dict[str, Float[Array, ""]]:
        """Physical values of every parameter, keyed as in `parameter_specs`."""
        values = {
            f"{term.name}.{name}": term.value(name) for term in self.terms for name in term.params
        }
        if self.logit_overlap is not None:
            values["overlap"] = self.overlap
        return values

    def leaf_getter(self, name: str):
        """A function returning the stored (unconstrained) leaf of parameter `name`, for
        `eqx.tree_at`; a KeyError lists the valid names."""
        if name == "overlap" and self.logit_overlap is not None:
            return lambda m: m.logit_overlap
        term_name, _, param = name.partition(".")
        for i, term in enumerate(self.terms):
            if term.name == term_name and param in term.params:
                field = term.params[param].field
                return lambda m, i=i, field=field: getattr(m.terms[i], field)
        valid = ", ".join(self.parameter_specs())
        raise KeyError(f"no parameter {name!r} in this model; valid: {valid}")
