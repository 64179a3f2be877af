"""NEAR['weak'] learned across every set, left out one source group at a time (2026-12-04).

Round 2 chose the weak regime's NEAR weights (0.4 amdahl, 0.4 weak_data_parallel, 0.2
power_law) on the shipped series alone. Every set has been scored since (external,
fresh, unseen, blind, vendor, heldout), so no set is unseen any more; what can still be
asked honestly is whether weights learned on all the *other* source groups predict a
group better than round 2's do. For every source group g of every set: the grid of step
0.1 on the simplex of amdahl, weak_data_parallel, power_law, power_law_flat, usl,
scored on the weak-regime problems (not straddling, no fixed global batch stated) of
every other group over the three protocols (Σ over (set, protocol) of median + mean +
20 × share far worse than Amdahl's law, as `learn_weights.py`), then the choice's
errors on g. Pooled left-out errors per set, against round 2's weights on the same
problems (throughput presentation; the time presentation gives the same fits).

    python benchmarks/extrapolation_research/corpus.py      # once
    python benchmarks/extrapolation_research/relearn_all.py
"""

import families as fm
import harness as h
from learn_weights import amdahl_of, err_matrix, FIVE, fmt, prepared_problems, score, simplex
import numpy as np

ROUND2 = np.array([0.4, 0.4, 0.2, 0.0, 0.0])


def weak(p) -> bool:
    return not fm.straddles(p) and p["strong"] is not True


def main() -> None:
    problem_sets = prepared_problems()
    grid = simplex(5)
    far = np.array([fm.ref.FAR["weak"].get(f, 0.0) for f in FIVE])
    keys = [k for k in problem_sets if k[2] == "throughput"]
    probs = {k: [p for p in problem_sets[k] if weak(p)] for k in keys}
    errors = {
        k: err_matrix(v, lambda p: grid, lambda p: far) if v else None for k, v in probs.items()
    }
    now = int(np.argmin(np.abs(grid - ROUND2).sum(axis=1)))
    groups = sorted({p["group"] for v in probs.values() for p in v})
    chosen = {}
    for g in groups:
        total = np.zeros(len(grid))
        for k, v in probs.items():
            keep = np.array([p["group"] != g for p in v], bool)
            if keep.any():
                total += score(errors[k][:, keep], amdahl_of(v)[keep])
        chosen[g] = int(np.argmin(total))
    every = np.zeros(len(grid))
    for k, v in probs.items():
        if v:
            every += score(errors[k], amdahl_of(v))
    best = np.round(grid[int(np.argmin(every))], 1).tolist()
    print(f"all groups: NEAR['weak'] = {dict(zip(FIVE, best))}")
    print("left-out choices (how often each):")
    counts = {}
    for g, i in chosen.items():
        key = tuple(np.round(grid[i], 1).tolist())
        counts[key] = counts.get(key, 0) + 1
    for key, c in sorted(counts.items(), key=lambda kv: -kv[1]):
        print(f"  {c:2d} groups: {dict(zip(FIVE, key))}")
    print("pooled left-out, median / mean MAPE % (far worse than Amdahl), round 2 → left-out:")
    for s in h.SETS:
        for prot in h.PROTOCOLS:
            k = (s, prot, "throughput")
            v = probs.get(k) or []
            if not v:
                continue
            e = errors[k]
            left = np.array([e[chosen[p["group"]], i] for i, p in enumerate(v)])
            a = amdahl_of(v)
            print(f"  {s:8s} {prot:8s} {len(v):3d}: {fmt(e[now], a)} → {fmt(left, a)}")


if __name__ == "__main__":
    main()
