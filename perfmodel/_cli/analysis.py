"""`perfmodel explain`, `require`, `whatif` and `next`: why scaling stops, what would move it."""

import dataclasses
import math
import os

from .._blend import shared_parameters
from .._catalog import run_note
from .._errors import InputError
from .._fitting import FitResult
from .._io import finite_or_null, load_fit, save_fit
from .._questions import (
    compare_fits,
    describe_quantity,
    next_measurements,
    require,
    sensitivity,
    shown_value,
    TARGETS,
    what_if,
)
from .._reads import unread, unread_line
from .._text import counted, wrap
from .._units import work_name
from . import common
from .answers import knee_fields, optimum_fields
from .cache import mark_checked
from .common import (
    check_outputs,
    format_table,
    message,
    parse_assignments,
    parse_list,
    print_json,
)
from .draws import shared_ensemble


def load_with_changes(path: str, items) -> FitResult:
    """The fit at `path`, with the ``--set NAME=VALUE`` changes applied."""
    result = load_fit(path)
    mark_checked(path)  # the schema passed these bytes: `predict`/`optimal` may skip JAX
    return apply_changes(result, items)


def apply_changes(result: FitResult, items) -> FitResult:
    """`result` with the ``--set NAME=VALUE`` changes applied (itself without any)."""
    if not items:
        return result
    changes = parse_assignments(items, "--set")
    for name in changes:
        missed, read = unread(result.model, [name])
        if missed and name not in result.config_defaults:
            # `--set tp=2` on an amdahl fit was accepted and changed nothing (sweep refuses).
            raise InputError(f"--set {name}: {unread_line(result.family, name, read)}")
    return what_if(result, changes)


def _header(result: FitResult) -> str:
    if result.target == "throughput":
        unit = f"per {work_name(result.data.unit)}"
    else:
        unit = "per step, as measured" if result.data.per_gpu else "per step"
    source = result.data.source
    if source.endswith(" (seconds per step)") and unit == "per step":
        # A time-to-train fit's step series names itself so: not twice (review 2026-12-07).
        return f"{result.label} fit of {source}"
    return f"{result.label} fit of {source} (times in seconds {unit}{run_note(source)})"


# explain ------------------------------------------------------------------------------


EXPLAIN_COUNTS = 256


def run_explain(args) -> int:
    result = load_with_changes(args.fit, args.set)
    from .._questions import refuse_layout_fit

    refuse_layout_fit(result, "explain")
    counts = list(dict.fromkeys(parse_list(args.gpus, "--gpus", cast=int)))  # once each
    if len(counts) > EXPLAIN_COUNTS:
        # One breakdown and its elasticities per count, ~25 ms each: 20000 counts ran for
        # minutes with nothing printed.
        raise InputError(
            f"--gpus: at most {EXPLAIN_COUNTS} distinct counts to explain (one breakdown "
            f"each), got {len(counts)}; use predict for a curve"
        )
    reports = [sensitivity(result, n, factor=args.factor) for n in counts]
    if args.json:
        print_json(
            finite_or_null(
                {
                    "family": result.family,
                    "target": result.target,
                    "elasticity": "d log T / d log θ (the overlap fraction too)",
                    # GPU counts as whole numbers, as every other command writes them
                    "results": [
                        {**dataclasses.asdict(r), "gpus": int(n), "sentences": r.sentences()}
                        for n, r in zip(counts, reports)
                    ],
                }
            )
        )
        return 0
    print(wrap(_header(result), common.TABLE_WIDTH))
    for report in reports:
        print()
        _print_explain(report)
    return 0


def off_the_slope(parameter) -> bool:
    """Whether a parameter's tried change moves the time far less (or more) than its
    elasticity says: half again or more apart in log time, for a change the slope puts
    at 5% or more. Where it is, a bound takes over between the two values (the default
    blend's efficiency held from the largest measured count or the node): elasticity 1
    beside "½ → −5.0%" read as a contradiction (review of 2026-12-07). Fractions (an
    overlap, whose change is in the exposed share) are not compared."""
    if parameter.undetermined or parameter.value <= 0 or parameter.change.value <= 0:
        return False
    if parameter.change.time_change <= -1.0:
        return False
    slope = parameter.elasticity * math.log(parameter.change.value / parameter.value)
    moved = math.log1p(parameter.change.time_change)
    return abs(slope) >= 0.05 and abs(moved - slope) > 0.5 * abs(slope)


def _print_explain(report) -> None:
    print(
        f"at {counted(report.gpus, 'GPU')}: {describe_quantity('time', report.time_s)}, speedup "
        f"{report.speedup:.3g}×, efficiency {report.efficiency:.1%}"
    )
    rows = [
        {"term": name, "seconds": seconds, "share": f"{seconds / report.time_s:.1%}"}
        for name, seconds in report.breakdown.items()
    ]
    rows.append({"term": "total", "seconds": report.time_s, "share": "100.0%"})
    print(format_table(rows))
    for note in report.notes:  # 263-character lines before (review of 2026-12-07)
        print(wrap(note, common.TABLE_WIDTH))
    if report.limiting is not None:
        share = report.breakdown[report.limiting] / report.time_s
        print(f"largest term besides parallel compute: {report.limiting} ({share:.1%})")
    print(
        wrap(
            "\nsensitivity: elasticity d log T / d log θ (% change of the time per % change "
            "of θ; d log S for the speedup):",
            common.TABLE_WIDTH,
        )
    )
    marked = {p.name for p in report.parameters if off_the_slope(p)}
    rows = [
        {
            # The mark on the name: the change column is past the default width.
            "parameter": p.name + (" *" if p.name in marked else ""),
            "value": p.value,
            "unit": p.unit,
            "elasticity": p.elasticity,
            "d log S": p.speedup_elasticity,
            "tried": p.change.label,
            "time after": p.change.time_s,
            "change": f"{p.change.time_change:+.1%}",
        }
        if not p.undetermined
        else {"parameter": p.name, "value": "—", "unit": p.unit, "elasticity": "undetermined"}
        for p in report.parameters
    ]
    print(format_table(rows))
    if marked:
        print(
            wrap(
                "* far from what the elasticity says: it is the slope at the fitted value, and "
                "between the two values a bound takes over (for the default blend, the "
                "efficiency it holds from the largest measured count or the node, "
                "docs/intervals.md)"
            )
        )
    print("\nwhat would move it:")
    for sentence in report.sentences():
        print(wrap(f"  {sentence}", common.TABLE_WIDTH))


# require ------------------------------------------------------------------------------


def _target(args) -> tuple[str, float]:
    for kind in TARGETS:
        value = getattr(args, kind)
        if value is not None:
            return kind, value
    raise InputError(
        "give one target: --efficiency, --speedup, --time, --throughput or --serial-share"
    )


def run_require(args) -> int:
    result = load_with_changes(args.fit, args.set)
    from .._questions import refuse_layout_fit

    refuse_layout_fit(result, "require")
    if args.param == "gpus" and args.gpus is not None:
        raise InputError("--gpus is the unknown with --param gpus; leave it out")
    if args.param != "gpus" and args.gpus is None:
        raise InputError(f"--param {args.param}: give the GPU count of the target with --gpus N")
    # A --set of the solved parameter (or, for a shared name, of its members) moves what
    # the factor is against: "0.149× the fitted 0.0001663" was the value after --set.
    changed = set(parse_assignments(args.set, "--set")) if args.set else set()
    solved = {args.param, *shared_parameters(result.model, args.param)}
    solved |= {name.partition(".")[2] for name in solved}
    answer = require(
        result,
        parameter=args.param,
        target=_target(args),
        gpus=args.gpus,
        max_gpus=args.max_gpus,
        changed=bool(changed & solved),
    )
    if args.json:
        print_json(finite_or_null(dataclasses.asdict(answer)))
        return 0 if answer.reachable else 2
    if not answer.reachable:
        raise InputError(answer.message)
    print(answer.summary())
    return 0


# whatif -------------------------------------------------------------------------------


def _whatif_document(comparison) -> dict:
    """``whatif --json``: the comparison's fields, its optima and points of diminishing
    returns under `perfmodel optimal`'s names (`optimum_fields`, `knee_fields`)."""
    document = dataclasses.asdict(comparison)
    # GPU counts as whole numbers, as `predict --json` writes them (8, not 8.0)
    counts = [int(n) for n in comparison.gpus]
    document["gpus"] = counts
    for when in ("before", "after"):
        if "gpus" in document[when]:
            document[when]["gpus"] = counts
        best, knee = getattr(comparison, f"optimum_{when}"), getattr(comparison, f"knee_{when}")
        optimum = optimum_fields(best)
        if best.gpus_interval is not None:
            optimum["gpus_interval"] = list(best.gpus_interval)
        document[f"optimum_{when}"] = {**optimum, "unit": best.unit, "note": best.note}
        document[f"knee_{when}"] = {
            **knee_fields(knee),
            "searched_up_to": knee.searched,
            "multiple_of": knee.multiple_of,
        }
    return document


def run_whatif(args) -> int:
    from .._questions import refuse_layout_fit

    before = load_fit(args.fit)
    # The fit's measurements too, where they still are: `-o` named its CSV, which was
    # replaced by JSON with exit 0 (fuzz round 11).
    source = before.data.source
    check_outputs({"-o": args.output}, [args.fit, *([source] if os.path.isfile(source) else [])])
    refuse_layout_fit(before, "whatif")
    after = what_if(before, parse_assignments(args.set, "--set"))
    gpus = None if args.gpus is None else parse_list(args.gpus, "--gpus", cast=int)
    comparison = compare_fits(
        before,
        after,
        gpus=gpus,
        max_gpus=args.max_gpus,
        threshold=args.threshold,
        efficiency_floor=args.efficiency_floor,
    )
    if args.output is not None:
        save_fit(after, args.output)
    if args.json:
        print_json(finite_or_null(_whatif_document(comparison)))
        return 0
    print(wrap(_header(before), common.TABLE_WIDTH))
    for name, (old, new) in comparison.changes.items():
        print(f"what-if: {name} {shown_value(old)} → {shown_value(new)}")
    if comparison.note:
        print(wrap(f"note: {comparison.note}", common.TABLE_WIDTH))
    rows = [
        {
            "gpus": int(n),
            "time before": comparison.before["time_s"][i],
            "time after": comparison.after["time_s"][i],
            "change": f"{comparison.time_ratio[i] - 1.0:+.1%}",
            "speedup before": comparison.before["speedup"][i],
            "speedup after": comparison.after["speedup"][i],
            "eff. before": f"{comparison.before['efficiency'][i]:.1%}",
            "eff. after": f"{comparison.after['efficiency'][i]:.1%}",
        }
        for i, n in enumerate(comparison.gpus)
    ]
    print(format_table(rows))
    print(wrap(comparison.optimum_line(), common.TABLE_WIDTH))
    print(wrap(comparison.knee_line(), common.TABLE_WIDTH))
    if comparison.amdahl_line() is not None:
        print(comparison.amdahl_line())
    if args.output:
        message(f"wrote {args.output}")
    return 0


# next ---------------------------------------------------------------------------------


def run_next(args) -> int:
    result = load_fit(args.fit)
    from .._questions import refuse_layout_fit

    refuse_layout_fit(result, "next")
    answer = next_measurements(
        result,
        parse_list(args.candidates, "--candidates", cast=int),
        quantity=args.quantity,
        level=args.level,
        max_gpus=args.max_gpus,
        threshold=args.threshold,
        ensemble=shared_ensemble(result),
    )
    if args.json:
        print_json(finite_or_null(dataclasses.asdict(answer)))
        return 0
    print(wrap(_header(result), common.TABLE_WIDTH))
    print(wrap(answer.summary(), common.TABLE_WIDTH))
    return 0
