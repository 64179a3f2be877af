import pickle
import sys

sys.path.insert(0, "benchmarks/extrapolation_research")
import numpy as np
from scipy.optimize import minimize
from stack import FAMS

data = pickle.load(open("benchmarks/extrapolation_research/out/stack.pkl", "rb"))


def mix_mape(p, w):
    lp = w @ p["logs"]
    if p["target"] == "throughput":
        return np.mean(np.abs(np.exp(lp) - p["yt"]) / p["yt"]) * 100
    return np.mean(np.abs(np.exp(lp) - p["yt"]) / p["yt"]) * 100


def stats(probs, w):
    e = np.array([mix_mape(p, w) for p in probs])
    am = np.array([p["amdahl_mape"] for p in probs])
    far = int(np.sum((e > 2 * am) & (e > am + 1)))
    return np.median(e), np.mean(e), far


def learn(probs, idx, l2=0.0, obj="mean"):
    k = len(idx)
    L = [p["logs"][idx] for p in probs]
    Y = [np.log(p["yt"]) for p in probs]

    def f(z):
        w = np.exp(z) / np.exp(z).sum()
        errs = np.array([np.mean(np.abs(np.expm1(w @ l - y))) for l, y in zip(L, Y)])
        return errs.mean() + l2 * np.sum((w - 1 / k) ** 2)

    best = min(
        (
            minimize(
                f,
                np.random.default_rng(s).normal(size=k) * 0.5,
                method="Nelder-Mead",
                options=dict(maxiter=4000, xatol=1e-4, fatol=1e-7),
            )
            for s in range(3)
        ),
        key=lambda r: r.fun,
    )
    w = np.exp(best.x) / np.exp(best.x).sum()
    full = np.zeros(len(FAMS))
    full[idx] = w
    return full


def sel(keys, kinds=("scaling", "usl", "mlperf"), groups=None, exclude=None):
    out = []
    for k in keys:
        for p in data[k]:
            if (
                p["kind"] in kinds
                and (groups is None or p["group"] in groups)
                and (exclude is None or p["group"] not in exclude)
            ):
                out.append(p)
    return out


SH = [("shipped", pr, "throughput") for pr in ("half", "largest", "largest2")]
EX = [("external", "largest", "throughput")]
names = [f"{f}{a}" for f, a in FAMS]


def regime(p):
    g = p["gpus_per_node"]
    if (
        g is not None
        and len(np.unique(p["n"][p["n"] > g])) >= 1
        and len(np.unique(p["n"][p["n"] >= g])) >= 2
    ):
        return "multi"
    return "single"


def learn_regimes(probs, fams_by_regime, **kw):
    W = {}
    for rg, fams in fams_by_regime.items():
        idx = [names.index(f) for f in fams]
        sub = [p for p in probs if regime(p) == rg]
        W[rg] = learn(sub, idx, **kw) if sub else np.eye(len(FAMS))[idx[0]]
    return W


def stats_r(probs, W):
    e = np.array([mix_mape(p, W[regime(p)]) for p in probs])
    am = np.array([p["amdahl_mape"] for p in probs])
    far = int(np.sum((e > 2 * am) & (e > am + 1)))
    return np.median(e), np.mean(e), far


def straddles(p):
    g = p["gpus_per_node"]
    return g is not None and bool(np.any(p["n"] < g) and np.any(p["n"] > g))


def regime(p):  # noqa: F811 — the rule kept
    return "straddle" if straddles(p) else "flat"
