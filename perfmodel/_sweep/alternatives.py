"""How much faster the best layout of a sweep is than the next distinct ones.

The next distinct layouts of a winner are, for each layout axis of the space (tp, pp,
micro-batching, interleaving, recomputation, ZeRO, …), the best configuration with a
different value on that axis, every other axis that is not a layout choice (GPU count,
batch, hardware) held at the winner's value. A small sweep of the layout axes alone
finds them.
"""

from collections.abc import Mapping

import numpy as np
import pandas as pd

from .._config import LAYOUT_FIELDS
from .noop import canonical_layouts
from .run import sweep

ALTERNATIVE_COLUMNS: tuple[str, ...] = ("axis", "best_value", "step_time_s", "slower_pct", "also")
"""The columns of `layout_alternatives` that are not a layout's values."""


def layout_alternatives(
    model_or_fit,
    axes: Mapping[str, object],
    best: pd.Series | Mapping[str, float],
    *,
    fixed: Mapping[str, float] | None = None,
    objective: str = "time",
    precision: str = "float32",
) -> pd.DataFrame:
    """The best configuration with another value on each layout axis, against `best`.

    Args:
        model_or_fit: what was swept.
        axes: the space's axes; the layout axes (`LAYOUT_FIELDS`) with more than one
            value are searched again, the others held at `best`'s values.
        best: the winning configuration (a row of `SweepResult.top`).
        fixed, objective, precision: as in `sweep` (the time-to-train objectives rank
            layouts at one GPU count and batch as their step time or cost does).

    Returns:
        One row per distinct alternative: ``axis`` (the layout axes it is the best
        other value of, comma-separated), the winner's ``best_value`` on the first, the
        alternative's axis values and ``step_time_s``, ``slower_pct`` (how much
        higher its score is, %) and ``also`` (the other layout axes on which it differs
        from the winner, comma-separated, "" for none), sorted by ``slower_pct``.
    """
    layout = {n: v for n, v in axes.items() if n in LAYOUT_FIELDS and len(np.atleast_1d(v)) > 1}
    # The GPU count and the global batch are held at `best`'s: every layout takes the same
    # steps to the target, so time (cost) to train ranks them as step time (cost) does.
    objective = {"time_to_train": "time", "cost_to_train": "cost"}.get(objective, objective)
    if not layout:
        return pd.DataFrame(columns=list(ALTERNATIVE_COLUMNS))
    held = {n: float(best[n]) for n in axes if n not in layout}
    found = sweep(
        model_or_fit,
        layout,
        fixed={**dict(fixed or {}), **held},
        objective=objective,
        per=list(layout),
        top_k=1,
        pareto=False,
        counts=False,
        precision=precision,
        progress=False,
    )
    score = "step_time_s" if objective == "time" else "cost_per_step"
    reference = float(best[score])
    names = [n for n in ("gpus", *LAYOUT_FIELDS) if n in best]
    current = {n: float(best[n]) for n in names}
    (winner,) = canonical_layouts(current, {})
    rows = []
    for name, frame in found.per_axis.items():
        frame = frame[frame["feasible"].astype(bool)]
        others = frame[frame[name] != float(best[name])]
        # Not the same layout under another name: "0.0% slower with another seq_parallel"
        # at tp 1 (review of 2026-12-06).
        columns = {n: others[n].to_numpy(float) if n in others else current[n] for n in names}
        others = others[[other != winner for other in canonical_layouts(columns, {})]]
        if not len(others):
            continue
        pick = others.loc[others[score].astype(float).idxmin()]
        row = {"axis": name, "best_value": float(best[name])}
        row |= {n: float(pick[n]) for n in layout}
        row |= {"step_time_s": float(pick["step_time_s"])}
        row["slower_pct"] = 100.0 * (float(pick[score]) / reference - 1.0)
        rows.append(row)
    merged: dict[tuple, dict] = {}  # one row per alternative, naming every axis it differs on
    for row in rows:
        key = tuple(row[n] for n in layout)
        if key in merged:
            merged[key]["axis"] += f", {row['axis']}"
        else:
            merged[key] = row
    for row in merged.values():  # what else it changes: "another zero" also moved b 2 → 1
        (other,) = canonical_layouts({n: row.get(n, current[n]) for n in names}, {})
        named = row["axis"].split(", ")
        row["also"] = ", ".join(
            n for n, a, b in zip(names, winner, other) if a != b and n not in named
        )
    out = pd.DataFrame(list(merged.values()))
    return out.sort_values("slower_pct", kind="stable").reset_index(drop=True) if rows else out
