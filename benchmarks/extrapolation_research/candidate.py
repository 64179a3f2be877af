"""Candidate defaults in the harness' signature."""

import sys

sys.path.insert(0, "benchmarks/extrapolation_research")
from methods import canonical, family_predictor
import numpy as np


def straddles(n, g):
    return g is not None and bool(np.any(n < g) and np.any(n > g))


def make(flat, strad, alpha=2.0):
    """flat/strad: {family: weight}; geometric mean of the families' u."""

    def fit(n, y, target, gpus_per_node=None, strong=None):
        n = np.asarray(n, float)
        u, back = canonical(n, y, target)
        scale = float(np.median(u[n == n.min()]))
        g = gpus_per_node
        mix = strad if straddles(n, g) else flat
        preds = [(w, family_predictor(f, n, u / scale, alpha, g)) for f, w in mix.items() if w > 0]
        tot = sum(w for w, _ in preds)

        def predict(m):
            m = np.asarray(m, float)
            lu = sum(w * np.log(p(m)) for w, p in preds) / tot
            return back(np.exp(lu) * scale, m)

        return predict

    return fit
