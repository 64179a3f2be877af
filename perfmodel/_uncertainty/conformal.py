"""Split-conformal intervals of the default blend, calibrated on published series.

For a blend fit (`perfmodel._fitting.blend`), the interval of a new measurement of log
time per unit of work at N GPUs is

``log û(N) ± q_L · s(N)``,  ``s(N) = d(N) + κ·D(N)``,

with d the doublings past the largest measured count (at least `MIN_DOUBLINGS`, inside
the measured range too), D the spread (max − min) of the three families' log u at N —
where they disagree the answer is less certain — and q_L the L-quantile of the
normalised held-out errors ``|log(û/u)| / s`` over every held-out point of the shipped
GPU-scaling series (split conformal, Vovk et al. 2005; Lei et al., JASA 2018), stored
in `INTERVAL_Q` for L = 0.5, 0.8, 0.9. Other levels interpolate linearly in L between
(0, 0) and those points, and above 0.9 follow a normal tail: ``q_0.9·z_{(1+L)/2}/z_0.95``.

For questions whose answer is a GPU count (the optimum, the knee), the band is drawn as
an ensemble of curves ``û(N)·exp(ζ·s(N))`` with ``|ζ|`` distributed as the scores.
"""

import statistics

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float
import numpy as np

from .._config import Config
from .._fitting import FitResult, INTERVAL_Q, KAPPA, MIN_DOUBLINGS, MIXTURE


def quantile(level: float) -> float:
    """q_L of the normalised score at `level` (module docstring)."""
    levels = [0.0, *sorted(INTERVAL_Q)]
    values = [0.0, *(INTERVAL_Q[k] for k in sorted(INTERVAL_Q))]
    if level <= levels[-1]:
        return float(np.interp(level, levels, values))
    normal = statistics.NormalDist()
    return values[-1] * normal.inv_cdf((1 + level) / 2) / normal.inv_cdf((1 + levels[-1]) / 2)


class Calibrated(eqx.Module):
    """A blend's curve moved by ζ normalised scores: ``T(config) = û·exp(ζ·s(N))``.

    Fields:
        model: the blend's model (seconds per unit of work).
        members: the mixture families' models, whose spread is D.
        zeta: ζ, the number of normalised scores (one per ensemble member).
        largest: the largest measured GPU count.
    """

    model: eqx.Module | None
    members: tuple | None
    zeta: Float[Array, "*samples"] | None
    largest: float = eqx.field(static=True)

    def scale(self, config: Config) -> Float[Array, "..."]:
        """``s(N) = max(log2(N/largest), MIN_DOUBLINGS) + κ·D(N)``."""
        doublings = jnp.maximum(jnp.log2(config.gpus / self.largest), MIN_DOUBLINGS)
        logs = jnp.stack([jnp.log(m(config)) for m in self.members])
        return doublings + KAPPA * (jnp.max(logs, axis=0) - jnp.min(logs, axis=0))

    def __call__(self, config: Config) -> Float[Array, "..."]:
        return self.model(config) * jnp.exp(self.zeta * self.scale(config))

    def speedup(self, config: Config) -> Float[Array, "..."]:
        base = eqx.tree_at(lambda c: c.gpus, config, jnp.ones_like(config.gpus))
        return self(base) / self(config)


def _members(fit: FitResult) -> tuple:
    members = tuple(c.model for c in fit.components if c.family in MIXTURE)
    if len(members) != len(MIXTURE):
        raise ValueError("conformal intervals need the fit of a blend (its components)")
    return members


def calibrated(fit: FitResult, zeta=0.0) -> Calibrated:
    """The fit's curve moved by `zeta` normalised scores."""
    return Calibrated(
        fit.model, _members(fit), jnp.asarray(zeta, dtype=jnp.float64), float(fit.data.gpus.max())
    )


def conformal_bounds(fit: FitResult, config: Config, level: float):
    """``(lo, hi)``: model seconds of the `level` conformal interval at every config."""
    with jax.enable_x64(True):
        curve = calibrated(fit)
        centre = np.asarray(curve.model(config), dtype=np.float64)
        half = quantile(level) * np.asarray(curve.scale(config), dtype=np.float64)
    return centre * np.exp(-half), centre * np.exp(half)


def scores(samples: int, seed: int) -> np.ndarray:
    """ζ for `samples` ensemble members: a random sign times ``q_U``, U uniform on
    (0, 1), so that ``P(|ζ| ≤ q_L) = L`` at every level."""
    rng = np.random.default_rng(seed)
    levels = rng.uniform(0.0, 1.0, samples)
    signs = rng.choice([-1.0, 1.0], samples)
    return signs * np.array([quantile(float(u)) for u in levels])
