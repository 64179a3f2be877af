"""The weight-learning procedure of the default, and its leave-one-source-out check.

Weights of the geometric mixture of {amdahl, wdp, power} (all fitted with α = 2) on
the simplex grid of step 0.1 minimising, over the three protocols on the groups given
(throughput presentation, non-straddling series), Σ (median + mean MAPE + 20 × share
of series far worse than Amdahl's law)."""

import sys

sys.path.insert(0, "benchmarks/extrapolation_research")
exec(open("benchmarks/extrapolation_research/grid.py").read().split("if __name__")[0])
FAM3 = ("amdahl2", "wdp2", "power2")


def learn3(exclude=None, groups=None, keys=SH):
    best = None
    for w in simplex(3, 0.1):
        tot = 0
        for k in keys:
            pr = [p for p in sel([k], exclude=exclude, groups=groups) if regime(p) == "flat"]
            if pr:
                tot += score(errs(pr, FAM3, w), pr)[0]
        if best is None or tot < best[0] - 1e-9:
            best = (tot, w)
    return best[1]


if __name__ == "__main__":
    w_all = learn3()
    print("all shipped groups:", dict(zip(FAM3, w_all)))
    groups = sorted({p["group"] for k in SH for p in data[k]})
    print("leave one shipped source group out (weights learned on the others):")
    pooled = {k: [] for k in SH}
    for g in groups:
        w = learn3(exclude={g})
        line = f"  {g:12s} w={np.round(w, 1)}"
        for k in SH:
            pr = [p for p in sel([k], groups={g}) if regime(p) == "flat"]
            if pr:
                e = errs(pr, FAM3, w)
                ea = errs(pr, FAM3, w_all)
                pooled[k] += list(zip(e, [p["amdahl_mape"] for p in pr]))
                line += f" | {k[1]} n={len(pr)} {np.median(e):.2f}/{np.mean(e):.2f} (in-sample {np.median(ea):.2f}/{np.mean(ea):.2f})"
        print(line)
    for k, v in pooled.items():
        e = np.array([a for a, _ in v])
        am = np.array([b for _, b in v])
        print(
            "  pooled LOSO",
            k[1],
            len(e),
            f"{np.median(e):.2f}/{np.mean(e):.2f}",
            "far",
            int(np.sum((e > 2 * am) & (e > am + 1))),
        )
