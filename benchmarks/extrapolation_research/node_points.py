"""Point predictions past one node from measurements within it: PAST_NODE (issue #9, round 5).

The tables of `node_intervals.py` (a stated node size G, ≥ 2 measured counts within one
node and some beyond it; the default fitted on the counts within and asked for the
others): round 4 left their points to the blend of the weak or strong regime, whose
families (Amdahl, the weak data-parallel all-reduce) see no network in counts that never
left a node. A table that has crossed the node is extrapolated far ahead by the power law
fitted in log-log alone (the straddling regime's FAR weights). This script prints, per
source (external + fresh: CSC's ResNet-50 tables, DeepLearningExamples' EfficientNet, the
parameter-server tables on EC2; blind: DLPerf, 4 nodes of 8 V100s) and per number of
nodes, the MAPE of the measured throughput for weights moving from the round-4 blend
to `power_law_flat` by the share k·c(N), c = clip(log2(N/G), 0, 1), k on a grid (k = 1 is
what ships: `_reference_default.PAST_NODE`), every fitted family alone, and the k each
source would choose alone with what it gives on the other.
``python benchmarks/extrapolation_research/node_points.py`` (10 s).
"""

import dataclasses
import math
import sys
import warnings

from harness import HERE
from node_intervals import crossing_problems
import numpy as np

sys.path.insert(0, str(HERE.parent))
import _reference_default as ref  # noqa: E402
from corpus import load  # noqa: E402

SHARES = (0.0, 0.25, 0.5, 0.75, 1.0)
SOURCES = {"external + fresh": ("external", "fresh"), "blind": ("blind",)}


def errors(p: dict, k: float) -> np.ndarray:
    """Absolute % error at each held-out count of `p` with PAST_NODE's share k·c(N)."""
    f, m = p["fit"], p["nt"]
    round4 = dataclasses.replace(f, gpus_per_node=None)  # no node: the round-4 weights
    c = k * ref.past_node(m, p["node"])
    log_u = (1.0 - c) * round4._log_u(m) + c * f.family_logs(m)["power_law_flat"]
    predicted = f._to_measured(log_u + math.log(f.scale), m)
    return 100.0 * np.abs(predicted / p["yt"] - 1.0)


def family_error(p: dict, family: str) -> float:
    """MAPE (%) of one fitted family of `p` alone at its held-out counts."""
    predicted = p["fit"].family_predictions(p["nt"])[family]
    return float(100.0 * np.mean(np.abs(predicted / p["yt"] - 1.0)))


def per_table(problems: list, k: float) -> np.ndarray:
    return np.array([errors(p, k).mean() for p in problems])


def main() -> None:
    warnings.simplefilter("ignore")
    problems = crossing_problems(load())
    shipped = [p for p in problems if np.allclose(per_table([p], 1.0), per_table([p], 0.0))]
    assert ref.PAST_NODE == {"power_law_flat": 1.0}, "the grid below moves to power_law_flat"
    print(f"{len(problems)} tables; {len(shipped)} unchanged by the share (none expected)\n")
    print("MAPE % per table, median / mean, by share k (0: round 4's blend, 1: shipped):\n")
    print("| source | tables | " + " | ".join(f"k = {k:g}" for k in SHARES) + " |")
    print("| --- | --- | " + " | ".join("---" for _ in SHARES) + " |")
    chosen = {}
    for name, sets in SOURCES.items():
        mine = [p for p in problems if p["set"] in sets]
        cells = []
        for k in SHARES:
            e = per_table(mine, k)
            cells.append(f"{np.median(e):.2f} / {np.mean(e):.2f}")
        chosen[name] = min(SHARES, key=lambda k: np.mean(per_table(mine, k)))
        print(f"| {name} | {len(mine)} | " + " | ".join(cells) + " |")
    print("\nevery fitted family alone past the node, MAPE % per table, median / mean:\n")
    print("| family | " + " | ".join(SOURCES) + " |")
    print("| --- | " + " | ".join("---" for _ in SOURCES) + " |")
    for family in problems[0]["fit"].thetas:
        cells = []
        for sets in SOURCES.values():
            e = [family_error(p, family) for p in problems if p["set"] in sets]
            cells.append(f"{np.median(e):.2f} / {np.mean(e):.2f}")
        print(f"| {family} | " + " | ".join(cells) + " |")
    print("\nper held-out point, by nodes (median / mean absolute % error):\n")
    print("| source | nodes | points | k = 0 | k = 1 |")
    print("| --- | --- | --- | --- | --- |")
    for name, sets in SOURCES.items():
        mine = [p for p in problems if p["set"] in sets]
        nodes = np.concatenate([p["nt"] / p["node"] for p in mine])
        by_k = {k: np.concatenate([errors(p, k) for p in mine]) for k in (0.0, 1.0)}
        for m in sorted(set(nodes)):
            at = nodes == m
            cells = " | ".join(
                f"{np.median(e[at]):.2f} / {np.mean(e[at]):.2f}" for e in by_k.values()
            )
            print(f"| {name} | {m:g} | {int(at.sum())} | {cells} |")
    print("\nthe share each source chooses alone (lowest mean), and what it gives on the other:")
    for name, k in chosen.items():
        other = next(n for n in SOURCES if n != name)
        theirs = [p for p in problems if p["set"] in SOURCES[other]]
        e, e0 = per_table(theirs, k), per_table(theirs, 0.0)
        print(
            f"  learned on {name}: k = {k:g}; on {other} {np.median(e):.2f} / {np.mean(e):.2f} "
            f"against round 4's {np.median(e0):.2f} / {np.mean(e0):.2f}"
        )


if __name__ == "__main__":
    main()
