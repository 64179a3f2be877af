"""Layouts on the command line: fitting the `hybrid` family from measured runs, and
`predict` and `optimal` of hybrid fits over parallel layouts.

* `fit_hybrid`: which parameters the runs determine (`parameter_plan`: elasticities of
  every run's time), fits those and fixes the rest at the GPU's published numbers, and
  says which were fixed and why.
* `layout_rows`: ``predict`` at layouts given as options (``--tp 8 --pp 4 …``, lists
  broadcast against ``--gpus``) or a CSV of configurations (``--layouts``), with speedup
  and efficiency against a valid reference layout: the fit's measured run on the fewest
  GPUs.
* `optimal_layout`: ``optimal`` as a layout search over GPU counts (`perfmodel.sweep`).
"""

import csv
import dataclasses
import difflib
import math
from typing import NamedTuple

import jax
import numpy as np

from .._config import (
    check_one_microbatch_field,
    CODED_FIELDS,
    CONFIG_FIELDS,
    FIELD_NAMES,
    LARGEST_VALUE,
    LAYOUT_FIELDS,
    NONNEGATIVE_FIELDS,
    UNKNOWN_AT_ZERO,
    WHOLE_FIELDS,
)
from .._csvtext import unique_columns
from .._data import MAX_GPUS
from .._errors import FitError, InputError
from .._fitting import (
    describe_layout,
    evaluate_layouts,
    fit,
    FitResult,
    memory_budget,
    reference_seconds,
    reference_time,
    reference_values,
    reference_with_workload,
    row_workloads,
)
from .._keywords import did_you_mean
from .._levels import level_text
from .._presets import build, hybrid_kind
from .._sweep import (
    ALTERNATIVE_COLUMNS,
    inherited_recipe,
    invalid_reasons,
    layout_alternatives,
    pick_robustness,
    sweep,
)
from .._terms import first_invalid_layout, gpu_named, GPUS, OUT_OF_MEMORY, REASONS
from .._text import wrap
from .common import finite_or_none, percent_text
from .draws import draws_or_none
from .grammar.vocabulary import LAYOUT_OPTIONS
from .layout_rates import (
    breakdown_of,
    rates_of,
    rates_text,
    superlinear_line,
    workload_line,
    workload_of,
)

# What `predict --interval` bounds, by `--kind`.
INTERVAL_WORDS = {
    "prediction": "prediction interval (a new measurement: parameters, noise, model-form drift)",
    "confidence": "confidence interval of the curve (parameters and model-form drift)",
}
MEASURED_COLUMNS = frozenset(("time_s", "time_ms", "time_us", "throughput", "series"))
# Parameters the runs may determine, most identifiable first; the rest stay fixed.
CANDIDATES = (
    "compute.e_max",
    "compute.d0",
    "tensor.bandwidth",
    "compute.hbm_bandwidth",
    "allreduce.bandwidth_inter",
)
WHY_FIXED = {
    "compute.peak_flops": "the spec sheet's (only its product with compute.e_max matters)",
    "tensor.latency": "assumed (negligible at training message sizes)",
    "allreduce.latency_inter": "assumed (negligible at training message sizes)",
}
# Costs per step this close are one cost (`optimal --objective cost` names the range).
COST_TIE = 0.005
DEFAULT_BOUNDS = {"compute.e_max": (0.3, 0.95), "compute.d0": (1.0, 5000.0)}
MIN_ELASTICITY = 0.02
# The GEMM efficiency has no published value to fall back on: it is fitted while its
# condition stays moderate. Links have nccl-tests numbers: fitted only when clear.
MAX_CONDITION = {"compute.e_max": 100.0, "compute.d0": 100.0}
MAX_LINK_CONDITION = 30.0


def link_bounds(gpu: str) -> dict[str, tuple[float, float]]:
    """Ranges a fit may give the links of `gpu` (`GPUS`): a tenth to 1.5× its nccl-tests
    bus bandwidth on NVLink (1.5× is past the spec sheet's per-direction bandwidth, 300
    GB/s on A100, 450 on H100), to 2× on the network (in-network reduction, SHARP), to
    the spec sheet's HBM bandwidth. Four made-up H100 runs fitted NVLink at 3.3 TB/s,
    7× the hardware, and the layout search used it."""
    spec = GPUS[gpu]
    return {
        "tensor.bandwidth": (spec["nvlink_bandwidth"] / 10, spec["nvlink_bandwidth"] * 1.5),
        "allreduce.bandwidth_inter": (
            spec["network_bandwidth"] / 10,
            spec["network_bandwidth"] * 2,
        ),
        "compute.hbm_bandwidth": (spec["hbm_bandwidth"] / 10, spec["hbm_bandwidth"] / 0.9),
    }


def at_link_bounds(model, bounds: dict, gpu: str) -> list[str]:
    """A note per link of a fitted `model` that stopped at an end of its range in
    `bounds` (the `link_bounds` the fit held it to): the runs ask for a link the GPU does
    not have, so some other part of them is off."""
    values = model.parameters()
    notes = []
    for name, (lo, hi) in bounds.items():
        value = float(values[name])
        if value >= hi * 0.99 or value <= lo * 1.01:
            end = "upper" if value >= hi * 0.99 else "lower"
            faster = "a faster" if end == "upper" else "a slower"
            notes.append(
                f"{name} stopped at the {end} end of what the {gpu} can do ({lo:.3g}–"
                f"{hi:.3g} B/s): the runs ask for {faster} link (or memory) than the hardware "
                "has, so something else in them is off (a time, a layout column); check "
                f"the runs, or --fix {name}=VALUE from nccl-tests"
            )
    return notes


# Fitting --------------------------------------------------------------------------------


def elasticities(model, data, names, step: float = 1e-4) -> np.ndarray:
    """``d ln T / d ln θ`` of every run's predicted time (rows) for each of `names`."""
    with jax.enable_x64(True):
        config = data.to_config()
        base = np.log(np.asarray(model(config), dtype=np.float64))
        values = model.parameters()
        columns = []
        for name in names:
            specs = model.parameter_specs()[name]
            value = float(values[name])
            moved = value * math.exp(step)
            if specs.kind == "fraction" and moved >= 1.0:
                moved = value * math.exp(-step)
            shifted = np.log(np.asarray(model.with_parameters({name: moved})(config)))
            columns.append((shifted - base) / math.log(moved / value))
    return np.stack(columns, axis=1)


def parameter_plan(model, data, fix: dict) -> tuple[list[str], dict[str, float], list[str]]:
    """Which parameters the runs determine: ``(free, fixed values, notes)``.

    Candidates (`CANDIDATES`, in order) join the free set while they move some run's
    time (``|d ln T/d ln θ| ≥ MIN_ELASTICITY``), the free set stays well conditioned
    (condition number of the elasticities ≤ `MAX_CONDITION`, `MAX_LINK_CONDITION` for the
    links) and there are distinct runs left to determine them. The rest, and parameters
    the user fixed, stay fixed.
    """
    values = {k: float(v) for k, v in model.parameters().items()}
    names = [n for n in CANDIDATES if n in values and n not in fix]
    jac = elasticities(model, data, names) if names else np.zeros((len(data.gpus), 0))
    room = data.distinct_configs()
    free, notes = [], []
    for i, name in enumerate(names):
        largest = float(np.max(np.abs(jac[:, i])))
        if largest < MIN_ELASTICITY:
            notes.append(
                fixed_note(name, values[name], "the runs barely depend on it ")
                + f"(|d ln T/d ln θ| ≤ {largest:.3f}); measure runs where it matters to fit it"
            )
            continue
        if len(free) >= room:
            notes.append(fixed_note(name, values[name], "no distinct runs left for it"))
            continue
        trial = jac[:, [names.index(n) for n in free] + [i]]
        singular = np.linalg.svd(trial, compute_uv=False)
        condition = singular[0] / singular[-1] if singular[-1] > 0 else math.inf
        if condition > MAX_CONDITION.get(name, MAX_LINK_CONDITION):
            notes.append(
                fixed_note(name, values[name], "not identifiable from these runs, ")
                + f"its effect is nearly that of {', '.join(free)} (condition {condition:.3g})"
            )
            continue
        free.append(name)
    for name, why in WHY_FIXED.items():
        if name in values and name not in fix:
            notes.append(fixed_note(name, values[name], why))
    fixed = {n: v for n, v in values.items() if n not in free}
    return free, {**fixed, **fix}, notes


def fixed_note(name: str, value: float, why: str) -> str:
    """The fit's note for a parameter `parameter_plan` holds at a published value."""
    return f"{name} fixed at {value:.4g}: {why}"


def assumed_parameters(result: FitResult) -> list[str]:
    """Parameters a hybrid fit held at published values because its runs did not
    determine them: those with a `fixed_note` (the notes travel with a saved fit); a value
    the user gave (``--fix``) has none."""
    return [
        name
        for name in result.model.parameters()
        if any(w.startswith(f"{name} fixed at ") for w in result.warnings)
    ]


def fit_hybrid(data, *, weak: bool = False, gpu: str | None = None, **options) -> FitResult:
    """Fit the `hybrid` family to measured runs (`parameter_plan` decides what is free).

    `gpu`: `--gpu`; None reads the runs' ``gpu`` column (`gpu_of_runs`), else A100-80GB.
    """
    if weak:
        raise InputError(
            "--weak-scaling: the hybrid family reads each run's layout and batch from the "
            "data (global_batch, tp, pp, …); drop --weak-scaling"
        )
    runs_gpu = gpu_of_runs(data, gpu)
    data, per_step = _steps_of_throughput(data)
    gpu, told = runs_gpu.name, runs_gpu.note
    model = build("hybrid", gpu=gpu)
    fix = dict(options.pop("fix", None) or {})
    specs = model.parameter_specs()
    unknown = [n for n in fix if n not in specs]
    if unknown:
        raise InputError(
            f"no parameter {unknown[0]!r} in model 'hybrid'; valid: {', '.join(specs)}"
        )
    for term in model.terms:
        for field in term.requires:
            if field not in data.config:
                raise InputError(
                    f"{data.source}: model 'hybrid' needs {field!r} in the data (a CSV "
                    f"column): its {term.name} term depends on it"
                )
    columns = ignored_columns(data)
    for column in columns:  # a near miss of a field is a typo: the runs would be read at
        if _near_miss(column, data):  # its default (seq_paralel fitted SP runs as non-SP)
            raise InputError(
                f"{data.source}: column {column!r} is not a field perfmodel reads"
                f"{_did_you_mean(column)}; every run would be read at that field's default: "
                "rename the column, or drop it"
            )
    ignored = [_ignored(column) for column in columns]
    _check_measured_layouts(data, ignored)
    free, fixed, notes = parameter_plan(model.with_parameters(fix), data, fix)
    notes += ignored
    given = options.pop("bounds", {})
    links = {k: v for k, v in link_bounds(gpu).items() if k in free and k not in given}
    bounds = {**{k: v for k, v in DEFAULT_BOUNDS.items() if k in free}, **links, **given}
    options["loss"] = options.get("loss") or "log"
    result = fit(model, data, fix=fixed, bounds=bounds, **options)
    _refuse_unreachable(result, bounds, gpu, runs_gpu.assumed)
    _refuse_far_runs(result)
    notes += at_link_bounds(result.model, links, gpu)
    if told:
        notes.append(told)
    if per_step:
        notes.append(per_step)
    # A column of 0 reads "not given" as much as no column (bad-input review of 2026-12-06)
    missing = [n for n in ("heads", "vocab") if not np.any(data.config.get(n, 0.0))]
    if missing:
        notes.append(
            f"{', '.join(missing)} not in the data (or 0): taken as "
            + ", ".join({"heads": "hidden/128", "vocab": "0 (no output layer)"}[n] for n in missing)
        )
    return dataclasses.replace(result, warnings=(*result.warnings, *notes))


GPU_COLUMN = "gpu"
# How far off the runs may stay, with the GEMM efficiency at an end of its range, before
# the fit is called a failure: a factor of 1.25 in the median run.
UNREACHABLE = 1.25


class RunsGpu(NamedTuple):
    """The GPU a hybrid fit's runs are read on (`gpu_of_runs`)."""

    name: str  # a key of `GPUS`, or the `--gpu` spelling
    note: str  # where it came from, for the fit's warnings ("" for --gpu)
    assumed: bool  # neither --gpu nor a column said it: A100-80GB by default


def gpu_of_runs(data, given: str | None) -> RunsGpu:
    """The GPU the runs were measured on, and a note saying where it came from.

    `given` (``--gpu``) first (cells of the ``gpu`` column that name another known GPU
    contradict it; others are left to it); else the column, one GPU for every run fitted,
    spelt as `gpu_named` reads; else A100-80GB, the GPU of the published Megatron-LM runs,
    said in the note: runs of another GPU fitted as A100 leave e_max at its bound.
    """
    cells = _column_cells(data, GPU_COLUMN)
    named = {gpu_named(text) for _, text in cells}
    if given is not None:
        if gpu_named(given) is None:
            raise InputError(f"unknown gpu {given!r}; valid: {', '.join(GPUS)}")
        given = gpu_named(given)
        others = sorted(n for n in named - {None, given})
        if others:
            raise InputError(
                f"--gpu {given} contradicts {data.source}'s {GPU_COLUMN!r} column "
                f"({', '.join(others)}): give one"
            )
        return RunsGpu(given, "", False)
    for line, text in cells:
        if gpu_named(text) is None:
            expected = f"one of {', '.join(GPUS)} (or a spelling of one)"
            if not text:
                expected += ", the GPU of every run"
            raise InputError(
                f"{data.source} line {line}: column {GPU_COLUMN!r}: expected {expected}, "
                f"got {text!r}"
            )
    if len(named) > 1:
        raise InputError(
            f"{data.source}: column {GPU_COLUMN!r} names {len(named)} GPUs "
            f"({', '.join(sorted(named))}): fit each GPU's runs apart"
        )
    if named:
        column = named.pop()
        return RunsGpu(column, f"GPU {column}: read from the {GPU_COLUMN!r} column", False)
    note = (
        "GPU taken as A100-80GB (the published Megatron-LM runs'): runs of another GPU "
        f"need --gpu or a {GPU_COLUMN!r} column ({', '.join(GPUS)})"
    )
    return RunsGpu("A100-80GB", note, True)


def _column_cells(data, name: str) -> list[tuple[int, str]]:
    """``(line, cell)`` of column `name` for each run of `data` (its `lines`: the rows
    of its series only), as the CSV reader reads a header (a BOM, spaces around names);
    none without a CSV or the column."""
    try:
        with open(data.source, newline="", encoding="utf-8-sig") as stream:
            reader = csv.reader(stream)
            header = [c.strip() for c in next(reader, [])]
            if name not in header:
                return []
            at = header.index(name)
            rows = {reader.line_num: row for row in reader}
    except (OSError, UnicodeDecodeError, csv.Error):
        return []
    lines = [int(n) for n in np.asarray(data.lines)]
    return [
        (n, (rows[n][at] if at < len(rows.get(n, ())) else "").strip()) for n in lines if n in rows
    ]


def _steps_of_throughput(data) -> tuple:
    """Throughput runs as step times, ``global_batch / throughput`` (samples per second
    of each run's global batch), and a note saying so; other data as they are.

    The hybrid model gives seconds per step; a throughput is read as seconds per sample
    (1/throughput), so the two were compared as they were: a fit 1024× off, R² −6.
    """
    if data.target != "throughput":
        return data, ""
    if "global_batch" not in data.config:  # refused as a missing field by the caller
        return data, ""
    steps = data.time_s * np.asarray(data.config["global_batch"], float)
    read = "read throughput as samples/s: step time = global_batch / throughput"
    return dataclasses.replace(data, time_s=steps, target="time", unit="s", per_gpu=False), read


def _refuse_unreachable(result: FitResult, bounds: dict, gpu: str, assumed: bool) -> None:
    """A fit whose GEMM efficiency stopped at an end of its range while the runs stay
    `UNREACHABLE` apart from the model is no fit: every answer read from it would be
    off by that factor (two H100 runs fitted as A100: R² −20, 2.4× slow, and a
    confident 4096-GPU answer). Raised as a `FitError`, with the likely cause."""
    name = "compute.e_max"
    if name not in bounds:
        return
    lo, hi = bounds[name]
    value = float(result.model.parameters()[name])
    # log(model / measured) of step times: `_steps_of_throughput` read any rates as those.
    off = float(np.exp(np.median(np.asarray(result.residuals))))
    if value >= hi * 0.99 and off > UNREACHABLE:
        why = (
            f"even at {name} = {hi:g} (its upper bound) the model of the {gpu} is "
            f"{off:.2f}× slower than the runs"
        )
        hint = (
            f"were they measured on another GPU? (--gpu or a 'gpu' column; {', '.join(GPUS)})"
            if assumed
            else "is a layout or recipe field (recompute, seq_parallel, flash_attention, "
            "microbatch_size) or the time unit off?"
        )
    elif value <= lo * 1.01 and off < 1.0 / UNREACHABLE:
        why = (
            f"even at {name} = {lo:g} (its lower bound) the model of the {gpu} is "
            f"{1.0 / off:.2f}× faster than the runs"
        )
        hint = (
            "is a layout or recipe field (recompute, zero, microbatch_size), the GPU or the "
            "time unit off?"
        )
    else:
        return
    raise FitError(f"{result.data.source}: the hybrid model cannot fit these runs: {why}; {hint}")


RUN_OFF = 2.0
"""How far (×) the fitted hybrid model may miss one run before the fit is refused: the
published Megatron-LM runs are within 1.13× uncalibrated (benchmarks/megatron.py)."""


def _refuse_far_runs(result: FitResult) -> None:
    """A fit that misses one of its own runs by more than `RUN_OFF` is no fit: a run
    with ``seq_len = 1e9`` came out "R² -1.0e+19, converged" and answered "worth
    buying: 512 GPUs" (bad-input review of 2026-12-06). Raised as a `FitError` naming
    the worst run's line of the CSV."""
    residual = np.asarray(result.residuals, float).reshape(-1)  # log(model / measured)
    far = np.flatnonzero(~(np.abs(residual) <= np.log(RUN_OFF)))  # NaN is far too
    if not len(far):
        return
    data = result.data
    worst = int(far[np.argmax(np.nan_to_num(np.abs(residual[far]), nan=np.inf))])
    off = np.exp(residual)
    lines = np.asarray(getattr(data, "lines", np.arange(len(off)) + 2)).reshape(-1)
    ratio = float(off[worst])
    how = f"{ratio:.3g}× slower than" if ratio >= 1.0 else f"{1.0 / ratio:.3g}× faster than"
    others = f" (and {len(far) - 1} more run{'s' if len(far) > 2 else ''})" if len(far) > 1 else ""
    raise FitError(
        f"{data.source}: line {int(lines[worst])}: the fitted hybrid model is {how} this run "
        f"({float(data.time_s[worst]):.4g} s){others}; is a field of the run (layers, hidden, "
        "seq_len, global_batch, a layout field) or its time off?"
    )


def ignored_columns(data) -> list[str]:
    """Columns of the runs CSV that no `Config` field reads: a misspelt
    ``micro_batch_size`` leaves every run at the default micro-batch size."""
    try:
        with open(data.source, newline="", encoding="utf-8-sig") as stream:
            header = next(csv.reader(stream), [])
    except (OSError, UnicodeDecodeError):
        return []
    known = {*CONFIG_FIELDS, *MEASURED_COLUMNS}
    names = [c.strip() for c in header if c.strip()]
    return [
        c
        for c in names
        if c not in known and c != GPU_COLUMN and f"read {c} as" not in data.read_as
    ]


def _did_you_mean(column: str) -> str:
    """`` (did you mean 'microbatch_size'?)`` for a column close to a `Config` field."""
    return did_you_mean(column, CONFIG_FIELDS, cutoff=0.7)


def _near_miss(column: str, data) -> bool:
    """Whether `column` looks like a misspelt field that the runs do not give otherwise
    (``seq_paralel`` without ``seq_parallel``); a ``gpu`` column (the GPU's name, which
    `benchmarks/megatron.py` reads and ``--gpu`` gives here) is not one."""
    close = difflib.get_close_matches(column, CONFIG_FIELDS, n=1, cutoff=0.7)
    return bool(close) and column != "gpu" and close[0] not in data.config


def _ignored(column: str) -> str:
    return f"column {column!r} is not a field perfmodel reads: ignored{_did_you_mean(column)}"


def _check_measured_layouts(data, ignored: list[str]) -> None:
    """A measured run whose layout Megatron-LM could not run (`layout_status`: tp·pp not
    dividing the GPUs, pp not dividing the layers, …) is a typo, refused with its line
    and the `ignored` columns that may explain it."""
    row = _bad_shape(data.config)
    if row is not None:
        raise InputError(f"{data.source} line {int(data.lines[row])}: this run's {_SHAPE}")
    with jax.enable_x64(True):
        invalid = first_invalid_layout(data.to_config(), "hybrid")
    if invalid is not None:
        i, reason = invalid
        raise InputError(
            f"{data.source} line {int(data.lines[i])}: this run's layout is not valid "
            f"({reason}); a measured run has a layout that can run"
            + "".join(f"; {note}" for note in ignored)
        )


# Layouts ---------------------------------------------------------------------------------


def _value(text: str, field: str, where: str) -> float:
    names = FIELD_NAMES.get(field, {})
    cell = str(names.get(text.strip().lower(), text.strip()))
    try:  # Python's float reads "2_80" and "２８０" as 280: a CSV does not mean that
        value = float(cell) if cell.isascii() and "_" not in cell else math.nan
    except ValueError:
        value = math.nan
    codes = ", ".join(f"{c:g}" for c in CODED_FIELDS.get(field, ()))
    extra = f" or {', '.join(names)}" if names else ""
    if not math.isfinite(value):
        expected = f"one of {codes}{extra}" if names else "a number"
        raise InputError(f"{where}: expected {expected}, got {text!r}")
    if field in CODED_FIELDS and value not in CODED_FIELDS[field]:
        raise InputError(f"{where}: expected one of {codes}{extra}, got {text!r}")
    if field in NONNEGATIVE_FIELDS:
        if value < 0:
            raise InputError(f"{where}: expected a number ≥ 0, got {text!r}")
    elif field in WHOLE_FIELDS and value < 1:
        raise InputError(f"{where}: expected a whole number ≥ 1, got {text!r}")
    elif value <= 0:
        raise InputError(f"{where}: expected a positive number, got {text!r}")
    if field in WHOLE_FIELDS and value != round(value):
        raise InputError(f"{where}: expected a whole number, got {text!r}")
    if value > LARGEST_VALUE:  # global_batch = 1e300 was predicted inf s, "ok"
        raise InputError(f"{where}: expected at most {LARGEST_VALUE:g}, got {text!r}")
    if field == "gpus" and value > MAX_GPUS:  # as --gpus (a row of 1e18 GPUs was answered)
        raise InputError(f"{where}: expected a GPU count of at most {MAX_GPUS:,}, got {text!r}")
    return value


def _read_layouts(path: str) -> dict[str, np.ndarray]:
    where = f"--layouts {path}"
    try:
        with open(path, newline="", encoding="utf-8-sig") as stream:
            reader = csv.reader(stream)
            lines = [(reader.line_num, cells) for cells in reader]
    except OSError as error:
        raise InputError(f"{where}: cannot read ({error.strerror})")
    except UnicodeDecodeError as error:
        raise InputError(f"{where}: not a CSV ({error})")
    except csv.Error as error:
        raise InputError(f"{where} line {reader.line_num}: not readable as CSV ({error})")
    if not lines:
        raise InputError(f"{where}: no rows")
    header = unique_columns(lines[0][1], where)
    rows = [(line, cells) for line, cells in lines[1:] if any(c.strip() for c in cells)]
    if not rows:
        raise InputError(f"{where}: no rows")
    # A runs CSV (`fit --model hybrid`'s input) reads as its layouts: the measured column
    # is left out, so predictions can be set beside the measurements.
    columns = [c for c in header if c not in MEASURED_COLUMNS]
    unknown = [c for c in columns if c not in CONFIG_FIELDS]
    if unknown:
        raise InputError(
            f"{where}: unknown column {unknown[0]!r}{_did_you_mean(unknown[0])}; valid: "
            "Config fields " + ", ".join(CONFIG_FIELDS)
        )
    if "gpus" not in columns:
        raise InputError(f"{where}: missing column 'gpus'")
    check_one_microbatch_field(columns, where)
    out = {c: [] for c in columns}
    for i, (line, cells) in enumerate(rows, start=1):
        if len(cells) > len(header):
            raise InputError(
                f"{where} line {line}: {len(cells)} cells, but the header has "
                f"{len(header)} columns ({', '.join(header)})"
            )
        for key, text in zip(header, cells + [""] * (len(header) - len(cells))):
            if key in MEASURED_COLUMNS:
                continue
            at = f"{where} row {i} (line {line}), column {key!r}"
            if not text.strip():
                raise InputError(f"{at}: empty cell, expected a number")
            out[key].append(_value(text, key, at))
    layouts = {k: np.asarray(v) for k, v in out.items()}
    row = _bad_shape(layouts)
    if row is not None:
        line = rows[row][0]
        raise InputError(f"{where} row {row + 1} (line {line}): {_SHAPE}")
    return layouts


_SHAPE = "heads do not divide hidden (each head has hidden/heads dimensions)"


def _bad_shape(columns: dict) -> int | None:
    """The first row whose attention heads do not divide its hidden size (hidden = 1 with
    128 heads was predicted at 2.245 s), else None; rows without both pass."""
    if "hidden" not in columns or "heads" not in columns:
        return None
    hidden = np.asarray(columns["hidden"], dtype=np.float64)
    heads = np.asarray(columns["heads"], dtype=np.float64)
    per_head = np.divide(hidden, heads, out=np.ones_like(hidden), where=heads > 0)
    bad = np.flatnonzero(
        (heads > 0) & (hidden > 0) & ((per_head != np.floor(per_head)) | (per_head < 1))
    )
    return int(bad[0]) if bad.size else None


def layouts_from_args(args) -> dict[str, np.ndarray] | None:
    """Configuration arrays from ``--layouts`` or the layout options with ``--gpus``;
    None when no layout was given."""
    given = {f: getattr(args, f) for f in LAYOUT_OPTIONS if getattr(args, f, None) is not None}
    if getattr(args, "layouts", None):
        if given or args.gpus:
            raise InputError(
                "--layouts: give the layouts in the CSV alone, not with --gpus or --tp …"
            )
        return _read_layouts(args.layouts)
    if not args.gpus:
        raise InputError("--gpus: give GPU counts (or --layouts CSV for a hybrid fit)")
    if not given:
        return None
    check_one_microbatch_field(given, "--microbatches, --microbatch-size")
    lists = {"gpus": [_value(t, "gpus", "--gpus") for t in args.gpus.split(",")]}
    for field, text in given.items():
        flag = LAYOUT_OPTIONS[field]
        lists[field] = [_value(t, field, flag) for t in text.split(",")]
        if field in UNKNOWN_AT_ZERO and 0.0 in lists[field]:
            # 0 reads "not given" (a CSV's blank): given as an option, it said nothing,
            # and --microbatch-size 0 was answered (bad-input review of 2026-12-06)
            raise InputError(
                f"{flag}: expected a whole number ≥ 1, got 0 (0 means not given: leave {flag} out)"
            )
    n = max(len(v) for v in lists.values())
    for field, values in lists.items():
        if len(values) not in (1, n):
            flag = LAYOUT_OPTIONS.get(field, "--gpus")
            raise InputError(f"{flag}: {len(values)} values, expected 1 or {n} (one per row)")
    return {k: np.resize(np.asarray(v), n) for k, v in lists.items()}


def layout_rows(result: FitResult, layouts, interval=None, method="laplace", kind="prediction"):
    """Rows of ``predict`` at `layouts`, and the reference layout they compare with.

    Speedup is the reference layout's time over each row's; efficiency is speedup ×
    reference GPUs / GPUs; rows of another workload (model shape or global batch) than
    the reference's have neither. Invalid layouts get no time; out-of-memory ones are
    marked. With `interval`, ``time_s_lo/_hi`` bound a new measurement (`kind`
    ``"prediction"``) or the curve (``"confidence"``), and ``speedup_lo/_hi`` the curve's
    speedup.
    """
    reference, wanted = reference_with_workload(result, layouts)
    workloads = row_workloads(result, layouts)
    ref_time = reference["time_s"]
    found = evaluate_layouts(result, layouts)
    band = speedups = None
    if interval is not None:
        band, speedups = _layout_bands(result, layouts, interval, method, kind)
    shown = [f for f in ("gpus", *LAYOUT_OPTIONS) if f in layouts]
    rows = []
    for i in range(len(layouts["gpus"])):
        code = int(found["code"][i])
        row = {f: float(layouts[f][i]) for f in shown}
        valid = code == 0 or code == OUT_OF_MEMORY
        time_s = float(found["time_s"][i])
        row["time_s"] = time_s if valid else None
        # GB per GPU: how far out of memory a fast-looking row is (review round 12).
        row["memory_gb"] = float(found["memory_gb"][i]) if valid else None
        if band is not None and valid:
            row["time_s_lo"] = float(band["time_s_lo"][i])
            row["time_s_hi"] = float(band["time_s_hi"][i])
        comparable = valid and workloads[i] == wanted
        row["speedup"] = ref_time / time_s if comparable else None
        if speedups is not None and comparable:
            row["speedup_lo"], row["speedup_hi"] = (finite_or_none(v[i]) for v in speedups)
            row["speedup_interval"] = f"{level_text(interval)} confidence (of the curve)"
        row["efficiency"] = row["speedup"] * reference["gpus"] / row["gpus"] if comparable else None
        if band is not None and valid:
            row["interval"] = f"{level_text(interval)} {kind}"
        row["status"] = "ok" if code == 0 else REASONS[code]
        rows.append(row)
    return rows, reference


def _layout_bands(result: FitResult, layouts, level: float, method: str | None, kind: str):
    """`predict_interval` of each layout's time, and the `level` confidence interval of
    its speedup against the reference layout: each draw's reference time over its own
    time at the row (the same draws at both, so the uncertainty they share cancels);
    None for the speedups when no draws can be made."""
    from .._uncertainty import log_time_draws, predict_interval

    draws = draws_or_none(result, method)
    gpus = layouts["gpus"]
    others = {k: v for k, v in layouts.items() if k != "gpus"}
    band = predict_interval(result, gpus, level, method, kind=kind, ensemble=draws, **others)
    if draws is None:
        return band, None
    values, _ = reference_values(result, layouts)
    values.pop("measured_s", None)
    at_reference = {k: np.asarray([v]) for k, v in values.items() if k != "gpus"}
    log_reference = log_time_draws(result, draws, [values["gpus"]], **at_reference)
    ratios = np.exp(log_reference - log_time_draws(result, draws, gpus, **others))
    tail = (1.0 - level) / 2.0
    lo, hi = (np.quantile(ratios, q, axis=0) for q in (tail, 1.0 - tail))
    # Where the data leave a parameter the time depends on open, so is the speedup.
    open_ = (np.asarray(band["time_s_lo"]) <= 0.0) | ~np.isfinite(band["time_s_hi"])
    return band, (np.where(open_, 0.0, lo), np.where(open_, math.inf, hi))


# Optimal ----------------------------------------------------------------------------------


def _divisors(n: float, limit: float) -> list[float]:
    """Divisors of `n` up to `limit`, trying only those (layers = 1e308 tried them all)."""
    whole = int(n)
    return [float(d) for d in range(1, int(min(whole, limit)) + 1) if whole % d == 0]


# Model chunks per pipeline device that `optimal` tries: the divisors of the layers up to
# this (Megatron-LM's interleaved schedules published use 2–6 [N21 Table 1, K22 Table 5]).
INTERLEAVE_LIMIT = 8


def search_axes(result: FitResult, max_gpus: int, multiple_of: int) -> dict[str, list[float]]:
    """GPU counts (whole nodes, or multiples of `multiple_of`) up to `max_gpus` × layouts."""
    defaults = result.config_defaults
    node = float(defaults.get("gpus_per_node", 8.0))
    step = multiple_of if multiple_of > 1 else int(node)
    gpus = [float(g) for g in range(step, max_gpus + 1, step)]
    if not gpus:
        raise InputError(f"--max-gpus {max_gpus}: below one step of {step} GPUs")
    axes = {
        "gpus": gpus,
        "tp": [t for t in (1.0, 2.0, 4.0, 8.0, 16.0) if t <= node],
        "pp": _divisors(defaults.get("layers", 1.0), max_gpus),  # pp ≤ the GPUs
        "microbatch_size": [1.0, 2.0, 4.0, 8.0, 16.0],
        "zero": [0.0, 1.0, 2.0, 3.0],
    }
    if hybrid_kind(result.model) == "hybrid":
        layers = defaults.get("layers", 1.0)
        axes |= {
            "interleave": _divisors(layers, INTERLEAVE_LIMIT),
            "recompute": [0.0, 1.0, 2.0],
            "seq_parallel": [0.0, 1.0],
        }
    return axes


def best_return_ahead(gpus: np.ndarray, speedup: np.ndarray) -> np.ndarray:
    """At each GPU count, the most speedup per added GPU that any larger count searched
    gives: ``max_{M > N} (S(M) − S(N)) / (M − N)``, the slope to the upper concave hull
    ahead (NaN at the last count).

    Not the step to the next count: counts whose every layout is poor (384 GPUs of a model
    that splits well over 256 and 512) would end the returns where a larger purchase
    still pays.
    """
    best = np.full(len(gpus), np.nan)
    for i in range(len(gpus)):  # counts ascending and distinct (one row per count)
        ahead = slice(i + 1, None)
        if len(gpus[ahead]):
            best[i] = np.max((speedup[ahead] - speedup[i]) / (gpus[ahead] - gpus[i]))
    return best


def _nothing_found(result, axes, fixed, found, at_gpus, max_gpus) -> str:
    """Why a layout search found nothing: no valid layout (the checks a sample fails), or
    none within the memory budget (what the leanest valid one needs). Before, both read
    "no valid layout fits in memory at any GPU count searched", also for ``--gpus 7``."""
    where = f"at {at_gpus} GPUs" if at_gpus is not None else f"at any count up to {max_gpus}"
    if not found.valid:
        reasons = invalid_reasons(result, axes, fixed)
        return f"no valid layout {where}" + (f": {'; '.join(reasons)}" if reasons else "")
    per_count = found.per_axis["gpus"]
    need = per_count["memory_gb"].min() if "memory_gb" in per_count else math.nan
    leanest = f": the leanest valid layout needs {need:.4g} GB per GPU" if need == need else ""
    budget = fixed.get("gpu_memory_bytes")
    of = f", more than the {budget / 1e9:.4g} GB budget" if budget and leanest else ""
    return f"no valid layout fits in memory {where}{leanest}{of}"


def _baseline(result, axes, fixed, curve, reference) -> dict:
    """What the speedups of a layout search are against: the best layout at the
    reference's GPU count (searched there when the search did not reach it), else the
    reference itself.

    Against the measured run, a 175B search answered "efficiency 99.1%" at 512 GPUs and
    139% at 64 itself: the best layouts trade full recomputation for selective and
    sequence parallelism, 1.39x faster at the same count. That gain is the layout's,
    not scaling's; the text gives it on a line of its own (review leftover of
    2026-12-06)."""
    gpus = float(reference["gpus"])
    row = curve[curve["gpus"] == gpus]
    if not len(row):
        try:
            found = sweep(
                result.model,
                {**axes, "gpus": [gpus]},
                fixed=fixed,
                per=["gpus"],
                pareto=False,
                progress=False,
            )
        except InputError:  # e.g. the count is past a fixed global batch
            found = None
        if found is not None:
            at = found.per_axis["gpus"]
            row = at[at["feasible"].astype(bool)]
    if not len(row):
        return {
            "gpus": gpus,
            "layout": None,
            "time_s": float(reference["time_s"]),
            "what": "the reference layout",
        }
    best = row.iloc[0]
    return {
        "gpus": gpus,
        "layout": {k: float(best[k]) for k in axes},
        "time_s": float(best["step_time_s"]),
        "what": f"the best layout at {gpus:g} GPUs",
        "breakdown": breakdown_of(best),
    }


def optimal_layout(
    result: FitResult,
    *,
    max_gpus: int = 4096,
    objective: str = "time",
    price_per_gpu_hour: float | None = None,
    deadline: float | None = None,
    multiple_of: int = 1,
    threshold: float = 0.5,
    efficiency_floor: float | None = None,
    pinned: tuple[str, ...] = (),
    at_gpus: int | None = None,
    run_fit: FitResult | None = None,
    **_,
) -> dict:
    """``optimal`` of a hybrid fit: the best GPU count and layout, by a layout search.

    `pinned`: fields the search keeps at the fit's value (``--set zero=1`` searches only
    ZeRO-1; a searched field set otherwise was overwritten by the search, silently).
    `at_gpus` (``--gpus``): search that one count alone (the best layout at 256 GPUs
    needed ``--max-gpus 256``, which may answer fewer). `run_fit`: the fit before
    ``--set``, whose run's recipe a search for another workload takes (said in
    ``notes``)."""
    if max_gpus < 1:
        raise InputError(f"--max-gpus must be ≥ 1, got {max_gpus}")
    check_one_microbatch_field(pinned, "--set")
    if at_gpus is not None:
        max_gpus = multiple_of = max(at_gpus, 2)  # one count; its axes as at it
    axes = search_axes(result, max_gpus, multiple_of)
    if at_gpus is not None:
        axes["gpus"] = [float(at_gpus)]
    for name in pinned:
        if name == "microbatches":  # a count instead of a size (`with_defaults`)
            axes.pop("microbatch_size", None)
        if name in axes or name == "microbatches":
            axes[name] = [float(result.config_defaults[name])]
    fixed = {k: v for k, v in result.config_defaults.items() if k not in axes}
    # The search gives one of the two; the fit's runs may have given the other.
    fixed.pop("microbatch_size" if "microbatches" in axes else "microbatches", None)
    if price_per_gpu_hour is not None:
        fixed["price_per_gpu_hour"] = price_per_gpu_hour
    if "gpu_memory_bytes" not in axes:  # the budget `predict` holds layouts to as well
        fixed |= memory_budget(result)
    found = sweep(result.model, axes, fixed=fixed, per=["gpus"], pareto=False, progress=False)
    curve = found.per_axis["gpus"]
    curve = curve[curve["feasible"].astype(bool)].sort_values("gpus").reset_index(drop=True)
    if not len(curve):
        raise InputError(_nothing_found(result, axes, fixed, found, at_gpus, max_gpus))
    layouts = {k: np.asarray(curve[k], float) for k in axes}
    reference = reference_time(result, layouts)
    baseline = _baseline(result, axes, fixed, curve, reference)
    speedup = baseline["time_s"] / curve["step_time_s"].to_numpy()
    efficiency = speedup * baseline["gpus"] / curve["gpus"].to_numpy()
    if objective == "cost":
        ok = np.ones(len(curve), bool) if deadline is None else curve["step_time_s"] <= deadline
        if not ok.any():
            raise InputError(f"--deadline {deadline:g} s: no layout is that fast")
        i = int(np.flatnonzero(ok)[np.argmin(curve["cost_per_step"].to_numpy()[ok])])
        # Counts that cost the same per step finish sooner for nothing: "64 GPUs" alone
        # hid that 128–1024 cost the same (review round 12). Named one by one: counts
        # between them may cost more (72 GPUs, whose layouts split the batch unevenly).
        cost = curve["cost_per_step"].to_numpy()
        tied = np.flatnonzero(ok & (cost <= cost[i] * (1.0 + COST_TIE)))
        same_cost = [int(curve["gpus"].iloc[j]) for j in tied if j > i]
    else:
        i, same_cost = int(np.argmin(curve["step_time_s"].to_numpy())), []
    best = curve.iloc[i]
    gpus = curve["gpus"].to_numpy()
    marginal = best_return_ahead(gpus, speedup) * reference["gpus"]
    knee = None
    # "per reference-GPU" was not understood (review of 2026-12-07): the speedup is the
    # reference's, so its count of GPUs is the unit a perfectly scaling step adds 1× per.
    criterion = (
        f"no larger count adds {threshold:g}× speedup per {reference['gpus']:g} GPUs added, "
        "the reference's count"
    )
    if efficiency_floor is not None:
        # The largest count that meets the floor, past which none does: efficiency moves
        # with the layout, so the first count below it (384 GPUs at 78% with a floor of
        # 0.9, 512 at 99%) was answered as worth buying (fuzz round 11).
        meets = np.flatnonzero(efficiency >= efficiency_floor)
        criterion = f"efficiency < {efficiency_floor:g} past it"
        if not len(meets):
            knee, criterion = 0, f"efficiency < {efficiency_floor:g} at every count searched"
        else:
            knee = meets[-1] if meets[-1] < len(curve) - 1 else None
    else:
        below = np.flatnonzero(marginal[:-1] < threshold)
        knee = below[0] if len(below) else None
    layout = {k: float(best[k]) for k in axes}
    worth = None
    if knee is not None and (efficiency_floor is None or efficiency[knee] >= efficiency_floor):
        row = curve.iloc[int(knee)]
        worth = {
            "gpus": int(row["gpus"]),
            "layout": {k: float(row[k]) for k in axes},
            "time_s": float(row["step_time_s"]),
            "speedup": float(speedup[knee]),
            "efficiency": float(efficiency[knee]),
            "memory_gb": float(row["memory_gb"]),
            "rates": rates_of(
                result, fixed, {k: float(row[k]) for k in axes}, float(row["step_time_s"])
            ),
        }
    alternatives = layout_alternatives(
        result.model,
        {k: v for k, v in axes.items() if k != "gpus"},
        best,
        fixed={**fixed, "gpus": float(best["gpus"])},
    )
    listed = [
        {**layout, **{k: float(v) for k, v in alt.items() if k in layout}}
        for alt in alternatives.to_dict(orient="records")
    ]
    assumed = [n for n in assumed_parameters(result) if n not in pinned]
    robustness = pick_robustness(result.model, assumed, fixed, [layout, *listed])
    given = {k: result.config_defaults[k] for k in pinned if k in result.config_defaults}
    return {
        "gpus": int(best["gpus"]),
        "layout": layout,
        # The model and batch searched for, and the pick's MFU, TFLOP/s and tokens/s per GPU.
        "workload": workload_of(result, fixed, pinned),
        "rates": rates_of(result, fixed, layout, float(best["step_time_s"])),
        "breakdown": breakdown_of(best),
        "notes": list(inherited_recipe(run_fit, axes, given)) if run_fit is not None else [],
        "time_s": float(best["step_time_s"]),
        "speedup": float(speedup[i]),
        "efficiency": float(efficiency[i]),
        "memory_gb": float(best["memory_gb"]),
        "cost_per_step": float(best["cost_per_step"]) if price_per_gpu_hour is not None else None,
        # With --objective cost: the larger counts whose cost per step is within COST_TIE.
        "same_cost_gpus": same_cost,
        "objective": objective,
        "reference": reference,
        # What speedup and efficiency are against: the best layout at the reference's
        # count, so that they measure scaling, not the change of recipe.
        "baseline": baseline,
        "searched_up_to": int(axes["gpus"][-1]),
        "at_gpus": at_gpus,
        "at_search_limit": at_gpus is None and bool(int(best["gpus"]) == int(axes["gpus"][-1])),
        # The best count is the largest with a valid layout, below the search limit.
        "largest_valid": bool(int(best["gpus"]) == int(gpus[-1]) < int(axes["gpus"][-1])),
        "diminishing_returns": {
            "gpus": None if knee is None else int(gpus[knee]),
            "criterion": criterion,
            "marginal_speedup": None if knee is None else finite_or_none(marginal[knee]),
            "efficiency": None if knee is None else float(efficiency[knee]),
            "speedup": None if knee is None else float(speedup[knee]),
        },
        # The count at the point of diminishing returns and its best layout: what the
        # command line opens with when it is below the optimum.
        "worth_buying": worth,
        "alternatives": [
            {k: (float(v) if isinstance(v, (int, float, np.floating)) else v) for k, v in r.items()}
            for r in alternatives.to_dict(orient="records")
        ],
        # Whether the pick holds when each parameter the fit fixed is halved or doubled.
        "robustness": robustness,
        "family": result.family,
        "precision": found.precision,
    }


def run_predict(args, result: FitResult, print_json, format_table) -> bool:
    """``predict`` of a hybrid fit (layouts, `layout_rows`); False for other fits, which
    refuse layout options rather than ignore them."""
    if hybrid_kind(result.model) == "":
        given = [flag for field, flag in LAYOUT_OPTIONS.items() if getattr(args, field, None)]
        given += ["--layouts"] if getattr(args, "layouts", None) else []
        if given:
            raise InputError(
                f"{given[0]}: layouts are for hybrid fits; this {result.family} fit predicts "
                "by GPU count alone (--gpus)"
            )
        return False
    layouts = layouts_from_args(args)
    if layouts is None:
        layouts = {"gpus": np.asarray([_value(t, "gpus", "--gpus") for t in args.gpus.split(",")])}
    inherited = inherited_recipe(result, layouts, {}) or taken_from_run(
        result.config_defaults, layouts
    )
    try:
        rows, reference = layout_rows(
            result, layouts, args.interval, args.method, getattr(args, "kind", "prediction")
        )
    except InputError as error:  # nothing valid: the fields taken from the fit may be why
        raise InputError("; ".join([str(error), *inherited])) from None
    if args.json:
        print_json({"reference": reference, "rows": rows, "notes": list(inherited)})
        return True
    print(
        f"{result.label} fit of {result.data.source} (time_s in s per step; speedup and "
        f"efficiency against the reference layout {describe_layout(reference)}, "
        f"{reference_seconds(reference)}: {reference['reference']})"
    )
    if args.interval is not None:
        method = args.method or result.intervals
        print(
            wrap(
                f"time_s_lo/_hi: {level_text(args.interval)} {INTERVAL_WORDS[args.kind]}; "
                f"speedup_lo/_hi: {level_text(args.interval)} confidence interval of the "
                f"speedup (the same {method} draws at the row and the reference layout); "
                "empty: unbounded"
            )
        )
        labels = ("interval", "speedup_interval")
        rows = [{k: v for k, v in row.items() if k not in labels} for row in rows]
    # The status beside the time, whatever the rows (it moved when a row was invalid):
    # why a row has no time, in view.
    last = ("speedup", "speedup_lo", "speedup_hi", "efficiency")
    rows = [
        {k: v for k, v in row.items() if k not in last}
        | {k: row[k] for k in last if k in row}
        | {"efficiency": percent_text(row["efficiency"])}
        for row in rows
    ]
    print(format_table(rows))
    other = sum(row["time_s"] is not None and row["speedup"] is None for row in rows)
    if other:
        print(
            f"note: {other} row(s) of another model or global batch than the reference's have "
            "no speedup or efficiency; predict each workload apart to compare its layouts"
        )
    for line in inherited:  # a new model run with the fit's recipe, said
        print(wrap(f"note: {line}"))
    return True


def taken_from_run(defaults: dict, layouts: dict) -> tuple[str, ...]:
    """One line naming the layout fields `predict` takes from the fit's run (its
    `defaults`, `FitResult.config_defaults`) because the layouts give them nowhere:
    ``--tp 1 --pp 1`` read "interleaving needs pp > 2", its interleave = 3 unseen, the
    run's (review of 2026-12-07)."""
    given = set(layouts)
    if given & {"microbatches", "microbatch_size"}:  # either one gives the micro-batches
        given |= {"microbatches", "microbatch_size"}
    taken = [f for f in LAYOUT_FIELDS if f in defaults and f not in given]
    if "microbatch_size" in taken and float(defaults["microbatch_size"]) > 0:
        taken = [f for f in taken if f != "microbatches"]  # the size decides the count
    if not taken:
        return ()
    shown = " ".join(f"{f}={float(defaults[f]):g}" for f in taken)
    flags = ", ".join(LAYOUT_OPTIONS[f] for f in taken)
    return (f"from the fit's run, given nowhere: {shown} ({flags} to change them)",)


def _times(ratio: float) -> str:
    """``1.39× slower than`` / ``as fast as`` / ``1.2× faster than``."""
    if abs(ratio - 1.0) < 0.005:
        return "as fast as"
    return f"{ratio:.3g}× slower than" if ratio > 1.0 else f"{1.0 / ratio:.3g}× faster than"


def _above_one(efficiency: float) -> str:
    return " (above 100%: faster per GPU than the reference layout)" if efficiency > 1.0 else ""


def _worth_buying_line(document: dict) -> str | None:
    """The count worth buying and its layout, when returns diminish below the optimum
    of a time search (else None: the optimum line comes first)."""
    worth, knee = document.get("worth_buying"), document["diminishing_returns"]
    if document["objective"] != "time" or worth is None or worth["gpus"] >= document["gpus"]:
        return None
    return (
        f"worth buying: {worth['gpus']} GPUs, {describe_layout(worth['layout'])}: step time "
        f"{worth['time_s']:.4g} s{rates_text(worth.get('rates'))}, speedup "
        f"{worth['speedup']:.3g}× and efficiency "
        f"{worth['efficiency']:.1%}{_above_one(worth['efficiency'])}; past {worth['gpus']} "
        "GPUs returns diminish "
        f"({knee['criterion']}): the fastest, below, is {document['speedup']:.3g}× at "
        f"{document['gpus']} GPUs"
    )


def robustness_lines(robustness: dict | None) -> list[str]:
    """What `pick_robustness` found, in words: each fixed parameter whose halving or
    doubling hands the win to another listed layout, or that none does."""
    if not robustness or not robustness["tried"]:
        return []
    changes = robustness["changes"]
    if not changes:
        return [
            wrap(
                "  the pick holds (within 2%) with each parameter the fit fixed "
                f"({', '.join(robustness['tried'])}) halved or doubled, among the layouts above"
            )
        ]
    lines = []
    for change in changes:
        lines.append(
            wrap(
                f"  the pick rests on {change['parameter']}, fixed, not fitted: at "
                f"{change['factor']:g}× ({change['value']:.3g} {change['unit']}) "
                f"{describe_layout(change['layout'])} is faster ({change['time_s']:.4g} s "
                f"against {change['pick_time_s']:.4g} s); a run where it matters, or its "
                "measured value (--fix), settles it"
            )
        )
    return lines


def print_optimal_layout(document: dict) -> None:
    ref = document["reference"]
    worth = _worth_buying_line(document)
    if worth is not None:
        print(worth)
    limit = " (the search limit: more GPUs may still help)" if document["at_search_limit"] else ""
    if document.get("largest_valid"):
        limit = (
            f" (the largest count with a valid layout that fits, searched up to "
            f"{document['searched_up_to']})"
        )
    if document.get("at_gpus") is not None:
        limit = " (--gpus: the best layout at this count)"
    print(
        f"optimal ({document['objective']}): {document['gpus']} GPUs{limit}, "
        f"{describe_layout(document['layout'])}"
    )
    line = workload_line(document.get("workload"))
    if line is not None:
        print(wrap(f"  {line}"))
    base = document.get("baseline") or {"layout": None}
    # The best layout at the reference's count may be the reference itself: "… is as
    # fast as that layout" compared it with itself (review of 2026-12-07).
    itself = base["layout"] is not None and all(
        float(ref.get(k, math.nan)) == v for k, v in base["layout"].items()
    )
    if itself:
        against = f"{base['what']} ({reference_seconds(ref)}), {ref['reference']}: "
        against += describe_layout(ref)
    elif base["layout"] is None:
        against = f"the reference layout {describe_layout(ref)} ({reference_seconds(ref)}; "
        against += f"{ref['reference']})"
    else:
        against = f"{base['what']} ({base['time_s']:.4g} s)"
    print(
        wrap(
            f"  step time {document['time_s']:.4g} s, memory {document['memory_gb']:.3g} GB "
            f"per GPU{rates_text(document.get('rates'))}; speedup {document['speedup']:.3g}× "
            f"and efficiency {document['efficiency']:.1%} against {against}"
        )
    )
    superlinear = superlinear_line(document)
    if superlinear is not None:
        print(wrap(superlinear))
    if base["layout"] is not None and not itself:
        ratio = ref["time_s"] / base["time_s"]
        print(
            wrap(
                f"  {ref['reference']}, {describe_layout(ref)} ({reference_seconds(ref)}), "
                f"is {_times(ratio)} that layout"
            )
        )
    if document["cost_per_step"] is not None:
        money = f" {document['currency']}" if document.get("currency") else ""
        print(f"  cost per step {document['cost_per_step']:.4g}{money}")
    same = document.get("same_cost_gpus") or []
    if same:
        counts = (
            ", ".join(map(str, same))
            if len(same) <= 6
            else f"{len(same)} counts from {same[0]} to {same[-1]}"
        )
        print(
            wrap(
                f"  the same cost per step (within {COST_TIE:.1%}) at {counts} GPUs: more "
                "GPUs finish sooner at no extra cost"
            )
        )
    for alt in document["alternatives"]:
        names = [k for k in alt if k not in ALTERNATIVE_COLUMNS]
        also = f" (also {alt['also']})" if alt.get("also") else ""
        print(
            f"  {alt['slower_pct']:5.1f}% slower with another {alt['axis']}{also}: "
            f"{describe_layout(alt, names)} ({alt['step_time_s']:.4g} s)"
        )
    for line in robustness_lines(document.get("robustness")):
        print(line)
    picks = [document["layout"], (document.get("worth_buying") or {}).get("layout", {})]
    if any(layout.get("zero") == 3 for layout in picks):
        print(
            wrap(
                "  zero=3 is fully sharded data parallelism (PyTorch FSDP, DeepSpeed ZeRO-3, "
                "Megatron-Core's FSDP), its all-gathers assumed hidden under the compute; "
                "--set zero=1 searches Megatron's distributed optimizer alone"
            )
        )
    for note in document.get("notes") or []:  # a new model run with the fit's recipe, said
        print(wrap(f"  note: {note}"))
    knee = document["diminishing_returns"]
    if document.get("at_gpus") is not None:
        return  # one count: no returns to diminish
    if knee["gpus"] is None:
        print(f"diminishing returns: not reached up to {document['searched_up_to']} GPUs")
    else:
        print(
            f"diminishing returns from {knee['gpus']} GPUs ({knee['criterion']}), "
            f"efficiency {knee['efficiency']:.1%}"
        )
