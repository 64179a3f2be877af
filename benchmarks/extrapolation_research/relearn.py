"""After the unseen check: could weights learned across the whole corpus do better?
(issue #9, fifth session).

``python benchmarks/extrapolation_research/relearn.py`` prints (throughput presentation,
the three protocols each pooled over shipped, external, fresh and unseen; score per
protocol: median + mean + 20 × share far worse than Amdahl's law; FAR as shipped):

1. NEAR["weak"] on the simplex of the five families, for the series neither stated
   strong nor straddling the node: learned on every group, and without each source
   group in turn (the left-out group's errors pooled), against round 2's weights (0.4
   amdahl, 0.4 weak_data_parallel, 0.2 power_law) on the same problems.
2. The same for NEAR["strong"] on the stated-strong series (shipped BERT and the unseen
   NCF and QuartzNet tables), against the strong rule as shipped and the weak weights.
3. The reference default on the unseen series with and without their `global_batch`
   (``scaling`` as stated, or not stated).
4. Feature-conditioned weights (stacking by what the training counts show): the series
   of part 1 binned by the slope of log u against log N (over the last two training
   counts, "last"; first to last, "all"; their difference, "curv"), split at quantiles
   into 2 or 3 bins, NEAR["weak"] learned per bin and scored left out by group.
5. A training-fit gate: in every regime, a family whose RMS error in log u on the
   training counts exceeds max(k × the best family's, τ) gets no weight (the others
   renormalised), one count ahead (and shipped `half`, `largest2`), both presentations.
"""

import sys

import families as fm
import harness as h
import learn_weights as lw
import numpy as np

ROUND2 = lw.ROUND1  # NEAR["weak"] was kept from round 1 in round 2


FAR = np.array([0.0, 0.5, 0.0, 0.5, 0.0])
NEAR_STRONG = np.array([0.1, 0.0, 0.4, 0.1, 0.4])


def relearn(problem_sets, sets, keep, shipped: dict) -> None:
    """Grid choice on every group and left out by group, against `shipped` weights."""
    far = FAR
    grid = lw.simplex(5)
    pooled = {
        prot: [p for s in sets for p in problem_sets.get((s, prot, "throughput"), []) if keep(p)]
        for prot in h.PROTOCOLS
    }
    errs = {prot: lw.err_matrix(v, lambda p: grid, lambda p: far) for prot, v in pooled.items()}
    amd = {prot: lw.amdahl_of(v) for prot, v in pooled.items()}
    groups = sorted({p["group"] for v in pooled.values() for p in v})
    i0 = int(np.argmin(sum(lw.score(errs[k], amd[k]) for k in errs)))
    pooled = {k: v for k, v in pooled.items() if v}
    errs = {k: v for k, v in errs.items() if k in pooled}
    print(f"  all groups: {dict(zip(lw.FIVE, np.round(grid[i0], 1).tolist()))}")
    rows = {label: int(np.argmin(np.abs(grid - w).sum(axis=1))) for label, w in shipped.items()}
    left = {k: np.full(len(v), np.nan) for k, v in pooled.items()}
    for g in groups:
        total = 0.0
        for k, v in pooled.items():
            out = np.array([p["group"] != g for p in v])
            if out.any():
                total = total + lw.score(errs[k][:, out], amd[k][out])
        i = int(np.argmin(total))
        print(f"    without {g:20s} {np.round(grid[i], 1).tolist()}")
        for k, v in pooled.items():
            mine = np.array([p["group"] == g for p in v])
            left[k][mine] = errs[k][i, mine]
    print("| set | protocol | series | " + " | ".join(rows) + " | left out by group | in-sample |")
    print("|" + " --- |" * (5 + len(rows)))
    for s in [*sets, "all"]:
        for k, v in pooled.items():
            mine = np.array([s == "all" or p["set"] == s for p in v])
            if not mine.any():
                continue
            a = amd[k][mine]
            cells = [lw.fmt(errs[k][r, mine], a) for r in rows.values()]
            cells += [lw.fmt(left[k][mine], a), lw.fmt(errs[k][i0, mine], a)]
            print(f"| {s} | {k} | {int(mine.sum())} | " + " | ".join(cells) + " |")


def slope(p: dict, kind: str) -> float:
    """d log u / d log N of the training counts: "last" two, "all" (first to last) or
    "curv" (last minus all); −1 is perfect weak scaling."""
    n = np.unique(p["n"])
    lu = np.array([np.mean(np.log(p["u"][p["n"] == m])) for m in n])
    last = (lu[-1] - lu[-2]) / (np.log(n[-1]) - np.log(n[-2]))
    whole = (lu[-1] - lu[0]) / (np.log(n[-1]) - np.log(n[0]))
    return {"last": last, "all": whole, "curv": last - whole}[kind]


def binned(problem_sets, sets, keep, kind: str, bins: int) -> str:
    """Pooled left-out-by-group scores of NEAR["weak"] learned per slope bin, one line
    per set and protocol with at least 10 series, against round 2."""
    grid = lw.simplex(5)
    pooled = {
        prot: [p for s in sets for p in problem_sets.get((s, prot, "throughput"), []) if keep(p)]
        for prot in h.PROTOCOLS
    }
    values = np.concatenate([[slope(p, kind) for p in v] for v in pooled.values()])
    edges = np.quantile(values, np.linspace(0, 1, bins + 1)[1:-1])
    errs = {k: lw.err_matrix(v, lambda p: grid, lambda p: FAR) for k, v in pooled.items()}
    amd = {k: lw.amdahl_of(v) for k, v in pooled.items()}
    where = {k: np.searchsorted(edges, [slope(p, kind) for p in v]) for k, v in pooled.items()}
    group = {k: np.array([p["group"] for p in v]) for k, v in pooled.items()}
    r2 = int(np.argmin(np.abs(grid - ROUND2).sum(axis=1)))
    left = {k: np.full(len(v), np.nan) for k, v in pooled.items()}
    for g in sorted({p["group"] for v in pooled.values() for p in v}):
        for b in range(bins):
            total = 0.0
            for k in pooled:
                m = (group[k] != g) & (where[k] == b)
                if m.any():
                    total = total + lw.score(errs[k][:, m], amd[k][m])
            i = int(np.argmin(total))
            for k in pooled:
                m = (group[k] == g) & (where[k] == b)
                left[k][m] = errs[k][i, m]
    lines = []
    for s in [*sets, "all"]:
        for k, v in pooled.items():
            m = np.array([s == "all" or p["set"] == s for p in v])
            if m.sum() >= 10:
                a = amd[k][m]
                lines.append(
                    f"    {s:8s} {k:8s} {int(m.sum()):3d}: round 2 {lw.fmt(errs[k][r2, m], a)}; "
                    f"binned {lw.fmt(left[k][m], a)}"
                )
    return f"  {kind}, {bins} bins (edges {np.round(edges, 2).tolist()}):\n" + "\n".join(lines)


def gated_log_u(p: dict, k: float, tau: float, which: int = 1) -> np.ndarray:
    """The reference's mixture of problem `p` without the families that miss its
    training counts by more than max(k × the best family's RMS, τ) in log u."""
    ref = fm.ref
    near, far = ref.NEAR[fm.regime(p)], ref.FAR[fm.regime(p)]
    names = list(dict.fromkeys([*near, *far]))
    observed = np.log(p["u"])
    rms = {f: np.sqrt(np.mean((p["fam"][fm.REFERENCE[f]][0] - observed) ** 2)) for f in names}
    kept = {f: r <= max(k * min(rms.values()), tau) for f, r in rms.items()}

    def gate(w: dict) -> dict:
        total = sum(x for f, x in w.items() if kept[f])
        return {f: x / total if kept[f] else 0.0 for f, x in w.items()} if total > 0 else w

    return fm.mixture(p, gate(near), gate(far), which)


def main(sets=h.SETS) -> None:
    problem_sets = lw.prepared_problems()
    print("1. NEAR['weak'], series neither stated strong nor straddling:")
    weak = lambda p: not fm.straddles(p) and p["strong"] is not True  # noqa: E731
    relearn(problem_sets, sets, weak, {"round 2 (0.4, 0.4, 0.2)": ROUND2})
    print("2. NEAR['strong'], stated-strong series:")
    strong = lambda p: not fm.straddles(p) and p["strong"] is True  # noqa: E731
    shipped = {"strong rule as shipped": NEAR_STRONG, "weak weights": ROUND2}
    relearn(problem_sets, sets, strong, shipped)
    print("3. The unseen series with and without their global_batch (reference default):")
    for key in [k for k in problem_sets if k[0] == "unseen"]:
        amdahl = lw.amdahl_of(problem_sets[key])
        cells = []
        for label, stated in (("as given", True), ("not stated", False)):
            e = np.array(
                [
                    h.mape(
                        fm.ref.fit_default(
                            p["n"],
                            p["y"],
                            p["target"],
                            gpus_per_node=p["gpus_per_node"],
                            scaling=fm.stated(p) if stated else None,
                        ).predict(p["nt"]),
                        p["yt"],
                    )
                    for p in problem_sets[key]
                ]
            )
            cells.append(f"{label} {lw.fmt(e, amdahl)}")
        print(f"  {key[1]:8s} {key[2]:10s}: " + "; ".join(cells))
    print("4. NEAR['weak'] per bin of the training slope, left out by group:")
    for kind in ("last", "all", "curv"):
        for bins in (2, 3):
            print(binned(problem_sets, sets, weak, kind, bins))
    print("5. Training-fit gate (median / mean (far worse than Amdahl)):")
    runs = [k for k in problem_sets if k[0] in sets and (k[1] == "largest" or k[0] == "shipped")]
    print("| k, τ | " + " | ".join(f"{s} {p} {q}" for s, p, q in runs) + " |")
    print("|" + " --- |" * (len(runs) + 1))
    for k, tau in ((np.inf, np.inf), (3, 0.01), (3, 0.03), (10, 0.01), (10, 0.03), (10, 0.05)):
        cells = []
        for key in runs:
            probs = problem_sets[key]
            e = np.array([fm.mape(p, gated_log_u(p, k, tau)) for p in probs])
            cells.append(lw.fmt(e, lw.amdahl_of(probs)).replace("far ", ""))
        label = "none (round 2)" if k == np.inf else f"{k}, {tau}"
        print(f"| {label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    # `relearn.py shipped external fresh unseen` gives the unseen check's numbers
    # (benchmarks/results/relearn.txt); with no argument every set, the blind one too.
    main(tuple(sys.argv[1:]) or h.SETS)
