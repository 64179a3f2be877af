"""Split-conformal intervals of the reference default, and their coverage per source group.

Score of a held-out measurement: s = |log û − log u| / scale, u in seconds per unit of
work, scale = max(d, MIN_DOUBLINGS) + KAPPA·D + LAMBDA·r (`DefaultFit.past_scale`:
d doublings past the largest measured count, D the disagreement of the fitted families
there, r the training RMS error of log û; + NODE_KAPPA·c past a stated node that no
training count reaches beyond, learned by `node_intervals.py`, 0 on every calibration
point here). The level-L half-width is the L-quantile of
s over the calibration points with the split-conformal correction ⌈(n+1)L⌉/n, one table
for series with 3 distinct measured counts ("few") and one for 4 or more ("many").
Calibration points: every held-out measurement of every protocol of the shipped
GPU-scaling series (MLPerf time to train and the two USL load series excluded), each
counted once. The presentation does not matter (log u is the same).

``python benchmarks/extrapolation_research/calibrate.py`` prints INTERVAL_Q (the
constants of `_reference_default`) and the 50/80/90% coverage and median 90% width per
source group: for each shipped group with the q learned on the other shipped groups
(leave one source group out), for the external and fresh groups, MLPerf and USL with
the shipped q. ``--select`` also prints the comparison that chose the form of the
scale (which spread, KAPPA, LAMBDA, the tables), and the chance that a perfectly
calibrated 90% interval covers 85-95% of a group of n points.
"""

import argparse
from math import comb
import sys

import families as fm
import harness as h
import numpy as np

ref = fm.ref
SHIPPED_GPU = ("dle_mxnet", "dle_paddle", "dle_pytorch", "dle_tf1", "dle_tf2", "tf_dgx1", "tf_gce")
MIN_BUCKET = 20  # fewest calibration points a table may be learned from


def points(problem_sets) -> list[dict]:
    """One record per held-out measurement (throughput presentation, every protocol)."""
    out = []
    for (set_, prot, pres), probs in problem_sets.items():
        if pres != "throughput":
            continue
        for p in probs:
            f = ref.fit_default(
                p["n"], p["y"], p["target"], gpus_per_node=p["gpus_per_node"], scaling=fm.stated(p)
            )
            m = p["nt"]
            if p["target"] == "throughput":
                truth = -np.log(p["yt"])
            else:
                truth = np.log(p["yt"] / (m if f.unit == "step" else 1.0))
            err = np.abs(f.log_u(m) - truth)
            logs = f.family_logs(m)
            three = np.array([logs[k] for k in ("amdahl", "weak_data_parallel", "power_law")])
            d = np.log2(m / f.max_gpus)
            for i in range(len(m)):
                out.append(
                    {
                        "set": set_,
                        "group": p["group"],
                        "kind": p["kind"],
                        "err": float(err[i]),
                        "d": float(d[i]),
                        "spread_all": float(f.spread(m[i : i + 1])[0]),
                        "spread_three": float(three[:, i].max() - three[:, i].min()),
                        "r": f.training_rms(),
                        "table": f.interval_table(),
                        "scale": float(f.past_scale(m[i : i + 1])[0]),
                    }
                )
    return out


def quantile(s: np.ndarray, level: float) -> float:
    s = np.sort(s)
    j = min(int(np.ceil((len(s) + 1) * level)) - 1, len(s) - 1)
    return float(s[j])


def calibrates(q: dict) -> bool:
    return q["set"] == "shipped" and q["kind"] == "scaling"


def evaluate(pts, scale, bucket, level=0.9):
    """``(q per bucket on all calibration points, {group: (coverage, width, n)})``; each
    shipped GPU group judged with the q of the other shipped groups."""
    s = np.array([q["err"] / scale(q) for q in pts])
    w = np.array([scale(q) for q in pts])
    b = np.array([bucket(q) for q in pts])
    g = np.array([q["group"] for q in pts])
    c = np.array([calibrates(q) for q in pts])

    def tables(mask):
        return {k: quantile(s[mask & (b == k)], level) for k in np.unique(b[mask])}

    full = tables(c)
    out = {}
    for group in np.unique(g):
        m = g == group
        qs = tables(c & (g != group)) if c[m].any() else full
        thr = np.array([qs.get(k, quantile(s[c], level)) for k in b[m]])
        out[group] = (
            float(np.mean(s[m] <= thr)),
            float(np.median(np.exp(2 * thr * w[m]))),
            int(m.sum()),
        )
    sizes = {k: int(np.sum(c & (b == k))) for k in np.unique(b[c])}
    return full, out, sizes


def reference_scale(q):
    return q["scale"]


def reference_bucket(q):
    return q["table"]


def select(pts) -> None:
    """The comparison that chose the form of the interval scale."""
    rows = []
    for spread in ("spread_three", "spread_all"):
        for kappa in (0, 1, 2, 4, 8):
            for lam in (0, 2, 5, 10, 20):
                for buckets in ("none", "counts", "counts x far"):

                    def scale(q, spread=spread, kappa=kappa, lam=lam):
                        return max(q["d"], ref.MIN_DOUBLINGS) + kappa * q[spread] + lam * q["r"]

                    def bucket(q, buckets=buckets):
                        many = int(q["table"] == "many")
                        return {"none": 0, "counts": many}.get(buckets, 2 * many + int(q["d"] > 1))

                    _, cov, sizes = evaluate(pts, scale, bucket)
                    dev = sum(
                        max(0, 0.85 - cov[g][0]) + max(0, cov[g][0] - 0.95) for g in SHIPPED_GPU
                    )
                    width = np.median([cov[g][1] for g in SHIPPED_GPU])
                    rows.append((dev, width, spread, kappa, lam, buckets, min(sizes.values()), cov))
    print("\nForm of the scale (90%, shipped GPU groups each with the q of the others): total")
    print("distance of their coverage from [0.85, 0.95], median width; tables learned from")
    print(f"fewer than {MIN_BUCKET} points not allowed. Best 10:")
    allowed = sorted((r for r in rows if r[6] >= MIN_BUCKET), key=lambda r: (r[0], r[1]))
    for dev, width, spread, kappa, lam, buckets, smallest, cov in allowed[:10]:
        groups = " ".join(f"{g}:{cov[g][0]:.2f}" for g in SHIPPED_GPU)
        print(
            f"  {dev:.3f} ×{width:.3f} {spread} KAPPA={kappa} LAMBDA={lam} tables={buckets} "
            f"(smallest {smallest}): {groups}"
        )
    barred = sorted((r for r in rows if r[6] < MIN_BUCKET), key=lambda r: (r[0], r[1]))[0]
    print(
        f"  best of those not allowed: {barred[0]:.3f} {barred[2]} KAPPA={barred[3]} "
        f"LAMBDA={barred[4]} tables={barred[5]} (smallest table {barred[6]} points)"
    )
    print("\nChance that an exact 90% interval covers 85-95% of a group of n points:")
    chance = {
        n: sum(comb(n, k) * 0.9**k * 0.1 ** (n - k) for k in range(n + 1) if 0.85 <= k / n <= 0.95)
        for n in (6, 10, 12, 14, 16, 17, 20, 30, 60)
    }
    print("  " + ", ".join(f"n={n}: {p:.2f}" for n, p in chance.items()))


def across_corpus(pts) -> None:
    """The alternative of issue #9 point 4, not adopted: q learned on the GPU-scaling points
    of every set instead of the shipped ones, each group judged with the q of all the
    other groups (and each set with the q of the other sets), against the shipped q."""
    pts = [q for q in pts if q["kind"] == "scaling"]
    s = np.array([q["err"] / q["scale"] for q in pts])
    b = np.array([q["table"] for q in pts])
    g = np.array([q["group"] for q in pts])
    sets = np.array([q["set"] for q in pts])
    shipped = sets == "shipped"

    def tables(mask):
        return {k: quantile(s[mask & (b == k)], 0.9) for k in np.unique(b)}

    def cover(mask, qs):
        return float(np.mean(s[mask] <= np.array([qs[k] for k in b[mask]])))

    print("\n90% coverage with q learned across the corpus (leave the group out) against the")
    print("shipped q (each shipped group with the other shipped groups' q):")
    print("| group | points | shipped q | corpus q, group left out |")
    print("| --- | --- | --- | --- |")
    inside = {"shipped q": 0, "corpus q": 0}
    distance = {"shipped q": 0.0, "corpus q": 0.0}
    for group in np.unique(g):
        m = g == group
        ours = tables(shipped & (g != group)) if shipped[m].any() else tables(shipped)
        pair = {"shipped q": cover(m, ours), "corpus q": cover(m, tables(g != group))}
        for k, c in pair.items():
            inside[k] += 0.85 <= c <= 0.95
            distance[k] += max(0.0, 0.85 - c) + max(0.0, c - 0.95)
        print(f"| {group} | {int(m.sum())} | {pair['shipped q']:.2f} | {pair['corpus q']:.2f} |")
    groups = len(np.unique(g))
    for k in inside:
        print(f"{k}: {inside[k]} of {groups} groups in [0.85, 0.95], distance {distance[k]:.2f}")
    for name in np.unique(sets):
        m = sets == name
        print(
            f"set {name}: shipped q {cover(m, tables(shipped)):.2f}, q of the other sets "
            f"{cover(m, tables(sets != name)):.2f}"
        )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--select", action="store_true", help="also the choice of the scale")
    parser.add_argument(
        "--corpus", action="store_true", help="also q learned across every set (not adopted)"
    )
    args = parser.parse_args(argv)
    pts = points(h.all_problems())
    constants = {}
    for level in ref.LEVELS:
        full, _, sizes = evaluate(pts, reference_scale, reference_bucket, level)
        for table, q in full.items():
            constants.setdefault(str(table), {})[level] = round(q, 4)
    print(f"INTERVAL_Q = {constants}  (calibration points per table: {sizes})")
    print()
    print("| group | set | held-out | 50% | 80% | 90% | 90% width (hi/lo) | q |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    per_level = {
        level: evaluate(pts, reference_scale, reference_bucket, level)[1] for level in ref.LEVELS
    }
    checks = ("ext_", "fresh_", "unseen_", "blind_", "vendor_")
    order = sorted(per_level[0.9], key=lambda g: (g.startswith(checks), g))
    for group in order:
        set_ = next(q["set"] for q in pts if q["group"] == group)
        cells = " | ".join(f"{per_level[level][group][0]:.2f}" for level in ref.LEVELS)
        cov, width, n = per_level[0.9][group]
        how = "other shipped groups" if group in SHIPPED_GPU else "shipped"
        print(f"| {group} | {set_} | {n} | {cells} | ×{width:.2f} | {how} |")
    for name, members in (
        ("shipped GPU scaling (in-sample)", lambda q: calibrates(q)),
        ("external (q not learned on it)", lambda q: q["set"] == "external"),
        ("fresh (q not learned on it)", lambda q: q["set"] == "fresh"),
        ("unseen (q not learned on it)", lambda q: q["set"] == "unseen"),
        ("blind (q not learned on it)", lambda q: q["set"] == "blind"),
        ("vendor (q not learned on it)", lambda q: q["set"] == "vendor"),
    ):
        sub = [q for q in pts if members(q)]
        cells = []
        for level in ref.LEVELS:
            inside = [q["err"] <= ref.INTERVAL_Q[q["table"]][level] * q["scale"] for q in sub]
            cells.append(f"{int(level * 100)}% {np.mean(inside):.2f}")
        print(f"pooled {name}, shipped constants: " + ", ".join(cells))
    print(
        "(NODE_KAPPA, the term past a node no measurement reaches, was learned on the "
        "external, fresh and blind tables that cross one: node_intervals.py)"
    )
    if args.select:
        select(pts)
    if args.corpus:
        across_corpus(pts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
