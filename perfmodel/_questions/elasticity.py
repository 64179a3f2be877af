"""Why a fit stops scaling: the time per term and what each parameter's change would buy.

The elasticity ``d log T / d log θ`` of the step time T(N) to a parameter θ is the
percentage change of T per percent change of θ; it comes from `jax.jacfwd` through the
model, with every parameter (the overlap fraction too) taken as ``log θ``. Because a 2×
change is not small, each parameter's "what would it buy" is also evaluated exactly by
re-evaluating the model with the changed value.
"""

import dataclasses
import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .. import _closed
from .._blend import carrying, shared_parameters
from .._errors import InputError
from .._fitting import FitResult, undetermined
from .._keywords import did_you_mean
from .._model import AbstractScalingModel
from .._terms import ParamSpec
from .._text import brief, counted, format_table, refit_command


def shared_factor(model: AbstractScalingModel, name: str) -> bool:
    """Whether `name` stands for several members' times or rates of a blend
    (`_blend.shared_parameters`: ``compute.time``), which `require` solves for as one
    factor on all of them, as `explain` and `whatif` change them together (review of
    2026-12-07: `require` refused the name `explain` had just printed)."""
    specs = model.parameter_specs()
    if name in specs:
        return False
    members = shared_parameters(model, name)
    return len(members) > 1 and all(specs[m].kind != "fraction" for m in members)


def parameter_spec(model: AbstractScalingModel, name: str) -> ParamSpec:
    """The spec of parameter `name`; an InputError listing the valid names otherwise."""
    specs = model.parameter_specs()
    members = shared_parameters(model, name)
    if name not in specs and len(members) > 1:
        # A fraction several members share has no one factor (its exposed share moves).
        raise InputError(
            f"{name!r} is a name several members of the {model.family} share "
            f"({', '.join(members)}): name one of them; `whatif --set {name}=x0.5` "
            "changes them together"
        )
    if name not in specs:
        # The shared names `explain` prints ("½ compute.time (every member's: …)") are
        # valid too, and listed (newcomer review of 2026-12-07).
        shared = sorted(
            {
                s.partition(".")[2]
                for s in specs
                if len(shared_parameters(model, s.partition(".")[2])) > 1
            }
        )
        valid = [*specs, *shared]
        also = f"; or one factor on every member's {', '.join(shared)}" if shared else ""
        raise InputError(
            f"no parameter {name!r} in model {model.family!r}{did_you_mean(name, valid)}; "
            f"valid: {', '.join(specs)}{also}"
        )
    return specs[name]


def check_gpus(gpus, what: str = "gpus") -> float:
    """`gpus` as a float ≥ 1; an InputError otherwise."""
    try:
        value = float(gpus)
    except (TypeError, ValueError):
        raise InputError(f"{what}: expected a GPU count ≥ 1, got {gpus!r}")
    if not math.isfinite(value) or value < 1:
        raise InputError(f"{what}: expected a GPU count ≥ 1, got {gpus!r}")
    return value


def format_seconds(t: float) -> str:
    """``0.42 s``, ``3.1 ms``, ``17 µs`` or ``5 ns`` (3 significant digits)."""
    if not math.isfinite(t):
        return f"{t} s"
    t = float(f"{t:.3g}")  # rounded first: 0.9996 s is "1 s", not "1e+03 ms"
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if abs(t) >= scale:
            return f"{t / scale:.3g} {unit}"
    return f"{t / 1e-9:.3g} ns"


def scenario(spec: ParamSpec, value: float, factor: float) -> tuple[str, float]:
    """The improvement tried for one parameter: a label and the new physical value.

    Rates (bandwidths, FLOP/s) are multiplied by `factor`, times and latencies divided by
    it, and for a fraction (the overlap) the part left exposed, ``1 − θ``, is divided.
    """
    label = f"{factor:g}×"
    if spec.kind == "bandwidth":
        return label, value * factor
    if spec.kind == "time":
        return ("½" if factor == 2 else f"1/{factor:g}×"), value / factor
    return f"exposed share ÷{factor:g}", 1.0 - (1.0 - value) / factor


@dataclasses.dataclass(frozen=True)
class Change:
    """A parameter change evaluated exactly (not linearised).

    Attributes:
        label: how the parameter changed, e.g. ``"2×"`` or ``"½"``.
        value: the new physical value.
        time_s: new seconds per step (per unit of work for throughput fits) at N, as
            measured (a step of N GPU batches for `Benchmarks.per_gpu` data).
        time_change: relative change of the step time, ``T'/T − 1`` (negative: faster).
        speedup, efficiency: of the changed model at N, relative to its own 1-GPU time.
    """

    label: str
    value: float
    time_s: float
    time_change: float
    speedup: float
    efficiency: float


@dataclasses.dataclass(frozen=True)
class ParameterSensitivity:
    """How the step time at N responds to one parameter.

    Attributes:
        name, value, unit, kind: the parameter and its physical value.
        fixed: True when the fit held it at a given value.
        elasticity: ``d log T(N) / d log θ`` (for the overlap fraction too).
        speedup_elasticity: ``d log S(N) / d log θ`` (the same for efficiency).
        change: the exact effect of `Change.label` applied to this parameter.
        undetermined: True when the data show no such term (`FitResult` warnings): its
            value is a placeholder and what its change buys says nothing.
        members: for one parameter of a blend's members changed together (`name` without
            its member, ``"compute.time"``), the members' full names; `value` is then
            the first one's.
    """

    name: str
    value: float
    unit: str
    kind: str
    fixed: bool
    elasticity: float
    speedup_elasticity: float
    change: Change
    undetermined: bool = False
    members: tuple[str, ...] = ()

    def __repr__(self) -> str:
        return (
            f"<ParameterSensitivity: {self.name} = {self.value:.4g} {self.unit}, "
            f"elasticity {self.elasticity:.3g}>"
        )


@dataclasses.dataclass(frozen=True)
class Sensitivity:
    """The step time at N, where it goes, and what each parameter would buy.

    Attributes:
        gpus: the GPU count N.
        target: ``"time"`` or ``"throughput"`` (then times are per unit of work).
        time_s, speedup, efficiency: the fitted model at N; seconds per step as measured
            (for steps of a fixed per-GPU batch, `Benchmarks.per_gpu`, N GPU batches).
        breakdown: seconds per term at N, alike (``"overlap"`` ≤ 0 when the model
            overlaps).
        limiting: the largest term that is not parallel compute, or None.
        parameters: one entry per parameter, largest ``|elasticity|`` first, the
            undetermined ones last.
        notes: what a term of the breakdown is when its name does not say it (the power
            laws of the default blend).
        groups: for a blend, each parameter name that several members have, changed in
            all of them at once (`ParameterSensitivity.members`), which the sentences give
            in place of the members' one by one (each member's copy is not a change a
            user can make alone). The power laws' ``power.time`` is its own group.
        weightless: for a blend, the members with no share of the time at `gpus`
            (`Blend.reaching_weights`: weight 0 there, and, where the held efficiency
            binds, at the largest measured count too): a change of their parameters
            cannot move the time there.
    """

    gpus: float
    target: str
    time_s: float
    speedup: float
    efficiency: float
    breakdown: dict[str, float]
    limiting: str | None
    parameters: tuple[ParameterSensitivity, ...]
    notes: tuple[str, ...] = ()
    groups: tuple[ParameterSensitivity, ...] = ()
    weightless: tuple[str, ...] = ()
    refit: str = "perfmodel fit CSV --model NAME"

    def ranked(self) -> list[ParameterSensitivity]:
        """The parameters as a user can change them, largest ``|elasticity|`` first and
        the undetermined last: a blend's parameters that several members have as their
        `groups` entry, the others as they are."""
        grouped = {m for g in self.groups for m in g.members}
        shown = [p for p in self.parameters if p.name not in grouped] + list(self.groups)
        return sorted(shown, key=lambda p: (p.undetermined, -abs(p.elasticity)))

    def sentences(self) -> list[str]:
        """One readable line per parameter, in `ranked` order; the parameters whose
        change moves nothing measurable share one line, and so do the undetermined ones."""
        shown = self.ranked()
        idle = [p for p in shown if idle_change(p)]
        open_ = [p.name for p in shown if p.undetermined]
        lines = [
            describe_change(p, self.time_s, self.speedup, self.target)
            for p in shown
            if not (idle_change(p) or p.undetermined)
        ]
        unreached = [p for p in idle if self._unreached(p)]
        idle = [p for p in idle if p not in unreached]
        if len(idle) == 1:
            lines.append(describe_change(idle[0], self.time_s, self.speedup, self.target))
        elif idle:
            names = ", ".join(f"{p.change.label} {p.name}" for p in idle)
            lines.append(
                f"change nothing measurable at {counted(self.gpus, 'GPU')} (< 0.05%): {names}"
            )
        if unreached:  # "½ compute.time changes nothing" beside compute at 85% read as nonsense
            names = ", ".join(f"{p.change.label} {p.name}" for p in unreached)
            lines.append(
                f"cannot move it at {counted(self.gpus, 'GPU')}, where the members that have "
                f"them weigh 0 (the parts there are the others' terms): {names}; to follow "
                f"one law everywhere, refit that family ({self.refit})"
            )
        if open_:
            verb = "is" if len(open_) == 1 else "are"
            lines.append(
                f"{', '.join(open_)} {verb} undetermined: the data show no such term, so "
                "what a change would buy cannot be read from this fit (fix a known value "
                "with --set NAME=VALUE to ask)"
            )
        return lines

    def _unreached(self, p: ParameterSensitivity) -> bool:
        """Whether every blend member that has `p` weighs 0 at `gpus`."""
        members = {name.split(".", 1)[0] for name in (p.members or (p.name,))}
        return bool(self.weightless) and members <= set(self.weightless)

    def __repr__(self) -> str:
        limit = "" if self.limiting is None else f"largest other term {self.limiting}"
        return brief(
            "Sensitivity",
            f"at {counted(self.gpus, 'GPU')} {format_seconds(self.time_s)}, "
            f"speedup {self.speedup:.3g}×",
            limit,
            f"most sensitive to {self.parameters[0].name}" if self.parameters else "",
        )

    def summary(self, width: int | None = 100) -> str:
        """The time per term at N and what each parameter's change would buy."""
        rows = [
            {"term": name, "seconds": seconds, "share": f"{seconds / self.time_s:.1%}"}
            for name, seconds in self.breakdown.items()
        ]
        rows.append({"term": "total", "seconds": self.time_s, "share": "100.0%"})
        head = (
            f"at {counted(self.gpus, 'GPU')}: {format_seconds(self.time_s)}, speedup "
            f"{self.speedup:.3g}×, efficiency {self.efficiency:.1%}"
        )
        lines = [head, format_table(rows, width=width), *self.notes, "what would move it:"]
        return "\n".join(lines + [f"  {s}" for s in self.sentences()])


def idle_change(p: ParameterSensitivity) -> bool:
    return not p.undetermined and abs(p.change.time_change) < 5e-4


def describe_change(p: ParameterSensitivity, time_s: float, speedup: float, target: str) -> str:
    """E.g. ``2× allreduce.bandwidth_inter (1e10 → 2e10 B/s) cuts the step by 18% …``."""
    c = p.change
    if p.members:
        head = f"{c.label} {p.name} (every member's: {', '.join(p.members)})"
    elif p.kind == "fraction":
        head = f"{p.name} {p.value:.3g} → {c.value:.3g} ({c.label})"
    else:
        head = f"{c.label} {p.name} ({p.value:.3g} → {c.value:.3g} {p.unit})"
    if abs(c.time_change) < 5e-4:
        return f"{head} changes nothing measurable (< 0.05%)"
    if not c.time_s > 0.0:  # a factor that takes every term to zero
        return f"{head} takes the step to 0 s in the model (the term it divides is all)"
    if target == "throughput":
        return (
            f"{head} {'raises' if c.time_change < 0 else 'lowers'} throughput by "
            f"{abs(1.0 / (1.0 + c.time_change) - 1.0):.1%} "
            f"({1.0 / time_s:.4g}/s → {1.0 / c.time_s:.4g}/s; "
            f"speedup over its own 1 GPU {speedup:.3g}× → {c.speedup:.3g}×)"
        )
    verb = "cuts the step by" if c.time_change < 0 else "lengthens the step by"
    ratio = f"{time_s / c.time_s:.3g}"
    if ratio == "1":  # a 0.3% change read "1× faster"
        ratio = f"{time_s / c.time_s:.4f}"
    return (
        f"{head} {verb} {abs(c.time_change):.1%} "
        f"(step {format_seconds(time_s)} → {format_seconds(c.time_s)}, "
        f"{ratio}× {'faster' if c.time_change < 0 else 'as fast'}; "
        f"speedup over its own 1 GPU {speedup:.3g}× → {c.speedup:.3g}×)"
    )


@eqx.filter_jit
def _times(model: AbstractScalingModel, config):
    """T(N) and T(1), seconds."""
    one = eqx.tree_at(lambda c: c.gpus, config, jnp.ones_like(config.gpus))
    return model(config), model(one)


@eqx.filter_jit
def _log_jacobian(model: AbstractScalingModel, names: tuple[str, ...], config):
    """``d [log T(N), log T(1)] / d log θ`` for each named parameter."""
    values = model.parameters()
    logs = {name: jnp.log(values[name]) for name in names}

    def log_times(logs):
        changed = model.with_parameters({n: jnp.exp(v) for n, v in logs.items()})
        return jnp.log(jnp.stack(_times(changed, config)))

    return jax.jacfwd(log_times)(logs)


def sensitivity(fit: FitResult, gpus: float, *, factor: float = 2.0, **overrides) -> Sensitivity:
    """The time breakdown at `gpus` and the elasticity of the step time to every parameter.

    ``elasticity = d log T(N) / d log θ`` by autodiff (−1 for a bandwidth that carries
    the whole step, +1 for a time that is the whole step). For the overlap fraction θ
    it is also taken in log θ, so that all parameters rank on one scale. Each parameter
    is then changed by `factor` in the direction that helps (rates ×factor, times
    ÷factor, the exposed part ``1 − θ`` of the overlap ÷factor) and the model
    re-evaluated exactly.

    Args:
        fit: a fitted model.
        gpus: the GPU count N (≥ 1).
        factor: the improvement tried on each parameter (> 1; default 2).
        overrides: other `Config` fields for the prediction.

    Returns:
        A `Sensitivity`, parameters ranked by ``|elasticity|``.

    Example:
        >>> s = sensitivity(fit, 512)                      # doctest: +SKIP
        >>> print("\\n".join(s.sentences()))               # doctest: +SKIP
    """
    n = check_gpus(gpus)
    if not (math.isfinite(factor) and factor > 1):
        raise InputError(f"factor must be a number > 1, got {factor}")
    names = tuple(fit.model.parameter_specs())
    model = carrying(fit.model, names)  # a blend's changes carried past the measurements
    with jax.enable_x64(True):
        config = fit.config(n, **overrides)
        t_n, t_1 = map(float, _times(model, config))
        breakdown = {k: float(v) for k, v in model.breakdown(config).items()}
        jac = {k: np.asarray(v) for k, v in _log_jacobian(model, names, config).items()}
        values = fit.parameters()
        entries = []
        for name, spec in model.parameter_specs().items():
            label, new = scenario(spec, values[name], factor)
            c_n, c_1 = map(float, _times(model.with_parameters({name: new}), config))
            if not all(math.isfinite(c) and c > 0 for c in (c_n, c_1)):  # 1e308: both 0
                raise InputError(
                    f"{{arg:factor}}: {factor:g} takes {name} to {new:g} {spec.unit}, where "
                    "the model's time is no longer a positive finite number; give a smaller one"
                )
            change = Change(label, new, c_n, c_n / t_n - 1.0, c_1 / c_n, c_1 / (c_n * n))
            d_n, d_1 = map(float, jac[name])
            entries.append(
                ParameterSensitivity(
                    name,
                    values[name],
                    spec.unit,
                    spec.kind,
                    name in fit.fixed,
                    d_n,
                    _difference(d_1, d_n),
                    change,
                )
            )
        open_ = set(undetermined(fit))
        groups = _groups(fit, entries, open_, config, t_n) if model.family == "blend" else ()
    entries = [dataclasses.replace(p, undetermined=p.name in open_) for p in entries]
    entries.sort(key=lambda p: (p.undetermined, -abs(p.elasticity)))
    roles = {term.name: term.role for term in model.terms}
    others = {k: v for k, v in breakdown.items() if roles.get(k, "compute") != "compute"}
    limiting = max(others, key=others.get) if others else None
    # Step times of a fixed per-GPU batch: the model's seconds are per GPU batch, and a
    # step at N GPUs does N of them; say the step, as measured (shares, ratios unchanged).
    step = float(n) if fit.data.per_gpu else 1.0

    def per_step(p: ParameterSensitivity) -> ParameterSensitivity:
        return dataclasses.replace(
            p, change=dataclasses.replace(p.change, time_s=p.change.time_s * step)
        )

    return Sensitivity(
        gpus=n,
        target=fit.target,
        time_s=t_n * step,
        speedup=t_1 / t_n,
        efficiency=t_1 / (t_n * n),
        breakdown={k: v * step for k, v in breakdown.items()},
        limiting=limiting,
        parameters=tuple(map(per_step, entries)),
        notes=_notes(model, breakdown, config) + _past_node(fit, n),
        groups=tuple(map(per_step, groups)),
        weightless=_weightless(model, config),
        refit=refit_command(fit.data.source),
    )


def _past_node(fit: FitResult, n: float) -> tuple[str, ...]:
    """A line when every measurement fits in one node of known size and `n` is past it:
    the parts there extrapolate what was measured within the node; none of them is the
    network between nodes (``allreduce 0`` at 64 GPUs read as a measured, free network,
    review of 2026-12-06)."""
    node = _closed.data_node(fit.data)
    if not node or n <= node:
        return ()
    return (
        f"past one node, unmeasured: every measurement fits in one node of "
        f"{counted(node, 'GPU')}, so at {counted(n, 'GPU')} these parts extrapolate what "
        "was measured within it and none is the network between nodes, which nothing "
        f"measured shows; measure 2 nodes ({counted(2 * node, 'GPU')}) to see it",
    )


def _difference(a: float, b: float) -> float:
    """a − b, 0 where it is rounding (within 1e-12 of their size): ``d log S`` of a
    parameter that moves the time at 1 GPU and at N alike printed "-2.776e-17" (review
    of 2026-12-06)."""
    return 0.0 if abs(a - b) <= 1e-12 * max(abs(a), abs(b)) else a - b


def _weightless(model: AbstractScalingModel, config) -> tuple[str, ...]:
    """`Sensitivity.weightless`: the blend's members that weigh 0 at `config`."""
    if model.family != "blend":
        return ()
    with jax.enable_x64(True):  # the config is float64 (a notebook runs without x64)
        weights = model.carried_weights(config)  # a change's reach (`Blend.carrying`)
        return tuple(n for n, w in weights.items() if float(w) == 0.0)


def _groups(fit: FitResult, entries, open_: set[str], config, t_n: float):
    """`Sensitivity.groups`: every parameter name that several members of a blend have
    (``amdahl.compute.time``, ``usl.compute.time``, …), changed in all of them at once.
    Its elasticity is the sum of theirs (one factor on all of them, in log θ); the change
    is evaluated exactly. Undetermined members (`open_`: the data show no such term)
    stay out."""
    by_name: dict[str, list[ParameterSensitivity]] = {}
    for p in entries:
        if "." in p.name and p.name not in open_ and not p.fixed:
            by_name.setdefault(p.name.split(".", 1)[1], []).append(p)
    n = float(np.asarray(config.gpus))
    out = []
    for name, ps in by_name.items():
        if len(ps) < 2:
            continue
        changed = {p.name: p.change.value for p in ps}
        c_n, c_1 = map(float, _times(carrying(fit.model, changed).with_parameters(changed), config))
        first = ps[0]
        change = Change(
            first.change.label, first.change.value, c_n, c_n / t_n - 1.0, c_1 / c_n, c_1 / (c_n * n)
        )
        out.append(
            ParameterSensitivity(
                name,
                first.value,
                first.unit,
                first.kind,
                False,
                sum(p.elasticity for p in ps),
                sum(p.speedup_elasticity for p in ps),
                change,
                members=tuple(p.name for p in ps),
            )
        )
    return tuple(out)


def _notes(model: AbstractScalingModel, breakdown: dict[str, float], config) -> tuple[str, ...]:
    """What the parts of the default blend are: the members' own terms, weighted as the
    blend weighs its members at N (a term of members that weigh nothing there reads 0,
    though fitted), and the power laws' loss (``scaling_loss``)."""
    if model.family != "blend":
        return ()
    with jax.enable_x64(True):  # the config is float64 (a notebook runs without x64)
        weights = {k: float(v) for k, v in model.weights(config).items()}
        floor = bool(model.serial_binds(config, model(config)))
        held = bool(model.slowdown_binds(config, model(config)))
        if held:  # the time, and its parts, are those at the largest measured count
            weights = {k: float(v) for k, v in model.weights(model.at_largest(config)).items()}
    if floor:
        return (
            f"past the measurements the time of the fixed global batch does not fall below "
            f"the serial part of Amdahl's law fitted to them (the costs that do not shrink "
            f"with more GPUs): at {float(config.gpus):g} GPUs it is that part alone",
        )
    kept = [f"{name} {w:.0%}" for name, w in weights.items() if w > 0]
    idle = [name for name, w in weights.items() if w == 0]
    listed = f"{', '.join(idle[:-1])} and {idle[-1]}" if len(idle) > 1 else "".join(idle)
    at = float(model.largest) if held else float(config.gpus)
    notes = [
        f"the parts are its members' terms, weighted as the blend weighs them at "
        f"{at:g} GPUs: {', '.join(kept)}"
        + (f" ({listed} weigh 0: their terms read 0 here, though fitted)" if idle else "")
    ]
    with jax.enable_x64(True):
        carried = {
            n: float(w) for n, w in model.carried_weights(config).items() if float(w) > weights[n]
        }
    if carried and not held:
        shares = ", ".join(f"{n} {w:.0%}" for n, w in carried.items())
        notes.append(
            f"a change to the parameters of {' or '.join(carried)} is carried on here with the "
            f"weight each has at {float(model.largest):g} GPUs, the largest measured "
            f"({shares}; the sensitivity below, whatif, docs/questions.md), more than their "
            "terms' share of the parts above"
        )
    if held:
        notes.insert(
            0,
            f"past {at:g} GPUs, the largest measured, the time is held at its value there: "
            "the measurements slow down at each of their last two steps (their three "
            "largest counts)",
        )
    if "scaling_loss" in breakdown:
        options = dict(model.options)
        exponents = f"{options['power_exponent']:.3g} and {options['flat_exponent']:.3g}"
        notes.append(
            f"scaling_loss: what the blend's power laws c·N^e (e = {exponents}, fitted) lose "
            "to perfect scaling from their one-GPU time (c·N^e − c/N; their c/N counts as "
            "compute): every cost that does not shrink as 1/N, not split into physical terms"
        )
    return tuple(notes)
