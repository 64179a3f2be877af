"""Intervals past one node from measurements within it: NODE_KAPPA (issue #9, round 4).

A *crossing* problem is a published table that states its node size G, has at least two
measured counts within one node (N ≤ G) and some beyond it: the default is fitted on
the counts within the node and asked for the others (for `benchmarks/blind`, 1–8 → 16
and 32 GPUs, the `largest2` protocol). Nothing measured says what the network between
nodes costs, and the round-2 intervals, calibrated on tables that never cross a node
there, held 58% of these points at 90%. The conformal scale gains ``NODE_KAPPA·c(N)``
(`_reference_default.DefaultFit.past_scale`); this script prints, for κ on a grid of
step 0.5:

* for two shapes of c — ``clip(log2(N/G), 0, 1)`` (shipped: the network's cost is there
  from two nodes on) and ``max(0, 1 − G/N)`` (the inter-node ring's (m − 1)/m factor of a
  two-level all-reduce, m = N/G nodes) — the smallest κ whose 90% intervals hold 90% of
  the held-out points pooled over every crossing table of every set, the 50 / 80 / 90%
  coverage with it and without the term, the 90% coverage at 2, 4 and 8 nodes, and the
  median width;
* leaving one source group out: the κ learned on the other groups and the coverage it
  gives on the group left out (how far the pooled number can be trusted per group);
* the point predictions, which the term does not move (median / mean MAPE).

Sets: external (CSC ResNet-50 tables, DeepLearningExamples EfficientNet multi-node),
fresh (TensorFlow parameter-server tables on EC2) and blind (DLPerf, 4 nodes of 8
V100s). ``python benchmarks/extrapolation_research/node_intervals.py`` (5 s).
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
SHAPES = {
    "clip(log2(N/G), 0, 1)": ref.past_node,
    "max(0, 1 - G/N)": lambda m, node: np.maximum(1.0 - node / np.asarray(m, float), 0.0),
}
SHIPPED = "clip(log2(N/G), 0, 1)"


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


def band(p: dict, kappa: float, level: float, shape: str = SHIPPED):
    """``(inside, width)``: whether each held-out measurement of `p` lies in its `level`
    interval with the node term κ·c(N) of `shape` instead of the shipped one, and the
    interval's hi/lo ratio."""
    f, m = p["fit"], p["nt"]
    plain = f.past_scale(m) - ref.NODE_KAPPA * ref.past_node(m, p["node"])
    half = ref.INTERVAL_Q[f.interval_table()][level] * (plain + kappa * SHAPES[shape](m, p["node"]))
    centre = f.log_u(m)
    a, b = f._to_measured(centre - half, m), f._to_measured(centre + half, m)
    inside = (p["yt"] >= np.minimum(a, b)) & (p["yt"] <= np.maximum(a, b))
    return inside, np.exp(2.0 * half)


def hits(p: dict, kappa: float, level: float, shape: str = SHIPPED) -> np.ndarray:
    """`band`'s ``inside``."""
    return band(p, kappa, level, shape)[0]


def coverage(problems: list, kappa: float, level: float = 0.9, shape: str = SHIPPED) -> float:
    return float(np.mean(np.concatenate([hits(p, kappa, level, shape) for p in problems])))


def smallest(problems: list, target: float = 0.9, shape: str = SHIPPED) -> float:
    """The smallest κ of `GRID` whose `target` intervals hold `target` of the points."""
    return next((k for k in GRID if coverage(problems, k, target, shape) >= target), GRID[-1])


def by_nodes(problems: list, kappa: float, shape: str) -> str:
    """90% coverage at 2, 4 and 8 nodes (points), and the median 90% width (hi/lo)."""
    inside, width = (
        np.concatenate(x) for x in zip(*(band(p, kappa, 0.9, shape) for p in problems))
    )
    nodes = np.concatenate([p["nt"] / p["node"] for p in problems])
    cells = [
        f"{m:g} nodes {inside[nodes == m].mean():.2f} ({int(np.sum(nodes == m))})"
        for m in (2, 4, 8)
    ]
    return ", ".join(cells) + f"; median width ×{np.median(width):.2f}"


def main() -> None:
    warnings.simplefilter("ignore")
    problems = crossing_problems(load())
    points = sum(len(p["nt"]) for p in problems)
    print(f"{len(problems)} tables, {points} held-out counts past one node")
    print(f"shipped: c = {SHIPPED}, NODE_KAPPA = {ref.NODE_KAPPA:g}")
    for shape in SHAPES:
        k = smallest(problems, shape=shape)
        cover = " / ".join(f"{coverage(problems, k, lev, shape):.2f}" for lev in LEVELS)
        print(
            f"  c = {shape}: smallest κ with pooled 90% coverage ≥ 0.90: {k:g}; 50 / 80 / "
            f"90% coverage {cover}; {by_nodes(problems, k, shape)}"
        )
    cover = " / ".join(f"{coverage(problems, 0.0, lev):.2f}" for lev in LEVELS)
    print(f"  without the term: 50 / 80 / 90% coverage {cover}; {by_nodes(problems, 0.0, SHIPPED)}")
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
            np.log(p["fit"].predict(p["nt"]) / p["yt"]) / ref.past_node(p["nt"], p["node"])
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
