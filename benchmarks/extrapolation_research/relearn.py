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


if __name__ == "__main__":
    main(tuple(sys.argv[1:]) or h.SETS)
