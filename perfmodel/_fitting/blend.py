"""The default extrapolation: a blend of three families, each fitted exactly.

From three or four GPU counts no single family can be trusted to extrapolate: Amdahl's
law says per-GPU throughput keeps falling, `weak_data_parallel` that it levels off once
the all-reduce has appeared, a power law that it falls at a constant rate. Their
weighted sum hedges between the three shapes, and on published series it extrapolates
better than each of them and than the published models (Amdahl, USL, Ernest, Pollux,
Extra-P; `benchmarks/accuracy.py`, `docs/design/extrapolation.md`):

``u(N) = Σ_f w_f · u_f(N)``,  f ∈ `MIXTURE`,

in seconds per unit of work (`canonical`), where each ``u_f`` is fitted alone by least
squares on relative errors with weights ``(N/max N)²`` (which weighs the largest counts,
where the extrapolation starts, the most: `WEIGHT_POWER`) — exactly, by non-negative
least squares (`linear`), and the power law ``c·N^−e`` by weighted least squares in
log-log. When the measurements lie on both sides of the node boundary
(`gpus_per_node` given, some counts below it and some above), the two-level
`weak_hierarchical` family alone replaces the blend (`STRADDLING`).

Its intervals are split-conformal (`perfmodel.predict_interval`): ``log u ± q_L·(d +
κ·D)``, d the doublings past the largest measured count (at least `MIN_DOUBLINGS`) and D
how far the three families disagree there, with `INTERVAL_Q` calibrated on the held-out
points of the shipped series.
"""

import dataclasses

import jax
import numpy as np

from .._data import Benchmarks
from .._errors import InputError
from .._presets import (
    amdahl,
    blend,
    power_law,
    straddles_nodes,
    weak_data_parallel,
    weak_hierarchical,
)
from .engine import fit_prepared
from .exact import fit_at
from .groups import measurement_weights
from .problem import check_options, data_scale, FitOptions, RAW_LIMIT
from .result import Component, FitResult

WEIGHT_POWER = 2.0
MIXTURE = {"amdahl": 0.4, "weak_data_parallel": 0.4, "power_law": 0.2}
STRADDLING = {"weak_hierarchical": 1.0}
KAPPA = 4.0
MIN_DOUBLINGS = 0.25
INTERVAL_Q = {0.5: 0.0209, 0.8: 0.0468, 0.9: 0.0723}
BLEND_FAMILY = "blend"  # its name among fit_auto's candidates
DESCRIPTION = "blend of amdahl, weak_data_parallel and power_law (the default)"


def fit_power_law(data: Benchmarks, weight_power: float = WEIGHT_POWER) -> FitResult:
    """``T(N) = c·N^−e`` by weighted least squares of ``log T`` on ``log N`` (weights
    ``(N/max N)^weight_power``), a closed form; `e` may have either sign."""
    w = measurement_weights(data, weight_power)
    x, y = np.log(data.gpus), np.log(data.time_s)
    if np.ptp(x) == 0:
        raise InputError(f"{data.source}: a power law needs two distinct GPU counts")
    design = np.stack([np.ones_like(x), x], axis=1) * np.sqrt(w)[:, None]
    (log_c, exponent), *_ = np.linalg.lstsq(design, y * np.sqrt(w), rcond=None)
    model = power_law(float(exponent)).with_parameters({"power.time": float(np.exp(log_c))})
    result = fit_at(model, data, loss="relative", weight_power=weight_power)
    # Solved exactly, in log space: stationary for that loss, if not for the relative one.
    return dataclasses.replace(
        result, converged=True, message="closed form (log-log least squares)"
    )


def fit_family(family: str, data: Benchmarks) -> FitResult:
    """One member of the blend fitted the blend's way (relative errors, weights
    ``(N/max N)^WEIGHT_POWER``, exactly)."""
    if family == "power_law":
        return fit_power_law(data)
    builders = {
        "amdahl": amdahl,
        "weak_data_parallel": weak_data_parallel,
        "weak_hierarchical": weak_hierarchical,
    }
    model = builders[family]()
    options = FitOptions.of(loss="relative", weight_power=WEIGHT_POWER, method="exact")
    # With fewer distinct counts than parameters the ridge of the exact solve picks the
    # smallest coefficients that fit: the blend still has an answer from two counts.
    free = check_options(model, data, options, determined=False)
    return fit_prepared(model, data, free, options)


def _weighted(result: FitResult, weight: float, scale: float) -> dict[str, float]:
    """`result`'s parameters times `weight` (each family is linear in its times), with a
    zero kept just above the bottom of the default range."""
    floor = scale * np.exp(-RAW_LIMIT["time"] + 1.0)
    return {k: max(weight * v, floor) for k, v in result.parameters().items()}


def blend_parameters(fits: dict[str, FitResult], weights: dict[str, float], scale: float):
    """The `blend` family's parameters equal to ``Σ_f w_f·u_f`` of the member fits."""
    a = _weighted(fits["amdahl"], weights["amdahl"], scale)
    d = _weighted(fits["weak_data_parallel"], weights["weak_data_parallel"], scale)
    p = _weighted(fits["power_law"], weights["power_law"], scale)
    return {
        "serial.time": a["serial.time"],
        "compute.time": a["compute.time"] + d["compute.time"],
        "allreduce.latency": d["allreduce.latency"],
        "allreduce.transfer": d["allreduce.transfer"],
        "power.time": p["power.time"],
    }


def fit_blend(data: Benchmarks, *, assumed: str = "") -> FitResult:
    """The default fit of `data` (seconds per unit of work: `canonical.per_unit_of_work`).

    Returns a `FitResult` whose model is the `blend` family (or `weak_hierarchical` when
    the counts straddle the node boundary), whose `components` are the member fits and
    whose intervals are conformal. Its quality, residuals and covariance are those of
    the returned model; its warnings are the members'.
    """
    if len(np.unique(data.gpus)) < 2:
        raise InputError(f"{data.source}: the default fit needs two distinct GPU counts")
    with jax.enable_x64(True):
        fits = {family: fit_family(family, data) for family in MIXTURE}
        straddling = straddles_nodes(data)
        if straddling:
            fits.update({family: fit_family(family, data) for family in STRADDLING})
            weights = {**{f: 0.0 for f in MIXTURE}, **STRADDLING}
            model = fits["weak_hierarchical"].model
        else:
            weights = dict(MIXTURE)
            exponent = dict(fits["power_law"].model.options)["exponent"]
            model = blend(exponent).with_parameters(
                blend_parameters(fits, weights, data_scale(data))
            )
        result = fit_at(model, data, loss="relative", weight_power=WEIGHT_POWER)
    components = tuple(Component(f, weights[f], fits[f].model) for f in fits)
    warnings = [f"{f}: {w}" for f in fits if weights[f] > 0 for w in fits[f].warnings]
    parts = ", ".join(f"{weights[f]:g}·{f}" for f in fits if weights[f] > 0)
    what = "weak_hierarchical alone: the counts straddle the node" if straddling else parts
    message = f"{DESCRIPTION}: {what}"
    if warnings:
        message += "; " + "; ".join(warnings)
    return dataclasses.replace(
        result,
        message=message,
        warnings=tuple(warnings),
        converged=all(fits[f].converged for f in fits),
        components=components,
        intervals="conformal",
        assumed=assumed,
    )
