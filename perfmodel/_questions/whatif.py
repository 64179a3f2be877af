"""What-if: a fitted model with some parameters or config values changed, and the comparison.

`what_if` returns an ordinary `FitResult`, so `predict`, `optimal_gpus`,
`diminishing_returns`, `sensitivity`, `require` and the plots all work on it unchanged.
"""

from collections.abc import Mapping, Sequence
import dataclasses
import math

import jax
import numpy as np

from .._blend import Blend, carrying, shared_parameters
from .._config import (
    check_memory_unit,
    Config,
    CONFIG_FIELDS,
    LARGEST_VALUE,
    NONNEGATIVE_FIELDS,
)
from .._errors import InputError
from .._fitting import blend_components, FitResult, to_numpy_leaves
from .._keywords import did_you_mean
from .._schema import FIT_FILE_WHOLE, MAGNITUDE, SMALLEST
from .._text import brief
from .._text import seconds as format_seconds
from .query import (
    amdahl_bound,
    check_finite_times,
    diminishing_returns,
    DiminishingReturns,
    node_size,
    optimal_gpus,
    Optimum,
    refuse_layout_fit,
    searched_up_to,
)

_CONFIG_DEFAULTS = {
    f.name: f.default for f in dataclasses.fields(Config) if f.default is not dataclasses.MISSING
}


def is_factor(text: str) -> bool:
    """Whether a ``--set`` value is a factor on the current one (``x0.5``, ``×2``, ``*2``)."""
    return text.strip()[:1] in ("x", "×", "*")


def _parse_value(name: str, value, current: float) -> float:
    """A number, or a factor on the current value written ``x0.5`` (also ``*0.5``)."""
    text = str(value).strip()
    relative = is_factor(text)
    number = text[1:].strip() if relative else text
    try:
        result = float(number)
    except ValueError:
        raise InputError(
            f"set {name}: expected a number (50e9) or a factor on the fitted value "
            f"(x0.5), got {text!r}"
        )
    if not math.isfinite(result):
        raise InputError(f"set {name}: expected a finite number, got {text!r}")
    return result * current if relative else result


def _check_range(name: str, value: float, kind: str) -> float:
    if kind == "fraction":
        if name.endswith(".e_max") and not 0.0 < value <= 1.0:  # no compute: clamped to 1e-12
            raise InputError(f"set {name}: expected a share of peak in (0, 1], got {value:g}")
        if not 0.0 <= value <= 1.0:
            raise InputError(f"set {name}: expected a fraction in [0, 1], got {value:g}")
        # The overlap is stored as a logit: keep it finite at exactly 0 or 1.
        return min(max(value, 1e-12), 1.0 - 1e-12)
    if kind == "config":
        if name in FIT_FILE_WHOLE and value != math.floor(value):  # as a fit file's
            raise InputError(f"set {name}: expected a whole number, got {value:g}")
        if name in NONNEGATIVE_FIELDS:  # codes, and fields where 0 means "not given"
            if value < 0:
                raise InputError(f"set {name}: expected a value ≥ 0, got {value:g}")
        elif value <= 0:  # as a CSV column of the same name is checked
            raise InputError(f"set {name}: expected a positive value, got {value:g}")
        if value > LARGEST_VALUE:  # global_batch = 1e300 gave inf s and "ok"
            raise InputError(f"set {name}: expected at most {LARGEST_VALUE:g}, got {value:g}")
        return value
    if not SMALLEST <= value <= MAGNITUDE:  # as a fit file's parameters are read
        raise InputError(
            f"set {name}: expected a positive value between {SMALLEST:g} and "
            f"{MAGNITUDE:g}, got {value:g}"
        )
    return value


# The least a hybrid (physical-unit) parameter can be: 100 B/s for a network read as
# 100 GB/s answered "step time 1.7e8 s" (review round 12). Other families' rates may be
# in messages/s (`Config.message_bytes` unknown), so only the hybrid's are checked.
LEAST_PHYSICAL = {
    "B/s": (1e6, "1 MB/s", "100 GB/s is 100e9"),
    "FLOP/s": (1e9, "1 GFLOP/s", "989 TFLOP/s is 989e12"),
}


def _check_unit(fit: FitResult, name: str, value: float, unit: str, raw: str) -> None:
    from .._presets import hybrid_kind

    least = LEAST_PHYSICAL.get(unit)
    if least is None or hybrid_kind(fit.model) != "hybrid" or value >= least[0]:
        return
    if is_factor(raw):  # a factor: the unit is not what slipped
        raise InputError(f"set {name}={raw.strip()}: {value:g} {unit} is below {least[1]}")
    raise InputError(
        f"set {name}: {value:g} {unit} is below {least[1]}; the unit is {unit} ({least[2]})"
    )


def split_changes(fit: FitResult, changes: Mapping[str, object]):
    """Parse `changes` into (parameter values, config values), both physical floats."""
    if not isinstance(changes, Mapping):  # "serial.time=x0.5" raised an AttributeError
        raise InputError(
            f"changes: expected a mapping of names to values, e.g. "
            f'{{"serial.time": "x0.5"}}, got {type(changes).__name__} {changes!r:.40}'
        )
    specs = fit.model.parameter_specs()
    values = fit.parameters()
    params, config = {}, {}
    for name, raw in changes.items():
        if name in specs:
            value = _parse_value(name, raw, values[name])
            params[name] = _check_range(name, value, specs[name].kind)
            _check_unit(fit, name, params[name], specs[name].unit, str(raw))
        elif name == "gpus_per_node" and isinstance(fit.model, Blend):
            # Accepted, it changed nothing: the blend reads its node when it is fitted
            # (newcomer review, 2026-12-06).
            raise InputError(
                "cannot set gpus_per_node: the default blend takes the node size when it is "
                "fitted (past that node its intervals widen and it moves to the power law); "
                "fit again with {arg:gpus_per_node}"
            )
        elif name in CONFIG_FIELDS and name != "gpus":
            current = float(fit.config_defaults.get(name, _CONFIG_DEFAULTS[name]))
            config[name] = _check_range(name, _parse_value(name, raw, current), "config")
            check_memory_unit(f"set {name}", name, config[name])
        elif name == "gpus":
            raise InputError("gpus is what predictions vary; give GPU counts with {arg:gpus}")
        else:
            members = shared_parameters(fit.model, name)
            if members:  # `serial.time` of the blend: every member's, each from its own
                if is_factor(str(raw)):  # "x-1" is refused by the name given, not a member's
                    factor = _parse_value(name, raw, 1.0)
                    if not factor > 0.0:
                        raise InputError(
                            f"set {name}={str(raw).strip()}: expected a factor > 0, got {factor:g}"
                        )
                for member in members:
                    value = _parse_value(member, raw, values[member])
                    params[member] = _check_range(member, value, specs[member].kind)
                continue
            fields = ", ".join(f for f in CONFIG_FIELDS if f != "gpus")
            close = did_you_mean(name, [*specs, *(f for f in CONFIG_FIELDS if f != "gpus")])
            raise InputError(
                f"cannot set {name!r}{close}: not a parameter of model {fit.family!r} "
                f"({', '.join(specs)}) nor a config field ({fields})"
            )
    return params, config


def what_if(fit: FitResult, changes: Mapping[str, float | str]) -> FitResult:
    """`fit` with parameters and/or config values changed.

    Args:
        fit: a fitted model.
        changes: name → value. Names are model parameters (``"allreduce.bandwidth_inter"``,
            physical units: B/s, s, or a fraction for ``"overlap"``; of a blend, a name
            without its member, ``"serial.time"``, sets every member's that has one,
            ``"x0.5"`` each from its own value) or `Config` fields
            used for predictions (``"gpus_per_node"``, ``"message_bytes"``, …). A value
            is a number or a string: ``"50e9"``, or ``"x0.5"`` for a factor on the
            current value.

    Returns:
        A `FitResult` whose model and `config_defaults` carry the changes. Changed
        parameters count as fixed: they leave `free` and the Laplace covariance (the
        other parameters keep their fitted uncertainty), and `message` records the
        change. The data, residuals and fit quality are those of the original fit.

    Raises:
        InputError: an unknown name (the valid ones are listed), a malformed value, or a
            value out of range.

    Example:
        >>> faster = what_if(fit, {"serial.time": "x0.5", "gpus_per_node": 16})  # doctest: +SKIP
        >>> optimal_gpus(faster).gpus                                          # doctest: +SKIP
    """
    params, config = split_changes(fit, changes)
    with jax.enable_x64(True):
        model = carrying(fit.model, params)
        model = to_numpy_leaves(model.with_parameters(params))
    keep = [i for i, name in enumerate(fit.free) if name not in params]
    covariance = fit.raw_covariance
    if covariance is not None:
        covariance = np.asarray(covariance)[np.ix_(keep, keep)]
    note = ", ".join(f"{k}={v:.6g}" for k, v in {**params, **config}.items())
    return dataclasses.replace(
        fit,
        model=model,
        free=tuple(fit.free[i] for i in keep),
        fixed={**fit.fixed, **params},
        raw_covariance=covariance,
        config_defaults={**fit.config_defaults, **config},
        message=f"{fit.message}; what-if: {note}" if note else fit.message,
        # The default's Blend stays a blend of its (changed) members, with conformal
        # intervals around the changed curve; other models get Laplace intervals of the
        # changed model around their own residuals.
        components=blend_components(model) if isinstance(model, Blend) else (),
        intervals=fit.intervals if isinstance(model, Blend) or not params else "laplace",
    )


@dataclasses.dataclass(frozen=True)
class Comparison:
    """Two fits side by side (typically a fit and its `what_if`).

    Attributes:
        gpus: the GPU counts compared.
        before, after: `FitResult.predict` at `gpus` (arrays of time_s, speedup, …).
        time_ratio: ``T_after / T_before`` per GPU count.
        optimum_before, optimum_after: `optimal_gpus` of each.
        knee_before, knee_after: `diminishing_returns` of each.
        amdahl_before, amdahl_after: `amdahl_bound` of each (None without a serial term).
        changes: parameter and config values that differ, name → (before, after); None
            for a config value that neither the fit nor its data give.
        per_gpu: the fits' data are steps of a fixed per-GPU batch (`Benchmarks.per_gpu`):
            the optima's seconds are per GPU batch, and `optimum_line` says steps.
        note: for a blend whose changed members carry no weight at some of `gpus`
            (past two doublings beyond the measurements its weights leave Amdahl's law
            and the USL), the counts the change cannot reach and why; else "".
    """

    gpus: np.ndarray
    before: dict[str, np.ndarray]
    after: dict[str, np.ndarray]
    time_ratio: np.ndarray
    optimum_before: Optimum
    optimum_after: Optimum
    knee_before: DiminishingReturns
    knee_after: DiminishingReturns
    amdahl_before: float | None
    amdahl_after: float | None
    changes: dict[str, tuple[float | None, float | None]]
    note: str = ""
    per_gpu: bool = False
    partial: bool = False  # the change misses the blend's curve at some counts (`note`)

    def _caveat(self, moved: bool) -> str:
        """What a moved optimum or knee is worth when the change reaches only part of the
        curve: halving a blend's serial time moved the knee from 32 to 18 GPUs, because
        it lowered the curve below 32 GPUs and not above (newcomer review, 2026-12-07)."""
        if not (self.partial and moved):
            return ""
        return "; not a physical answer: the change moves only part of the curve (note above)"

    def __repr__(self) -> str:
        changed = ", ".join(
            f"{k} {shown_value(a)} → {shown_value(b)}" for k, (a, b) in self.changes.items()
        )
        return brief("Comparison", changed, self.knee_line())

    def optimum_line(self) -> str:
        a, b = self.optimum_before, self.optimum_after

        def step(o: Optimum) -> str:  # as measured: a step of N GPU batches
            return format_seconds(o.time_s * (o.gpus if self.per_gpu else 1))

        return (
            f"optimal GPU count: {a.gpus}{_limit(a)} → {b.gpus}{_limit(b)} "
            f"(time there {step(a)} → {step(b)}){self._caveat(a.gpus != b.gpus)}"
        )

    def knee_line(self) -> str:
        """``diminishing returns from 9 → 17 GPUs (marginal speedup < 0.5)``, or that it
        is not reached, before, after or both, up to the search limit."""
        before, after = self.knee_before, self.knee_after
        if before.gpus is None and after.gpus is None:
            return f"diminishing returns: not reached up to {after.searched} GPUs, before or after"

        def count(knee):
            return str(knee.gpus) if knee.gpus is not None else f"not reached up to {knee.searched}"

        criterion = after.criterion if after.gpus is not None else before.criterion
        caveat = self._caveat(before.gpus != after.gpus)
        return (
            f"diminishing returns from {count(before)} → {count(after)} GPUs ({criterion}){caveat}"
        )

    def amdahl_line(self) -> str | None:
        """``Amdahl bound: 5331× → 8389×``; None when the model had no bound before. A
        bound of none after reads "none (…)", an infinite one "unbounded" ("0.04035×"
        and "inf×" were printed, review of 2026-12-07)."""
        if self.amdahl_before is None:
            return None
        before, after = (amdahl_text(b) for b in (self.amdahl_before, self.amdahl_after))
        return f"Amdahl bound: {before} → {after}"

    def summary(self) -> str:
        """The changes, then the optimum, the knee and Amdahl's bound before → after."""
        lines = [
            f"what-if: {k} {shown_value(a)} → {shown_value(b)}"
            for k, (a, b) in self.changes.items()
        ]
        lines += [f"note: {self.note}"] if self.note else []
        lines += [self.optimum_line(), self.knee_line()]
        lines += [self.amdahl_line()] if self.amdahl_line() is not None else []
        return "\n".join(lines)


def amdahl_text(bound: float | None) -> str:
    """An Amdahl bound in words: ``5331×``; ``none (…)`` where the serial floor is above
    the one-GPU time (`amdahl_bound` gives None); ``unbounded`` for inf×."""
    if bound is None:
        return "none (the serial part exceeds the one-GPU time)"
    return "unbounded" if math.isinf(bound) else f"{bound:.4g}×"


def _limit(optimum: Optimum) -> str:
    """`` (search limit)`` or `` (global batch)`` after an optimum at the end of its search."""
    return f" ({optimum.limit_text(short=True)})" if optimum.at_limit else ""


def _differences(
    before: FitResult, after: FitResult
) -> dict[str, tuple[float | None, float | None]]:
    a, b = before.parameters(), after.parameters()
    out = {k: (a[k], b[k]) for k in a if k in b and a[k] != b[k]}
    for key in sorted({*before.config_defaults, *after.config_defaults}):
        x, y = _config_value(before, key), _config_value(after, key)
        if x != y:
            out[key] = (x, y)
    return out


def _config_value(fit: FitResult, key: str) -> float | None:
    """The fit's `key` as set or as its data give it (one value for every row); None
    where neither gives it: a CSV without a node size has none, and "gpus_per_node 8 →
    16" named the field's default as if the data had said 8 (review of 2026-12-06)."""
    if key in fit.config_defaults:
        return fit.config_defaults[key]
    column = fit.data.config.get(key)
    if column is None:
        return None if key == "gpus_per_node" else _CONFIG_DEFAULTS.get(key)
    values = np.unique(np.asarray(column, dtype=float))
    return float(values[0]) if values.size == 1 else None


def shown_value(value: float | None) -> str:
    return "unset" if value is None else f"{value:.4g}"


def compare_fits(
    before: FitResult,
    after: FitResult,
    *,
    gpus: Sequence[float] | None = None,
    max_gpus: int = 4096,
    threshold: float = 0.5,
    efficiency_floor: float | None = None,
) -> Comparison:
    """Predictions, optimum and point of diminishing returns of two fits.

    Args:
        before, after: the fits to compare, e.g. `fit` and ``what_if(fit, ...)``.
        gpus: GPU counts for the curves (default: powers of two up to `max_gpus`).
        max_gpus, threshold, efficiency_floor: as for `optimal_gpus` and
            `diminishing_returns`.
    """
    refuse_layout_fit(before, "compare_fits")
    if gpus is None:
        gpus = 2.0 ** np.arange(int(math.log2(max(max_gpus, 1))) + 1)
    counts = np.asarray(gpus, dtype=np.float64)
    if counts.ndim != 1 or counts.size == 0 or not np.all(counts >= 1):
        raise InputError(f"gpus: expected GPU counts ≥ 1, got {gpus!r}")
    first, second = before.predict(counts), after.predict(counts)
    for predicted in (first, second):
        check_finite_times(np.asarray(predicted["time_s"], dtype=float), counts)
    # Whole nodes when the data give their size, as `recommend` and `optimal` count.
    node = node_size(before)
    step = node if node and node <= searched_up_to(before, max_gpus, {}) else 1
    search = dict(max_gpus=max_gpus, multiple_of=step)
    knee = dict(threshold=threshold, efficiency_floor=efficiency_floor, **search)
    changes = _differences(before, after)
    ratio = second["time_s"] / first["time_s"]
    unreached, partial = _unreached(before, counts, changes)
    note = unreached or _unmoved(before, counts, ratio)
    return Comparison(
        gpus=counts,
        before=first,
        after=second,
        time_ratio=ratio,
        optimum_before=optimal_gpus(before, **search),
        optimum_after=optimal_gpus(after, **search),
        knee_before=diminishing_returns(before, **knee),
        knee_after=diminishing_returns(after, **knee),
        amdahl_before=amdahl_bound(before),
        amdahl_after=amdahl_bound(after),
        changes=changes,
        note=note,
        per_gpu=bool(before.data.per_gpu),
        partial=partial,
    )


def _unreached(fit: FitResult, counts: np.ndarray, changes) -> tuple[str, bool]:
    """`Comparison.note` and `Comparison.partial`: the counts of `counts` where no member
    of a blend whose parameters changed has weight, so those changes cannot move the
    curve there, and whether there are any; else, where the change is carried past the
    measurements (`Blend.carrying`), how."""
    if not isinstance(fit.model, Blend):
        return "", False
    members = {name.split(".")[0] for name in changes if "." in name}
    if not members:
        return "", False
    largest = float(np.asarray(fit.model.largest))
    with jax.enable_x64(True):
        weights = {
            n: np.asarray(w, dtype=float) * np.ones(len(counts))
            for n, w in fit.model.reaching_weights(fit.config(counts)).items()
        }
        there = {
            n: float(np.ravel(w)[0])
            for n, w in fit.model.weights(fit.config(np.asarray([largest]))).items()
        }
    own = sum(w for n, w in weights.items() if n in members)
    kept = sum(w for n, w in there.items() if n in members)
    reached = np.where(counts > largest, np.maximum(own, kept), own)
    missed = reached <= 0.0
    carried = (counts > largest) & (own < kept * (1.0 - 1e-9)) & ~missed
    said = ""
    if carried.any():
        shares = ", ".join(f"{n} {there[n]:.0%}" for n in sorted(members) if there.get(n, 0.0) > 0)
        said = (
            f"at {_ranges(counts, carried)} GPUs the blend's weights move on to members "
            f"without the changed parameters; the change is carried on there with the "
            f"weight its members have at {largest:g} GPUs, the largest measured "
            f"({shares}): what their law says it does, at that share (docs/questions.md)"
        )
    if not missed.any():
        return said or _partly_reached(counts, weights, members), False
    where = _ranges(counts, missed)
    there_now = sorted({n for n, w in weights.items() if np.any(w[missed] > 0)})
    verb = "has" if len(members) == 1 else "have"
    note = (
        f"at {where} GPUs the blend is {_listed(there_now)} alone, members without the "
        f"changed parameters ({_listed(sorted(members))} {verb} them): the parameter change "
        "does not reach there; to follow one law everywhere, refit that family (perfmodel "
        "fit CSV --model NAME)"
    )
    # An anchored blend: the anchor alone answers inside the measured range, the change
    # is carried past it (review of the carry: the note named only the first).
    return (f"{note}; {said}" if said else note), True


UNMOVED = 5e-4  # a change of the time below this (the table's "+0.0%") is no change


def _unmoved(fit: FitResult, counts: np.ndarray, ratio) -> str:
    """`Comparison.note` where a change that moves the curve at some counts moves
    nothing at others, and `_unreached` has no parameter to explain it (a config value:
    ``--set gpus_per_node=16`` read "+0.0%" at 64 GPUs beside −10% at 32, without a
    word; review round 13)."""
    if not isinstance(fit.model, Blend):
        return ""
    still = np.abs(np.asarray(ratio, dtype=float) - 1.0) < UNMOVED
    if not still.any() or still.all():
        return ""
    with jax.enable_x64(True):
        weights = fit.model.reaching_weights(fit.config(counts[still]))
    there = sorted(n for n, w in weights.items() if np.any(np.asarray(w) > 0))
    return (
        f"at {_ranges(counts, still)} GPUs the change moves the time by less than "
        f"{UNMOVED:.2%}: the blend's curve there is {_listed(there)}'s, which the change does "
        "not reach (or the efficiency it holds from a smaller count past the measurements)"
    )


PARTLY = 0.05  # unchanged members' weight from which the comparison says so


def _partly_reached(counts: np.ndarray, weights: dict, members: set) -> str:
    """The note where members without the changed parameters carry part of the weight
    (the power laws past the data): the change moves only the rest of the curve there."""
    others = {n: w for n, w in weights.items() if n not in members}
    if not others:
        return ""
    share = np.asarray(sum(others.values()), dtype=float) * np.ones(len(counts))
    if share.max() < PARTLY:
        return ""
    i = int(np.argmax(share))
    there = sorted(n for n, w in others.items() if np.ravel(w * np.ones(len(counts)))[i] > 0)
    verb = "has" if len(members) == 1 else "have"
    return (
        f"at {int(counts[i])} GPUs {share[i]:.0%} of the blend's weight is on "
        f"{_listed(there)}, without the changed parameters ({_listed(sorted(members))} "
        f"{verb} them): the change moves only the rest of the curve there (a power law's "
        "coefficient is power.time; docs/questions.md)"
    )


def _listed(names) -> str:
    """``"a, b and c"``."""
    names = list(names)
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _ranges(counts: np.ndarray, mask: np.ndarray) -> str:
    """``"1–4 and 512–4096"``: the runs of consecutive `counts` where `mask` holds."""
    runs, start = [], None
    for i, on in enumerate([*mask, False]):
        if on and start is None:
            start = i
        elif not on and start is not None:
            lo, hi = counts[start], counts[i - 1]
            runs.append(f"{lo:g}" if lo == hi else f"{lo:g}–{hi:g}")
            start = None
    return " and ".join(runs)
