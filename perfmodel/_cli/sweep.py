"""`perfmodel sweep SPACE.toml`: a design space described in TOML (`load_space`), swept
and reduced.

A space file has four tables::

    [model]                      # a preset and its options, or fit = "fit.json"
    family = "hybrid"
    options = { flops = 4e14 }

    [fixed]                      # single values of Config fields or model parameters
    layers = 96

    [axes]                       # lists, or ranges {start, stop, step} (both ends
    tp = [1, 2, 4, 8]            # included) or {start, stop, num, scale = "log"}
    gpus = { start = 8, stop = 4096, step = 8 }
    "allreduce.bandwidth_inter" = [25e9, 50e9]

    [sweep]                      # options of `perfmodel.sweep`
    objective = "time"
    per = ["gpus"]
"""

import math
import os
import sys
import threading

import numpy as np

from .._errors import InputError
from .._files import atomic_write
from .._io import to_json
from .._presets import is_hybrid
from .._sweep import (
    ALTERNATIVE_COLUMNS,
    invalid_reasons,
    layout_alternatives,
    load_space,
    read_space_document,
    Space,
    sweep,
    SweepResult,
    WHOLE_FIELDS,
)
from . import train
from .common import (
    check_outputs,
    format_table,
    input_paths,
    message,
    print_json,
)

# The measures shown after the axes, the one ranked by first and the Pareto front's next:
# a table too wide for the terminal leaves out its last columns, never those.
SHOWN = {
    "time": ("samples_per_s", "cost_per_sample", "step_time_s", "memory_gb", "reason"),
    "cost": ("cost_per_sample", "samples_per_s", "step_time_s", "memory_gb", "reason"),
    "time_to_train": ("time_to_train_s", "cost_to_train", "steps_to_target", "step_time_s")
    + ("memory_gb", "reason"),
    "cost_to_train": ("cost_to_train", "time_to_train_s", "steps_to_target", "step_time_s")
    + ("memory_gb", "reason"),
}
DEFAULT_INIT_TIMEOUT = 120.0  # seconds for every process to join (--init-timeout)
RANKED = {"time_to_train": "time to train", "cost_to_train": "cost to train"}


def _options(space: Space, args) -> dict:
    options = dict(space.options)
    if args.top is not None:
        options["top_k"] = args.top
    if "top_k" in options:
        # Held on the device for every chunk: never more rows than configurations.
        sizes = math.prod(len(v) for v in space.axes.values())
        options["top_k"] = min(options["top_k"], sizes)
    if args.objective:
        options["objective"] = args.objective
    if args.precision:
        options["precision"] = args.precision
    if args.per is not None:
        options["per"] = [p.strip() for p in args.per.split(",") if p.strip()]
    options.pop("max_configs", None)  # load_space compared the size with it
    return options


def _whole(key: str, value):
    """`value` as an int where `key` is a whole-number field (GPU counts, tp, pp, …) and
    it is one: the JSON gave "gpus": 512.0 where every other command writes 512."""
    if key in WHOLE_FIELDS and isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _records(frame) -> list[dict]:
    rows = []
    for record in frame.to_dict(orient="records"):
        row = {}
        for key, value in record.items():
            if isinstance(value, np.generic):
                value = value.item()
            if isinstance(value, float) and not math.isfinite(value):
                value = None
            row[key] = _whole(key, value)
        rows.append(row)
    return rows


def result_document(result: SweepResult, space: Space, alternatives=None) -> dict:
    """The JSON-ready description of a sweep."""
    extra = {} if alternatives is None else {"alternatives": _records(alternatives)}
    return {
        "space": space.source,
        "axes": {k: [_whole(k, v) for v in values] for k, values in space.axes.items()},
        "fixed": {k: _whole(k, v) for k, v in space.fixed.items()},
        "evaluated": result.evaluated,
        "valid": result.valid,
        "feasible": result.feasible,
        "objective": result.objective,
        "precision": result.precision,
        "devices": list(result.devices),
        "seconds": result.seconds,
        "configs_per_s": result.rate,
        "best": _records(result.best),
        "per_axis": {name: _records(frame) for name, frame in result.per_axis.items()},
        "top": _records(result.top),
        "pareto": _records(result.pareto),
        "warnings": list(result.warnings),
        **extra,
    }


def ranked_csv(result: SweepResult, space: Space) -> str:
    """The ranked configurations (`SweepResult.top`, best first) as CSV text: the axes,
    then step time, samples/s, cost, memory and seconds per term (every column but the
    status ones, the same on every ranked row); whole-number axes written as integers."""
    frame = result.top.drop(columns=["valid", "feasible", "reason"], errors="ignore")
    for name in space.axes:
        if name in WHOLE_FIELDS and name in frame:
            frame[name] = frame[name].astype("int64")
    return frame.to_csv(index=False, lineterminator="\n")


def _unranked_summary(name: str, frame) -> str:
    """One line for the values of `name` without a feasible configuration, by reason."""
    lines = []
    for kind in ("no valid layout", "out of memory"):
        rows = frame[frame["reason"].astype(str).str.startswith(kind)]
        if len(rows):
            values = [f"{v:g}" for v in rows[name]]
            if kind == "out of memory":  # and what the smallest valid layout needs
                needs = rows["reason"].astype(str).str.partition("needs ")[2]
                values = [f"{v}: needs {n}" if n else v for v, n in zip(values, needs)]
            shown = ", ".join(values[:8]) + (", …" if len(values) > 8 else "")
            lines.append(f"{len(values)} with {kind} ({shown})")
    return f"not ranked, {name}: " + "; ".join(lines)


def _describe(row, names) -> str:
    return " ".join(f"{n}={float(row[n]):g}" for n in names)


def _print_layout(result: SweepResult, space: Space, alternatives) -> None:
    """The best layout in one line, and how much faster it is than the next distinct ones."""
    if alternatives is None or not len(result.top):
        return
    best = result.top.iloc[0]
    ranked = ""
    if len(np.atleast_1d(space.axes.get("global_batch", ()))) > 1 and result.objective == "time":
        # A larger batch may take longer per step and still win: "2.483 s per step" above a
        # Pareto row of 2.446 s read as a contradiction (review of 2026-12-07).
        ranked = (
            f", {float(best['samples_per_s']):.4g} samples/s (ranked by samples per second: "
            "the global batch varies)"
        )
    print(
        f"\nbest layout: {_describe(best, space.axes)}: {float(best['step_time_s']):.4g} s per step"
        + ranked
    )
    names = [n for n in alternatives.columns if n not in ALTERNATIVE_COLUMNS]
    for _, row in alternatives.iterrows():
        also = f" (also {row['also']})" if row.get("also") else ""
        print(
            f"  {row['slower_pct']:5.1f}% slower with another {row['axis']}{also}: "
            f"{_describe(row, names)} ({row['step_time_s']:.4g} s)"
        )


SHOWN_ENDS = 20
"""Rows printed at each end of a long table (the middle is counted, not printed)."""


def _cost_unit(space: Space) -> str:
    """What the cost columns count: GPU-hours unless the space gives a price (the sweep's
    ``cost_per_sample`` had no unit: newcomer review of 2026-12-06)."""
    if "price_per_gpu_hour" in space.axes or "price_per_gpu_hour" in space.fixed:
        unit = "price_per_gpu_hour's currency (its price × GPUs × hours)"
    else:
        unit = "GPU-hours (give price_per_gpu_hour for a currency)"
    return f"costs (cost_per_sample, cost_to_train) in {unit}; memory_gb in GB per GPU"


def _print(result: SweepResult, space: Space, alternatives=None) -> None:
    counts = ""
    if result.valid is not None:
        counts = f"; {result.valid:.4g} valid layouts, {result.feasible:.4g} fit in memory"
    print(
        f"{space.source}: {result.evaluated:.4g} configurations ({len(space.axes)} axes) in "
        f"{result.seconds:.3g} s ({result.rate:.3g}/s, {result.precision}, "
        f"{len(result.devices)} device(s): {result.devices[0]}){counts}"
    )
    print(_cost_unit(space))
    ranked = (
        "samples per second, highest first" if result.objective == "time" else "cost per sample"
    )
    ranked = RANKED.get(result.objective, ranked)
    axes = list(space.axes)
    shown = SHOWN.get(result.objective, SHOWN["time"])

    def show(title, frame):
        # An axis with one value on every row is said once under the table: a Pareto front
        # whose rows all ran 5e+10 B/s showed that column and left out its cost and time
        # past the width (newcomer review of 2026-12-07).
        same = [a for a in axes if a in frame.columns and len(frame) > 1 and _one_value(frame[a])]
        columns = [
            c for c in (*axes, *shown) if c in frame.columns and c != "reason" and c not in same
        ]
        records = _records(frame[columns])
        left = len(records) - 2 * SHOWN_ENDS
        if left > 1:
            # A 10⁶-count gpus axis printed 1.7 million lines (bad-input review of
            # 2026-12-06); -o writes them all.
            gap = dict.fromkeys(columns, "…")
            records = [*records[:SHOWN_ENDS], gap, *records[-SHOWN_ENDS:]]
        print(f"\n{title}:")
        print(format_table(records, columns))
        if left > 1:
            print(f"(… {left:,} rows between not shown; -o FILE.json writes every row)")
        if same:
            values = _records(frame[same].iloc[:1])[0]
            said = [
                f"{a}={values[a]:g}" if isinstance(values[a], float) else f"{a}={values[a]}"
                for a in same
            ]
            print(f"(every row: {' '.join(said)})")

    for name, frame in result.per_axis.items():
        feasible = frame[frame["feasible"].astype(bool)]
        show(f"best per {name} (by {ranked})", feasible)
        if len(feasible) < len(frame):
            print(_unranked_summary(name, frame[~frame["feasible"].astype(bool)]))
    show(f"top {len(result.top)} (by {ranked})", result.top)
    if len(result.pareto):
        per = "to train" if result.objective in RANKED else "per sample"
        show(f"Pareto front (time against cost {per})", result.pareto)
    _print_layout(result, space, alternatives)


def _one_value(column) -> bool:
    """Whether every row of a table column holds the same value."""
    return column.nunique(dropna=False) == 1


def _join_cluster(args) -> bool:
    """Initialise `jax.distributed`; True on the process that reports (process 0)."""
    import jax

    given = {
        "--coordinator": args.coordinator,
        "--num-processes": args.num_processes,
        "--process-id": args.process_id,
        "--init-timeout": args.init_timeout,
    }
    if not args.distributed:
        used = [flag for flag, v in given.items() if v is not None]
        if used:
            raise InputError(f"{used[0]}: only with --distributed")
        return True
    if args.init_timeout is None:
        args.init_timeout = DEFAULT_INIT_TIMEOUT
    address = args.coordinator
    if address is not None:
        host, _, port = address.rpartition(":")
        if not host or not port.isdigit():
            raise InputError(f"--coordinator: expected HOST:PORT, got {address!r}")
    read_space_document(args.space)  # a missing or garbled space, said now, not after the join
    try:
        # Collectives between CPU processes (GPUs use NCCL whatever this says).
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
    except AttributeError:  # a JAX without the option: GPU and TPU clusters still work
        pass
    # JAX aborts the whole process (SIGABRT, a screen of C++ logs) when the others do not
    # join in time; a watchdog ends it first with one line, and JAX's own limit is later.
    watchdog = threading.Timer(args.init_timeout, _no_cluster, (args,))
    watchdog.daemon = True
    watchdog.start()
    try:
        cluster = {
            "coordinator_address": args.coordinator,
            "num_processes": args.num_processes,
            "process_id": args.process_id,
        }
        jax.distributed.initialize(
            **{k: v for k, v in cluster.items() if v is not None},
            initialization_timeout=int(math.ceil(args.init_timeout)) + 30,
        )
    except Exception as error:  # JAX's own errors, whatever their class
        raise InputError(f"--distributed: could not join a JAX cluster: {error}")
    finally:
        watchdog.cancel()
    return jax.process_index() == 0


def _no_cluster(args) -> None:
    where = f" at {args.coordinator}" if args.coordinator else ""
    count = f"the {args.num_processes} processes" if args.num_processes else "every process"
    sys.stderr.write(
        f"perfmodel: error: --distributed: not all of {count} joined the JAX cluster{where} "
        f"within --init-timeout {args.init_timeout:g} s; start the same command in each\n"
    )
    sys.stderr.flush()
    os._exit(2)


def run_sweep(args) -> int:
    # The fit --convergence reads is an input too: -o over it replaced it by the sweep.
    check_outputs({"-o": args.output}, input_paths(args.space, args.convergence))
    reporter = _join_cluster(args)
    space = load_space(args.space, max_configs=args.max_configs, yes=args.yes)
    for note in space.notes:
        print(f"warning: {space.source}: {note}", file=sys.stderr)
    check_outputs({"-o": args.output}, space.inputs)  # the fit its model came from too
    options = train.sweep_options(args.space, _options(space, args), args.convergence)
    try:
        result = sweep(
            space.model,
            space.axes,
            fixed=space.fixed,
            progress=args.progress if reporter else False,
            **options,
        )
    except InputError as error:
        raise InputError(f"{space.source}: {error}")
    if not reporter:
        return 0
    for warning in result.warnings:  # the space's file named, as its reading's warnings
        print(f"warning: {space.source}: {warning}", file=sys.stderr)
    alternatives = None
    if is_hybrid(getattr(space.model, "model", space.model)) and len(result.top):
        alternatives = layout_alternatives(
            space.model,
            space.axes,
            result.top.iloc[0],
            fixed=space.fixed,
            objective=result.objective,
            precision=result.precision,
        )
    document = result_document(result, space, alternatives)
    if result.valid == 0:  # "0 valid layouts" alone left the user guessing which check
        reasons = invalid_reasons(space.model, space.axes, space.fixed)
        document["invalid_reasons"] = reasons
        if reasons:
            print(
                f"warning: {space.source}: no layout is valid; of a sample of the "
                f"configurations: {'; '.join(reasons)}",
                file=sys.stderr,
            )
    if args.output is not None:
        csv = args.output.lower().endswith(".csv")
        text = ranked_csv(result, space) if csv else to_json(document)
        with atomic_write(args.output) as stream:
            stream.write(text)
    if args.json:
        print_json(document)
    else:
        _print(result, space, alternatives)
        if args.output:
            message(f"wrote {args.output}")
    return _status(result, space)


def _status(result: SweepResult, space: Space) -> int:
    """1 where no configuration is valid and fits in memory (the result is still printed
    and written, with its reasons), as ``grep`` finds nothing; else 0."""
    if result.feasible == 0 or (result.feasible is None and not len(result.top)):
        what = "valid" if result.valid == 0 else "valid and within memory"
        print(f"perfmodel: {space.source}: no configuration is {what}", file=sys.stderr)
        return 1
    return 0
