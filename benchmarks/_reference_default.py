"""NumPy reference implementation of the proposed default extrapolation (issue #9).

The specification is `docs/design/extrapolation.md`; this module is its executable form, for the
library's JAX port to be tested against (same predictions within 1e-6 relative). NumPy
and SciPy only; no perfmodel import.

In short: the measurements become seconds per unit of work ``u(N)`` (whatever column
they came in); each family below is fitted to u by weighted non-negative least squares
on relative residuals (a convex problem with one solution); the prediction is the
weighted geometric mean of the families' u; intervals are ``exp(±q·d)`` around it, d
the doublings past the largest measured GPU count, q a table calibrated across the
corpus (split conformal).

Families (u in seconds per unit of work, every coefficient ≥ 0; l = min(N, G) GPUs per
node and m = max(N/G, 1) nodes for G = gpus_per_node):

* ``amdahl``: ``s + p/N``
* ``weak_data_parallel``: ``c/N + a·(N−1)/N + b·(N−1)/N²``
* ``power_law``: ``exp(k)·N^−e`` (k, e free), least squares in log u
* ``weak_hierarchical``: ``c/N + a·(l−1)/(l·N) + b·(m−1)/(m·l·N)``

Combination: where ``gpus_per_node`` is given and the measured counts lie on both
sides of it (some below, some above), ``weak_hierarchical`` alone; otherwise
``0.4·amdahl + 0.4·weak_data_parallel + 0.2·power_law`` in log u.
"""

import dataclasses
import math

import numpy as np
from scipy.optimize import nnls

ALPHA = 2.0  # weights (N / N_max)^ALPHA on the squared relative residuals
RIDGE = 1e-8  # λ‖θ‖² added to the linear families' loss, for a unique minimiser
MIXTURE = {"amdahl": 0.4, "weak_data_parallel": 0.4, "power_law": 0.2}
STRADDLING = {"weak_hierarchical": 1.0}
# Flat or rising time with N (log-log slope above this) is the step time of a fixed
# per-GPU batch (weak scaling); falling time is time per unit of work, or the step time
# of a fixed global batch (strong scaling). On the corpus' throughput series (every
# protocol's training counts) time per unit of work has slopes ≤ −0.37 and the step
# time of their fixed per-GPU batch ≥ −0.16; MLPerf's times to train −0.54 to −0.80.
WEAK_STEP_SLOPE = -0.25
# Prediction intervals of log u: ±q_L·(d + KAPPA·D), d the doublings past the largest
# measured count (at least MIN_DOUBLINGS, inside the measured range too) and D the
# range of the log u of the three MIXTURE families there (their disagreement); q_L split
# conformal over the shipped GPU-scaling series (benchmarks/extrapolation_research/calibrate.py).
KAPPA = 4.0
MIN_DOUBLINGS = 0.25
INTERVAL_Q = {0.5: 0.0209, 0.8: 0.0468, 0.9: 0.0723}
FAMILIES = ("amdahl", "weak_data_parallel", "power_law", "weak_hierarchical")


def features(family: str, n, gpus_per_node=None) -> np.ndarray:
    """The columns φ_k(N) of a family linear in non-negative coefficients, u = Σ θ_k φ_k."""
    n = np.asarray(n, float)
    if family == "amdahl":
        return np.stack([np.ones_like(n), 1.0 / n], axis=-1)
    if family == "weak_data_parallel":
        return np.stack([1.0 / n, (n - 1.0) / n, (n - 1.0) / n**2], axis=-1)
    if family == "weak_hierarchical":
        g = float(gpus_per_node)
        local = np.minimum(n, g)
        nodes = np.maximum(n / g, 1.0)
        return np.stack(
            [1.0 / n, (local - 1.0) / (local * n), (nodes - 1.0) / (nodes * local * n)], axis=-1
        )
    raise ValueError(f"not a linear family: {family}")


def fit_family(family: str, n, u, gpus_per_node=None, alpha=ALPHA) -> np.ndarray:
    """Coefficients of `family` fitted to u(N): minimise Σ w_i·(û_i/u_i − 1)² + λ‖θ‖²,
    w_i = (N_i/N_max)^α, λ = RIDGE, θ ≥ 0 (NNLS) for the linear families; (k, e) free
    for the power law (weighted least squares of log u on log N, no ridge)."""
    n, u = np.asarray(n, float), np.asarray(u, float)
    root_w = np.sqrt((n / n.max()) ** alpha)
    if family == "power_law":
        design = np.stack([np.ones_like(n), -np.log(n)], axis=-1) * root_w[:, None]
        coef, *_ = np.linalg.lstsq(design, np.log(u) * root_w, rcond=None)
        return coef
    design = features(family, n, gpus_per_node) / u[:, None] * root_w[:, None]
    k = design.shape[1]
    # A ridge of RIDGE on θ (u is normalised to 1 at the fewest GPUs, so θ is O(1)) makes
    # the minimiser unique even where the columns are dependent.
    design = np.vstack([design, math.sqrt(RIDGE) * np.eye(k)])
    theta, _ = nnls(design, np.concatenate([root_w, np.zeros(k)]))
    return theta


def family_u(family: str, theta, n, gpus_per_node=None) -> np.ndarray:
    n = np.asarray(n, float)
    if family == "power_law":
        return np.exp(theta[0] - theta[1] * np.log(n))
    return features(family, n, gpus_per_node) @ theta


def straddles(n, gpus_per_node) -> bool:
    """Measured GPU counts on both sides of the node size (some below, some above)."""
    if gpus_per_node is None:
        return False
    n = np.asarray(n, float)
    return bool(np.any(n < gpus_per_node) and np.any(n > gpus_per_node))


def infer_scaling(n, measured, target, scaling=None):
    """``(scaling, unit, how)``: "weak" or "strong", what a time value is ("unit": per
    unit of work, or per step of a fixed global batch, both u ∝ t; "step": per step of a
    fixed per-GPU batch, u ∝ t/N), and how that was decided.

    scaling: "weak", "strong" or None (not stated). Throughput is per unit of work
    whatever the scaling. A time with a stated fixed global batch ("strong") is u ∝ t.
    Otherwise a time that does not fall with N (log-log slope over the measurements >
    WEAK_STEP_SLOPE, i.e. falling slower than N^−0.25) is the step time of a fixed
    per-GPU batch, and one that falls faster is per unit of work: weak-scaling step
    times are flat or rising (slope ≳ 0) and times per unit of work fall about as 1/N
    (slope ≈ −1), so the rule needs no statement for weak scaling.
    """
    if target == "throughput":
        return (scaling or "weak"), "unit", "throughput is per unit of work"
    if scaling == "strong":
        return "strong", "unit", "stated: fixed global batch, time ∝ time per unit of work"
    n, y = np.asarray(n, float), np.asarray(measured, float)
    slope = float(np.polyfit(np.log(n), np.log(y), 1)[0]) if len(np.unique(n)) > 1 else -1.0
    said = "stated weak; " if scaling == "weak" else "inferred: "
    if slope > WEAK_STEP_SLOPE:
        return (
            "weak",
            "step",
            f"{said}time vs GPUs log-log slope {slope:.2f} > {WEAK_STEP_SLOPE}: "
            "step time of a fixed per-GPU batch",
        )
    return (
        (scaling or "weak"),
        "unit",
        f"{said}time vs GPUs log-log slope {slope:.2f} ≤ {WEAK_STEP_SLOPE}: time per unit of work",
    )


@dataclasses.dataclass
class DefaultFit:
    """The fitted default. `predict` and `interval` give the measured quantity."""

    target: str
    unit: str  # "unit": u ∝ time (or 1/throughput); "step": u ∝ time/N
    scaling: str
    how: str
    scale: float
    gpus_per_node: float | None
    weights: dict
    thetas: dict
    mixture_thetas: dict
    max_gpus: float
    train_gpus: np.ndarray
    train_measured: np.ndarray

    def log_u(self, m) -> np.ndarray:
        m = np.asarray(m, float)
        total = sum(self.weights.values())
        return sum(
            w * np.log(family_u(f, self.thetas[f], m, self.gpus_per_node))
            for f, w in self.weights.items()
        ) / total + math.log(self.scale)

    def _to_measured(self, log_u, m):
        m = np.asarray(m, float)
        if self.target == "throughput":
            return np.exp(-log_u)
        return np.exp(log_u) * (m if self.unit == "step" else 1.0)

    def predict(self, m) -> np.ndarray:
        return self._to_measured(self.log_u(m), m)

    def family_predictions(self, m) -> dict:
        m = np.asarray(m, float)
        return {
            f: self._to_measured(
                np.log(family_u(f, self.thetas[f], m, self.gpus_per_node)) + math.log(self.scale), m
            )
            for f in self.thetas
        }

    def spread(self, m) -> np.ndarray:
        """D: max − min over the MIXTURE families of their log u at `m`."""
        m = np.asarray(m, float)
        logs = [np.log(family_u(f, self.mixture_thetas[f], m, self.gpus_per_node)) for f in MIXTURE]
        return np.max(logs, axis=0) - np.min(logs, axis=0)

    def interval_scale(self, m) -> np.ndarray:
        """d + KAPPA·D at `m` (the conformal score's denominator)."""
        m = np.asarray(m, float)
        doublings = np.maximum(np.log2(m / self.max_gpus), MIN_DOUBLINGS)
        return doublings + KAPPA * self.spread(m)

    def interval(self, m, level=0.9, q=None):
        """``(lo, hi)`` of the `level` prediction interval (0.5, 0.8 or 0.9); `q`
        replaces the shipped INTERVAL_Q[level]."""
        m = np.asarray(m, float)
        half = (INTERVAL_Q[level] if q is None else q) * self.interval_scale(m)
        centre = self.log_u(m)
        a, b = self._to_measured(centre - half, m), self._to_measured(centre + half, m)
        return np.minimum(a, b), np.maximum(a, b)

    def training_metrics(self) -> dict:
        """R² and MAPE (%) of the fit on its own measurements, on the measured quantity."""
        y = self.train_measured
        p = self.predict(self.train_gpus)
        ss_res = float(np.sum((y - p) ** 2))
        ss_tot = float(np.sum((y - y.mean()) ** 2))
        return {
            "r2": 1.0 - ss_res / ss_tot if ss_tot > 0 else float("nan"),
            "mape": float(np.mean(np.abs(p - y) / y) * 100.0),
        }


def fit_default(gpus, measured, target="throughput", *, gpus_per_node=None, scaling=None):
    """Fit the default to one series.

    Args:
        gpus: GPU count of each measurement (repeats allowed).
        measured: throughput (work per second) or time (seconds), > 0.
        target: "throughput" or "time".
        gpus_per_node: the node size, when the CSV gives it.
        scaling: "weak", "strong" or None (infer; see `infer_scaling`).
    """
    n, y = np.asarray(gpus, float), np.asarray(measured, float)
    if n.shape != y.shape or n.size == 0 or np.any(n < 1) or np.any(~(y > 0)):
        raise ValueError("gpus ≥ 1 and measured > 0, of one shape, are needed")
    if len(np.unique(n)) < 2:
        raise ValueError("at least two distinct GPU counts are needed")
    scaling, unit, how = infer_scaling(n, y, target, scaling)
    if target == "throughput":
        u = 1.0 / y
    else:
        u = y / n if unit == "step" else y.copy()
    scale = float(np.median(u[n == n.min()]))
    u = u / scale
    g = None if gpus_per_node is None else float(np.atleast_1d(gpus_per_node)[0])
    weights = dict(STRADDLING if straddles(n, g) else MIXTURE)
    mixture_thetas = {f: fit_family(f, n, u, g) for f in MIXTURE}
    thetas = {
        f: mixture_thetas[f] if f in mixture_thetas else fit_family(f, n, u, g) for f in weights
    }
    return DefaultFit(
        target=target,
        unit=unit,
        scaling=scaling,
        how=how,
        scale=scale,
        gpus_per_node=g,
        weights=weights,
        thetas=thetas,
        mixture_thetas=mixture_thetas,
        max_gpus=float(n.max()),
        train_gpus=n,
        train_measured=y,
    )


def fit_reference(gpus, measured, target="throughput", *, gpus_per_node=None, strong=None, **info):
    """`fit_default` in the signature of `baselines.py` (a predictor of the measured)."""
    scaling = None if strong is None else ("strong" if strong else "weak")
    fitted = fit_default(gpus, measured, target, gpus_per_node=gpus_per_node, scaling=scaling)
    predict = fitted.predict
    return predict
