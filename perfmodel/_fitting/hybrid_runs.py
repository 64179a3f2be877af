"""Fitting the `hybrid` family to measured training runs: which parameters the runs
determine (`parameter_plan`: the elasticities of every run's time), the GPU they ran on
(`gpu_of_runs`), the checks of the runs (a layout that could not run, a misspelt
column), and the refusals of a fit that cannot be one (`fit_hybrid`).

``perfmodel fit runs.csv --model hybrid`` and `perfmodel.fit_hybrid` are this. Two runs
determine the GEMM efficiency (e_max and d0) and nothing more; the links stay at the
GPU's nccl-tests numbers unless runs move them, and a note says which were fixed and why.
"""

import csv
import dataclasses
import difflib
import math
from typing import NamedTuple

import jax
import numpy as np

from .._config import CONFIG_FIELDS
from .._data import Benchmarks
from .._errors import FitError, InputError
from .._keywords import did_you_mean
from .._presets import build
from .._terms import first_invalid_layout, gpu_named, GPUS
from .problem import check_required_fields
from .result import FitResult
from .single import fit

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


def fit_hybrid(
    data: Benchmarks, *, gpu: str | None = None, weak: bool = False, **fit_options
) -> FitResult:
    """Fit the `hybrid` family (Megatron-LM's step time) to measured training runs, as
    ``perfmodel fit runs.csv --model hybrid`` does.

    `parameter_plan` decides what the runs determine: the GEMM efficiency (e_max, d0)
    first, then the links while some run's time moves with them and the set stays
    identifiable; the rest stay at `gpu`'s published numbers, each named in the fit's
    warnings with why. `pm.fit("hybrid", data)` frees all eight and refuses two runs.

    Args:
        data: the runs, one row each with its layout and model shape (``tp``, ``pp``,
            ``layers``, ``hidden``, ``global_batch``, … columns; `load_benchmarks`).
        gpu: the GPU the runs were measured on (``A100-80GB``, ``H100-80GB`` or a
            spelling of one); None reads the runs' ``gpu`` column, else A100-80GB (said
            in the warnings).
        weak: refused: each run gives its own batch.
        fit_options: as `fit` (``fix``, ``bounds``, ``n_starts``, ``seed``, ``loss``).

    Returns:
        The `FitResult`; its warnings say what was fixed and why.

    Raises:
        InputError: a run that could not run, a misspelt column, an unknown GPU.
        FitError: runs the model of that GPU cannot reach, or one it misses by 2×.

    Example:
        >>> runs = pm.load_benchmarks("datasets/megatron_k22_two_runs.csv")  # doctest: +SKIP
        >>> result = pm.fit_hybrid(runs, gpu="A100-80GB")                     # doctest: +SKIP
        >>> result.parameters()["compute.e_max"]                              # doctest: +SKIP
        0.889...
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
    fix = dict(fit_options.pop("fix", None) or {})
    specs = model.parameter_specs()
    unknown = [n for n in fix if n not in specs]
    if unknown:
        raise InputError(
            f"no parameter {unknown[0]!r} in model 'hybrid'; valid: {', '.join(specs)}"
        )
    check_required_fields(model, data)
    columns = ignored_columns(data)
    for column in columns:  # a near miss of a field is a typo: the runs would be read at
        if _near_miss(column, data):  # its default (seq_paralel fitted SP runs as non-SP)
            raise InputError(
                f"{data.source}: column {column!r} is not a field perfmodel reads"
                f"{field_did_you_mean(column)}; every run would be read at that field's default: "
                "rename the column, or drop it"
            )
    ignored = [_ignored(column) for column in columns]
    _check_measured_layouts(data, ignored)
    free, fixed, notes = parameter_plan(model.with_parameters(fix), data, fix)
    notes += ignored
    given = fit_options.pop("bounds", {})
    links = {k: v for k, v in link_bounds(gpu).items() if k in free and k not in given}
    bounds = {**{k: v for k, v in DEFAULT_BOUNDS.items() if k in free}, **links, **given}
    fit_options["loss"] = fit_options.get("loss") or "log"
    result = fit(model, data, fix=fixed, bounds=bounds, **fit_options)
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


def field_did_you_mean(column: str) -> str:
    """`` (did you mean 'microbatch_size'?)`` for a column close to a `Config` field."""
    return did_you_mean(column, CONFIG_FIELDS, cutoff=0.7)


def _near_miss(column: str, data) -> bool:
    """Whether `column` looks like a misspelt field that the runs do not give otherwise
    (``seq_paralel`` without ``seq_parallel``); a ``gpu`` column (the GPU's name, which
    `benchmarks/megatron.py` reads and ``--gpu`` gives here) is not one."""
    close = difflib.get_close_matches(column, CONFIG_FIELDS, n=1, cutoff=0.7)
    return bool(close) and column != "gpu" and close[0] not in data.config


def _ignored(column: str) -> str:
    return f"column {column!r} is not a field perfmodel reads: ignored{field_did_you_mean(column)}"


def _check_measured_layouts(data, ignored: list[str]) -> None:
    """A measured run whose layout Megatron-LM could not run (`layout_status`: tp·pp not
    dividing the GPUs, pp not dividing the layers, …) is a typo, refused with its line
    and the `ignored` columns that may explain it."""
    row = bad_shape(data.config)
    if row is not None:
        raise InputError(f"{data.source} line {int(data.lines[row])}: this run's {HEADS_SHAPE}")
    with jax.enable_x64(True):
        invalid = first_invalid_layout(data.to_config(), "hybrid")
    if invalid is not None:
        i, reason = invalid
        raise InputError(
            f"{data.source} line {int(data.lines[i])}: this run's layout is not valid "
            f"({reason}); a measured run has a layout that can run"
            + "".join(f"; {note}" for note in ignored)
        )


HEADS_SHAPE = "heads do not divide hidden (each head has hidden/heads dimensions)"


def bad_shape(columns: dict) -> int | None:
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
