"""Layouts on the command line: `predict` and `optimal` of hybrid fits over parallel
layouts (the fit itself is `perfmodel._fitting.fit_hybrid`).

* `layout_rows`: ``predict`` at layouts given as options (``--tp 8 --pp 4 …``, lists
  broadcast against ``--gpus``) or a CSV of configurations (``--layouts``), with speedup
  and efficiency against a valid reference layout: the fit's measured run on the fewest
  GPUs.
* `optimal_layout`: ``optimal`` as a layout search over GPU counts (`perfmodel.sweep`).
"""

import csv
import math

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
from .._errors import InputError
from .._fitting import (
    assumed_parameters,
    bad_shape,
    describe_layout,
    evaluate_layouts,
    field_did_you_mean,
    FitResult,
    HEADS_SHAPE,
    MEASURED_COLUMNS,
    memory_budget,
    reference_seconds,
    reference_time,
    reference_values,
    reference_with_workload,
    row_workloads,
)
from .._levels import level_text
from .._presets import hybrid_kind
from .._sweep import (
    ALTERNATIVE_COLUMNS,
    inherited_recipe,
    invalid_reasons,
    layout_alternatives,
    pick_robustness,
    sweep,
)
from .._terms import OUT_OF_MEMORY, REASONS
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
# Costs per step this close are one cost (`optimal --objective cost` names the range).
COST_TIE = 0.005
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
            f"{where}: unknown column {unknown[0]!r}{field_did_you_mean(unknown[0])}; valid: "
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
    row = bad_shape(layouts)
    if row is not None:
        line = rows[row][0]
        raise InputError(f"{where} row {row + 1} (line {line}): {HEADS_SHAPE}")
    return layouts


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


def _pin(result, axes: dict, pinned) -> dict:
    """`axes` with each `pinned` field (``--set``) held at the fit's value."""
    for name in pinned:
        if name == "microbatches":  # a count instead of a size (`with_defaults`)
            axes.pop("microbatch_size", None)
        if name in axes or name == "microbatches":
            axes[name] = [float(result.config_defaults[name])]
    return axes


def _nearest_counts(result, pinned, fixed, at_gpus) -> str:
    """``"; the nearest counts with a layout that fits: 256 and 384"`` for a ``--gpus`` count
    without one: the 32 counts of whole nodes nearest it, from half of it to twice it (or
    16 nodes more), searched as that count was (``--gpus 300`` of a 1536-sample batch
    said why no layout splits it, not which count would)."""
    if at_gpus is None:
        return ""
    node = int(result.config_defaults.get("gpus_per_node", 8.0))
    top = max(2 * at_gpus, at_gpus + 16 * node)  # small counts: a 530B model needs 64+
    counts = [g for g in range(node, top + 1, node) if 2 * g >= at_gpus]
    counts = sorted((g for g in counts if g != at_gpus), key=lambda g: abs(g - at_gpus))[:32]
    if not counts:
        return ""
    axes = _pin(result, search_axes(result, 2 * at_gpus, 1), pinned)
    axes["gpus"] = [float(g) for g in sorted(counts)]
    found = sweep(result.model, axes, fixed=fixed, per=["gpus"], pareto=False, progress=False)
    at = found.per_axis["gpus"]
    fits = np.sort(at.loc[at["feasible"].astype(bool), "gpus"].to_numpy())
    below, above = fits[fits < at_gpus], fits[fits > at_gpus]
    near = [f"{g:g}" for g in (*below[-1:], *above[:1])]  # counts ascending
    if not near:
        return f"; nor has any count of whole nodes from {min(counts):g} to {max(counts):g}"
    counted = "the nearest count" if len(near) == 1 else "the nearest counts"
    return f"; {counted} with a layout that fits: {' and '.join(near)}"


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
    axes = _pin(result, axes, pinned)
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
        why = _nothing_found(result, axes, fixed, found, at_gpus, max_gpus)
        raise InputError(why + _nearest_counts(result, pinned, fixed, at_gpus))
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
    heavy = sum(row.get("status") == "out of memory" for row in rows)
    if heavy:  # a time and a speedup beside "out of memory" read as a layout to run
        budget = {**memory_budget(result), **result.config_defaults}.get("gpu_memory_bytes")
        of = f" of {budget / 1e9:.4g} GB" if budget else ""
        print(
            wrap(
                f"note: {heavy} row(s) out of memory (memory_gb above the budget{of} per "
                "GPU): their time and speedup are what those layouts would do if they "
                "fitted; they cannot run as given"
            )
        )
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
