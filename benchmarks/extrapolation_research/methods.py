"""Candidate families and combination rules, NumPy prototypes (research only).

Everything works on u(N): seconds per unit of work (1/throughput) — the canonical
quantity, the same whichever column the measurements came in — normalised so the
median u at the fewest GPUs is 1. Families linear in non-negative coefficients are
fitted by weighted NNLS on relative residuals (u_hat − u)/u with weights (N/N_max)^α."""

import numpy as np
from scipy.optimize import nnls


def canonical(n, y, target):
    """(u, to_measured): seconds per unit of work up to a constant, and the map back."""
    n = np.asarray(n, float)
    if target == "throughput":
        u = 1.0 / y
        back = lambda uu, m: 1.0 / uu  # noqa: E731
    else:
        slope = np.polyfit(np.log(n), np.log(y), 1)[0] if len(np.unique(n)) > 1 else -1
        if slope > -0.3:  # flat or rising time: a step of a fixed per-GPU batch
            u = y / n
            back = lambda uu, m: uu * m  # noqa: E731
        else:
            u = y
            back = lambda uu, m: uu  # noqa: E731
    return u, back


def node_split(n, g):
    n = np.asarray(n, float)
    local = np.minimum(n, g)
    nodes = np.maximum(n / g, 1.0)
    return local, nodes


def features(family, n, g=None):
    n = np.asarray(n, float)
    if family == "amdahl":
        return np.stack([np.ones_like(n), 1 / n], -1)
    if family == "wdp":  # weak data parallel ring: c/N + l(N−1)/N + b(N−1)/N²
        return np.stack([1 / n, (n - 1) / n, (n - 1) / n**2], -1)
    if family == "wdp_bw":  # no latency: c/N + b(N−1)/N²
        return np.stack([1 / n, (n - 1) / n**2], -1)
    if family == "usl":
        return np.stack([np.ones_like(n), 1 / n, n - 1], -1)
    if family == "hier":  # two-level weak all-reduce, no latency
        l, m = node_split(n, g)
        return np.stack([1 / n, (l - 1) / (l * n), (m - 1) / (m * l * n)], -1)
    if family == "hier_lat":  # plus a latency term per unit
        l, m = node_split(n, g)
        return np.stack([1 / n, (l - 1) / (l * n), (m - 1) / (m * l * n), (n - 1) / n], -1)
    raise KeyError(family)


def fit_linear(family, n, u, w, g=None):
    A = features(family, n, g) / u[:, None] * np.sqrt(w)[:, None]
    b = np.sqrt(w)
    theta, _ = nnls(A, b)
    return lambda m: features(family, m, g) @ theta


def fit_power(n, u, w):
    X = np.stack([np.ones_like(n), np.log(n)], -1) * np.sqrt(w)[:, None]
    coef = np.linalg.lstsq(X, np.log(u) * np.sqrt(w), rcond=None)[0]
    return lambda m: np.exp(coef[0] + coef[1] * np.log(np.asarray(m, float)))


def family_predictor(family, n, u, alpha=0.0, g=None):
    w = (n / n.max()) ** alpha
    if family == "power":
        return fit_power(n, u, w)
    return fit_linear(family, n, u, w, g)


def make_method(combine, alpha=0.0):
    """combine(n, u, g) -> predictor of u; wraps it into the harness signature."""

    def fit(n, y, target, gpus_per_node=None, strong=None):
        n = np.asarray(n, float)
        u, back = canonical(n, y, target)
        scale = float(np.median(u[n == n.min()]))
        pu = combine(n, u / scale, gpus_per_node, strong)
        return lambda m: back(pu(np.asarray(m, float)) * scale, np.asarray(m, float))

    return fit


def single(family, alpha=0.0):
    def combine(n, u, g, strong):
        fam = family
        if fam.startswith("hier") and g is None:
            fam = "wdp"
        return family_predictor(fam, n, u, alpha, g)

    return make_method(combine, alpha)


def geo_mix(families, weights, alpha=0.0):
    """Weighted geometric mean of the families' u."""
    weights = np.asarray(weights, float) / np.sum(weights)

    def combine(n, u, g, strong):
        preds = []
        for f in families:
            ff = f if not (f.startswith("hier") and g is None) else "wdp"
            preds.append(family_predictor(ff, n, u, alpha, g))
        return lambda m: np.exp(sum(wk * np.log(p(m)) for wk, p in zip(weights, preds)))

    return make_method(combine, alpha)
