"""From the reduced keys of a stream to the tables of a sweep result.

The stream keeps, for every group of rows (one combination of the `per` axes, gpus and
price) and for the best rows overall, the row and its key. Here the few rows that
matter are evaluated again in full to find their best column, and those configurations
are described (step time, throughput, cost, memory, breakdown) in pandas tables.
"""

import dataclasses
import math

import equinox as eqx
import jax.numpy as jnp
import numpy as np
import pandas as pd

from .._config import Config
from .._presets import pipeline_bubble
from .._terms import hybrid_memory, layout_status, OUT_OF_MEMORY, REASONS
from .keys import best_in_rows, INT_DTYPE, memory_of, score_of, Walk
from .noop import canonical_layouts
from .stream import Reduced

HEAD_COLUMNS = ("step_time_s", "samples_per_s", "cost_per_step", "cost_per_sample", "memory_gb")
HEAD_COLUMNS += ("steps_to_target", "time_to_train_s", "cost_to_train")


def decode(walk: Walk, axes: dict, rows: np.ndarray, cols: np.ndarray) -> dict:
    """Physical axis values of the configurations at (row, column) of the walk."""
    values = {}
    for name, s, n in zip(walk.outer, walk.plan.strides, walk.plan.outer_sizes):
        values[name] = axes[name][(rows // s) % n]
    sizes = [len(axes[n]) for n in walk.inner]
    for i, name in enumerate(walk.inner):
        values[name] = axes[name][(cols // math.prod(sizes[i + 1 :])) % sizes[i]]
    return {name: values[name] for name in axes}


@dataclasses.dataclass(frozen=True)
class _Kind:
    """What `_describe` depends on besides arrays: compiled once per model, any walk."""

    params: frozenset[str]
    per_step: bool
    kind: str
    samples_to_target: tuple[float, float] | None = None


@eqx.filter_jit
def _describe(model, kind: _Kind, fixed: dict, values: dict) -> dict:
    model = model.with_parameters({n: v for n, v in values.items() if n in kind.params})
    config = Config(**fixed, **{n: v for n, v in values.items() if n not in kind.params})
    step = model(config)
    samples = config.global_batch if kind.per_step else 1.0
    out = {"step_time_s": step, "samples_per_s": samples / step}
    out["cost_per_step"] = step * config.gpus * config.price_per_gpu_hour / 3600.0
    out["cost_per_sample"] = out["cost_per_step"] / samples
    if kind.samples_to_target is not None:
        samples_min, noise_batch = kind.samples_to_target
        out["steps_to_target"] = samples_min * (1.0 + config.global_batch / noise_batch) / samples
        out["time_to_train_s"] = out["steps_to_target"] * step
        out["cost_to_train"] = out["steps_to_target"] * out["cost_per_step"]
    if kind.kind:
        out["memory_gb"] = hybrid_memory(config, kind.kind) / 1e9
        out["bubble_s"] = pipeline_bubble(model, config)
    out["code"] = layout_status(config, kind.kind)
    out |= {f"{name}_s": part for name, part in model.breakdown(config).items()}
    return {k: jnp.broadcast_to(v, jnp.shape(step)) for k, v in out.items()}


def describe(model, walk: Walk, fixed: dict, values: dict) -> dict[str, np.ndarray]:
    """Step time, throughput, cost, memory, status and breakdown of configurations."""
    n = len(next(iter(values.values())))
    size = max(8, 1 << (n - 1).bit_length())  # few shapes, few compilations
    dtype = np.dtype(walk.precision)
    padded = {k: np.resize(np.asarray(v, dtype), size) for k, v in values.items()}
    fixed = {k: np.asarray(v, dtype) for k, v in fixed.items()}
    kind = _Kind(walk.params, walk.per_step, walk.kind, walk.samples_to_target)
    out = {k: np.asarray(v)[:n] for k, v in _describe(model, kind, fixed, padded).items()}
    code = out.pop("code")
    head = {k: out[k] for k in HEAD_COLUMNS if k in out}
    head["valid"] = (code == 0) | (code == OUT_OF_MEMORY)
    head["feasible"] = code == 0
    head["reason"] = np.asarray(REASONS, dtype=object)[code]
    parts = [f"{term.name}_s" for term in model.terms] + ["overlap_s", "bubble_s"]
    return {**head, **{k: out[k] for k in parts if k in out}}


def _group_digits(walk: Walk, axes: dict, groups: np.ndarray) -> dict[str, np.ndarray]:
    names = walk.outer[: walk.plan.group_axes]
    sizes = [len(axes[n]) for n in names]
    return {name: (groups // math.prod(sizes[i + 1 :])) % sizes[i] for i, name in enumerate(names)}


def _unranked_reason(key: int, walk: Walk) -> tuple[bool, str, float]:
    """Whether a group without a feasible configuration has a valid one, why none is
    feasible, and the memory of its leanest valid layout (GB per GPU; NaN if none)."""
    if key >= np.iinfo(INT_DTYPE[walk.precision]).max:
        return False, "no valid layout", math.nan
    need = memory_of(key, walk.precision) / 1e9
    return True, f"out of memory: every valid layout needs ≥ {need:.4g} GB per GPU", need


def _best_by(walk: Walk, axes: dict, reduced: Reduced, by: list[str]):
    """Best row per combination of the `by` axes: (rows, marked rows, display order).

    Combinations without a feasible configuration become marked rows that say why.
    """
    keys, rows = reduced.group_keys, reduced.group_rows
    digits = _group_digits(walk, axes, np.arange(len(keys)))
    combo = np.zeros(len(keys), np.int64)
    for name in by:
        combo = combo * len(axes[name]) + digits[name]
    order = np.lexsort((rows, keys, combo))
    first = order[np.r_[True, combo[order][1:] != combo[order][:-1]]]
    ranked, unranked = first[keys[first] < 0], first[keys[first] >= 0]
    marked = []
    for g in unranked:
        valid, reason, need = _unranked_reason(int(keys[g]), walk)
        row = {name: axes[name][digits[name][g]] for name in by}
        marked.append({**row, "valid": valid, "feasible": False, "reason": reason})
        marked[-1] |= {"memory_gb": need} if valid else {}
    order = np.argsort(np.concatenate([combo[ranked], combo[unranked]]), kind="stable")
    return rows[ranked], pd.DataFrame(marked), order


def _pareto_rows(walk: Walk, axes: dict, fixed: dict, reduced: Reduced) -> np.ndarray:
    """Rows of the groups on the front of time against cost per sample, fastest first.

    Within a group gpus and price are fixed, so cost is proportional to time there and
    only the group's best can be on the front.
    """
    keys, rows = reduced.group_keys, reduced.group_rows
    feasible = np.flatnonzero(keys < 0)
    scores = score_of(keys[feasible], walk.precision)
    digits = _group_digits(walk, axes, feasible)

    def value(name):
        if name in digits:
            return axes[name][digits[name]]
        return np.full(len(feasible), fixed.get(name, 1.0))

    rate = value("gpus") * value("price_per_gpu_hour") / 3600.0
    timed = walk.objective in ("time", "time_to_train")
    time_, cost = (scores, scores * rate) if timed else (scores / rate, scores)
    front, lowest = [], np.inf
    for i in np.lexsort((rows[feasible], cost, time_)):
        if cost[i] < lowest:
            front.append(i)
            lowest = cost[i]
    return rows[feasible][front]


def _distinct(pairs: list, walk: Walk, axes: dict, request) -> list:
    """The first `request.top_k` of the (row, column) `pairs` that are distinct layouts:
    a copy of a better one under settings that do nothing there is left out (`noop`)."""
    if not pairs:
        return pairs
    at = np.asarray(pairs, np.int64)
    layouts = canonical_layouts(decode(walk, axes, at[:, 0], at[:, 1]), request.fixed)
    seen, kept = set(), []
    for pair, layout in zip(pairs, layouts):
        if layout not in seen:
            seen.add(layout)
            kept.append(pair)
    return kept[: request.top_k]


def tables(request, walk: Walk, args, reduced: Reduced) -> dict[str, object]:
    """``best``, ``per_axis``, ``top`` and ``pareto`` tables of a finished stream.

    `request` carries the model, axes, fixed values, `per` axes and `pareto` flag.
    """
    axes, per = request.axes, request.per
    top_rows = reduced.top_rows[reduced.top_keys < 0]
    selections = {name: _best_by(walk, axes, reduced, [name]) for name in per}
    if per:
        selections[None] = _best_by(walk, axes, reduced, list(per))
    front = np.zeros(0, np.int64)
    if request.pareto:
        front = _pareto_rows(walk, axes, request.fixed, reduced)
    wanted = [top_rows, front, *(s[0] for s in selections.values())]
    rows = np.unique(np.concatenate(wanted).astype(np.int64))
    keys, cols = best_in_rows(walk, args, rows) if len(rows) else (None, None)
    where = {int(r): i for i, r in enumerate(rows)}
    width = walk.plan.inner_width
    flat = sorted(
        (int(k), int(r) * width + int(c), int(r), int(c))
        for r in top_rows
        for k, c in zip(keys[where[int(r)]], cols[where[int(r)]])
        if k < 0
    )
    picks = {"top": _distinct([(c[2], c[3]) for c in flat], walk, axes, request)}
    picks["pareto"] = [(int(r), int(cols[where[int(r)], 0])) for r in front]
    for name, (winners, _, _) in selections.items():
        picks[name] = [(int(r), int(cols[where[int(r)], 0])) for r in winners]
    everything = sorted({p for pick in picks.values() for p in pick})
    index = {p: i for i, p in enumerate(everything)}
    table = pd.DataFrame({n: np.zeros(0) for n in axes})
    if everything:
        at = np.asarray(everything, np.int64)
        values = decode(walk, axes, at[:, 0], at[:, 1])
        table = pd.DataFrame({**values, **describe(request.model, walk, request.fixed, values)})

    def frame(pick, selection=None):
        out = table.iloc[[index[p] for p in pick]].reset_index(drop=True)
        if selection is not None and len(selection[1]):
            out = pd.concat([out, selection[1]], ignore_index=True).iloc[selection[2]]
        return out.reset_index(drop=True)

    return {
        "best": frame(picks[None], selections[None]) if per else frame(picks["top"][:1]),
        "per_axis": {name: frame(picks[name], selections[name]) for name in per},
        "top": frame(picks["top"]),
        "pareto": frame(picks["pareto"]),
    }
