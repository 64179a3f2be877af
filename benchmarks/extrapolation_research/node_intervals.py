"""Intervals past one node from measurements within it: NODE_KAPPA (issue #9, round 4).

A *crossing* problem is a published table that states its node size G, has at least two
measured counts within one node (N ≤ G) and some beyond it: the default is fitted on
the counts within the node and asked for the others (for `benchmarks/blind`, 1–8 → 16
and 32 GPUs, the `largest2` protocol). Nothing measured says what the network between
nodes costs, and the round-2 intervals, calibrated on tables that never cross a node
there, held 58% of these points at 90%. The conformal scale gains
``NODE_KAPPA·max(0, 1 − G/N)`` (`_reference_default.DefaultFit.interval_scale`); this
script prints, for κ on a grid of step 0.5:

* the smallest κ whose 90% intervals hold 90% of the held-out points pooled over every
  crossing table of every set (the shipped constant), and the 50 / 80 / 90% coverage
  with it and without the term;
* leaving one source group out: the κ learned on the other groups and the coverage it
  gives on the group left out (how far the pooled number can be trusted per group);
* the point predictions, which the term does not move (median / mean MAPE).

Sets: external (CSC ResNet-50 tables, DeepLearningExamples EfficientNet multi-node),
fresh (TensorFlow parameter-server tables on EC2) and blind (DLPerf, 4 nodes of 8
V100s). ``python benchmarks/extrapolation_research/node_intervals.py`` (about a minute).
"""

import sys
import warnings

from harness import HERE
import numpy as np

sys.path.insert(0, str(HERE.parent))
import _reference_default as ref  # noqa: E402
from corpus import load  # noqa: E402

GRID = np.arange(0.0, 30.01, 0.5)
LEVELS = (0.5, 0.8, 0.9)


def crossing_problems(rows) -> list[dict]:
    """Every table with a stated node size, ≥ 2 counts within one node and some beyond."""
    out = []
    for r in rows:
        if r["gpus_per_node"] is None:
            continue
        node = float(r["gpus_per_node"][0])
        n, y = r["gpus"], r["y"]
        inside = n <= node
        if len(np.unique(n[inside])) < 2 or inside.all():
            continue
        fitted = ref.fit_default(n[inside], y[inside], r["target"], gpus_per_node=node)
        out.append(
            dict(
                name=r["name"],
                group=r["group"],
                set=r["set"],
                node=node,
                fit=fitted,
                nt=n[~inside],
                yt=y[~inside],
            )
        )
    return out


def hits(p: dict, kappa: float, level: float) -> np.ndarray:
    """Whether each held-out measurement of `p` lies in its `level` interval with the
    node term at `kappa` instead of the shipped NODE_KAPPA."""
    f, m = p["fit"], p["nt"]
    past = np.maximum(1.0 - p["node"] / m, 0.0)
    scale = f.interval_scale(m) + (kappa - ref.NODE_KAPPA) * past
    half = ref.INTERVAL_Q[f.interval_table()][level] * scale
    centre = f.log_u(m)
    a, b = f._to_measured(centre - half, m), f._to_measured(centre + half, m)
    return (p["yt"] >= np.minimum(a, b)) & (p["yt"] <= np.maximum(a, b))


def coverage(problems: list, kappa: float, level: float = 0.9) -> float:
    return float(np.mean(np.concatenate([hits(p, kappa, level) for p in problems])))


def smallest(problems: list, target: float = 0.9) -> float:
    """The smallest κ of `GRID` whose `target` intervals hold `target` of the points."""
    return next((k for k in GRID if coverage(problems, k, target) >= target), GRID[-1])


def main() -> None:
    warnings.simplefilter("ignore")
    problems = crossing_problems(load())
    points = sum(len(p["nt"]) for p in problems)
    kappa = smallest(problems)
    print(f"{len(problems)} tables, {points} held-out counts past one node")
    print(f"pooled: smallest κ with 90% coverage ≥ 0.90: {kappa:g} (shipped {ref.NODE_KAPPA:g})")
    for k in (0.0, kappa):
        cover = " / ".join(f"{coverage(problems, k, lev):.2f}" for lev in LEVELS)
        print(f"  κ = {k:g}: 50 / 80 / 90% coverage {cover}")
    errors = [100 * np.mean(np.abs(p["fit"].predict(p["nt"]) / p["yt"] - 1)) for p in problems]
    print(
        f"point predictions (unchanged by κ): MAPE median {np.median(errors):.2f} / mean "
        f"{np.mean(errors):.2f}"
    )
    print("\nthe point error past the node, log(predicted/measured throughput) / c, median")
    print("(> 0: the default is too fast there, < 0: too slow):")
    assert all(p["fit"].target == "throughput" for p in problems)
    for sets in (("external", "fresh"), ("blind",)):
        ratios = [
            np.log(p["fit"].predict(p["nt"]) / p["yt"]) / (1.0 - p["node"] / p["nt"])
            for p in problems
            if p["set"] in sets
        ]
        print(f"  {' + '.join(sets)}: {np.median(np.concatenate(ratios)):+.3f}")
    print("\nlearned on some sets, checked on the others:")
    for learn in (("external", "fresh"), ("blind",)):
        tuned = [p for p in problems if p["set"] in learn]
        checked = [p for p in problems if p["set"] not in learn]
        k = smallest(tuned)
        print(
            f"  κ learned on {' + '.join(learn)} ({len(tuned)} tables): {k:g}; 90% coverage "
            f"there {coverage(tuned, k):.2f}, on the other {len(checked)} tables "
            f"{coverage(checked, k):.2f}"
        )
    print("\nleave one source group out (κ learned on the other groups):")
    print("| group | set | tables | points | κ | 90% coverage | without the term |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for group in sorted({p["group"] for p in problems}):
        mine = [p for p in problems if p["group"] == group]
        rest = [p for p in problems if p["group"] != group]
        k = smallest(rest)
        print(
            f"| {group} | {mine[0]['set']} | {len(mine)} | {sum(len(p['nt']) for p in mine)} "
            f"| {k:g} | {coverage(mine, k):.2f} | {coverage(mine, 0.0):.2f} |"
        )


if __name__ == "__main__":
    main()
