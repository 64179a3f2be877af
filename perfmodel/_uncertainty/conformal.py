"""Split-conformal intervals of the default blend, calibrated on published series.

For a blend fit (`perfmodel._fitting.blend`), the interval of a new measurement of log
time per unit of work at N GPUs is (`docs/design/extrapolation.md` §5)

``log û(N) ± q_L · s(N)``,  ``s(N) = (max(d(N), MIN_DOUBLINGS) + κ·D(N) + λ·r + κ_G·c(N)
+ DOWN·b(N))·(1 + (INSIDE − 1)·a(N))``,

with d the doublings past the largest measured count (inside the measured range too,
at least `MIN_DOUBLINGS`), D the spread (max − min) of every member's log u at N (where
they disagree the answer is less certain), r the root-mean-square of ``log û − log u``
over the training measurements (a blend that misses its own points is less certain
everywhere; an anchored blend's r is that of its curve without the anchor from its
largest measured count on, and moves to that of the anchored curve below, as the anchor's
share a does), c(N) = clip(log2(N/G), 0, 1) past a node of G GPUs when the data state G
and every measurement fits in one node (nothing measured says what the network costs;
`_closed.unmeasured_node`), else 0, κ = `KAPPA`, λ = `LAMBDA`, κ_G = `NODE_KAPPA`
(learned on the published tables measured within one node and beyond it), b(N) the
doublings below the smallest measured count and a(N) = clip(log2(N_max/N), 0, 1) (inside
the measured range and below it, where the scores past it under-cover left-out
measurements; INSIDE and DOWN learned on the shipped series left out one count at a
time, `benchmarks/extrapolation_research/interior.py`), and q_L the
L-quantile of the normalised
held-out errors ``|log(û/u)| / s`` over every held-out point of the shipped GPU-scaling
series (split conformal, Vovk et al. 2005; Lei et al., JASA 2018), stored in
`INTERVAL_Q` for L = 0.5, 0.8, 0.9: table ``"few"`` for series with 3 or fewer distinct
measured counts, ``"many"`` for `MANY_COUNTS` or more. Other levels interpolate
linearly in L between (0, 0) and those points, and above 0.9 follow a normal tail:
``q_0.9·z_{(1+L)/2}/z_0.95``.

Where runs were repeated at one configuration, a new run scatters as they did: the
half-width is ``sqrt((q_L·s(N))² + (t_{(1+L)/2, ν}·σ)²)``, σ the pooled spread of their
log times (`_closed.replicate_noise`, `_closed.noise_half_width`).

For questions whose answer is a GPU count (the optimum, the knee), the band is drawn as
an ensemble of curves ``û(N)·exp(ζ·s(N))`` with ``|ζ|`` distributed as the scores.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float
import numpy as np

from .. import _closed
from .._blend import Blend
from .._closed import quantile as quantile
from .._closed import scores as scores
from .._config import Config
from .._errors import InputError
from .._fitting import (
    FitResult,
    KAPPA,
    LAMBDA,
    MANY_COUNTS,
    MIN_DOUBLINGS,
    unanchored_residuals,
)


def table(fit: FitResult) -> str:
    """Which `INTERVAL_Q` table applies: ``"few"`` (≤ 3 distinct counts) or ``"many"``."""
    return "many" if len(np.unique(fit.data.gpus)) >= MANY_COUNTS else "few"


class Calibrated(eqx.Module):
    """A blend's curve moved by ζ normalised scores: ``T(config) = û·exp(ζ·s(N))``.

    Fields:
        model: the fitted `Blend` (seconds per unit of work).
        zeta: ζ, the number of normalised scores (one per ensemble member).
        rms: r, the root-mean-square training error of log û (without its anchor).
        rms_inside: r of the anchored curve, which an anchored blend's intervals use
            inside its measured range: ``r(N) = a·rms_inside + (1 − a)·rms``, a the
            anchor's share (1 from half the largest count down, 0 from the largest up).
        node: G, the node size past which nothing was measured
            (`_closed.unmeasured_node`), or 0.
        efficiency: E, the best efficiency measured (`_closed.best_efficiency`): no
            member is faster than perfect scaling from its own one-GPU time (or than E
            where E > 1; `_closed.linear_floor`); None: no floor.
        smallest: the smallest measured GPU count, below which the scale grows by
            ``DOWN·log2(smallest/N)`` (`_closed.conformal_scale`); None: no such term.
        zeta_one: ζ₁, a second score per member for its own one-GPU time when no single
            GPU was measured (`speedup`; `_closed.one_gpu_scores`); None: the curve's.
    """

    model: Blend | None
    zeta: Float[ArrayLike, "*samples"] | None
    rms: Float[ArrayLike, ""] | None
    rms_inside: Float[ArrayLike, ""] | None = None
    node: float = eqx.field(static=True, default=0.0)
    efficiency: Float[ArrayLike, ""] | None = None
    smallest: Float[ArrayLike, ""] | None = None
    zeta_one: Float[ArrayLike, "*samples"] | None = None

    def scale(self, config: Config) -> Float[Array, "..."]:
        """``s(N) = (max(log2(N/largest), MIN_DOUBLINGS) + κ·D(N) + λ·r(N) + κ_G·c(N)
        + DOWN·b(N))·(1 + (INSIDE − 1)·a(N))`` (`_closed.conformal_scale`)."""
        spread = self.model.spread(config)
        rms = self.rms
        if self.model.anchor and self.rms_inside is not None:
            # Inside the range the curve is the anchor's: its own error. D stays: the
            # members' disagreement is what varies the scale with N, so that speedup
            # (a ratio of two counts) keeps an interval.
            share = self.model.anchor_share(config.gpus)
            rms = share * self.rms_inside + (1.0 - share) * self.rms
        return _closed.conformal_scale(
            jnp,
            config.gpus,
            self.model.largest,
            spread,
            rms,
            MIN_DOUBLINGS,
            KAPPA,
            LAMBDA,
            self.node,
            self.smallest,
        )

    def __call__(self, config: Config) -> Float[Array, "..."]:
        centre = self.model(config)
        drawn = centre * jnp.exp(self.zeta * self.scale(config))
        if self.efficiency is None:
            return drawn
        base = eqx.tree_at(lambda c: c.gpus, config, jnp.ones_like(config.gpus))
        centre_one = self.model(base)
        one_gpu = centre_one * jnp.exp(self.zeta * self.scale(base))
        one_gpu = _closed.capped_one_gpu(jnp, one_gpu, centre_one, self.efficiency)
        floor = _closed.linear_floor(jnp, config.gpus, one_gpu, self.efficiency, centre, centre_one)
        # The draw where it is not clearly below the floor (at one GPU they are equal):
        # its own slope there, as the fit file's path takes it (`_closed.FLOOR_TIE`).
        return jnp.where(jnp.log(drawn) >= jnp.log(floor) - _closed.FLOOR_TIE, drawn, floor)

    def speedup(self, config: Config) -> Float[Array, "..."]:
        """The curve's one-GPU time over this member's time at `config`. A member moves
        the whole curve by ζ·s(N); against its own one-GPU time its error cancelled where
        s(N) = s(1), and the 90% interval of a speedup two doublings past the data
        pinched to ±1.7% between wider ones (review round 10). The conformal scores are
        errors of û at a count, so the speedup's interval is that of its time.

        Where no single GPU was measured, the one-GPU time is itself a forecast: each
        member takes its own, ``û(1)·exp(ζ₁·s(1))`` with a second score ζ₁
        (`_closed.one_gpu_scores`), no slower than perfect scaling to the measurements
        allows (`_closed.capped_one_gpu`). Two runs at 8 and 16 GPUs read "speedup
        5.61–5.81" beside a one-GPU time of 1.18–2.73 s (review of 2026-12-07, H6).

        At most ``N·max(1, E, Ê(N))`` (`_closed.linear_floor`'s bound, here on the
        speedup: the floor holds each member to its own one-GPU time)."""
        base = eqx.tree_at(lambda c: c.gpus, config, jnp.ones_like(config.gpus))
        centre_one = self.model(base)
        one_gpu = centre_one
        if self.zeta_one is not None and self.smallest is not None:
            drawn = centre_one * jnp.exp(self.zeta_one * self.scale(base))
            if self.efficiency is not None:
                drawn = _closed.capped_one_gpu(jnp, drawn, centre_one, self.efficiency)
            one_gpu = jnp.where(self.smallest > 1.0, drawn, centre_one)
        speedup = one_gpu / self(config)
        if self.efficiency is None:
            return speedup
        own = centre_one / (config.gpus * self.model(config))
        limit = config.gpus * jnp.maximum(jnp.maximum(1.0, self.efficiency), own)
        return jnp.minimum(speedup, limit)


def training_rms(fit: FitResult) -> float:
    """r: root-mean-square of ``log û − log u`` over the fit's measurements (its
    residuals, whatever the measured quantity: ±log(û/u) either way), û the blend without
    its anchor (`Blend.without_anchor`): the curve that extrapolates, so that anchoring
    the measured range leaves every interval past it as it was."""
    residuals = fit.residuals
    if fit.unanchored_residuals is not None:  # those of the fit, kept through what_if
        residuals = fit.unanchored_residuals
    elif isinstance(fit.model, Blend) and fit.model.anchor:
        residuals = unanchored_residuals(fit.model, fit.data)
    return _closed.rms(residuals)


def calibrated(fit: FitResult, zeta=0.0) -> Calibrated:
    """The fit's curve moved by `zeta` normalised scores."""
    if not isinstance(fit.model, Blend):
        raise InputError(
            f"conformal intervals are calibrated for the default blend; this "
            f"{fit.family} fit has method='laplace' or 'bootstrap'"
        )
    inside = _closed.rms(fit.residuals)
    return Calibrated(
        fit.model,
        np.asarray(zeta, dtype=np.float64),
        np.asarray(training_rms(fit)),
        np.asarray(inside),
        _closed.data_node(fit.data),
        np.asarray(_best_efficiency(fit)),
        np.asarray(float(np.min(fit.data.gpus))),
    )


def _best_efficiency(fit: FitResult) -> float:
    """E of `fit`'s measurements against its curve's one-GPU time."""
    with jax.enable_x64(True):
        one_gpu = float(np.asarray(fit.model(fit.config(1.0))).reshape(-1)[0])
    return _closed.best_efficiency(fit.data.gpus, fit.data.time_s, one_gpu)


def conformal_bounds(fit: FitResult, config: Config, level: float):
    """``(lo, hi)``: model seconds of the `level` conformal interval at every config."""
    with jax.enable_x64(True):
        curve = calibrated(fit)
        centre = np.asarray(curve.model(config), dtype=np.float64)
        q = quantile(level, table(fit))
        half = q * np.asarray(curve.scale(config), dtype=np.float64)
        # A repeat of a measured run scatters about the curve too (`_closed.noise_half_width`).
        half = np.hypot(half, _closed.noise_half_width(level, *_closed.replicate_noise(fit.data)))
        base = eqx.tree_at(lambda c: c.gpus, config, jnp.ones_like(config.gpus))
        centre_one = np.asarray(curve.model(base), dtype=np.float64)
        one_gpu = centre_one * np.exp(-q * np.asarray(curve.scale(base), dtype=np.float64))
        gpus = np.asarray(config.gpus, dtype=np.float64)
    floor = _closed.linear_floor(np, gpus, one_gpu, float(curve.efficiency), centre, centre_one)
    return np.maximum(centre * np.exp(-half), floor), centre * np.exp(half)
