"""NumPy reference implementation of the proposed default extrapolation (issue #9), round 2.

The specification is `docs/design/extrapolation.md`; this module is its executable form, for the
library's JAX port to be tested against (same predictions within 1e-6 relative). NumPy
and SciPy only; no perfmodel import.

In short: the measurements become seconds per unit of work ``u(N)`` (whatever column
they came in); each family below is fitted to u by weighted non-negative least squares
on relative residuals (a convex problem with one solution); the prediction is a
weighted geometric mean of the families' u whose weights depend on the regime of the
series and on how far ahead the count asked about lies; intervals are
``exp(±q·scale)`` around it, q a table calibrated across the corpus (split conformal).

Families (u in seconds per unit of work, every coefficient ≥ 0 unless said; l = min(N,
G) GPUs per node and m = max(N/G, 1) nodes for G = gpus_per_node):

* ``amdahl``: ``s + p/N``
* ``weak_data_parallel``: ``c/N + a·(N−1)/N + b·(N−1)/N²``
* ``usl``: ``s + p/N + k·(N−1)`` (Gunther's law in time per unit of work)
* ``power_law``: ``exp(k)·N^−e`` (k, e free), least squares in log u, weights (N/N_max)²
* ``power_law_flat``: the same with equal weights (the classic log-log fit)
* ``weak_hierarchical``: ``c/N + a·(l−1)/(l·N) + b·(m−1)/(m·l·N)``

Combination at a count N, with d = log2(N / largest measured N) and t = clip(d − 1, 0,
1): ``w = (1 − t)·NEAR[regime] + t·FAR[regime]`` (near weights up to one doubling
ahead, far weights from two on); the regime is ``straddling`` (gpus_per_node given and
measured counts on both sides of it), else ``strong`` (a fixed global batch, stated),
else ``weak``. Where gpus_per_node G is given and every measured count fits in one node,
``w ← (1 − c)·w + c·PAST_NODE`` past it, c = clip(log2(N/G), 0, 1).

Anchoring (never worse on the data it was given): where the combination misses its own
measurements by more than ANCHOR_MISS_PERCENT (MAPE on the measured quantity) and
ANCHOR_MISS_RATIO times the best of ANCHORS (linear families and the power law fitted
with equal weights, α = 0), that family takes the measured range over:
``w = a·[f = anchor] + (1 − a)·w``, a = clip(log2(N_max/N)/ANCHOR_SPAN, 0, 1): 1 from
N_max/2 down, 0 from N_max up, so every prediction past the measurements is unchanged,
and so are the intervals there (D leaves the anchor out; r is that of the combination
without it from N_max up, moving to the anchored curve's own r as a does below).
"""

import dataclasses
import math

import numpy as np
from scipy.optimize import nnls
from scipy.stats import t as student_t

ALPHA = 2.0  # weights (N / N_max)^ALPHA on the squared relative residuals
FAMILY_ALPHA = {"power_law_flat": 0.0}  # families fitted with other weights
RIDGE = 1e-8  # λ‖θ‖² added to the linear families' loss, for a unique minimiser
FAMILIES = (
    "amdahl",
    "weak_data_parallel",
    "power_law",
    "power_law_flat",
    "usl",
    "weak_hierarchical",
)
# Weights of the geometric mixture (benchmarks/extrapolation_research/learn_weights.py).
NEAR = {
    "weak": {"amdahl": 0.4, "weak_data_parallel": 0.4, "power_law": 0.2},
    "strong": {"amdahl": 0.1, "power_law": 0.4, "power_law_flat": 0.1, "usl": 0.4},
    "straddling": {"weak_hierarchical": 0.9, "power_law_flat": 0.1},
}
FAR = {
    "weak": {"weak_data_parallel": 0.5, "power_law_flat": 0.5},
    "strong": {"weak_data_parallel": 0.5, "power_law_flat": 0.5},
    "straddling": {"power_law_flat": 1.0},
}
FAR_FROM, FAR_TO = 1.0, 2.0  # doublings ahead where the weights move from NEAR to FAR
# Round 5 (2026-12-03): past a stated node of G GPUs that no measurement reaches beyond,
# the weights move to PAST_NODE as c(N) = clip(log2(N/G), 0, 1) grows: the straddling
# regime's FAR weights, which is what a table that has crossed the node extrapolates
# with (benchmarks/extrapolation_research/node_points.py).
PAST_NODE = FAR["straddling"]
ANCHORS = ("amdahl_flat", "weak_data_parallel_flat", "usl_flat", "power_law_flat")
ANCHOR_MISS_PERCENT = 2.0
ANCHOR_MISS_RATIO = 2.0
ANCHOR_SPAN = 1.0  # doublings below N_max over which the anchor hands over
# Past N_max the curve's efficiency is held at most at its own there (`_log_u`); False
# gives the default before 2026-12-05 (extrapolation_research/held_efficiency.py).
HOLD_EFFICIENCY = True
# ... and at points on the ramps where the weights move with N (`hold_points`): a ramp
# moving weight to a faster member made a weak-scaled step time fall with N (review round
# 13, 2026-12-06). False holds at N_max alone (extrapolation_research/ramp_hold.py).
HOLD_RAMPS = True
HOLD_STEPS = 8  # points per doubling of a ramp
# Stated strong scaling (a fixed global batch): past N_max the time of the fixed work is
# held at least at the serial part Amdahl's law fits to the measurements (the costs that
# do not shrink with N; the FAR power law has no floor; the library's
# `_closed.serial_floor`, 2026-12-06). It binds at no held-out count of any set; False
# gives the default before (extrapolation_research/strong_floor.py).
STRONG_FLOOR = True
# A candidate, not the library's (False): past a slowdown, where the curve is slower per
# unit of work at N_max than at N_max/2, the forecast past N_max would not be faster than
# at N_max. Data measured fastest at 8 GPUs and 16% slower at 16 were forecast faster at
# 64 than at 8 (review of 2026-12-06). A DLPerf table dipping at the node boundary and
# recovering past it went from 15.8% to 46.4% error, hence HOLD_SLOWDOWN_NODE (chosen
# after seeing that table). extrapolation_research/slowdown_hold.py, RESULTS.md
# "Past a measured slowdown".
HOLD_SLOWDOWN = False
HOLD_SLOWDOWN_NODE = True  # ... unless N_max/2 is within a node and N_max past it
# Past a sustained slowdown: where the measurements themselves are slower per unit of
# work at each of their last two steps (the three largest counts, per-count medians), the
# forecast past N_max is not faster than the curve at N_max. One slower step may be a
# node crossing that the next node recovers (the DLPerf table of HOLD_SLOWDOWN); two in a
# row are contention that grows with N (the USL's coherency). Review of 2026-12-07 (H3).
# extrapolation_research/sustained_slowdown.py, RESULTS.md "Past a sustained slowdown".
HOLD_SUSTAINED = True
# Research (2026-12-07, review H1): past the largest measured count the throughput does
# not rise above its tangent at a hold point, the tangent's slope that of the members'
# log-time slopes weighted as at the point (the weights' ramp adds none).
HOLD_GAIN = False
# A one-GPU time of 0 is refused whether or not one GPU was measured (`fit_family`): a
# 1-GPU measurement weighted (1/N_max)² did not stop it (Lambda's Tacotron 2 on H100, 1,
# 4 and 8 GPUs). False refits only tables measured from 2 GPUs up, the default before
# 2026-12-06 (extrapolation_research/one_gpu_measured.py).
ONE_GPU_MEASURED = True
# Flat or rising time with N (log-log slope above this) is the step time of a fixed
# per-GPU batch (weak scaling); falling time is time per unit of work, or the step time
# of a fixed global batch (strong scaling). On the corpus' throughput series (every
# protocol's training counts) time per unit of work has slopes ≤ −0.37 and the step
# time of their fixed per-GPU batch ≥ −0.16; MLPerf's times to train −0.54 to −0.80.
WEAK_STEP_SLOPE = -0.25
SUPERLINEAR_GAIN = 1.5  # a "step" column ending this many times shorter is read as "unit"
# Prediction intervals of log u: ±q·scale, scale = max(d, MIN_DOUBLINGS) + KAPPA·D +
# LAMBDA·r, d the doublings past the largest measured count, D the range of the log u of
# every fitted family there (their disagreement), r the root-mean-square error of log û
# on the training measurements; q split conformal over the shipped GPU-scaling series,
# one table for series with 3 distinct measured counts and one for 4 or more
# (benchmarks/extrapolation_research/calibrate.py).
KAPPA = 8.0
LAMBDA = 20.0
# Round 4 (2026-12-03): + NODE_KAPPA·clip(log2(N/G), 0, 1) past a node of G GPUs when the
# CSV states G and every measured count fits in one node (nothing measured says what the
# network costs); learned on the tables measured within one node and beyond it
# (benchmarks/extrapolation_research/node_intervals.py).
NODE_KAPPA = 5.5
MIN_DOUBLINGS = 0.25
MANY_COUNTS = 4
# 2026-12-06: inside the measured range and below it, × (1 + (INSIDE − 1)·a(N)) with a
# the anchor's ramp (1 from N_max/2 down, 0 from N_max up), + DOWN·b(N), b the doublings
# below the smallest measured count: every calibration point lies past N_max, and left
# out one interior count at a time the 90% intervals held 80% of the shipped points, the
# smallest count 59% (benchmarks/extrapolation_research/interior.py).
INSIDE = 1.55
DOWN = 0.5
INTERVAL_Q = {
    "few": {0.5: 0.0128, 0.8: 0.0289, 0.9: 0.0462},
    "many": {0.5: 0.0093, 0.8: 0.032, 0.9: 0.0348},
}
LEVELS = (0.5, 0.8, 0.9)


def features(family: str, n, gpus_per_node=None) -> np.ndarray:
    """The columns φ_k(N) of a family linear in non-negative coefficients, u = Σ θ_k φ_k."""
    n = np.asarray(n, float)
    if family == "amdahl":
        return np.stack([np.ones_like(n), 1.0 / n], axis=-1)
    if family == "weak_data_parallel":
        return np.stack([1.0 / n, (n - 1.0) / n, (n - 1.0) / n**2], axis=-1)
    if family == "usl":
        return np.stack([np.ones_like(n), 1.0 / n, n - 1.0], axis=-1)
    if family == "weak_hierarchical":
        g = float(gpus_per_node)
        local = np.minimum(n, g)
        nodes = np.maximum(n / g, 1.0)
        return np.stack(
            [1.0 / n, (local - 1.0) / (local * n), (nodes - 1.0) / (nodes * local * n)], axis=-1
        )
    raise ValueError(f"not a linear family: {family}")


def fit_family(family: str, n, u, gpus_per_node=None, alpha=None) -> np.ndarray:
    """Coefficients of `family` fitted to u(N): minimise Σ w_i·(û_i/u_i − 1)² + λ‖θ‖²,
    w_i = (N_i/N_max)^α (α = ALPHA, or FAMILY_ALPHA[family]), λ = RIDGE, θ ≥ 0 (NNLS)
    for the linear families; (k, e) free for the power laws (weighted least squares of
    log u on log N, no ridge)."""
    n, u = np.asarray(n, float), np.asarray(u, float)
    if alpha is None:
        alpha = FAMILY_ALPHA.get(family, ALPHA)
    root_w = np.sqrt((n / n.max()) ** alpha)
    if family in ("power_law", "power_law_flat"):
        design = np.stack([np.ones_like(n), -np.log(n)], axis=-1) * root_w[:, None]
        coef, *_ = np.linalg.lstsq(design, np.log(u) * root_w, rcond=None)
        return coef
    columns = features(family, n, gpus_per_node) / u[:, None] * root_w[:, None]
    theta = np.zeros(columns.shape[1])
    # The one-GPU time of weak_data_parallel and weak_hierarchical is their compute
    # coefficient alone (the other columns vanish at N = 1). The transfer columns can
    # stand in for compute and set it to 0 (with no measurement at one GPU, or one weighted
    # (1/N_max)²), a speedup that collapses: leave out the last column until it is positive.
    for k in range(columns.shape[1], 0, -1):
        # A ridge of RIDGE on θ (u is normalised to 1 at the fewest GPUs, so θ is O(1))
        # makes the minimiser unique even where the columns are dependent.
        design = np.vstack([columns[:, :k], math.sqrt(RIDGE) * np.eye(k)])
        theta[:] = 0.0
        theta[:k], _ = nnls(design, np.concatenate([root_w, np.zeros(k)]))
        if family not in ("weak_data_parallel", "weak_hierarchical") or theta[0] > 0:
            break
        if n.min() <= 1 and not ONE_GPU_MEASURED:
            break
    return theta


def family_log_u(family: str, theta, n, gpus_per_node=None) -> np.ndarray:
    """log u of a fitted family at counts `n` (normalised units); ``<linear>_flat`` is
    that family (fitted with equal weights)."""
    n = np.asarray(n, float)
    if family != "power_law_flat":
        family = family.removesuffix("_flat")
    if family in ("power_law", "power_law_flat"):
        return theta[0] - theta[1] * np.log(n)
    return np.log(features(family, n, gpus_per_node) @ theta)


def straddles(n, gpus_per_node) -> bool:
    """Measured GPU counts on both sides of the node size (some below, some above)."""
    if gpus_per_node is None:
        return False
    n = np.asarray(n, float)
    return bool(np.any(n < gpus_per_node) and np.any(n > gpus_per_node))


def regime(n, gpus_per_node, scaling) -> str:
    """``strong`` (stated fixed global batch, first since 2026-12-05), ``straddling`` or
    ``weak``."""
    if scaling == "strong":
        return "strong"
    return "straddling" if straddles(n, gpus_per_node) else "weak"


# Research (2026-12-07, review H1): the ramps' shares eased by smoothstep x²(3 − 2x), so
# that the weights, and the curve's slope, have no corner where a ramp starts or ends.
# Neutral on accuracy; not shipped (`extrapolation_research/smooth_ramps.py`, RESULTS.md).
SMOOTH_RAMPS = False


def eased(x):
    """x, or its smoothstep x²(3 − 2x) under `SMOOTH_RAMPS` (x in [0, 1])."""
    return x * x * (3.0 - 2.0 * x) if SMOOTH_RAMPS else x


def far_share(m, max_gpus) -> np.ndarray:
    """t(N) = clip((d − FAR_FROM)/(FAR_TO − FAR_FROM), 0, 1), d = log2(N / max_gpus)."""
    d = np.log2(np.asarray(m, float) / max_gpus)
    return eased(np.clip((d - FAR_FROM) / (FAR_TO - FAR_FROM), 0.0, 1.0))


def anchor_share(m, max_gpus) -> np.ndarray:
    """a(N) = clip(log2(max_gpus / N)/ANCHOR_SPAN, 0, 1)."""
    return eased(np.clip(np.log2(max_gpus / np.asarray(m, float)) / ANCHOR_SPAN, 0.0, 1.0))


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
    gain = float(np.median(y[n == n.min()]) / np.median(y[n == n.max()]))
    if slope > WEAK_STEP_SLOPE and scaling is None and gain > SUPERLINEAR_GAIN:
        return (
            "strong",
            "unit",
            f"inferred: slope {slope:.2f} but {gain:.3g}x shorter at the largest count: "
            "a superlinear per-GPU batch, read as one global batch",
        )
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


def hold_points(max_gpus: float, node: float) -> list[float]:
    """N_max, and HOLD_STEPS + 1 points evenly spaced in log2 N on the far ramp
    [N_max·2^FAR_FROM, N_max·2^FAR_TO] and, with an unmeasured node G, on [G, 2G]."""
    ramp = np.linspace(0.0, 1.0, HOLD_STEPS + 1)
    points = [max_gpus, *(max_gpus * 2.0 ** (FAR_FROM + (FAR_TO - FAR_FROM) * ramp))]
    if node:
        points += list(node * 2.0**ramp)
    return [float(p) for p in points]


def past_node(m, node) -> np.ndarray:
    """c = clip(log2(N/G), 0, 1): 0 within one node, 1 from two nodes on."""
    return eased(np.clip(np.log2(np.asarray(m, float) / node), 0.0, 1.0))


@dataclasses.dataclass
class DefaultFit:
    """The fitted default. `predict` and `interval` give the measured quantity."""

    target: str
    unit: str  # "unit": u ∝ time (or 1/throughput); "step": u ∝ time/N
    scaling: str
    how: str
    regime: str
    scale: float
    gpus_per_node: float | None
    near: dict
    far: dict
    thetas: dict
    max_gpus: float
    counts: int  # distinct measured GPU counts
    train_gpus: np.ndarray
    train_measured: np.ndarray
    train_log_u: np.ndarray  # normalised log u of the measurements
    anchor: str = ""  # the family the measured range is handed over to, or ""
    anchor_theta: np.ndarray | None = None

    def family_logs(self, m) -> dict:
        """Normalised log u of every fitted family at `m` (not the anchor)."""
        return {f: family_log_u(f, th, m, self.gpus_per_node) for f, th in self.thetas.items()}

    def unmeasured_node(self) -> float:
        """G when it is stated and every measured count fits in one node, else 0."""
        node = self.gpus_per_node
        return float(node) if node and node >= 2 and self.max_gpus <= node else 0.0

    def weights(self, m, anchored: bool = True) -> dict:
        """Family → weight at each count of `m` (arrays summing to 1)."""
        t = far_share(m, self.max_gpus)
        names = dict.fromkeys([*self.near, *self.far])
        w = {f: (1.0 - t) * self.near.get(f, 0.0) + t * self.far.get(f, 0.0) for f in names}
        node = self.unmeasured_node()
        if node:
            c = past_node(m, node)
            names = dict.fromkeys([*w, *PAST_NODE])
            w = {f: (1.0 - c) * w.get(f, 0.0) + c * PAST_NODE.get(f, 0.0) for f in names}
        if not (anchored and self.anchor):
            return w
        a = anchor_share(m, self.max_gpus)
        w = {f: (1.0 - a) * x for f, x in w.items()}
        w[self.anchor] = w.get(self.anchor, 0.0) + a
        return w

    def _mixed_log_u(self, m, anchored: bool = True) -> np.ndarray:
        m = np.asarray(m, float)
        logs = self.family_logs(m)
        if self.anchor:
            logs[self.anchor] = family_log_u(self.anchor, self.anchor_theta, m, self.gpus_per_node)
        return sum(w * logs[f] for f, w in self.weights(m, anchored).items())

    def _log_u(self, m, anchored: bool = True) -> np.ndarray:
        """The mixed log u, its efficiency held past the measurements: log u(N) ≥
        log u(M) + log(M/N) for every hold point M < N, the largest measured count and
        points on the weights' ramps (the library's `_closed.held_efficiency` and
        `_closed.hold_points`; round 13, 2026-12-06: the largest count alone before)."""
        m = np.asarray(m, float)
        log_u = self._mixed_log_u(m, anchored)
        if not HOLD_EFFICIENCY:
            return log_u
        points = [float(self.max_gpus)]
        if HOLD_RAMPS:
            points = hold_points(float(self.max_gpus), self.unmeasured_node() or 0.0)
        for count in points:
            at_count = self._mixed_log_u(np.array([count]), anchored)[0]
            floor = at_count + np.log(count) - np.log(m)
            log_u = np.where(m > count, np.maximum(log_u, floor), log_u)
        if HOLD_GAIN:
            for count in points:
                log_u = np.maximum(log_u, self._tangent_floor(count, m, anchored))
        top = float(self.max_gpus)
        if HOLD_SLOWDOWN:
            at_top, at_half = self._mixed_log_u(np.array([top, top / 2.0]), anchored)
            node = self.gpus_per_node
            crossing = node is not None and top / 2.0 <= node < top
            if at_top > at_half and not (HOLD_SLOWDOWN_NODE and crossing):
                log_u = np.where(m > top, np.maximum(log_u, at_top), log_u)
        if HOLD_SUSTAINED and self.sustained_slowdown():
            at_top = self._mixed_log_u(np.array([top]), anchored)[0]
            log_u = np.where(m > top, np.maximum(log_u, at_top), log_u)
        serial = self.thetas["amdahl"][0]
        if STRONG_FLOOR and self.regime == "strong" and serial > 0:
            log_u = np.where(m > self.max_gpus, np.maximum(log_u, np.log(serial)), log_u)
        return log_u

    def _tangent_floor(self, count: float, m, anchored: bool) -> np.ndarray:
        """log u under the throughput's tangent at `count` (`HOLD_GAIN`): −log(x(M) +
        x'(M)·(N − M)) for N > M, x = 1/u, x'(M) = −x(M)·e/M with e = Σ w_f(M)·e_f(M) the
        members' log-log slopes weighted as at M; −inf elsewhere and where e ≥ 0."""
        at = np.array([count])
        x = np.exp(-self._mixed_log_u(at, anchored)[0])
        h = 1e-4
        up, down = at * (1.0 + h), at * (1.0 - h)
        thetas = {**self.thetas, **({self.anchor: self.anchor_theta} if self.anchor else {})}
        logs = {
            f: (
                family_log_u(f, th, up, self.gpus_per_node)
                - family_log_u(f, th, down, self.gpus_per_node)
            )
            / (math.log1p(h) - math.log1p(-h))
            for f, th in thetas.items()
        }
        e = float(sum(w * logs[f] for f, w in self.weights(at, anchored).items())[0])
        if not e < 0.0:
            return np.full(np.shape(m), -np.inf)
        line = x * (1.0 - e * (m - count) / count)
        return np.where(m > count, -np.log(line), -np.inf)

    def sustained_slowdown(self) -> bool:
        """The measurements are slower per unit of work at each of their last two steps:
        the per-count median log u of the three largest counts strictly rises
        (`HOLD_SUSTAINED`)."""
        counts = np.unique(self.train_gpus)
        if len(counts) < 3:
            return False
        last = [float(np.median(self.train_log_u[self.train_gpus == c])) for c in counts[-3:]]
        return last[0] < last[1] < last[2]

    def log_u(self, m) -> np.ndarray:
        """log u at `m` in the measured units (before mapping to the measured quantity)."""
        return self._log_u(m) + math.log(self.scale)

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
            f: self._to_measured(lu + math.log(self.scale), m)
            for f, lu in self.family_logs(m).items()
        }

    def spread(self, m) -> np.ndarray:
        """D: max − min over every fitted family of its log u at `m`."""
        logs = np.array(list(self.family_logs(np.asarray(m, float)).values()))
        return logs.max(axis=0) - logs.min(axis=0)

    def training_rms(self) -> float:
        """r: root-mean-square of log û − log u over the training measurements, û without
        the anchor (the combination that extrapolates)."""
        log_u = self._log_u(self.train_gpus, anchored=False)
        return float(np.sqrt(np.mean((log_u - self.train_log_u) ** 2)))

    def interval_scale(self, m, inside=None, down=None) -> np.ndarray:
        """(`past_scale` + DOWN·b)·(1 + (INSIDE − 1)·a) at `m` (the conformal score's
        denominator): b the doublings below the smallest measured count, a =
        `anchor_share` (1 from half the largest count down, 0 from the largest up), so
        that nothing at or past the largest count changes. `inside`, `down` replace
        INSIDE and DOWN."""
        m = np.asarray(m, float)
        inside = INSIDE if inside is None else inside
        down = DOWN if down is None else down
        below = np.log2(np.maximum(self.train_gpus.min() / m, 1.0))
        widen = 1.0 + (inside - 1.0) * anchor_share(m, self.max_gpus)
        return (self.past_scale(m) + down * below) * widen

    def past_scale(self, m) -> np.ndarray:
        """max(d, MIN_DOUBLINGS) + KAPPA·D + LAMBDA·r + NODE_KAPPA·c at `m`, the scale
        calibrated past the measurements; c = clip(log2(N/G), 0, 1) when every measured
        count fits in one stated node of G GPUs, else 0."""
        m = np.asarray(m, float)
        doublings = np.maximum(np.log2(m / self.max_gpus), MIN_DOUBLINGS)
        scale = doublings + KAPPA * self.spread(m) + LAMBDA * self.rms_at(m)
        node = self.unmeasured_node()
        if node:
            scale = scale + NODE_KAPPA * past_node(m, node)
        return scale

    def rms_at(self, m) -> np.ndarray:
        """r at `m`: `training_rms`, moving to the anchored curve's own r as the anchor's
        share a(N) grows inside the measured range."""
        if not self.anchor:
            return self.training_rms() + 0.0 * np.asarray(m, float)
        inside = float(np.sqrt(np.mean((self._log_u(self.train_gpus) - self.train_log_u) ** 2)))
        a = anchor_share(m, self.max_gpus)
        return a * inside + (1.0 - a) * self.training_rms()

    def interval_table(self) -> str:
        """Which INTERVAL_Q table applies: "few" (3 or fewer distinct counts) or "many"."""
        return "many" if self.counts >= MANY_COUNTS else "few"

    def interval(self, m, level=0.9, q=None):
        """``(lo, hi)`` of the `level` prediction interval (0.5, 0.8 or 0.9); `q`
        replaces the shipped INTERVAL_Q[table][level]."""
        m = np.asarray(m, float)
        q = INTERVAL_Q[self.interval_table()][level] if q is None else q
        half = np.hypot(q * self.interval_scale(m), self.noise_half_width(level))
        centre = self.log_u(m)
        one = np.ones(1)
        one_gpu = self.log_u(one) - q * self.interval_scale(one)
        low = np.maximum(centre - half, self.log_floor(m, centre, one_gpu))
        a, b = self._to_measured(low, m), self._to_measured(centre + half, m)
        return np.minimum(a, b), np.maximum(a, b)

    def noise_half_width(self, level: float) -> float:
        """t_{(1+L)/2, n−k}·σ, σ² the pooled variance of log u among the training
        measurements at one GPU count (n measurements at k counts; the pure error of
        the lack-of-fit test), added in quadrature to the conformal half-width; 0 where
        no count was measured twice (every published table of the corpus but MLPerf's)."""
        counts, group = np.unique(self.train_gpus, return_inverse=True)
        dof = self.train_gpus.size - counts.size
        if dof <= 0:
            return 0.0
        means = np.array([self.train_log_u[group == g].mean() for g in range(counts.size)])
        sigma = math.sqrt(float(np.sum((self.train_log_u - means[group]) ** 2)) / dof)
        return float(student_t.ppf(0.5 * (1.0 + level), dof)) * sigma

    def log_floor(self, m, centre, one_gpu) -> np.ndarray:
        """log of the least u an interval may reach at `m`: perfect scaling from the
        lower bound of u at one GPU (`one_gpu`, a log), or from the best efficiency
        measured against the curve's one-GPU time where that is above 1, or from the
        curve's own efficiency at `m` (û(1)/(m·û(m))) where that is higher still."""
        work = np.min(self.train_gpus * np.exp(self.train_log_u)) * self.scale
        centre_one = float(self.log_u(np.ones(1))[0])
        efficiency = max(1.0, float(np.exp(centre_one)) / work)
        log_m = np.log(np.asarray(m, float))
        stretch = np.maximum(math.log(efficiency), centre_one - log_m - centre)
        return one_gpu - log_m - stretch

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
        scaling: "weak", "strong" or None (not stated; see `infer_scaling`). Only a
            stated "strong" selects the strong-scaling weights.
    """
    n, y = np.asarray(gpus, float), np.asarray(measured, float)
    if n.shape != y.shape or n.size == 0 or np.any(n < 1) or np.any(~(y > 0)):
        raise ValueError("gpus ≥ 1 and measured > 0, of one shape, are needed")
    if len(np.unique(n)) < 2:
        raise ValueError("at least two distinct GPU counts are needed")
    stated = scaling
    scaling, unit, how = infer_scaling(n, y, target, scaling)
    if target == "throughput":
        u = 1.0 / y
    else:
        u = y / n if unit == "step" else y.copy()
    scale = float(np.median(u[n == n.min()]))
    u = u / scale
    g = None if gpus_per_node is None else float(np.atleast_1d(gpus_per_node)[0])
    kind = regime(n, g, stated)
    names = [f for f in FAMILIES if f != "weak_hierarchical" or kind == "straddling"]
    thetas = {f: fit_family(f, n, u, g) for f in names}
    fitted = DefaultFit(
        target=target,
        unit=unit,
        scaling=scaling,
        how=how,
        regime=kind,
        scale=scale,
        gpus_per_node=g,
        near=dict(NEAR[kind]),
        far=dict(FAR[kind]),
        thetas=thetas,
        max_gpus=float(n.max()),
        counts=int(len(np.unique(n))),
        train_gpus=n,
        train_measured=y,
        train_log_u=np.log(u),
    )
    return anchored(fitted, n, u, g)


def anchored(fitted: DefaultFit, n, u, g) -> DefaultFit:
    """`fitted` with the anchor of the module docstring, where it misses its measurements."""
    anchors = [*ANCHORS, "weak_hierarchical_flat"] if fitted.regime == "straddling" else ANCHORS
    miss = fitted.training_metrics()["mape"]
    best = None
    for name in anchors:
        base = name if name == "power_law_flat" else name.removesuffix("_flat")
        theta = fitted.thetas[name] if name in fitted.thetas else fit_family(base, n, u, g, 0.0)
        candidate = dataclasses.replace(fitted, anchor=name, anchor_theta=theta)
        log_u = family_log_u(name, theta, n, g) + math.log(fitted.scale)
        own = float(np.mean(np.abs(candidate._to_measured(log_u, n) / fitted.train_measured - 1)))
        if best is None or 100.0 * own < best[0]:
            best = (100.0 * own, candidate)
    if miss > max(ANCHOR_MISS_PERCENT, ANCHOR_MISS_RATIO * best[0]):
        return best[1]
    return fitted


def fit_reference(gpus, measured, target="throughput", *, gpus_per_node=None, strong=None, **info):
    """`fit_default` in the signature of `baselines.py` (a predictor of the measured)."""
    scaling = None if strong is None else ("strong" if strong else "weak")
    fitted = fit_default(gpus, measured, target, gpus_per_node=gpus_per_node, scaling=scaling)
    return fitted.predict
