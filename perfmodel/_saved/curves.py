"""The plausible curves of a saved fit in NumPy: the draws behind its intervals.

The same members as `perfmodel._uncertainty` draws, evaluated without JAX:

* conformal (the default blend): ``û(N)·exp(ζ·s(N))`` for each score ζ
  (`perfmodel._uncertainty.conformal.Calibrated`);
* Laplace (one family): the model linearised in its stored parameters θ around the fit,
  ``log T = log T̂ + J(N)·δ`` with ``J = ∂log T̂/∂θ`` (`Linearized`), drifting by
  ``drift·d(N)`` outside the measured counts (`Drifted`); the draws are those
  `perfmodel fit` left in the cache (`SavedFit.ensembles`, the folder of
  `perfmodel._cli.draws`), read here by the same key.

Marginal speedups dS/dN come from dual numbers (`perfmodel._saved.dual`); J and its
derivative in N from duals of duals.
"""

import dataclasses
import hashlib
import json
import math
from pathlib import Path

import numpy as np

from .. import _closed
from .._levels import interval_columns
from . import dual

CONFORMAL_SAMPLES = 4000  # `perfmodel._uncertainty.draws.LAPLACE_SAMPLES`
_CELLS = 4_000_000  # samples × counts evaluated at once


def _chunks(size: int, counts: int):
    step = max(1, _CELLS // max(1, counts))
    for start in range(0, size, step):
        yield slice(start, min(size, start + step))


def calibrated_curves(fit, counts, overrides, zeta):
    """``(times, speedups, marginals, False)`` of ``T = max(û·exp(ζ·s(N)), F(N))`` for
    each ζ (rows), F the floor of perfect scaling (`_closed.linear_floor`): in logs,
    ``log T = log û + ζ·s``, ``S = exp(log û(1) − log T)`` (against the curve's one-GPU
    time, or where no single GPU was measured the draw's own, ``log û(1) + ζ₁·s(1)``
    capped, as `Calibrated.speedup`) and ``dS/dN = −S·(log T)′``
    with ``(log T)′ = û′/û + ζ·s′``, or the floor's ``F′/F`` where it holds, written into
    the outputs in place (4000 draws at a thousand counts in tens of milliseconds)."""
    counts = np.asarray(counts, dtype=np.float64)
    centre, scale = _centre_and_scale(fit, dual.seed(counts), overrides)
    base, base_scale = _centre_and_scale(fit, np.ones(1), overrides)
    log_centre, slope = np.log(centre.val), centre.tan / centre.val
    # The floor (`_closed.linear_floor`) from each draw's own one-GPU time T(1):
    # log F = log T(1) − log N − log max(1, E, Ê(N)), slope −1/N, or the curve's slope
    # where the curve's own efficiency Ê(N) = û(1)/(N·û(N)) is the largest.
    fitted_one, _ = _centre_and_scale(fit, np.ones(1), {})  # E: the fit's, not a what-if's
    efficiency = _closed.best_efficiency(fit.data.gpus, fit.data.time_s, float(fitted_one[0]))
    stretch = math.log(max(1.0, efficiency))
    log_base = np.log(base)
    log_slowest = np.log(_closed.capped_one_gpu(np, np.inf, base, efficiency))
    curve_excess = log_base - np.log(counts) - log_centre  # log Ê(N)
    curve_binds = curve_excess > stretch
    stretch_n = np.maximum(stretch, curve_excess)
    own = np.exp(log_base - log_centre)  # the curve's speedup û(1)/û(N)
    linear = counts * max(1.0, efficiency)
    limit = np.maximum(linear, own)
    # The bound's slope: the larger side's, or their mean where they tie (at one GPU when
    # E ≤ 1), as JAX differentiates a maximum.
    own_slope = -own * slope
    limit_slope = np.where(linear > own, max(1.0, efficiency), own_slope)
    limit_slope = np.where(linear == own, 0.5 * (max(1.0, efficiency) + own_slope), limit_slope)
    zeta = np.asarray(zeta, dtype=np.float64)
    # No single GPU measured: each draw's speedup against its own forecast one-GPU time,
    # scored by ζ₁ (`Calibrated.speedup`), no slower than perfect scaling allows.
    zeta_one = _closed.one_gpu_scores(zeta) if float(np.min(fit.data.gpus)) > 1.0 else None
    shape = (zeta.size, counts.size)
    times, speedups, marginals = np.empty(shape), np.empty(shape), np.empty(shape)
    for rows in _chunks(zeta.size, counts.size):
        z = zeta[rows, None]
        log_one = np.minimum(log_base + z * base_scale, log_slowest)
        log_floor = log_one - np.log(counts) - stretch_n
        log_t = np.multiply(z, scale.val, out=times[rows])
        log_t += log_centre
        held = log_t < log_floor - _closed.FLOOR_TIE
        np.maximum(log_t, log_floor, out=log_t)
        log_speed_one = log_base  # the curve's T(1), or the draw's own (`Calibrated`)
        if zeta_one is not None:
            log_speed_one = np.minimum(log_base + zeta_one[rows, None] * base_scale, log_slowest)
        np.subtract(log_speed_one, log_t, out=speedups[rows])
        np.exp(log_t, out=log_t)
        np.exp(speedups[rows], out=speedups[rows])
        d_log_t = np.multiply(z, scale.tan, out=marginals[rows])
        d_log_t += slope
        floor_slope = np.where(curve_binds, slope, -1.0 / counts)
        np.copyto(d_log_t, floor_slope, where=held)
        np.multiply(d_log_t, speedups[rows], out=d_log_t)
        np.negative(d_log_t, out=d_log_t)
        # At most N·max(1, E, Ê(N)) against the curve's T(1) (`Calibrated.speedup`), with
        # that bound's slope where it holds.
        over = speedups[rows] > limit
        np.minimum(speedups[rows], limit, out=speedups[rows])
        np.copyto(marginals[rows], np.broadcast_to(limit_slope, over.shape), where=over)
    return times, speedups, marginals, False


def conformal_band(fit, level: float, point: dict) -> dict:
    """`predict_interval` of a conformal fit (what the command line asks), in closed
    form as the JAX path (`perfmodel._uncertainty.conformal.conformal_bounds`):
    ``û(N)·exp(±h)``, ``h = sqrt((q_L·s(N))² + (t·σ)²)`` with σ the scatter of repeated
    runs (`_closed.noise_half_width`; 0 without repeats), per step for per-GPU data.
    The draws' empirical quantiles differed from it by up to 2%."""
    counts = np.asarray(point["gpus"], dtype=np.float64)
    centre, scale = _centre_and_scale(fit, counts, {})
    q = _closed.quantile(level, conformal_table(fit))
    half = np.hypot(q * scale, _closed.noise_half_width(level, *_closed.replicate_noise(fit.data)))
    per_step = counts if fit.data.per_gpu else 1.0
    one_centre, one_scale = _centre_and_scale(fit, np.ones(1), {})
    efficiency = _closed.best_efficiency(fit.data.gpus, fit.data.time_s, float(one_centre[0]))
    one_gpu = one_centre * np.exp(-q * one_scale)
    floor = _closed.linear_floor(np, counts, one_gpu, efficiency, centre, one_centre)
    lo = np.maximum(centre * np.exp(-half), floor) * per_step
    hi = centre * np.exp(half) * per_step
    return interval_columns(fit.target, point, lo, hi)


def _centre_and_scale(fit, n, overrides):
    """û(N) and s(N) of a blend (`Calibrated`), duals when `n` is one."""
    blend = fit.model
    rms = _closed.rms(fit.unanchored_residuals)
    config = fit.config(dual.primal(n), overrides)
    spread = blend.spread(n, config)
    if blend.anchor:  # the anchored curve's r inside the range (`Calibrated.scale`)
        inside = _closed.rms(fit.residuals)
        share = _closed.anchor_share(dual, n, blend.largest)
        rms = share * inside + (1.0 - share) * rms
    centre = blend.seconds(n, config)
    scale = _closed.conformal_scale(
        dual,
        n,
        blend.largest,
        spread,
        rms,
        _closed.MIN_DOUBLINGS,
        _closed.KAPPA,
        _closed.LAMBDA,
        _closed.data_node(fit.data),
        float(np.min(fit.data.gpus)),
    )
    return centre, scale


def conformal_table(fit) -> str:
    """``"many"`` for `MANY_COUNTS` or more distinct counts, else ``"few"``."""
    return "many" if len(np.unique(fit.data.gpus)) >= _closed.MANY_COUNTS else "few"


@dataclasses.dataclass(frozen=True)
class LaplaceDraws:
    """The Laplace draws of a single-family fit, read from the cache."""

    fit: object
    names: tuple[str, ...]
    raw: np.ndarray
    noise: np.ndarray
    drift: np.ndarray
    unknown: np.ndarray
    gpus_range: tuple[float, float]
    method: str = "laplace"

    @classmethod
    def read(cls, fit) -> "LaplaceDraws":
        """The cached draws of `fit`; KeyError when none are cached."""
        if fit.ensembles is None:
            raise KeyError("no cache of draws")
        path = Path(fit.ensembles) / f"{fit_key(fit, 'laplace')}.npz"
        try:
            # A file np.load fails on stays open unless opened here (truncated entries).
            with open(path, "rb") as handle, np.load(handle, allow_pickle=False) as stored:
                names = tuple(str(n) for n in stored["names"])
                draws = cls(
                    fit=fit,
                    names=names,
                    raw=np.asarray(stored["raw"], dtype=np.float64),
                    noise=np.asarray(stored["noise"], dtype=np.float64),
                    drift=np.asarray(stored["drift"], dtype=np.float64),
                    unknown=np.asarray(stored["unknown"], dtype=np.float64),
                    gpus_range=tuple(float(x) for x in stored["gpus_range"]),
                )
        except Exception as error:  # missing, unreadable or not an archive: draw again
            raise KeyError(str(path)) from error
        if set(names) != set(fit.free) or draws.raw.shape[1:] != (len(names),):
            raise KeyError("names")
        if any(np.isnan(a).any() for a in (draws.raw, draws.noise, draws.drift)):
            raise KeyError("NaN in the cached draws")  # an edit: the JAX path draws again
        return draws


def laplace_band(fit, level: float, point: dict, draws: LaplaceDraws, kind: str) -> dict:
    """`predict_interval` on the Laplace draws: the central `level` interval of the
    members' log time (``log T̂ + J·δ + drift·d(N)``, plus each member's measurement noise
    for ``kind="prediction"``; a fit of the squared loss takes the JAX path), unbounded
    where the prediction moves along a direction the data leave open."""
    if fit.document["loss"]["kind"] == "squared":
        raise KeyError("squared")
    counts = np.asarray(point["gpus"], dtype=np.float64)
    theta = np.log(np.array([fit.model.values[k] for k in draws.names], dtype=np.float64))
    log_hat, _, jac, _ = _linearised(fit, counts, {}, draws.names)
    lo, hi = draws.gpus_range
    log_t = log_hat + (draws.raw - theta[None, :]) @ jac.T
    log_t += draws.drift[:, None] * _closed.outside_doublings(np, counts, lo, hi)
    if kind == "prediction":
        log_t += draws.noise[:, None]
    tail = (1.0 - level) / 2.0
    low = np.exp(np.quantile(log_t, tail, axis=0))
    high = np.exp(np.quantile(log_t, 1.0 - tail, axis=0))
    open_ = _along_unknown(jac, draws.unknown)
    low, high = np.where(open_, 0.0, low), np.where(open_, np.inf, high)
    per_step = counts if fit.data.per_gpu else 1.0
    return interval_columns(fit.target, point, low * per_step, high * per_step)


def _along_unknown(jac: np.ndarray, unknown: np.ndarray) -> np.ndarray:
    """True where log T moves along a direction the data leave open (`along_unknown`)."""
    if unknown.size == 0:
        return np.zeros(jac.shape[0], dtype=bool)
    along = np.abs(jac @ unknown.T).max(axis=1)
    return along > 1e-6 * (np.abs(jac).max(axis=1) + 1e-300)


def _linearised(fit, counts, overrides, names):
    """``(log T̂, d log T̂/dN, J, dJ/dN)`` at `counts`, J with one column per name."""
    model = fit.model
    zeros, ones = np.zeros_like(counts), np.ones_like(counts)
    config = fit.config(counts, overrides)
    n = dual.Dual(dual.Dual(counts, zeros), dual.Dual(ones, zeros))
    columns, slopes, log_t, d_log_t = [], [], None, None
    for name in names:
        values = dict(model.values)
        v = values[name]
        values[name] = dual.Dual(dual.Dual(v, v), dual.Dual(0.0, 0.0))  # d exp(θ)/dθ
        out = dual.log(model.seconds(n, config, values))
        log_t, d_log_t = out.val.val, out.tan.val
        columns.append(out.val.tan * ones)
        slopes.append(out.tan.tan * ones)
    if not names:
        out = dual.log(model.seconds(dual.seed(counts), config))
        log_t, d_log_t = out.val, out.tan
    k = len(names)
    jac = np.stack(columns, axis=1) if k else np.zeros((counts.size, 0))
    djac = np.stack(slopes, axis=1) if k else np.zeros((counts.size, 0))
    return log_t * ones, d_log_t * ones, jac, djac


def laplace_curves(fit, counts, overrides, draws: LaplaceDraws):
    """``(times, speedups, marginals, undetermined)`` of the linearised, drifting
    members of `draws` (rows) at `counts` (columns)."""
    counts = np.asarray(counts, dtype=np.float64)
    names = draws.names
    theta = np.log(np.array([fit.model.values[k] for k in names], dtype=np.float64))
    delta = draws.raw - theta[None, :]
    log_hat, d_log_hat, jac, djac = _linearised(fit, counts, overrides, names)
    log_1, _, jac_1, _ = _linearised(fit, np.ones(1), overrides, names)
    lo, hi = draws.gpus_range
    drift_d = _closed.outside_doublings(dual, dual.seed(counts), lo, hi)
    base_d = _closed.outside_doublings(np, np.ones(1), lo, hi)
    shape = (len(delta), counts.size)
    times, speedups, marginals = np.empty(shape), np.empty(shape), np.empty(shape)
    for rows in _chunks(len(delta), counts.size):
        d, drift = delta[rows], draws.drift[rows][:, None]
        # log T = log T̂ + J·δ + drift·d(N); S = exp(log T(1) − log T); dS/dN = −S·dlog T/dN
        log_t = np.matmul(d, jac.T, out=times[rows])
        log_t += log_hat
        log_t += drift * drift_d.val
        base = log_1 + d @ jac_1.T + drift * base_d
        np.subtract(base, log_t, out=speedups[rows])
        np.exp(log_t, out=log_t)
        np.exp(speedups[rows], out=speedups[rows])
        slope = np.matmul(d, djac.T, out=marginals[rows])
        slope += d_log_hat
        slope += drift * drift_d.tan
        np.multiply(slope, speedups[rows], out=slope)
        np.negative(slope, out=slope)
    return times, speedups, marginals, bool(_along_unknown(jac, draws.unknown).any())


def _g12(value: float) -> str:
    return f"{value:.12g}"


def fit_key(fit, method: str) -> str:
    """`perfmodel._cli.draws.fit_key` of the fit file (a test checks they agree)."""
    from .._files import package_version

    doc = fit.document
    spec = doc["model"]
    options = tuple(spec.get("options", {}).items())
    values = {k: p["value"] for k, p in doc["parameters"].items()}
    described = {
        "version": package_version(),
        "method": method,
        "family": fit.family,
        "options": repr(options),
        "components": repr(()),
        "loss": doc["loss"]["kind"],
        "target": fit.target,
        "free": list(fit.free),
        "fixed": {},
        "bounds": {},
        "parameters": {k: _g12(float(v)) for k, v in values.items()},
        "defaults": {k: _g12(v) for k, v in sorted(fit.config_defaults.items())},
    }
    joint = spec.get("covariance_from", "measurements")
    if joint != "measurements":  # draws of a joint fit's covariance (`fit_joint`)
        described["covariance_from"] = joint
    digest = hashlib.sha256()
    digest.update(json.dumps(described, sort_keys=True).encode())
    data = fit.data
    arrays = [data.gpus, data.time_s, *(data.config[k] for k in sorted(data.config))]
    covariance = doc["raw_covariance"]
    if covariance is not None:
        matrix = [[math.inf if v is None else float(v) for v in row] for row in covariance]
        arrays.append(np.round(np.asarray(matrix, dtype=np.float64), 12))
    for array in arrays:
        digest.update(np.ascontiguousarray(array, dtype=np.float64).tobytes())
    return digest.hexdigest()[:32]
