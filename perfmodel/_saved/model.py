"""The single-curve families and the default's blend, evaluated in NumPy from the values
of a fit file, through the closed forms the Equinox terms use (`perfmodel._closed`).

`xp` is `perfmodel._saved.dual`: given plain arrays it is NumPy, given `Dual` numbers
it carries derivatives (in N for marginal speedups; in the stored parameters for the
Laplace members' linearisation). A family is a tuple of `Term`; `seconds` sums them by
role as `ScalingModel` does (overhead + compute + communication, no overlap).
"""

from collections.abc import Callable
import dataclasses

from .. import _closed
from . import dual as xp


@dataclasses.dataclass(frozen=True)
class Term:
    """One cost term: its name (the prefix of its parameters), role and closed form
    ``formula(values, n, config)`` where `values` maps the term's parameter names."""

    name: str
    role: str
    params: tuple[str, ...]
    formula: Callable


def _serial(name="serial"):
    return Term(name, "overhead", ("time",), lambda v, n, c: _closed.serial(xp, v["time"], n))


def _compute(weak: bool):
    return Term(
        "compute",
        "compute",
        ("time",),
        lambda v, n, c: _closed.compute(xp, v["time"], n, weak),
    )


def _coherency():
    return Term(
        "coherency", "overhead", ("time",), lambda v, n, c: _closed.coherency(xp, v["time"], n)
    )


def _weak_allreduce(algorithm: str):
    def formula(v, n, c):
        return _closed.weak_allreduce(xp, v["latency"], v["transfer"], n, algorithm)

    return Term("allreduce", "communication", ("latency", "transfer"), formula)


def _weak_hierarchical():
    def formula(v, n, c):
        return _closed.weak_hierarchical_allreduce(
            xp, v["transfer_intra"], v["transfer_inter"], n, c["gpus_per_node"]
        )

    return Term("allreduce", "communication", ("transfer_intra", "transfer_inter"), formula)


def _power(exponent: float):
    def formula(v, n, c):
        return _closed.power_log(xp, v["time"], exponent, 0.0, n)

    return Term("power", "compute", ("time",), formula)


def _check(options: dict, allowed: dict) -> dict:
    """`options` with the defaults of `allowed`; KeyError for any other option."""
    unknown = set(options) - set(allowed)
    if unknown:
        raise KeyError(f"options {sorted(unknown)}")
    return {**allowed, **options}


def _amdahl(options):
    o = _check(options, {"weak": False})
    return (_serial(), _compute(bool(o["weak"])))


def _usl(options):
    o = _check(options, {"weak": False})
    return (_serial(), _compute(bool(o["weak"])), _coherency())


def _weak_data_parallel(options):
    o = _check(options, {"algorithm": "ring", "weak": True})
    if o["algorithm"] not in ("ring", "tree") or o["weak"] is not True:
        raise KeyError("options")
    return (_compute(False), _weak_allreduce(o["algorithm"]))


def _weak_hier(options):
    o = _check(options, {"weak": True})
    if o["weak"] is not True:
        raise KeyError("options")
    return (_compute(False), _weak_hierarchical())


def _power_law(options):
    o = _check(options, {"exponent": -1.0})
    return (_power(float(o["exponent"])),)


# The families evaluated without JAX: name → terms from the preset's options (as the
# presets of `perfmodel._presets` build them; a test checks they agree).
FAMILIES = {
    "amdahl": _amdahl,
    "usl": _usl,
    "weak_data_parallel": _weak_data_parallel,
    "weak_hierarchical": _weak_hier,
    "power_law": _power_law,
}


def _pmnf(options):
    """PMNF at given exponents ``c0 + c·N^i·log2(N)^j`` (the fit passes the searched
    ones as options)."""
    o = _check(options, {"exponent": -1.0, "log_exponent": 0})
    exponent, log_exponent = float(o["exponent"]), int(o["log_exponent"])

    def formula(v, n, c):
        return _closed.power_log(xp, v["time"], exponent, log_exponent, n)

    return (_serial("constant"), Term("scaling", "compute", ("time",), formula))


# What a fit also evaluates in NumPy (`perfmodel._fitting.twin`), beyond the fit files.
FIT_FAMILIES = {**FAMILIES, "pmnf": _pmnf}
# What each family requires of the config (`AbstractCostTerm.requires`).
REQUIRES = {"weak_hierarchical": ("gpus_per_node",)}


@dataclasses.dataclass(frozen=True)
class Family:
    """A `ScalingModel` of `terms` with parameter values `values` (``"term.param"``)."""

    family: str
    terms: tuple[Term, ...]
    values: dict

    def term_seconds(self, n, config, values=None) -> dict:
        """Seconds of each term (`values`: other parameter values, e.g. duals)."""
        values = self.values if values is None else values
        return {
            t.name: t.formula({p: values[f"{t.name}.{p}"] for p in t.params}, n, config)
            for t in self.terms
        }

    def seconds(self, n, config, values=None):
        """Seconds per step (or unit of work): overhead + compute + communication."""
        parts = self.term_seconds(n, config, values)
        zero = 0.0 * xp.ones_like(n)
        sums = {"overhead": zero, "compute": zero, "communication": zero}
        for term in self.terms:
            sums[term.role] = sums[term.role] + parts[term.name]
        return sums["overhead"] + sums["compute"] + sums["communication"]

    def roles(self) -> dict:
        return {t.name: t.role for t in self.terms}


def family(name: str, options: dict, values: dict, families: dict = FAMILIES) -> Family:
    """The family `name` of `families` with the preset `options` and parameter `values`
    (KeyError for another name, option or parameter set)."""
    terms = families[name](dict(options))
    names = {f"{t.name}.{p}" for t in terms for p in t.params}
    if names != set(values):
        raise KeyError("parameters")
    return Family(name, terms, dict(values))


@dataclasses.dataclass(frozen=True)
class Blend:
    """The default's blend (`perfmodel._blend.Blend`): members mixed in log space, with
    its measured range handed over to the member `anchor` when there is one."""

    members: tuple[Family, ...]
    names: tuple[str, ...]
    near: tuple[float, ...]
    far: tuple[float, ...]
    largest: float
    regime: str
    anchor: str = ""
    node: float = 0.0  # an unmeasured node's size G (`_closed.PAST_NODE`), or 0
    slowdown: bool = False  # past a sustained slowdown (`_closed.slowdown_hold`)
    baseline: tuple = ()  # after a what-if: changed members as fitted, None for others

    def active(self) -> list[int]:
        return [
            i
            for i, (a, b) in enumerate(zip(self.near, self.far))
            if a > 0
            or b > 0
            or self.names[i] == self.anchor
            or (self.node and self.names[i] in _closed.PAST_NODE)
        ]

    def weights(self, n) -> list:
        """``(i, w_i(N))`` of every weighted member (`_closed.member_weight`, then
        `_closed.node_weight` past an unmeasured node)."""
        t = _closed.far_share(xp, n, self.largest)
        a = _closed.anchor_share(xp, n, self.largest) if self.anchor else 0.0
        anchor = [float(name == self.anchor) for name in self.names]
        found = [
            (i, _closed.member_weight(a, t, anchor[i], self.near[i], self.far[i]))
            for i in self.active()
        ]
        if not self.node:
            return found
        c = _closed.past_node(xp, n, self.node)
        return [
            (i, _closed.node_weight(c, w, _closed.PAST_NODE.get(self.names[i], 0.0)))
            for i, w in found
        ]

    def without_anchor(self) -> "Blend":
        """The same blend with no anchor (its curve past the measurements, everywhere)."""
        if not self.anchor:
            return self
        own = _closed.member_names(self.regime)
        keep = [i for i, n in enumerate(self.names) if n in own]
        pick = lambda values: tuple(values[i] for i in keep)  # noqa: E731
        return Blend(
            pick(self.members),
            pick(self.names),
            pick(self.near),
            pick(self.far),
            self.largest,
            self.regime,
            node=self.node,
            slowdown=self.slowdown,
            baseline=pick(self.baseline) if self.baseline else (),
        )

    def _mixed(self, n, config):
        found = self.weights(n)
        mixed = xp.exp(sum(w * xp.log(self.members[i].seconds(n, config)) for i, w in found))
        changed = [i for i, _ in found if self.baseline and self.baseline[i] is not None]
        if not changed:
            return mixed
        # After a what-if, as `perfmodel._blend.Blend._mixed`: past the largest measured
        # count the changed members' carried share moves the curve's overhead.
        here, there = dict(found), dict(self.weights(xp.ones_like(n) * self.largest))
        shares = _closed.carried_shares(
            xp, n, self.largest, [here[i] for i in changed], [there[i] for i in changed]
        )
        one = xp.ones_like(n)
        pairs = [
            [
                (m.seconds(n, config), m.seconds(one, config))
                for m in (self.baseline[i], self.members[i])
            ]
            for i in changed
        ]
        fitted = [b if b is not None else m for b, m in zip(self.baseline, self.members)]

        def fitted_at(at):  # the curve as fitted, at the counts `at`
            return xp.exp(
                sum(w * xp.log(fitted[i].seconds(at, config)) for i, w in self.weights(at))
            )

        return _closed.carried_overhead(
            xp,
            n,
            mixed,
            fitted_at(n),
            fitted_at(one),
            [share - here[i] for share, i in zip(shares, changed)],
            [before for before, _ in pairs],
            [after for _, after in pairs],
        )

    def seconds(self, n, config):
        """``exp(Σ_f w_f(N)·log u_f(N))`` over the weighted members, its efficiency held
        past the measurements (`_closed.held_efficiency`, as `Blend`)."""
        held = [  # constants, whatever n carries
            (count, self._mixed(xp.ones_like(n) * count, config))
            for count in _closed.hold_points(float(self.largest), self.node)
        ]
        u = _closed.held_efficiency(xp, n, self._mixed(n, config), held)
        if self.slowdown:  # held[0] is the largest measured count's, which nothing lifts
            u = _closed.slowdown_hold(xp, n, u, self.largest, held[0][1])
        serial = self.serial(n, config)
        return u if serial is None else _closed.serial_floor(xp, n, u, self.largest, serial)

    def serial(self, n, config):
        """Under stated strong scaling, the Amdahl member's serial part, the floor of the
        curve past the measurements (`_closed.serial_floor`, as `Blend`); else None."""
        if self.regime != "strong":
            return None
        return self.members[self.names.index("amdahl")].term_seconds(n, config)["serial"]

    def spread(self, n, config):
        """D: max − min over every member of the regime (not an extra anchor) of its log u."""
        logs = [xp.log(m.seconds(n, config)) for m in self.without_anchor().members]
        return xp.amax(logs) - xp.amin(logs)

    def _shares(self, n, config, total) -> dict:
        """Every member's term shares at `n`, weighted there and scaled to `total`."""
        parts = {}
        for i, weight in self.weights(n):
            member = self.members[i]
            u = member.seconds(n, config)
            if self.names[i].startswith("power_law"):  # as `perfmodel._blend.Blend`
                own = _closed.power_parts(u, member.values["power.time"], n)
            else:
                own = member.term_seconds(n, config)
            for name, seconds in own.items():
                share = weight * seconds / u * total
                parts[name] = parts[name] + share if name in parts else share
        return parts

    def breakdown(self, n, config) -> dict:
        """Seconds of each term name, as `Blend.breakdown` shares them out."""
        total = self.seconds(n, config)
        parts = self._shares(n, config, total)
        if self.slowdown:  # where the hold carries the time: the parts at the largest count
            at = xp.ones_like(n) * self.largest
            binds = (n > self.largest) & (self._mixed(at, config) >= total * (1.0 - 1e-12))
            there = self._shares(at, config, total)
            zero = 0.0 * total
            parts = {
                k: xp.where(binds, there.get(k, zero), parts.get(k, zero))
                for k in dict.fromkeys([*parts, *there])
            }
        serial = self.serial(n, config)
        if serial is None:
            return parts
        # Where the serial floor carries the time, it is Amdahl's serial part alone.
        floor = (n > self.largest) & (serial >= total)
        zero = 0.0 * total
        names = dict.fromkeys([*parts, "serial"])
        return {
            k: xp.where(floor, total if k == "serial" else zero, parts.get(k, zero)) for k in names
        }

    def roles(self) -> dict:
        found = {}
        for i in self.active():
            if self.names[i].startswith("power_law"):
                found.setdefault("compute", "compute")
                found.setdefault(_closed.SCALING_LOSS, "overhead")
                continue
            for term in self.members[i].terms:
                found.setdefault(term.name, term.role)
        return found
