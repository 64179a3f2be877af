"""`Blend`: the default's curve, a weighted geometric mean of fitted families.

``log û(N) = Σ_f w_f(N) · log u_f(N)``,  ``w_f(N) = (1 − t)·NEAR[regime][f] + t·FAR[regime][f]``,

with ``t = clip((d − FAR_FROM)/(FAR_TO − FAR_FROM), 0, 1)`` and d = log2(N / largest
measured count): the NEAR weights up to one doubling past the largest measured count
(inside the measured range too), the FAR weights from two doublings on, linear in d
between, so the curve is continuous in N.

An *anchored* blend (issue #9: never worse on the data it was given) hands its measured
range over to one family fitted to every measurement with equal weights, the anchor:
``w_f(N) = a·[f is the anchor] + (1 − a)·((1 − t)·NEAR + t·FAR)`` with
``a = clip(log2(largest/N)/ANCHOR_SPAN, 0, 1)`` (`_closed.anchor_share`), 1 from half the
largest measured count down and 0 from the largest up, so that the curve past the
measurements, and every extrapolation, is the blend's alone. `perfmodel._fitting.blend`
anchors a blend whose members, weighted towards the largest counts, miss the smaller
ones.

Past the largest measured count the curve's efficiency does not rise above its own
there, nor above its own at a smaller count on a ramp of the weights
(`_closed.held_efficiency`): ``û(N) ≥ û(M)·M/N`` for the hold points M < N
(`_closed.hold_points`).

After a *sustained slowdown* (the measurements slower per unit of work at each of their
last two steps, `_closed.sustained_slowdown`) the curve past the largest measured count
is not faster than there either: ``û(N) ≥ û(largest)`` (`_closed.slowdown_hold`).

Past an *unmeasured node* (the data state a node of G GPUs and every measured count fits
in it: nothing measured shows the network between nodes) the weights move on to
PAST_NODE, the straddling regime's FAR (the power law fitted in log-log), as
``w_f(N) ← (1 − c)·w_f(N) + c·PAST_NODE[f]`` with ``c = clip(log2(N/G), 0, 1)``
(`_closed.past_node`). The regimes and the weights are those of
`docs/design/extrapolation.md` §4 (chosen on published series by
`benchmarks/extrapolation_research/learn_weights.py`); `perfmodel._fitting.blend`
fits the members.
"""

import dataclasses
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Bool, Float
import numpy as np

from . import _closed
from ._closed import anchor_names as anchor_names
from ._closed import FAR as FAR
from ._closed import member_names as member_names
from ._closed import MEMBERS as MEMBERS
from ._closed import NEAR as NEAR
from ._closed import PAST_NODE as PAST_NODE
from ._closed import REGIMES as REGIMES
from ._closed import STRADDLING_ANCHORS as STRADDLING_ANCHORS
from ._closed import STRADDLING_MEMBERS as STRADDLING_MEMBERS
from ._config import Config
from ._model import AbstractScalingModel, ScalingModel
from ._terms import AbstractCostTerm, ComputeTerm, ParamSpec, Role


class ScalingLoss(AbstractCostTerm):
    """The name and role of a blend's ``scaling_loss`` part (`Blend.breakdown`): what its
    power laws ``c·N^e`` lose to perfect scaling, ``c·N^e − c/N`` seconds per unit of
    work, an overhead not split into physical terms. A label: it has no parameters and is
    never evaluated on its own (0 s)."""

    name: str = eqx.field(static=True, default=_closed.SCALING_LOSS)
    role: ClassVar[Role] = "overhead"
    params: ClassVar[dict[str, ParamSpec]] = {}

    def __call__(self, config: Config) -> Float[Array, "..."]:
        return jnp.zeros_like(config.gpus)


def shared_parameters(model, name: str) -> list[str]:
    """The member parameters of a `Blend` that `name` stands for, ``compute.time`` →
    ``amdahl.compute.time``, ``usl.compute.time``, … (one change to them all in `whatif`
    and `explain`); [] for a name no member has, or a model that is not a blend."""
    if not isinstance(model, Blend):
        return []
    return [s for s in model.parameter_specs() if s.partition(".")[2] == name]


def carrying(model, names):
    """`model` ready to change the parameters `names` as a what-if: a `Blend` carries
    each changed member's change past the measurements (`Blend.carrying`); any other
    model is returned as it is."""
    return model.carrying(names) if isinstance(model, Blend) else model


def _described(member: str, spec: ParamSpec, weighted: bool = True) -> ParamSpec:
    if not weighted:  # fitted for the intervals' spread D (`Blend.spread`) alone
        spec = _described(member, spec)
        return dataclasses.replace(
            spec,
            description=f"{spec.description} (weight 0 here: it only widens the intervals)",
        )
    if member.endswith("_flat") and not member.startswith("power_law"):
        return dataclasses.replace(
            spec, description=f"{spec.description}; fitted with equal weights (the anchor)"
        )
    if not member.startswith("power_law"):
        return spec
    weights = "equal weights" if member == "power_law_flat" else "weights (N/N_max)²"
    return dataclasses.replace(spec, description=f"c of the power law c·N^e, fitted with {weights}")


class Blend(AbstractScalingModel):
    """The default's curve (module docstring): fitted members mixed in log space with
    weights that move from NEAR to FAR past the largest measured count.

    Each member is a `ScalingModel` of seconds per unit of work; the blend's parameters
    are theirs, named ``"<member>.<term>.<param>"`` (``"amdahl.serial.time"``).

    Fields:
        members: the fitted families (`member_names(regime)` order).
        names: their names (``power_law_flat`` is the power law fitted with equal
            weights).
        near, far: each member's weight up to one doubling past `largest` and from two
            doublings on (each sums to 1).
        largest: the largest measured GPU count (an array leaf, so that fits of other
            series share compiled code).
        regime: ``"weak"``, ``"strong"`` or ``"straddling"``.
        anchor: the name of the member the measured range is handed over to (module
            docstring), or ``""`` for none; a member other than the regime's own
            (`member_names`) has NEAR and FAR weights 0 and is left out of `spread`.
        node: G, a stated node size that no measurement reaches beyond (module
            docstring; `_closed.unmeasured_node`), or 0 for none.
        slowdown: whether the measurements slow down over their last two steps
            (`_closed.sustained_slowdown`): past `largest` the curve is then not faster
            than there (module docstring).
        baseline: after a what-if (`carrying`), each changed member as it was fitted
            (None for the others); () for a fitted blend.
    """

    members: tuple[ScalingModel, ...]
    names: tuple[str, ...] = eqx.field(static=True)
    near: tuple[float, ...] = eqx.field(static=True)
    far: tuple[float, ...] = eqx.field(static=True)
    largest: Float[ArrayLike, ""] = eqx.field(converter=np.asarray)
    regime: str = eqx.field(static=True)
    anchor: str = eqx.field(static=True, default="")
    node: float = eqx.field(static=True, default=0.0)
    slowdown: bool = eqx.field(static=True, default=False)
    family: str = eqx.field(static=True, default="blend")
    baseline: tuple[ScalingModel | None, ...] = ()

    def __check_init__(self):
        if not len(self.members) == len(self.names) == len(self.near) == len(self.far):
            raise ValueError("a blend needs one name and two weights per member")
        if self.baseline and len(self.baseline) != len(self.members):
            raise ValueError("a blend's baseline has one entry (a member or None) per member")
        if self.anchor and self.anchor not in self.names:
            raise ValueError(f"a blend's anchor must be one of its members, got {self.anchor!r}")
        if self.node and not set(PAST_NODE) <= set(self.names):
            raise ValueError("a blend past an unmeasured node needs the PAST_NODE members")

    @property
    def options(self) -> tuple[tuple[str, object], ...]:
        """``regime``, ``largest``, the two power laws' exponents, and the ``anchor``
        and the unmeasured ``node`` when there are (`blend` preset; outside `jit`)."""
        exponent = {
            n: float(m.terms[0].exponent)
            for n, m in zip(self.names, self.members)
            if n.startswith("power_law")
        }
        options = (
            ("regime", self.regime),
            ("largest", float(self.largest)),
            ("power_exponent", exponent["power_law"]),
            ("flat_exponent", exponent["power_law_flat"]),
        )
        if self.anchor:
            options = (*options, ("anchor", self.anchor))
        if self.node:
            options = (*options, ("node", float(self.node)))
        if self.slowdown:
            options = (*options, ("slowdown", True))
        carried = self.carried_values()
        return (*options, ("carried", carried)) if carried else options

    def carried_values(self) -> dict[str, float]:
        """The fitted values of the parameters a what-if changed (`carrying`),
        ``"<member>.<term>.<param>"`` → physical value; {} for a fitted blend."""
        found = {}
        with jax.enable_x64(True):  # float32 rounding lost a change of 1e-8 (review)
            for name, before, member in zip(self.names, self.baseline, self.members):
                if before is None:
                    continue
                now = member.parameters()
                for key, value in before.parameters().items():
                    if float(value) != float(now[key]):
                        found[f"{name}.{key}"] = float(value)
        return found

    def carrying(self, names) -> "Blend":
        """This blend, ready to change the parameters `names` (``"<member>.<term>.<param>"``)
        as a what-if: their members as they are now become the `baseline`, and the curve
        takes on each changed member's change of log time with the weight of
        `_closed.carried_shares` (its weight at N, and past the largest measured count
        not less than its weight there) instead of its weight at N alone. Up to the
        largest measured count nothing differs; past it a change reaches the counts
        where the weights have moved on to members without the parameter (the power
        laws) as it reached the curve next to the measurements.

        Example:
            >>> faster = fit.model.carrying(["amdahl.serial.time"]).with_parameters(
            ...     {"amdahl.serial.time": 1e-5})  # doctest: +SKIP
        """
        touched = {str(name).partition(".")[0] for name in names}
        baseline = list(self.baseline or (None,) * len(self.members))
        for i, name in enumerate(self.names):
            if name in touched and baseline[i] is None:
                baseline[i] = self.members[i]
        if not any(b is not None for b in baseline):
            return self
        return dataclasses.replace(self, baseline=tuple(baseline))

    def far_share(self, gpus: Float[Array, "..."]) -> Float[Array, "..."]:
        """t(N) = clip((log2(N/largest) − FAR_FROM)/(FAR_TO − FAR_FROM), 0, 1)."""
        return _closed.far_share(jnp, gpus, self.largest)

    def anchor_share(self, gpus: Float[Array, "..."]) -> Float[Array, "..."]:
        """a(N) (`_closed.anchor_share`); 0 at every count when there is no anchor."""
        if not self.anchor:
            return 0.0 * self.far_share(gpus)
        return _closed.anchor_share(jnp, gpus, self.largest)

    def _weight_list(self, gpus) -> list[tuple[int, Float[Array, "..."]]]:
        """``(i, w_i(N))`` of every member with a weight somewhere (module docstring)."""
        t = self.far_share(gpus)
        a = self.anchor_share(gpus) if self.anchor else 0.0  # a Python 0: no extra op
        inside = [float(name == self.anchor) for name in self.names]
        found = [
            (i, _closed.member_weight(a, t, inside[i], self.near[i], self.far[i]))
            for i in self._active()
        ]
        if not self.node:
            return found
        c = _closed.past_node(jnp, gpus, self.node)
        return [(i, _closed.node_weight(c, w, PAST_NODE.get(self.names[i], 0.0))) for i, w in found]

    def weights(self, config: Config) -> dict[str, Float[Array, "..."]]:
        """Each member's weight at `config` (they sum to 1 at every count)."""
        found = dict(self._weight_list(config.gpus))
        zero = 0.0 * self.far_share(config.gpus)
        return {n: found.get(i, zero) for i, n in enumerate(self.names)}

    def reaching_weights(self, config: Config) -> dict[str, Float[Array, "..."]]:
        """Each member's share of the time at `config`: its weight at N, or, where the
        held efficiency binds (`__call__`), its weight at the hold point whose time the
        hold carries on. A member of weight 0 at N moved the time there (+55% from its
        serial time ×1000) while `whatif` said it could not (review)."""
        chosen = self.weights(config)
        held = self._mixed(config)
        for count, there in self._hold_configs(config):
            candidate = self._mixed(there) * count / config.gpus
            binds = (config.gpus > count) & (candidate > held)
            weights = self.weights(there)
            chosen = {n: jnp.where(binds, weights[n], w) for n, w in chosen.items()}
            held = jnp.where(binds, candidate, held)
        if self.slowdown:  # past a sustained slowdown: the curve at the largest count
            at_largest = self.at_largest(config)
            candidate = self._mixed(at_largest)
            binds = (config.gpus > self.largest) & (candidate > held)
            weights = self.weights(at_largest)
            chosen = {n: jnp.where(binds, weights[n], w) for n, w in chosen.items()}
            held = jnp.where(binds, candidate, held)
        floor = self.serial_binds(config, held)  # Amdahl's serial part alone
        return {n: jnp.where(floor, float(n == "amdahl"), w) for n, w in chosen.items()}

    def carried_weights(self, config: Config) -> dict[str, Float[Array, "..."]]:
        """Each member's share of a what-if's change at `config` (`carrying`): its
        `reaching_weights`, and past the largest measured count not less than its
        weight there (`_closed.carried_shares`)."""
        here = self.reaching_weights(config)
        there = self.weights(self.at_largest(config))
        past = config.gpus > self.largest
        return {n: jnp.where(past, jnp.maximum(w, there[n]), w) for n, w in here.items()}

    def _stacked_holds(self, config: Config) -> tuple:
        """The hold points stacked on a new first axis (shaped to broadcast against the
        counts of `config`) and `config` at them, every field on that axis."""
        largest = jnp.asarray(self.largest, dtype=jnp.result_type(config.gpus))
        counts = largest * np.asarray(_closed.hold_points(1.0))  # largest is an array leaf
        if self.node:
            counts = jnp.concatenate(
                [
                    counts,
                    np.asarray(_closed.hold_points(1.0, self.node)[-(_closed.HOLD_STEPS + 1) :]),
                ]
            )
        shape = jnp.shape(config.gpus)
        points = counts
        counts = counts.reshape((len(points),) + (1,) * len(shape))
        stacked = jax.tree_util.tree_map(
            lambda x: jnp.broadcast_to(x, (len(points), *jnp.shape(x))) if jnp.ndim(x) else x,
            config,
        )
        at = jnp.broadcast_to(counts, (len(points), *shape))
        return counts, eqx.tree_at(lambda c: c.gpus, stacked, at)

    def _hold_configs(self, config: Config) -> list:
        """``(M, config at M GPUs)`` for every hold point M (`_closed.hold_points`), one
        configuration each, shaped as `config` (`reaching_weights`, which picks the
        binding point's weights; `__call__` evaluates the points stacked,
        `_stacked_holds`)."""
        largest = jnp.asarray(self.largest, dtype=jnp.result_type(config.gpus))
        found = []
        for count in _closed.hold_points(largest, self.node):
            at = jnp.broadcast_to(jnp.asarray(count, largest.dtype), jnp.shape(config.gpus))
            found.append((count, eqx.tree_at(lambda c: c.gpus, config, at)))
        return found

    def without_anchor(self) -> "Blend":
        """The same blend with no anchor (the curve past the measurements, everywhere)."""
        if not self.anchor:
            return self
        keep = [i for i, n in enumerate(self.names) if n in member_names(self.regime)]
        return Blend(
            members=tuple(self.members[i] for i in keep),
            names=tuple(self.names[i] for i in keep),
            near=tuple(self.near[i] for i in keep),
            far=tuple(self.far[i] for i in keep),
            largest=self.largest,
            regime=self.regime,
            node=self.node,
            slowdown=self.slowdown,
            baseline=tuple(self.baseline[i] for i in keep) if self.baseline else (),
        )

    def member_logs(self, config: Config) -> Float[Array, "members ..."]:
        """log u of every member at `config`, stacked along the first axis."""
        return jnp.stack([jnp.log(m(config)) for m in self.members])

    def spread(self, config: Config) -> Float[Array, "..."]:
        """D: max − min over every member of the regime (`member_names`, not an extra
        anchor) of its log u (how far they disagree)."""
        own = member_names(self.regime)
        logs = jnp.stack([jnp.log(m(config)) for n, m in zip(self.names, self.members) if n in own])
        return jnp.max(logs, axis=0) - jnp.min(logs, axis=0)

    def _active(self) -> list[int]:
        return [
            i
            for i, (a, b) in enumerate(zip(self.near, self.far))
            if a > 0
            or b > 0
            or self.names[i] == self.anchor
            or (self.node and self.names[i] in PAST_NODE)
        ]

    @eqx.filter_jit  # one compiled evaluation instead of ~100 eager ops, each compiled
    def _mixed(self, config: Config) -> Float[Array, "..."]:
        """``exp(Σ_f w_f(N)·log u_f(N))``; after a what-if (`carrying`), past the largest
        measured count the changed members' carried share beyond their weight at N moves
        the curve's overhead (`_closed.carried_overhead`)."""
        found = self._weight_list(config.gpus)
        mixed = jnp.exp(sum(w * jnp.log(self.members[i](config)) for i, w in found))
        changed = [i for i, _ in found if self.baseline and self.baseline[i] is not None]
        if not changed:
            return mixed
        here = dict(found)
        there = dict(self._weight_list(self.at_largest(config).gpus))
        shares = _closed.carried_shares(
            jnp, config.gpus, self.largest, [here[i] for i in changed], [there[i] for i in changed]
        )
        one = eqx.tree_at(lambda c: c.gpus, config, jnp.ones_like(config.gpus))
        pairs = [
            [(m(config), m(one)) for m in (self.baseline[i], self.members[i])] for i in changed
        ]
        fitted = [b if b is not None else m for b, m in zip(self.baseline, self.members)]

        def fitted_at(c):  # the curve as fitted (`_mixed` of the fit), at c
            return jnp.exp(sum(w * jnp.log(fitted[i](c)) for i, w in self._weight_list(c.gpus)))

        return _closed.carried_overhead(
            jnp,
            config.gpus,
            mixed,
            fitted_at(config),
            fitted_at(one),
            [share - here[i] for share, i in zip(shares, changed)],
            [before for before, _ in pairs],
            [after for _, after in pairs],
        )

    @eqx.filter_jit  # compiled once per blend and shape: eager ops took 4 s per fit
    def __call__(self, config: Config) -> Float[Array, "..."]:
        """Seconds per unit of work at `config`: ``exp(Σ_f w_f(N)·log u_f(N))``, its
        efficiency held past the measurements: not above its own at the largest measured
        count, nor at a smaller count on a ramp of the weights (the closed form of
        `_closed.held_efficiency`, over the stacked hold points in one evaluation)."""
        counts, there = self._stacked_holds(config)
        n = jnp.broadcast_to(config.gpus, there.gpus.shape)
        floor = jnp.where(n > counts, self._mixed(there) * counts / n, 0.0)
        held = jnp.maximum(self._mixed(config), jnp.max(floor, axis=0))
        if self.slowdown:
            there = self._mixed(self.at_largest(config))  # no hold point lies below it
            held = _closed.slowdown_hold(jnp, config.gpus, held, self.largest, there)
        serial = self.serial(config)
        if serial is None:
            return held
        return _closed.serial_floor(jnp, config.gpus, held, self.largest, serial)

    def at_largest(self, config: Config) -> Config:
        """`config` with every count at the largest measured one."""
        largest = jnp.asarray(self.largest, dtype=jnp.result_type(config.gpus))
        at = jnp.broadcast_to(largest, jnp.shape(config.gpus))
        return eqx.tree_at(lambda c: c.gpus, config, at)

    def slowdown_binds(self, config: Config, total) -> Bool[Array, "..."] | bool:
        """Where the hold past a sustained slowdown carries the time at `config` (`total`
        the curve's time there): past the largest measured count, where the curve there
        is not below `total`; False without a slowdown."""
        if not self.slowdown:
            return False
        there = self._mixed(self.at_largest(config))
        return (config.gpus > self.largest) & (there >= total * (1.0 - 1e-12))

    def serial(self, config: Config) -> Float[Array, "..."] | None:
        """Under stated strong scaling, the serial part of the Amdahl member (seconds per
        unit of work) that the curve does not fall below past the measurements
        (`_closed.serial_floor`); None in the other regimes."""
        if self.regime != "strong":
            return None
        amdahl = self.members[self.names.index("amdahl")]
        return amdahl.breakdown(config)["serial"]

    def serial_binds(self, config: Config, held) -> Bool[Array, "..."] | bool:
        """Where the serial floor carries the time at `config`, given `held` there (the
        curve with its efficiency held, or with the floor too): past the largest measured
        count, strong regime only."""
        serial = self.serial(config)
        if serial is None:
            return False
        return (config.gpus > self.largest) & (serial >= held)

    @property
    def terms(self) -> tuple[AbstractCostTerm, ...]:
        """One term per name among the weighted members (the first member's), for the
        names and roles of `breakdown`."""
        found = {}
        for i in self._active():
            if self.names[i].startswith("power_law"):  # `_member_parts`
                found.setdefault("compute", ComputeTerm())
                found.setdefault(_closed.SCALING_LOSS, ScalingLoss())
                continue
            for term in self.members[i].terms:
                found.setdefault(term.name, term)
        return tuple(found.values())

    def _member_parts(self, i: int, config: Config) -> dict[str, Float[Array, "..."]]:
        """Member i's breakdown; a power law's as perfect scaling and its loss to it
        (`_closed.power_parts`), so that the blend's parts keep physical names."""
        member = self.members[i]
        if not self.names[i].startswith("power_law"):
            return member.breakdown(config)
        time = member.parameters()["power.time"]
        return _closed.power_parts(member(config), time, config.gpus)

    def _shares(self, config: Config, total) -> dict[str, Float[Array, "..."]]:
        """Every member's term shares ``term_f/u_f`` at `config`, weighted by its weight
        there and scaled to `total`."""
        parts = {}
        for i, weight in self._weight_list(config.gpus):
            u = self.members[i](config)
            for name, seconds in self._member_parts(i, config).items():
                share = weight * seconds / u * total
                parts[name] = parts[name] + share if name in parts else share
        return parts

    def breakdown(self, config: Config) -> dict[str, Float[Array, "..."]]:
        """Seconds of each term name: every member's term shares ``term_f/u_f``, weighted
        by ``w_f(N)`` and scaled to the blend's time, so they add up to it.

        A term is the same physics in every member that has it (``serial`` is Amdahl's
        and the USL's serial part), so its share is the weighted mean of its shares. A
        power law ``c·N^e`` has no physical terms: its ``compute`` is c/N, perfect scaling
        from its one-GPU time, and its ``scaling_loss`` the rest (`ScalingLoss`).
        """
        total = self(config)
        parts = self._shares(config, total)
        if self.slowdown:  # where the hold carries the time: the parts at the largest count
            binds = self.slowdown_binds(config, total)
            there = self._shares(self.at_largest(config), total)
            zero = jnp.zeros_like(total)
            parts = {
                n: jnp.where(binds, there.get(n, zero), parts.get(n, zero))
                for n in dict.fromkeys([*parts, *there])
            }
        floor = self.serial_binds(config, total)
        if floor is False:
            return parts
        # Where the serial floor carries the time, it is Amdahl's serial part alone.
        zero = jnp.zeros_like(total)
        names = dict.fromkeys([*parts, "serial"])
        return {
            n: jnp.where(floor, total if n == "serial" else zero, parts.get(n, zero)) for n in names
        }

    # Parameters by name ------------------------------------------------------------

    def parameter_specs(self) -> dict[str, ParamSpec]:
        """Every member's parameters as ``"<member>.<term>.<param>"`` → its spec (the
        power laws' coefficients described as such, not as a PMNF term's; a member
        with weight 0 everywhere said to be one)."""
        active = {self.names[i] for i in self._active()}
        return {
            f"{n}.{k}": _described(n, spec, n in active)
            for n, m in zip(self.names, self.members)
            for k, spec in m.parameter_specs().items()
        }

    def parameters(self) -> dict[str, Float[Array, ""]]:
        """Physical values of every member's parameters, keyed as in `parameter_specs`."""
        return {
            f"{n}.{k}": v
            for n, m in zip(self.names, self.members)
            for k, v in m.parameters().items()
        }

    def leaf_getter(self, name: str):
        """The stored leaf of ``"<member>.<term>.<param>"``; a KeyError lists the names."""
        member, _, rest = name.partition(".")
        if member in self.names:
            i = self.names.index(member)
            try:
                inner = self.members[i].leaf_getter(rest)
            except KeyError:
                pass
            else:
                return lambda b, i=i, inner=inner: inner(b.members[i])
        valid = ", ".join(self.parameter_specs())
        raise KeyError(f"no parameter {name!r} in this model; valid: {valid}")
