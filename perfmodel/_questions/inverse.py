"""Inverse design: the value of one parameter (or the GPU count) that reaches a target.

The unknown is searched in its stored coordinate u (log for times, bandwidths and GPU
counts, logit for the overlap fraction). A grid over many decades brackets every
crossing of ``log Q(u) = log target``, then a safeguarded Newton iteration (bisection
whenever Newton leaves the bracket) refines each crossing with ``dQ/du`` from `jax.grad`.
When no value in the range meets the target, the best reachable value is reported with
the term that blocks it.
"""

from collections.abc import Callable
import dataclasses
import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._blend import carrying, shared_parameters
from .._errors import InputError
from .._fitting import FitResult
from .._levels import LARGEST_COUNT
from .._terms import SerialTerm
from .._text import counted
from .elasticity import (
    _times,
    _weightless,
    check_gpus,
    format_seconds,
    parameter_spec,
    shared_factor,
)
from .measured import past_checked

# Target → +1 when larger is better (the target is a floor), −1 when it is a ceiling.
TARGETS: dict[str, int] = {
    "efficiency": 1,
    "speedup": 1,
    "throughput": 1,
    "time": -1,
    "serial_share": -1,
}  # the order of `_log_quantities`
_GRID = 513
_SPAN = math.log(1e15)  # a parameter is searched from 1e-15× to 1e15× its fitted value
_PLATEAU = 1e-9  # log-quantity differences below this are rounding, not a better value
_LOGIT_SPAN = 30.0  # overlap from ~1e-13 to 1 − 1e-13


def describe_quantity(target: str, value: float) -> str:
    """A target value in its natural unit: ``80.0%``, ``12.5×``, ``0.42 s``, ``4553/s``."""
    if target in ("efficiency", "serial_share"):
        # 0.999999 read "efficiency ≥ 100.0%" (review of 2026-12-07): digits until a
        # share short of 100% (or above 0%) shows as such.
        digits = 1
        while digits < 6 and 0 < value < 1 and float(f"{value:.{digits}%}"[:-1]) in (0, 100):
            digits += 1
        return f"{value:.{digits}%}"
    if target == "speedup":
        return f"{value:.4g}×"
    if target == "time":
        return format_seconds(value)
    return f"{value:.4g}/s"


def _label(target: str) -> str:
    return "serial share" if target == "serial_share" else target


def solve_bracketed(
    fun: Callable[[float], tuple[float, float]],
    lo: float,
    hi: float,
    *,
    tol: float = 1e-13,
    max_iter: int = 200,
) -> tuple[float, int]:
    """A root of `fun` in ``[lo, hi]`` by Newton's method kept inside a shrinking bracket.

    Args:
        fun: ``u ↦ (f(u), f'(u))``; ``f(lo)`` and ``f(hi)`` must differ in sign.
        lo, hi: the bracket.
        tol: stop once the step or the bracket is below ``tol·(1 + |u|)``.
        max_iter: at most this many evaluations.

    Returns:
        The root and the number of iterations.
    """
    f_lo, _ = fun(lo)
    if f_lo == 0.0:
        return lo, 0
    f_hi, _ = fun(hi)
    if f_hi == 0.0:
        return hi, 0
    if np.sign(f_lo) == np.sign(f_hi):
        raise ValueError(f"no sign change in [{lo}, {hi}]: f = {f_lo}, {f_hi}")
    negative, positive = (lo, hi) if f_lo < 0 else (hi, lo)
    u, width = 0.5 * (lo + hi), abs(hi - lo)
    for iteration in range(1, max_iter + 1):
        f, d = fun(u)
        if f == 0.0:
            return u, iteration
        if f < 0:
            negative = u
        else:
            positive = u
        a, b = sorted((negative, positive))
        newton = u - f / d if d != 0.0 and math.isfinite(d) else math.nan
        if abs(newton - u) <= tol * (1.0 + abs(u)):
            return newton, iteration
        # Bisect when Newton leaves the bracket or would not halve it.
        if not a < newton < b or abs(newton - u) > 0.5 * width:
            new = 0.5 * (a + b)
        else:
            new = newton
        width = abs(new - u)
        if width <= tol * (1.0 + abs(u)) or b - a <= tol * (1.0 + abs(u)):
            return new, iteration
        u = new
    return u, max_iter


@dataclasses.dataclass(frozen=True)
class Requirement:
    """The answer of `require`.

    Attributes:
        parameter: the unknown, a parameter name or ``"gpus"``.
        target: ``"efficiency"``, ``"speedup"``, ``"time"``, ``"throughput"`` or
            ``"serial_share"``; `goal` is its value (fraction, ×, seconds, 1/s, fraction).
        gpus: the GPU count the target is asked at (None when solving for it).
        reachable: False when no value in the searched range meets the target.
        value: the boundary value meeting the target (physical units; a whole GPU count
            when solving for gpus), or None when unreachable or met everywhere.
        exact: the continuous solution of ``Q = goal``.
        side: ``"≥"`` or ``"≤"``: the values on this side of `value` meet the target.
        unit: unit of `value`.
        current: the fitted parameter value (None for gpus).
        current_quantity: the target quantity at the fitted value (None for gpus).
        achieved: the quantity at `value`.
        best, best_at: the best quantity in the range and where it is (0 or inf at an
            end of the range; the overlap's ends are 0 and 1; gpus end at `max_gpus`).
        limiting: the largest non-compute term where the best is reached (what blocks
            an unreachable target), with its share of the step.
        feasible: ranges of the unknown that meet the target.
        iterations: Newton/bisection iterations spent on the reported boundary.
        message: one readable sentence.
        members: for a name several members of the default blend share
            (``compute.time``), those members' parameters; the unknown is then one factor
            on all of their fitted values (`value`, `current` = 1 and `feasible` are
            factors, `unit` is ``"×"``), as `whatif --set compute.time=x0.5` changes them.
    """

    parameter: str
    target: str
    goal: float
    gpus: float | None
    reachable: bool
    value: float | None
    exact: float | None
    side: str | None
    unit: str
    current: float | None
    current_quantity: float | None
    achieved: float | None
    best: float
    best_at: float
    limiting: str | None
    limiting_share: float | None
    feasible: tuple[tuple[float, float], ...]
    iterations: int
    message: str
    members: tuple[str, ...] = ()

    def __repr__(self) -> str:
        return f"<Requirement: {self.message}>"

    def summary(self) -> str:
        """What `perfmodel require` prints: the sentence, and the ranges of a parameter
        that meet the target."""
        lines = [self.message]
        if self.feasible and self.parameter != "gpus":
            spans = ", ".join(_span(lo, hi) for lo, hi in self.feasible)
            if self.members:
                lines.append(f"factors on every member's {self.parameter} that meet it: {spans}")
            else:
                lines.append(f"values of {self.parameter} that meet it ({self.unit}): {spans}")
        return "\n".join(lines)


def _span(lo: float, hi: float) -> str:
    """``0.0026–0.5``, or ``0.0026 and up`` where no upper limit was found ("0–inf" was
    printed, review of 2026-12-07)."""
    return f"{lo:.4g} and up" if math.isinf(hi) else f"{lo:.4g}–{hi:.4g}"


def _substitute(model, config, u, unknown: str | tuple[str, ...]):
    """The model and config with the unknown at u: the GPU count (log), one parameter
    (its stored coordinate), or, for a tuple of a blend's member parameters, one factor
    ``exp(u)`` on each of their fitted values (their stored logs move by u together)."""
    if unknown == "gpus":
        return model, eqx.tree_at(lambda c: c.gpus, config, jnp.exp(u))
    if isinstance(unknown, tuple):
        getters = [model.leaf_getter(name) for name in unknown]
        fitted = tuple(getter(model) + u for getter in getters)
        return eqx.tree_at(lambda m: tuple(g(m) for g in getters), model, fitted), config
    return eqx.tree_at(model.leaf_getter(unknown), model, u), config


def _log_quantities(model, config, per_step: bool = False) -> jnp.ndarray:
    """``log Q`` for every target, in the order of `TARGETS`; the time of a step of a
    fixed per-GPU batch when `per_step` (`Benchmarks.per_gpu`: the model's seconds are
    per GPU batch, and a step at N GPUs does N of them)."""
    t_n, t_1 = _times(model, config)
    parts = model.breakdown(config)
    serial = sum(parts[t.name] for t in model.terms if isinstance(t, SerialTerm))
    step = t_n * config.gpus if per_step else t_n
    # Without a serial term the serial share is log 0 = −inf; `require` refuses it.
    return jnp.log(jnp.stack([t_1 / (t_n * config.gpus), t_1 / t_n, 1.0 / t_n, step, serial / t_n]))


@eqx.filter_jit
def _evaluate(model, config, u, unknown: str | tuple[str, ...], per_step: bool = False):
    """``log Q`` and ``d log Q / du`` for every target at every u, each ``(len(u), 5)``.

    All targets at once and a fixed length of u (Newton pads its single point), so
    that one compilation per unknown serves the grid, the iteration and every target.
    """

    def log_q(u):
        return _log_quantities(*_substitute(model, config, u, unknown), per_step)

    return jax.vmap(lambda u: (log_q(u), jax.jacfwd(log_q)(u)))(u)


def _parse_target(target) -> tuple[str, float]:
    if isinstance(target, dict):
        if len(target) != 1:
            raise InputError(f"target: expected one of {', '.join(TARGETS)}, got {target!r}")
        target = next(iter(target.items()))
    try:
        kind, goal = target
        goal = float(goal)
    except (TypeError, ValueError):
        raise InputError(
            f"target: expected (kind, value), e.g. ('efficiency', 0.8); got {target!r}"
        )
    if kind not in TARGETS:
        raise InputError(f"unknown target {kind!r}; valid: {', '.join(TARGETS)}")
    if not math.isfinite(goal) or goal <= 0:
        raise InputError(f"target {kind}: expected a positive number, got {goal:g}")
    if kind == "serial_share" and goal >= 1:
        raise InputError(f"target serial_share: expected a fraction in (0, 1), got {goal:g}")
    if kind == "efficiency" and goal > MAX_EFFICIENCY:  # 90 for 90%: "9000% is out of reach"
        raise InputError(f"target efficiency: expected a fraction (0.9 for 90%), got {goal:g}")
    return kind, goal


# The largest efficiency target taken (superlinear speedups reach 1.1 or so); above it a
# percentage was given where a fraction is read (review round 11).
MAX_EFFICIENCY = 2.0


@dataclasses.dataclass
class _Problem:
    """One inverse problem: ``log Q(u) − log goal = 0`` in the unknown's coordinate u."""

    fit: FitResult
    config: object
    parameter: str
    kind: str
    goal: float
    n: float  # the GPU count of the target (1, a placeholder, when solving for it)
    unit: str
    grid: np.ndarray  # u over the searched range
    fraction: bool = False  # the unknown is stored as a logit
    current: float | None = None  # the fitted value of a parameter
    members: tuple[str, ...] = ()  # a shared name's members: the unknown is their factor
    baseline: str = "fitted"  # what the current value is: "value after --set" if changed

    @property
    def baseline_value(self) -> str:
        """``fitted value`` or ``value after --set``."""
        return "fitted value" if self.baseline == "fitted" else self.baseline

    @property
    def unknown(self) -> str | tuple[str, ...]:
        """What `_substitute` sets: the members of a shared name, else the parameter."""
        return self.members or self.parameter

    @property
    def gpus(self) -> bool:
        return self.parameter == "gpus"

    @property
    def u0(self) -> float:
        if self.members:  # the factor 1
            return 0.0
        return float(self.fit.model.parameter_specs()[self.parameter].to_raw(self.current))

    @property
    def want(self) -> str:
        """E.g. ``efficiency ≥ 80.0% at 512 GPUs``."""
        at = "" if self.gpus else f" at {counted(self.n, 'GPU')}"
        sense = "≥" if TARGETS[self.kind] > 0 else "≤"
        return f"{_label(self.kind)} {sense} {describe_quantity(self.kind, self.goal)}{at}"

    def value(self, u: float) -> float:
        """Physical value of the unknown at u."""
        return 1.0 / (1.0 + math.exp(-u)) if self.fraction else math.exp(u)

    def __call__(self, u: float) -> tuple[float, float]:
        log_q, grad = self.evaluate(np.full(_GRID, u))
        return float(log_q[0]) - math.log(self.goal), float(grad[0])

    def evaluate(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``log Q`` and ``d log Q / du`` of this target at each of `_GRID` points u."""
        index = list(TARGETS).index(self.kind)
        per_step = bool(self.fit.data.per_gpu)
        log_q, grad = _evaluate(self.fit.model, self.config, jnp.asarray(u), self.unknown, per_step)
        return np.asarray(log_q)[:, index], np.asarray(grad)[:, index]

    def quantity(self, u: float) -> float:
        return math.exp(self(u)[0] + math.log(self.goal))  # goal·exp(…) overflows at 1e-320

    def limiting(self, u: float) -> tuple[str | None, float | None]:
        """The term that keeps Q from the goal at u, and its share of the step."""
        model, config = _substitute(self.fit.model, self.config, jnp.asarray(u), self.unknown)
        parts = {k: float(v) for k, v in model.breakdown(config).items()}
        # Parallel compute is the ideal part of speedup and efficiency, not a blocker.
        roles = {t.name: t.role for t in model.terms}
        ideal = ("compute",) if self.kind in ("efficiency", "speedup") else ()
        others = {k: v for k, v in parts.items() if k in roles and roles[k] not in ideal}
        if not others:
            return None, None
        name = max(others, key=others.get)
        return name, others[name] / sum(parts.values())


def require(
    fit: FitResult,
    *,
    parameter: str,
    target,
    gpus: float | None = None,
    max_gpus: float = 1e6,
    changed: bool = False,
    **overrides,
) -> Requirement:
    """The value of `parameter` (or the GPU count) at which `target` is reached.

    Targets, each at `gpus` GPUs: ``("efficiency", E)`` (speedup/N ≥ E),
    ``("speedup", S)``, ``("time", T)`` (seconds per step ≤ T, as measured: a step of
    a fixed per-GPU batch for `Benchmarks.per_gpu` data), ``("throughput", X)``
    (1/T ≥ X) and ``("serial_share", f)`` (the serial term ≤ f of the step).

    For a parameter, the reported `value` is the crossing nearest to the fitted value:
    the least change that meets the target, or, when it is met already, how far the
    parameter may move before it is not. For ``parameter="gpus"`` it is the fewest GPUs
    that meet the target or, when one GPU meets it already, the most GPUs that still do
    (e.g. how many GPUs until the serial part is half the step).

    Args:
        fit: a fitted model.
        parameter: a parameter name (``"allreduce.bandwidth_inter"``, ``"serial.time"``,
            ``"overlap"``, …), ``"gpus"`` to solve for the GPU count, or a name several
            members of the default blend share (``"compute.time"``) to solve for one
            factor on all of them (`Requirement.members`).
        target: ``(kind, value)`` or ``{kind: value}``.
        gpus: the GPU count of the target; not used when solving for gpus.
        max_gpus: the largest GPU count searched when solving for gpus.
        changed: the parameter's value in `fit` was set by `what_if` (the command
            line's ``--set``): the answer's factor is against "the value after --set",
            not the fitted one.
        overrides: other `Config` fields.

    Returns:
        A `Requirement`; ``reachable`` is False, with the best value and the blocking
        term, when no value meets the target.

    Raises:
        InputError: an unknown parameter (the valid ones are listed) or target, a
            missing or bad GPU count, or a serial share asked of a model without one.

    Example:
        >>> r = require(fit, parameter="allreduce.bandwidth_inter",
        ...             target=("efficiency", 0.8), gpus=512)            # doctest: +SKIP
        >>> r.value, r.message                                           # doctest: +SKIP
    """
    kind, goal = _parse_target(target)
    model = fit.model
    if kind == "serial_share" and not any(isinstance(t, SerialTerm) for t in model.terms):
        raise InputError(f"model {fit.family!r} has no serial term, so no serial share")
    if parameter == "gpus":
        top = check_gpus(max_gpus, "max_gpus")
        if top > LARGEST_COUNT or top != math.floor(top):  # 1e308 overflowed the grid's end
            raise InputError(
                f"{{arg:max_gpus}}: expected a whole GPU count from 1 to {LARGEST_COUNT:,}, "
                f"got {max_gpus!r}"
            )
        top = math.log(top)
        setup = dict(n=1.0, unit="GPUs", grid=np.linspace(0.0, top, _GRID))
    elif shared_factor(model, parameter):
        if gpus is None:
            raise InputError(f"target {kind}: give the GPU count it applies to (gpus=N)")
        setup = dict(
            n=check_gpus(gpus),
            unit="×",
            grid=np.linspace(-_SPAN, _SPAN, _GRID),
            current=1.0,
            members=tuple(shared_parameters(model, parameter)),
        )
    else:
        spec = parameter_spec(model, parameter)
        if gpus is None:
            raise InputError(f"target {kind}: give the GPU count it applies to (gpus=N)")
        current = fit.parameters()[parameter]
        u0 = float(spec.to_raw(current))
        span = _LOGIT_SPAN if spec.kind == "fraction" else _SPAN
        setup = dict(
            n=check_gpus(gpus),
            unit=spec.unit,
            grid=np.linspace(u0 - span, u0 + span, _GRID),
            fraction=spec.kind == "fraction",
            current=current,
        )
    if parameter != "gpus":  # a blend's change carried past the measurements
        names = setup.get("members") or (parameter,)
        fit = dataclasses.replace(fit, model=carrying(fit.model, names))
    with jax.enable_x64(True):
        config = fit.config(setup["n"], **overrides)
        baseline = "value after --set" if changed else "fitted"
        return _answer(_Problem(fit, config, parameter, kind, goal, **setup, baseline=baseline))


def _answer(problem: _Problem) -> Requirement:
    grid, sign = problem.grid, TARGETS[problem.kind]
    log_q = problem.evaluate(grid)[0]
    # log Q = −inf is Q = 0, a value like any other: a serial share of 0 (a blend whose
    # members with a serial term have no weight at that count) meets every ceiling.
    valid = ~np.isnan(log_q)
    good = valid & (sign * (log_q - math.log(problem.goal)) >= 0)
    scores = np.where(valid, sign * log_q, -np.inf)
    best = int(np.argmax(scores))
    if not problem.gpus:
        # A plateau that reaches an end of the search is the limit there: "the best is
        # 56.8% at 9.56e-11× every member's power.time" named a point of a curve flat to
        # rounding from 1e-15× to 1e-10× (review of 2026-12-07).
        plateau = scores >= scores[best] - _PLATEAU
        best = 0 if plateau[0] else len(grid) - 1 if plateau[-1] else best
    at_end = not problem.gpus and best in (0, len(grid) - 1)
    best_at = problem.value(grid[best])
    if at_end:  # the limit itself: 0 or ∞ (0 or 1 for a fraction)
        best_at = float(best > 0) if problem.fraction else (math.inf if best else 0.0)
    limiting, share = problem.limiting(float(grid[best]))
    current_q = None if problem.gpus else problem.quantity(problem.u0)
    common = dict(
        parameter=problem.parameter,
        target=problem.kind,
        goal=problem.goal,
        gpus=None if problem.gpus else problem.n,
        unit=problem.unit,
        current=problem.current,
        current_quantity=current_q,
        best=math.exp(log_q[best]),
        best_at=best_at,
        limiting=limiting,
        limiting_share=share,
        members=problem.members,
    )
    empty = dict(value=None, exact=None, side=None, achieved=None, iterations=0)
    if not good.any():
        if limiting is not None and share >= 0.005:
            blocker = f", held back by {limiting} ({share:.0%} of the step)"
        elif problem.kind in ("efficiency", "speedup"):
            blocker = ", which is perfect scaling: nothing else is left to remove"
        else:
            blocker = ""
        message = (
            f"{problem.want} is out of reach by changing {problem.parameter} alone: the best "
            f"is {describe_quantity(problem.kind, common['best'])} "
            f"{_where(problem, best_at, at_end or (problem.gpus and best == len(grid) - 1))}"
            f"{blocker}"
        )
        message += _one_gpu_only(problem)
        return Requirement(**common, **empty, reachable=False, feasible=(), message=message)
    # Refine every boundary between grid points that meet the target and points that don't.
    roots = []
    for i in np.flatnonzero(good[1:] != good[:-1]):
        lo, hi = float(grid[i]), float(grid[i + 1])
        if valid[i] and valid[i + 1]:
            root, iterations = solve_bracketed(problem, lo, hi)
        else:  # no number on one side to refine against: the last grid point that meets it
            root, iterations = (hi if good[i + 1] else lo), 0
        roots.append((root, iterations, bool(good[i + 1])))  # True: met above the root
    feasible = _feasible(problem, good, roots)
    if not roots:
        unknown = "GPU count" if problem.gpus else problem.parameter
        message = f"{problem.want} holds for every {unknown} searched"
        if current_q is not None:
            now = describe_quantity(problem.kind, current_q)
            message += f" (1e-15× to 1e15× the {problem.baseline_value}; now {now})"
        message += _one_gpu_only(problem)
        return Requirement(**common, **empty, reachable=True, feasible=feasible, message=message)
    if problem.gpus:
        root, iterations, above = roots[0]
    else:
        root, iterations, above = min(roots, key=lambda r: abs(r[0] - problem.u0))
    exact = value = problem.value(root)
    if problem.gpus:  # a whole count on the side that meets the target
        nearest = round(exact)
        # A crossing within 1e-6 of a whole count is that count: a fit's own values carry
        # that much noise, and "holds from 17 GPUs (crossing at 16 GPUs)" read as a
        # contradiction where 16 GPUs predict 100.0000001 ms (review of 2026-12-07).
        if abs(exact - nearest) <= 1e-6 * exact:
            value = float(nearest)
        else:
            value = max(float(math.ceil(exact) if above else math.floor(exact)), 1.0)
    side = "≥" if above else "≤"
    return Requirement(
        **common,
        value=value,
        exact=exact,
        side=side,
        achieved=problem.quantity(math.log(value) if problem.gpus else root),
        iterations=iterations,
        reachable=True,
        feasible=feasible,
        message=_reached(problem, value, exact, side, current_q, feasible) + _one_gpu_only(problem),
    )


def _feasible(problem: _Problem, good, roots) -> tuple[tuple[float, float], ...]:
    """The ranges of the unknown that meet the target, from the refined boundaries.

    A parameter's range is open at both ends (0 and ∞, or 0 and 1 for a fraction); the
    GPU count's runs from 1 to `max_gpus`.
    """
    if problem.gpus:
        first, last = problem.value(problem.grid[0]), problem.value(problem.grid[-1])
    else:
        first, last = 0.0, (1.0 if problem.fraction else math.inf)
    edges = [first, *(problem.value(r[0]) for r in roots), last]
    states = [bool(good[0])] + [r[2] for r in roots]
    # A range of zero width is the curve touching the target between grid points: not
    # a range that meets it.
    return tuple(
        (edges[i], edges[i + 1])
        for i, ok in enumerate(states)
        if ok and (edges[i + 1] > edges[i] or len(edges) == 2)
    )


def _one_gpu_only(problem: _Problem) -> str:
    """For a speedup or efficiency target of the default blend whose parameter belongs
    only to members that weigh 0 at the target's count, the clause that says it moves
    the curve's one-GPU time alone: raising Amdahl's serial time "reached" a higher
    efficiency at 64 GPUs, where Amdahl weighs 0, by slowing one GPU (review of
    2026-12-07); otherwise ""."""
    if problem.gpus or problem.kind not in ("efficiency", "speedup"):
        return ""
    members = {name.split(".", 1)[0] for name in (problem.members or (problem.parameter,))}
    idle = set(_weightless(problem.fit.model, problem.config))
    if not idle or not members <= idle:
        return ""
    return (
        f"; at {counted(problem.n, 'GPU')} the members with it ({', '.join(sorted(members))}) "
        f"weigh 0, so it moves only the curve's one-GPU time, which the {problem.kind} is "
        "measured against"
    )


def _where(problem: _Problem, at: float, end: bool) -> str:
    if problem.gpus:  # a point of the log grid: the whole count nearest it
        if end:  # "at 1000000 GPUs" read as a count found, not the search's end
            return f"at {max(round(at), 1):,} GPUs, the end of the search"
        return f"at {counted(max(round(at), 1), 'GPU')}"
    if problem.members:
        if end:
            return f"as every member's {problem.parameter} → {'∞' if math.isinf(at) else '0'}"
        return f"at {at:.4g}× every member's {problem.parameter}"
    if end:
        return f"as {problem.parameter} → {'∞' if math.isinf(at) else f'{at:g}'}"
    return f"at {problem.parameter} = {at:.4g} {problem.unit}"


def _reached(problem: _Problem, value, exact, side, current_q, feasible) -> str:
    if problem.gpus:
        holds = "from" if side == "≥" else "up to"
        message = (
            f"{problem.want} holds {holds} {counted(value, 'GPU')} "
            f"(crossing at {counted(exact, 'GPU', '.6g')})"
        )
        if side == "≥" and feasible and feasible[0][1] < problem.value(problem.grid[-1]):
            message += (
                f" up to {counted(math.floor(feasible[0][1]), 'GPU')}, past which it is lost again"
            )
        later = [(lo, hi) for lo, hi in feasible[1:] if hi > lo]
        if side == "≤" and later:  # e.g. a blend whose serial share falls again far out
            lo, hi = later[0]
            message += f", and again from {counted(math.ceil(lo), 'GPU')}"
            if hi < problem.value(problem.grid[-1]):  # "again from 33" hid its end at 71
                message += f" to {counted(math.floor(hi), 'GPU')}"
            if len(later) > 1:
                message += f" (and {len(later) - 1} more range{'s' if len(later) > 2 else ''})"
        far = past_checked(value, problem.fit)
        return f"{message}; {far}" if far else message
    if problem.members:
        return (
            f"{problem.want} needs every member's {problem.parameter} "
            f"({', '.join(problem.members)}) {side} {value:.4g}× its {problem.baseline_value} (now "
            f"{describe_quantity(problem.kind, current_q)})"
        )
    return (
        f"{problem.want} needs {problem.parameter} {side} {value:.4g} {problem.unit} "
        f"({value / problem.current:.3g}× the {problem.baseline} {problem.current:.4g}; "
        f"now {describe_quantity(problem.kind, current_q)})"
    )
