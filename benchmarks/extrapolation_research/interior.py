"""Intervals inside the measured range and below it: INSIDE and DOWN (2026-12-06).

Every calibration point of `calibrate.py` lies past the largest measured count, so
nothing had checked the intervals at a count between two measured ones, or below the
smallest (where the 1-GPU time of a table measured from 8 GPUs comes from). Two
problems per series with at least 4 distinct counts (GPU-scaling tables of every set):

* **interior**: leave out one count that is neither the smallest nor the largest, fit
  the reference default on the rest, ask the interval at the count left out (jackknife
  residuals, as in Barber et al., "Predictive inference with the jackknife+", Ann.
  Statist. 2021, which calibrates on leave-one-out errors);
* **below**: leave out the smallest count and ask it.

The scale calibrated past the data (`DefaultFit.past_scale`) becomes
``(past_scale + DOWN·b(N))·(1 + (INSIDE − 1)·a(N))``, b the doublings below the
smallest measured count, a the anchor's ramp (1 from half the largest count down, 0
from the largest up: nothing at or past the largest count changes, so neither does any
calibration point nor any held-out forecast). The q tables are the shipped ones.

Chosen on the shipped series only (the sets' other series are checked, not used):
INSIDE the smallest on a grid of 0.05 whose 90% intervals hold 90% of the shipped
interior points; then DOWN the smallest on a grid of 0.25 whose 90% intervals, with that
INSIDE, hold 90% of the shipped smallest counts. Printed:

1. why not narrower: the interior coverage when D leaves out the families the blend
   gives no weight inside the range (``near``), or no D at all there (``none``);
2. the constants, and the same choice leaving out each shipped source group;
3. 50 / 80 / 90% coverage and the median 90% width (hi/lo) per set and problem,
   shipped until now and with the constants;
4. the median 90% width at the measured counts of the whole series (what a user's own
   fit shows there), before and after.

``python benchmarks/extrapolation_research/interior.py`` (about 40 s).
"""

import sys
import warnings

from harness import HERE, kind, stated_strong
import numpy as np

sys.path.insert(0, str(HERE.parent))
import _reference_default as ref  # noqa: E402
from corpus import load  # noqa: E402

LEVELS = (0.5, 0.8, 0.9)
INSIDE_GRID = np.arange(1.0, 6.0001, 0.05)
DOWN_GRID = np.arange(0.0, 8.0001, 0.25)


def fit_without(row: dict, count: float):
    """The reference default fitted on `row` without the measurements at `count` (all
    of them when `count` is None), and the mask of those left out."""
    strong = stated_strong(row)
    scaling = None if strong is None else ("strong" if strong else "weak")
    node = None if row["gpus_per_node"] is None else float(row["gpus_per_node"][0])
    out = row["gpus"] == count
    fitted = ref.fit_default(
        row["gpus"][~out], row["y"][~out], row["target"], gpus_per_node=node, scaling=scaling
    )
    return fitted, out


def log_u_measured(f, target: str, y, m):
    """log u of measurements `y` at counts `m`, in the units of `f`'s log_u."""
    if target == "throughput":
        return -np.log(y)
    return np.log(y / (m if f.unit == "step" else 1.0))


def spread_variant(f, m, variant: str):
    """D at `m` with the families of `variant` inside the range (ramped as INSIDE)."""
    logs = f.family_logs(m)
    every = np.array(list(logs.values()))
    wide = every.max(axis=0) - every.min(axis=0)
    if variant == "none":
        inner = 0.0 * wide
    else:  # "near": the families the blend averages inside the range
        near = np.array([logs[k] for k, w in f.near.items() if w > 0 and k in logs])
        inner = near.max(axis=0) - near.min(axis=0)
    a = ref.anchor_share(m, f.max_gpus)
    return a * inner + (1.0 - a) * wide


def points(rows) -> list[dict]:
    """One record per measurement left out (interior or below)."""
    out = []
    for r in rows:
        counts = np.unique(r["gpus"])
        if kind(r["name"]) != "scaling" or len(counts) < 4:
            continue
        for problem, asked in (("interior", counts[1:-1]), ("below", counts[:1])):
            for count in asked:
                f, out_mask = fit_without(r, count)
                m = r["gpus"][out_mask]
                err = np.abs(f.log_u(m) - log_u_measured(f, r["target"], r["y"][out_mask], m))
                past = f.past_scale(m)
                spread = f.spread(m)
                for i in range(len(m)):
                    one = m[i : i + 1]
                    out.append(
                        {
                            "problem": problem,
                            "set": r["set"],
                            "group": r["group"],
                            "err": float(err[i]),
                            "past": float(past[i]),
                            "a": float(ref.anchor_share(one, f.max_gpus)[0]),
                            "b": float(np.log2(max(f.train_gpus.min() / m[i], 1.0))),
                            "q": ref.INTERVAL_Q[f.interval_table()],
                            "narrow": {
                                v: float(
                                    past[i] - ref.KAPPA * (spread[i] - spread_variant(f, one, v)[0])
                                )
                                for v in ("near", "none")
                            },
                        }
                    )
    return out


def scale(p: dict, inside: float, down: float, past: float | None = None) -> float:
    return ((p["past"] if past is None else past) + down * p["b"]) * (1.0 + (inside - 1.0) * p["a"])


def covered(pts, inside, down, level=0.9, past=None) -> np.ndarray:
    return np.array(
        [
            p["err"] <= p["q"][level] * scale(p, inside, down, None if past is None else past(p))
            for p in pts
        ]
    )


def choose(pts) -> tuple[float, float]:
    """INSIDE, then DOWN, on `pts` (see the module docstring)."""
    interior = [p for p in pts if p["problem"] == "interior"]
    below = [p for p in pts if p["problem"] == "below"]
    inside = next(
        (x for x in INSIDE_GRID if covered(interior, x, 0.0).mean() >= 0.9), INSIDE_GRID[-1]
    )
    down = next((x for x in DOWN_GRID if covered(below, inside, x).mean() >= 0.9), DOWN_GRID[-1])
    return float(inside), float(down)


def line(pts, inside, down) -> str:
    cells = "/".join(f"{covered(pts, inside, down, level).mean():.2f}" for level in LEVELS)
    widths = np.array([np.exp(2 * p["q"][0.9] * scale(p, inside, down)) for p in pts])
    finite = np.isfinite(widths)
    unbounded = "" if finite.all() else f" ({np.sum(~finite)} unbounded)"
    return f"{cells} | ×{np.median(widths[finite]):.3f}{unbounded}"


def compare(pts, inside, down) -> str:
    """Coverage and width until now and with `inside`, `down`: four table cells."""
    return f"{line(pts, 1.0, 0.0)} | {line(pts, inside, down)}"


def main() -> None:
    warnings.simplefilter("ignore")
    rows = load()
    pts = points(rows)
    shipped = [p for p in pts if p["set"] == "shipped"]
    interior = [p for p in pts if p["problem"] == "interior"]
    print(
        f"{len(pts)} points left out ({len(interior)} interior), {len(shipped)} of them shipped\n"
    )

    print("1. 90% coverage of the interior points of every set with a narrower D inside the range:")
    for name, past in (("every family (until now)", None), ("near", "near"), ("none", "none")):
        c = covered(
            interior, 1.0, 0.0, past=None if past is None else (lambda p, v=past: p["narrow"][v])
        )
        print(f"   {name}: {c.mean():.2f}")

    inside, down = choose(shipped)
    print(f"\n2. chosen on the shipped series: INSIDE = {inside:.2f}, DOWN = {down:.2f}")
    print(
        "   leaving out one shipped source group (constants from the others; its coverage at 90%):"
    )
    for group in sorted({p["group"] for p in shipped}):
        rest = [p for p in shipped if p["group"] != group]
        own = [p for p in shipped if p["group"] == group]
        i, d = choose(rest)
        cells = ", ".join(
            f"{prob} {covered(sel, i, d).mean():.2f} ({len(sel)})"
            for prob in ("interior", "below")
            if (sel := [p for p in own if p["problem"] == prob])
        )
        print(f"   {group}: INSIDE {i:.2f}, DOWN {d:.2f}: {cells}")

    print(
        "\n3. coverage 50/80/90% and median 90% width, shipped until now and with the constants:\n"
    )
    print("| set | problem | points | until now | | with INSIDE, DOWN | |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for set_ in ("shipped", "external", "fresh", "unseen", "heldout", "vendor", "blind"):
        for prob in ("interior", "below"):
            sel = [p for p in pts if p["set"] == set_ and p["problem"] == prob]
            if sel:
                print(f"| {set_} | {prob} | {len(sel)} | {compare(sel, inside, down)} |")
    for prob in ("interior", "below"):
        sel = [p for p in pts if p["problem"] == prob and p["set"] != "shipped"]
        print(f"| not shipped | {prob} | {len(sel)} | {compare(sel, inside, down)} |")

    print("\n4. median 90% width (hi/lo) at the measured counts of the whole series:")
    widths = {"until now": [], "with the constants": []}
    for r in rows:
        if kind(r["name"]) != "scaling" or len(np.unique(r["gpus"])) < 2:
            continue
        f, _ = fit_without(r, None)
        m = np.unique(f.train_gpus)
        q = ref.INTERVAL_Q[f.interval_table()][0.9]
        widths["until now"].extend(np.exp(2 * q * f.interval_scale(m, 1.0, 0.0)))
        widths["with the constants"].extend(np.exp(2 * q * f.interval_scale(m, inside, down)))
    for name, w in widths.items():
        print(f"   {name}: ×{np.median(w):.3f} (90th percentile ×{np.quantile(w, 0.9):.3f})")


if __name__ == "__main__":
    main()
