"""The default extrapolation: six families fitted exactly, mixed in log space (`Blend`).

From three or four GPU counts no single family can be trusted to extrapolate: Amdahl's
law says per-GPU throughput keeps falling, `weak_data_parallel` that it levels off once
the all-reduce has appeared, a power law that it falls at a constant rate. The default
hedges between them with a weighted geometric mean whose weights depend on the regime of
the series and on how far ahead the count asked about is (`perfmodel._blend`); it
extrapolates published series better than each family and than the published models
(Amdahl, USL, Ernest, Pollux, Extra-P; `benchmarks/RESULTS.md`). The specification is
`docs/design/extrapolation.md` (round 2), its NumPy form `benchmarks/_reference_default.py`,
which this module matches within 1e-6 (`tests/test_blend.py`).

In seconds per unit of work u (`canonical`), normalised by the median u at the fewest
GPUs, each family is fitted alone (§2–3):

* linear ones (`amdahl` ``θ0 + θ1/N``, `weak_data_parallel`, `usl` ``θ0 + θ1/N +
  θ2·(N−1)``, `weak_hierarchical`): ``min Σ w_i·(φ(N_i)·θ/u_i − 1)² + λ‖θ‖²``, θ ≥ 0,
  λ = `RIDGE`, by non-negative least squares (`linear.nnls`: exact, one solution);
* power laws ``exp(k)·N^−e``: weighted least squares of ``log u`` on ``[1, −log N]``;

with weights ``w_i = (N_i/N_max)^α``, α = `ALPHA` (2), but α = 0 for ``power_law_flat``.
Past a stated node of G GPUs that no measurement reaches beyond, the weights move on to
`_closed.PAST_NODE` by 2G (`perfmodel._blend`).

Intervals (split conformal, `perfmodel.predict_interval`): ``log û ± q_L·(max(d, 0.25) +
KAPPA·D + LAMBDA·r + NODE_KAPPA·c)``, d the doublings past the largest measured count, D
the spread of every member's log u there, r the root-mean-square training error of log
û, c = clip(log2(N/G), 0, 1) past a stated node of G GPUs that no measurement reaches beyond
(`_closed.unmeasured_node`), and q_L from `INTERVAL_Q["few"]` (≤ 3 distinct counts) or
`INTERVAL_Q["many"]`; inside the measured range and below it the scale is widened
(`_closed.conformal_scale`: ×INSIDE from half the largest count down, + DOWN per doubling
below the smallest).
"""

import dataclasses
import math

import jax
import numpy as np

from .. import _closed
from .._blend import anchor_names, Blend, member_names
from .._data import Benchmarks
from .._errors import InputError
from .._presets import blend, straddles_nodes
from .canonical import mixed_workloads, nodes_disagree, repeats_apart
from .exact import fit_at
from .linear import _ridged, nnls
from .member_errors import _sandwich, ALPHA, FAMILY_ALPHA
from .member_errors import power_exponents as power_exponents
from .problem import data_scale, RAW_LIMIT
from .result import Component, FitResult

# A blend is anchored (`perfmodel._blend`: its measured range handed over to the family
# fitted with equal weights that fits the measurements best) where it misses them by
# more than ANCHOR_MISS_PERCENT (MAPE on the measured quantity) and ANCHOR_MISS_RATIO
# times that family. Past the largest measured count the curve is unchanged.
ANCHOR_MISS_PERCENT = 2.0
ANCHOR_MISS_RATIO = 2.0
RIDGE = 1e-8  # λ‖θ‖² on the normalised coefficients: one minimiser when columns are dependent
BLEND_FAMILY = "blend"  # its name among fit_auto's candidates
DESCRIPTION = "the default: a geometric blend of fitted families (docs/families.md)"
# Families whose one-GPU time is their first coefficient alone (compute.time): fitted
# without their last columns where the data would set it to 0 (`fit_coefficients`).
ONE_GPU_FAMILIES = ("weak_data_parallel", "weak_hierarchical")
# The columns φ(N) of each linear family and the parameters they multiply.
PARAMETERS = {
    "amdahl": ("serial.time", "compute.time"),
    "weak_data_parallel": ("compute.time", "allreduce.latency", "allreduce.transfer"),
    "usl": ("serial.time", "compute.time", "coherency.time"),
    "weak_hierarchical": (
        "compute.time",
        "allreduce.transfer_intra",
        "allreduce.transfer_inter",
    ),
}


def regime(data: Benchmarks) -> str:
    """``"strong"`` when a fixed global batch is stated (`Benchmarks.scaling`), else
    ``"straddling"`` (gpus_per_node given, counts on both sides of it), else ``"weak"``.

    A stated fixed global batch comes first: the straddling regime's `weak_hierarchical`
    shrinks its all-reduce per unit of work as 1/N, as a growing batch does, and on a
    strong-scaling table given its node size it forecast gains per GPU rising past the
    data (1–16 GPUs: 38.9× at 64 against 28.5× without the node size; review round 10).
    No published series of `benchmarks/` is both (the weights were learned without one).
    """
    if data.scaling == "strong":
        return "strong"
    return "straddling" if straddles_nodes(data) else "weak"


def features(family: str, n: np.ndarray, per_node: np.ndarray | None) -> np.ndarray:
    """``φ(N)`` of a linear family, ``(len(n), k)``, in the order of `PARAMETERS`."""
    one = np.ones_like(n)
    if family == "amdahl":
        return np.stack([one, 1.0 / n], axis=-1)
    if family == "weak_data_parallel":
        return np.stack([1.0 / n, (n - 1.0) / n, (n - 1.0) / n**2], axis=-1)
    if family == "usl":
        return np.stack([one, 1.0 / n, n - 1.0], axis=-1)
    local = np.minimum(n, per_node)
    nodes = np.maximum(n / per_node, 1.0)
    return np.stack(
        [1.0 / n, (local - 1.0) / (local * n), (nodes - 1.0) / (nodes * local * n)], axis=-1
    )


def fit_coefficients(family: str, data: Benchmarks, scale: float) -> np.ndarray:
    """θ of `family` fitted to ``u = time_s/scale`` (module docstring): non-negative
    coefficients of `features`, or ``(k, e)`` of a power law.

    Both sums of squares are taken over the distinct configurations (`Benchmarks.distinct`),
    whose rows carry the sufficient statistics of their measurements: for the linear
    families ``Σ_i w_i(φ·θ/u_i − 1)² = Σ_g (√A_g·φ_g·θ − B_g/√A_g)² + const`` with
    ``A_g = Σ w_i/u_i²``, ``B_g = Σ w_i/u_i``; for a power law, ``√W_g`` times the weighted
    mean of ``log u`` and of the row. Same normal equations, so the same solution, from
    six rows instead of 10⁶ for a per-step log."""
    n, u = data.gpus, data.time_s / scale
    w = (n / n.max()) ** FAMILY_ALPHA.get(family, ALPHA)
    _, index = data.distinct()
    first = np.zeros(index.max(initial=-1) + 1, dtype=np.intp)
    first[index[::-1]] = np.arange(index.size)[::-1]  # a measurement of each configuration
    family = family if family == "power_law_flat" else family.removesuffix("_flat")
    if family in ("power_law", "power_law_flat"):
        total = np.bincount(index, weights=w)
        mean_log_u = np.bincount(index, weights=w * np.log(u)) / total
        root = np.sqrt(total)
        design = np.stack([np.ones_like(root), -np.log(n[first])], axis=-1) * root[:, None]
        coefficients, *_ = np.linalg.lstsq(design, mean_log_u * root, rcond=None)
        return coefficients
    per_node = data.config.get("gpus_per_node")
    phi = features(family, n[first], None if per_node is None else np.asarray(per_node)[first])
    a_sum = np.bincount(index, weights=w / u**2)
    b_sum = np.bincount(index, weights=w / u)
    rows = phi * np.sqrt(a_sum)[:, None]
    theta = np.zeros(phi.shape[1])
    # A one-GPU time of 0 (every term but compute vanishes at N = 1) is not physics: the
    # transfer terms can stand in for compute (b·(N−1)/N² is c/N to within 1/N), with no
    # measurement at one GPU or with one weighted (1/N_max)² (Lambda's Tacotron 2 on
    # H100, 1, 4 and 8 GPUs: a 90% interval of ×e^21), and the speedup below the
    # measured range collapses. Leave out the last column until compute is positive
    # (`ONE_GPU_FAMILIES`).
    for k in range(phi.shape[1], 0, -1):
        a, b, norms = _ridged(rows[:, :k], b_sum / np.sqrt(a_sum), np.full(k, math.sqrt(RIDGE)))
        # nnls's tolerance scales with max|a|·max|b|, which is 1 for the rows of every
        # measurement (weights ≤ 1) but not for these: keep it where it was.
        tolerance = 1e-12 / max(1.0, float(np.abs(a).max()) * float(b.max()))
        theta[:] = 0.0
        theta[:k] = nnls(a, b, tolerance) / norms
        if family not in ONE_GPU_FAMILIES or theta[0] > 0:
            break
    return theta


def fit_members(data: Benchmarks) -> Blend:
    """The default's curve fitted to `data` (seconds per unit of work: call after
    `canonical.per_unit_of_work`); every member fitted alone, exactly."""
    if len(np.unique(data.gpus)) < 2:
        raise InputError(f"{data.source}: the default fit needs two distinct GPU counts")
    kind = regime(data)
    scale = float(np.median(data.time_s[data.gpus == data.gpus.min()]))
    # A coefficient of 0 is kept just above the bottom of the default range (log 0 is
    # not a stored value); relative to the data that is e^-49.
    floor = _floor(data)
    values, exponents = {}, {}
    for name in dict.fromkeys((*member_names(kind), *anchor_names(kind))):
        theta = fit_coefficients(name, data, scale)
        base = name.removesuffix("_flat")
        if base in PARAMETERS:
            for parameter, value in zip(PARAMETERS[base], theta):
                values[f"{name}.{parameter}"] = max(float(value) * scale, floor)
        else:
            exponents[name] = -float(theta[1])
            values[f"{name}.power.time"] = math.exp(float(theta[0])) * scale

    node = _closed.data_node(data)
    slowdown = _closed.sustained_slowdown(data.gpus, data.time_s)

    def built(anchor: str = "") -> Blend:
        model = blend(
            kind,
            float(data.gpus.max()),
            exponents["power_law"],
            exponents["power_law_flat"],
            anchor=anchor,
            node=node,
            slowdown=slowdown,
        )
        names = model.parameter_specs()
        return model.with_parameters({k: v for k, v in values.items() if k in names})

    unanchored = built()
    miss = _mape(unanchored, data)
    if miss <= ANCHOR_MISS_PERCENT:  # most series: no anchor to look for
        return unanchored
    anchors = {name: built(name) for name in anchor_names(kind)}
    misses = {name: _mape(m.members[m.names.index(name)], data) for name, m in anchors.items()}
    closest = min(misses, key=misses.get)
    if miss > ANCHOR_MISS_RATIO * misses[closest]:
        return anchors[closest]
    return unanchored


def _mape(model, data: Benchmarks) -> float:
    """MAPE (%) of `model` on the measured quantity of `data`."""
    predicted = data.as_measured(np.asarray(model(data.to_config()), dtype=np.float64))
    with np.errstate(divide="ignore", invalid="ignore"):
        miss = 100.0 * float(np.mean(np.abs(predicted / data.measured - 1.0)))
    return miss if math.isfinite(miss) else math.inf


def unanchored_residuals(model: Blend, data: Benchmarks) -> np.ndarray | None:
    """``log(û/u)`` at the measurements, û the blend without its anchor (None when it
    has none): the misfit of the curve that extrapolates, which its intervals use."""
    if not model.anchor:
        return None
    with jax.enable_x64(True):
        predicted = np.asarray(model.without_anchor()(data.to_config()), dtype=np.float64)
    return np.log(data.as_measured(predicted) / data.measured)


def anchor_note(model: Blend, data: Benchmarks) -> str:
    """The sentence an anchored fit carries among its notes ("" without an anchor)."""
    if not model.anchor:
        return ""
    largest = float(model.largest)
    with jax.enable_x64(True):
        missed = _mape(model.without_anchor(), data)
        fits = _mape(model.members[model.names.index(model.anchor)], data)
    return (
        f"anchored: the blend alone would miss these measurements by {missed:.3g}% (MAPE), "
        f"so up to {largest / 2:g} GPUs the curve is {model.anchor} "
        f"({model.anchor.removesuffix('_flat')} fitted with equal weights, {fits:.3g}% "
        f"alone) and from there to {largest:g} GPUs, the largest measured, it hands over to "
        "the blend, which answers alone past the measurements (the fit's MAPE is this "
        "curve's)"
    )


def member_covariance(model: Blend, data: Benchmarks, free: tuple[str, ...]) -> np.ndarray:
    """Covariance of a blend's free coefficients in their stored (log) form, each
    member's from its own fit (`fit_coefficients`; the members are fitted apart, so the
    blocks between them are 0).

    A member minimises ``Σ w_i·e_i²`` with ``w_i = (N_i/N_max)^α`` a choice of what to fit
    best, not a noise model: the measurements' relative noise is taken as equal, so the
    covariance is the sandwich ``σ²·A·(Jᵀ·W²·J)·A``, ``A = (JᵀWJ)⁻¹`` (White 1980), with
    ``σ² = Σe²/tr((I − H)ᵀ(I − H))``, ``H = J·A·JᵀW``, unbiased for equal noise (both
    reduce to ``σ²·(JᵀJ)⁻¹``, ``σ² = Σe²/(n − k)``, for the members fitted with equal
    weights). A
    linear member's residuals are relative, ``e_i = φ_i·θ/u_i − 1``, with
    ``J_ij = φ_ij·θ_j/u_i`` (d/d log θ_j) over the coefficients its fit did not set to 0;
    a power law's are ``log u_i − log û_i`` with the columns ``[1, log N]`` (log c and the
    exponent, whose own uncertainty is not a parameter's), of which log c's is kept.
    Infinite where the member has no residual left (as many coefficients as
    measurements) or the data cannot tell a direction (`covariance.gauss_newton_inverse`),
    and for the coefficients set to 0: `FitResult.standard_errors` then says "—".
    """
    index = {name: i for i, name in enumerate(free)}
    cov = np.diag(np.full(len(free), np.inf))  # 0 between members
    n, u = data.gpus, data.time_s
    per_node = data.config.get("gpus_per_node")
    per_node = None if per_node is None else np.asarray(per_node, dtype=np.float64)
    values = {k: float(v) for k, v in model.parameters().items()}
    zero = set(zeroed(model, data))
    config = data.to_config()
    for member, fitted in zip(model.names, model.members):
        w = (n / n.max()) ** FAMILY_ALPHA.get(member, ALPHA)
        if member.startswith("power_law"):
            names, keep = [f"{member}.power.time"], 1
            with jax.enable_x64(True):
                predicted = np.asarray(fitted(config), dtype=np.float64)
            jacobian = np.stack([np.ones_like(n), np.log(n)], axis=-1)
            residuals = np.log(u / predicted)
        else:
            base = member.removesuffix("_flat")
            everything = [f"{member}.{p}" for p in PARAMETERS[base]]
            active = [j for j, p in enumerate(everything) if p in index and p not in zero]
            names, keep = [everything[j] for j in active], len(active)
            theta = np.array([values[everything[j]] for j in active])
            phi = features(base, n, per_node)[:, active]
            jacobian = phi * theta / u[:, None]
            residuals = phi @ theta / u - 1.0
        if not names or n.size <= jacobian.shape[1]:
            continue
        block = _sandwich(jacobian, residuals, w)
        rows = [index[name] for name in names]
        cov[np.ix_(rows, rows)] = block[:keep, :keep]
    return cov


def _floor(data: Benchmarks) -> float:
    return data_scale(data) * math.exp(-RAW_LIMIT["time"] + 1.0)


def zeroed(model: Blend, data: Benchmarks) -> list[str]:
    """The members' coefficients their exact fit set to 0 (kept at the floor)."""
    floor = _floor(data)
    return [k for k, v in model.parameters().items() if float(v) <= floor * (1.0 + 1e-9)]


def blend_components(model: Blend) -> tuple[Component, ...]:
    """The members of a blend as `Component`\\ s (NEAR and FAR weights)."""
    return tuple(
        Component(n, a, m, b, n == model.anchor)
        for n, m, a, b in zip(model.names, model.members, model.near, model.far)
    )


def describe_weights(model: Blend) -> str:
    """``"0.4·amdahl + … up to 1 doubling past 8 GPUs, 0.5·… from 2 on"``."""

    def parts(weights):
        return " + ".join(f"{w:g}·{n}" for n, w in zip(model.names, weights) if w > 0)

    text = (
        f"{model.regime} regime: {parts(model.near)} up to one doubling past "
        f"{float(model.largest):g} GPUs, {parts(model.far)} from two on"
    )
    if model.node:
        past = " + ".join(f"{w:g}·{n}" for n, w in _closed.PAST_NODE.items())
        text += (
            f"; past the node of {model.node:g} GPUs that no measurement reaches beyond, "
            f"moving to {past} by {2 * model.node:g} GPUs"
        )
    if model.anchor:
        text += (
            f"; anchored on {model.anchor} (fitted with equal weights) from "
            f"{float(model.largest) / 2:g} GPUs down, where the blend missed its measurements"
        )
    if model.slowdown:
        text += (
            f"; held past {float(model.largest):g} GPUs at its time there, as the "
            "measurements slow down over their last two steps"
        )
    return text


def too_few_counts(model: Blend, data: Benchmarks) -> str:
    """One line when members of the blend have more parameters than the data have
    distinct GPU counts, naming them: two rows fitted weak_data_parallel's all-reduce
    latency and transfer as 0.8 and 0.4 s, one split of their sum among many, printed
    like any other value (review of 2026-12-07); else ``""``."""
    counts = len(np.unique(np.asarray(data.gpus, dtype=np.float64)))
    over = [
        f"{name} ({len(member.parameter_specs())})"
        for name, member in zip(model.names, model.members)
        if len(member.parameter_specs()) > counts
    ]
    if not over:
        return ""
    return (
        f"{data.source}: {counts} distinct GPU counts, fewer than the parameters of "
        f"{', '.join(over)}: their values are one of many that fit these measurements "
        "alike; measure more counts to tell them apart"
    )


def fit_blend(data: Benchmarks, *, assumed: str = "") -> FitResult:
    """The default fit of `data` (seconds per unit of work: `canonical.per_unit_of_work`).

    Returns a `FitResult` whose model is a `Blend`, whose `components` are its members and
    whose intervals are conformal. Its quality and residuals are those of the blend at
    the relative loss with weights ``(N/N_max)²``; its covariance is the members' own
    (`member_covariance`), since the blend's cannot tell their coefficients apart.
    """
    with jax.enable_x64(True):
        model = fit_members(data)
        result = fit_at(model, data, loss="relative", weight_power=ALPHA)
        # The blend's own covariance cannot tell its members' coefficients apart; what is
        # worth saying is which terms the data did not show at all.
        warnings = tuple(
            f"{name} is not identifiable: its family's exact fit set it to 0 (the data "
            "show no such term)"
            for name in zeroed(model, data)
        )
        covariance = member_covariance(model, data, result.free)
        note = anchor_note(model, data)
        warnings = (note, *warnings) if note else warnings
        mixed = mixed_workloads(data, model)
        warnings = (mixed, *warnings) if mixed else warnings
        for note in (too_few_counts(model, data), repeats_apart(data), nodes_disagree(data)):
            warnings = (note, *warnings) if note else warnings
    return dataclasses.replace(
        result,
        converged=True,
        message=f"{DESCRIPTION}; {describe_weights(model)}; every member fitted exactly",
        warnings=warnings,
        components=blend_components(model),
        intervals="conformal",
        raw_covariance=covariance,
        assumed=assumed,
        unanchored_residuals=unanchored_residuals(model, data),
    )
