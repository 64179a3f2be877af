"""Does a series' own backtest tell how wide its interval past the data should be?

A candidate for issue #9 point 4 (coverage per source group), tried 2026-12-07 and not
adopted. The backtest of a series: the reference default fitted without its largest
training count, the mean |log û − log u| at that count (3 or more training counts; the
shipped median where fewer). The scale past the data gains ``μ·bt·max(d, 0.25)``
("add") or a factor ``1 + μ·bt`` ("mult"); q is learned as `calibrate.py` learns it
(shipped GPU-scaling points, each shipped group judged with the others' q) and every
source group of every set is scored at 90%.

    cd benchmarks/extrapolation_research && python backtest_scale.py \
        > ../results/backtest_scale.txt
"""

import calibrate as cal
import families as fm
import harness as h
import numpy as np

ref = fm.ref


def backtest(p):
    n, y = np.asarray(p["n"], float), np.asarray(p["y"], float)
    counts = np.unique(n)
    if len(counts) < 3:
        return np.nan
    keep = n < counts[-1]
    try:
        f = ref.fit_default(
            n[keep], y[keep], p["target"], gpus_per_node=p["gpus_per_node"], scaling=fm.stated(p)
        )
    except ValueError:
        return np.nan
    m = n[~keep]
    if p["target"] == "throughput":
        truth = -np.log(y[~keep])
    else:
        truth = np.log(y[~keep] / (m if f.unit == "step" else 1.0))
    return float(np.mean(np.abs(f.log_u(m) - truth)))


pts = []
for (set_, prot, pres), probs in h.all_problems().items():
    if pres != "throughput":
        continue
    for p in probs:
        bt = backtest(p)
        sub = cal.points({(set_, prot, pres): [p]})
        for q in sub:
            q["bt"] = bt
            q["protocol"] = prot
        pts += sub
pts = [q for q in pts if q["kind"] == "scaling"]
bts = np.array([q["bt"] for q in pts])
print("points", len(pts), "with backtest", np.isfinite(bts).sum())
fill = float(np.nanmedian(bts[[q["set"] == "shipped" for q in pts]]))
print("median shipped bt", fill)
errs = np.array([q["err"] for q in pts])
sc = np.array([q["scale"] for q in pts])
ok = np.isfinite(bts)
print(
    "corr(log err/scale, log bt):",
    np.corrcoef(np.log(errs[ok] / sc[ok] + 1e-6), np.log(bts[ok] + 1e-6))[0, 1],
)
print("corr(log err, log bt):", np.corrcoef(np.log(errs[ok] + 1e-6), np.log(bts[ok] + 1e-6))[0, 1])
print("corr(log err, log scale):", np.corrcoef(np.log(errs + 1e-6), np.log(sc))[0, 1])

groups = sorted({q["group"] for q in pts})
sets = np.array([q["set"] for q in pts])
for mu in (0, 5, 10, 20, 40, 80):
    for mode in ("add", "mult"):

        def scale(q, mu=mu, mode=mode):
            b = q["bt"] if np.isfinite(q["bt"]) else fill
            if mode == "add":
                return q["scale"] + mu * b * max(q["d"], ref.MIN_DOUBLINGS)
            return q["scale"] * (1 + mu * b)

        _, cov, _ = cal.evaluate(pts, scale, cal.reference_bucket)
        inside = sum(0.85 <= cov[g][0] <= 0.95 for g in groups)
        dist = sum(max(0, 0.85 - cov[g][0]) + max(0, cov[g][0] - 0.95) for g in groups)
        ship = [g for g in groups if g in cal.SHIPPED_GPU]
        other = [g for g in groups if g not in cal.SHIPPED_GPU]
        dist_s = sum(max(0, 0.85 - cov[g][0]) + max(0, cov[g][0] - 0.95) for g in ship)
        dist_o = sum(max(0, 0.85 - cov[g][0]) + max(0, cov[g][0] - 0.95) for g in other)
        width = np.median([cov[g][1] for g in groups])
        persets = {}
        for s in np.unique(sets):
            gs = [g for g in groups if next(q["set"] for q in pts if q["group"] == g) == s]
            persets[s] = np.average([cov[g][0] for g in gs], weights=[cov[g][2] for g in gs])
        print(
            f"mu={mu:3} {mode:4}: {inside}/{len(groups)} in [.85,.95], dist {dist:.2f} "
            f"(shipped {dist_s:.2f}, others {dist_o:.2f}), width x{width:.3f} | "
            + " ".join(f"{k}:{v:.2f}" for k, v in persets.items())
        )
