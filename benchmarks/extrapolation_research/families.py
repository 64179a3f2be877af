"""Family fits of the research harness, precomputed per problem.

Every problem's measurements become u (seconds per unit of work up to a constant, by
`_reference_default.infer_scaling`, normalised to 1 at the fewest GPUs); each family of
`FAMILIES` is fitted to u with weights ``max(w, floor)`` on the squared relative
residuals, ``w = (N/N_max)^α`` — or, for α = "time" / "throughput", the weights that
make the loss least squares on time / on throughput — by NNLS with the reference's
ridge (linear families) or weighted least squares in log u (power law). Its log u is
kept at the training and held-out counts: ``p["fam"][(family, α, floor)] = (log u at
n, log u at nt, θ)``. `mixture` combines them as `_reference_default` does.
"""

import math
import sys
import warnings

from harness import HERE
import numpy as np
from scipy.optimize import nnls

sys.path.insert(0, str(HERE.parent))
import _reference_default as ref  # noqa: E402

FAMILIES = {  # family → needs gpus_per_node
    "amdahl": False,
    "weak_data_parallel": False,
    "power_law": False,
    "usl": False,
    "weak_hierarchical": True,
}
# The reference's families as (family, α, floor) variants of this module.
REFERENCE = {
    "amdahl": ("amdahl", 2.0, 0.0),
    "weak_data_parallel": ("weak_data_parallel", 2.0, 0.0),
    "power_law": ("power_law", 2.0, 0.0),
    "power_law_flat": ("power_law", 0.0, 0.0),
    "usl": ("usl", 2.0, 0.0),
    "weak_hierarchical": ("weak_hierarchical", 2.0, 0.0),
}


def weights(n, alpha, floor: float = 0.0, u=None) -> np.ndarray:
    """``max((N/N_max)^α, floor)``; α = "time" gives u² (least squares on time) and
    "throughput" 1/u² (least squares on throughput), each over its largest value."""
    n = np.asarray(n, float)
    if alpha == "time":
        w = u**2
    elif alpha == "throughput":
        w = u**-2.0
    else:
        w = (n / n.max()) ** alpha
    return np.maximum(w / w.max(), floor)


def fit(family: str, n, u, w, g=None):
    """Coefficients of `family` (θ, or (k, e) of the power law) for weights `w`."""
    root = np.sqrt(w)
    if family == "power_law":
        design = np.stack([np.ones_like(n), -np.log(n)], axis=-1) * root[:, None]
        coef, *_ = np.linalg.lstsq(design, np.log(u) * root, rcond=None)
        return coef
    design = ref.features(family, n, g) / u[:, None] * root[:, None]
    k = design.shape[1]
    design = np.vstack([design, math.sqrt(ref.RIDGE) * np.eye(k)])
    theta, _ = nnls(design, np.concatenate([root, np.zeros(k)]))
    return theta


def log_u(family: str, theta, m, g=None) -> np.ndarray:
    return ref.family_log_u(family, theta, m, g)


def canonical(p: dict) -> None:
    """Adds ``u`` (normalised), ``scale`` and ``unit`` to problem `p`."""
    scaling = stated(p)
    _, unit, _ = ref.infer_scaling(p["n"], p["y"], p["target"], scaling)
    n, y = p["n"], p["y"]
    if p["target"] == "throughput":
        u = 1.0 / y
    else:
        u = y / n if unit == "step" else y.copy()
    p["scale"] = float(np.median(u[n == n.min()]))
    p["u"] = u / p["scale"]
    p["unit"] = unit


def stated(p: dict):
    """The scaling a problem's CSV states: "strong", "weak" or None."""
    return None if p["strong"] is None else ("strong" if p["strong"] else "weak")


def to_measured(p: dict, lu, m) -> np.ndarray:
    """The measured quantity of problem `p` from a normalised log u at counts `m`."""
    lu = np.asarray(lu, float) + math.log(p["scale"])
    if p["target"] == "throughput":
        return np.exp(-lu)
    return np.exp(lu) * (np.asarray(m, float) if p["unit"] == "step" else 1.0)


def precompute(problem_sets: dict, variants) -> None:
    """Fills ``p["fam"]`` for every problem and every ``(family, α, floor)`` of
    `variants` (families needing gpus_per_node are skipped without it)."""
    warnings.simplefilter("ignore")
    for probs in problem_sets.values():
        for p in probs:
            if "u" not in p:
                canonical(p)
            store = p.setdefault("fam", {})
            g = p["gpus_per_node"]
            for family, alpha, floor in variants:
                if (family, alpha, floor) in store or (FAMILIES[family] and g is None):
                    continue
                theta = fit(family, p["n"], p["u"], weights(p["n"], alpha, floor, p["u"]), g)
                store[(family, alpha, floor)] = (
                    log_u(family, theta, p["n"], g),
                    log_u(family, theta, p["nt"], g),
                    theta,
                )


def straddles(p: dict) -> bool:
    return ref.straddles(p["n"], p["gpus_per_node"])


def regime(p: dict) -> str:
    return ref.regime(p["n"], p["gpus_per_node"], stated(p))


def mixture(p: dict, near: dict, far: dict, which: int = 1, variants=None) -> np.ndarray:
    """Normalised log û of problem `p` at its held-out counts (``which=1``) or training
    counts (0): the reference's combination of `near` and `far` weights
    ({reference family name: weight}); `variants` maps a name to another (family, α,
    floor) fit than `REFERENCE`'s."""
    variants = {**REFERENCE, **(variants or {})}
    m = p["nt"] if which == 1 else p["n"]
    t = ref.far_share(m, p["n"].max())
    total = 0.0
    for name in dict.fromkeys([*near, *far]):
        w = (1.0 - t) * near.get(name, 0.0) + t * far.get(name, 0.0)
        total = total + w * p["fam"][variants[name]][which]
    return total


def mape(p: dict, lu) -> float:
    """MAPE (%) of the measured quantity at the held-out counts from log û there."""
    pred = to_measured(p, lu, p["nt"])
    return float(np.mean(np.abs(pred - p["yt"]) / p["yt"]) * 100)
