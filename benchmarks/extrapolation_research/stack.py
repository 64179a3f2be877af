"""Stacking: log-predictions of every family per held-out point, weights learned."""

import pickle
import sys
import warnings

sys.path.insert(0, "benchmarks/extrapolation_research")
from harness import bl, load, problems
from methods import canonical, family_predictor
import numpy as np

FAMS = [(f, a) for f in ("amdahl", "wdp", "hier", "power", "usl", "wdp_bw") for a in (0, 1, 2, 3)]


def family_logs(p):
    n = np.asarray(p["n"], float)
    u, back = canonical(n, p["y"], p["target"])
    scale = float(np.median(u[n == n.min()]))
    u = u / scale
    g = p["gpus_per_node"]
    out = []
    for f, a in FAMS:
        ff = "wdp" if (f == "hier" and g is None) else f
        pu = family_predictor(ff, n, u, a, g)(p["nt"]) * scale
        out.append(np.log(back(pu, p["nt"])))
    return np.array(out)  # (families, test points): log measured


def collect():
    warnings.simplefilter("ignore")
    rows = load()
    data = {}
    for s in ("shipped", "external"):
        for prot in ("half", "largest", "largest2"):
            for pres in ("throughput", "time"):
                probs = problems([r for r in rows if r["set"] == s], prot, pres)
                for p in probs:
                    p["logs"] = family_logs(p)
                    p["amdahl_mape"] = float(
                        np.mean(
                            np.abs(bl.fit_amdahl(p["n"], p["y"], p["target"])(p["nt"]) - p["yt"])
                            / p["yt"]
                        )
                        * 100
                    )
                data[(s, prot, pres)] = probs
    with open("benchmarks/extrapolation_research/out/stack.pkl", "wb") as f:
        pickle.dump(data, f)
    return data


if __name__ == "__main__":
    collect()


def forward_errors(p, depth=1):
    """Abs log error of each family predicting the largest training count(s) from
    the counts below (depth 1: the largest; 2: also the second largest from below it)."""
    n = np.asarray(p["n"], float)
    u, back = canonical(n, p["y"], p["target"])
    g = p["gpus_per_node"]
    counts = np.unique(n)
    out = np.zeros((len(FAMS), depth))
    for d in range(depth):
        if len(counts) - 1 - d < 2:
            out[:, d] = np.nan
            continue
        cut = counts[-1 - d]
        keep = n < cut
        held = n == cut
        scale = float(np.median(u[keep][n[keep] == n[keep].min()]))
        for i, (f, a) in enumerate(FAMS):
            ff = "wdp" if (f == "hier" and g is None) else f
            pu = family_predictor(ff, n[keep], u[keep] / scale, a, g)(n[held]) * scale
            out[i, d] = np.mean(np.abs(np.log(pu) - np.log(u[held])))
    return out


def add_forward(data):
    for probs in data.values():
        for p in probs:
            p["fv"] = forward_errors(p, 2)
    return data


if __name__ == "__main__":
    import pickle as _p

    d = _p.load(open("benchmarks/extrapolation_research/out/stack.pkl", "rb"))
    add_forward(d)
    _p.dump(d, open("benchmarks/extrapolation_research/out/stack.pkl", "wb"))


def train_residuals(p):
    n = np.asarray(p["n"], float)
    u, back = canonical(n, p["y"], p["target"])
    scale = float(np.median(u[n == n.min()]))
    u = u / scale
    g = p["gpus_per_node"]
    out = []
    for f, a in FAMS:
        ff = "wdp" if (f == "hier" and g is None) else f
        pu = family_predictor(ff, n, u, a, g)(n)
        out.append(np.log(pu) - np.log(u))
    return np.array(out)  # (families, training rows)


if __name__ == "__main__":
    d = _p.load(open("benchmarks/extrapolation_research/out/stack.pkl", "rb"))
    for probs in d.values():
        for p in probs:
            p["res"] = train_residuals(p)
    _p.dump(d, open("benchmarks/extrapolation_research/out/stack.pkl", "wb"))
