"""Split-conformal intervals for the reference default, leave one source group out.

Score of a held-out point: s = |log(ŷ/y)| / max(d, MIN_DOUBLINGS), d = log2(N /
largest training N). The level-L half-width per doubling is the L-quantile of s over
the calibration points (each series weighted equally, finite-sample correction
ceil((n+1)L)/n on the number of series). Calibration set: every GPU-scaling series
(MLPerf time-to-train and the two USL load series excluded), every protocol.
``python benchmarks/extrapolation_research/calibrate.py`` prints the shipped table (the constants of
_reference_default.py) and per-group coverage with each group's q learned on the
other groups."""

import sys

sys.path.insert(0, "benchmarks/extrapolation_research")
sys.path.insert(0, "benchmarks")
import _reference_default as ref
from harness import load, problems
import numpy as np

LEVELS = (0.5, 0.8, 0.9)
PROTOCOLS = ("half", "largest", "largest2")


def points(rows, presentation="throughput"):
    out = []  # (group, series key, score, log ratio, doublings, prob)
    for prot in PROTOCOLS:
        for p in problems(rows, prot, presentation):
            f = ref.fit_default(
                p["n"],
                p["y"],
                p["target"],
                gpus_per_node=p["gpus_per_node"],
                scaling=None if p["strong"] is None else ("strong" if p["strong"] else "weak"),
            )
            pred = f.predict(p["nt"])
            d = f.interval_scale(p["nt"])
            r = np.abs(np.log(pred / p["yt"]))
            for i in range(len(r)):
                out.append(
                    dict(
                        group=p["group"],
                        key=(prot, p["name"]),
                        s=r[i] / d[i],
                        kind=p["kind"],
                        set=p["set"],
                        w=1.0 / len(r),
                        fit=f,
                        n=p["nt"][i],
                        y=p["yt"][i],
                        prot=prot,
                    )
                )
    return out


def quantile(pts, level):
    s = np.array([q["s"] for q in pts])
    w = np.array([q["w"] for q in pts])
    order = np.argsort(s)
    s, w = s[order], w[order]
    n = w.sum()
    target = min(np.ceil((n + 1) * level) / n, 1.0) * n
    return float(s[np.searchsorted(np.cumsum(w), target - 1e-9)])


def coverage(pts, qs):
    cov = {}
    for L in LEVELS:
        inside = [q["w"] * (q["s"] <= qs[L]) for q in pts]
        cov[L] = sum(inside) / sum(q["w"] for q in pts)
    return cov


def width(pts, q90):
    # median ratio hi/lo of the 90% interval at the held-out points
    return float(
        np.median([np.exp(2 * q90 * q["fit"].interval_scale(np.array([q["n"]]))[0]) for q in pts])
    )


def main():
    rows = load()
    pts = points(rows)
    calib = [q for q in pts if q["kind"] == "scaling" and q["set"] == "shipped"]
    qs = {L: quantile(calib, L) for L in LEVELS}
    print(
        "INTERVAL_Q (shipped GPU-scaling series, all protocols):",
        {L: round(v, 4) for L, v in qs.items()},
    )
    print(
        "Groups of the shipped set: q from the other shipped groups (leave one source group out);"
    )
    print("external groups and MLPerf/USL: the shipped q, never calibrated on them.")
    print("| group | set | series | points | 50% | 80% | 90% | 90% width (hi/lo) | q90 used |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    groups = sorted({q["group"] for q in pts}, key=lambda g: (g.startswith("ext"), g))
    for g in groups:
        mine = [q for q in pts if q["group"] == g]
        if g in {q["group"] for q in calib}:
            other = [q for q in calib if q["group"] != g]
            qg = {L: quantile(other, L) for L in LEVELS}
        else:
            qg = qs
        c = coverage(mine, qg)
        nser = len({q["key"][1] for q in mine})
        print(
            f"| {g} | {mine[0]['set']} | {nser} | {len(mine)} | {c[0.5]:.2f} | {c[0.8]:.2f} | {c[0.9]:.2f} | ×{width(mine, qg[0.9]):.2f} | {qg[0.9]:.4f} |"
        )
    ext = [q for q in pts if q["kind"] == "scaling" and q["set"] == "external"]
    for name, sub in (("shipped GPU scaling (in-sample)", calib), ("external (check)", ext)):
        c = coverage(sub, qs)
        print(
            f"pooled {name} (shipped constants): "
            + ", ".join(f"{int(L * 100)}% {c[L]:.2f}" for L in LEVELS)
        )
    return qs


if __name__ == "__main__":
    main()
