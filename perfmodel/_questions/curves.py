"""JAX's curves of a fitted model, for the searches of `perfmodel._questions.query`.

`JaxCurves(fit)` evaluates the fit's Equinox model: step times, speedups and marginal
speedups dS/dN (by autodiff) at GPU counts, the same over the plausible models of an
ensemble (`perfmodel.ensemble`), the parts of the step, and Amdahl's bound. A fit file
read without JAX (`perfmodel._saved.SavedFit`) offers the same methods in NumPy.
"""

import equinox as eqx
import jax
import numpy as np

from .._blend import Blend
from .._fitting import FitResult
from .._model import ScalingModel
from .._terms import SerialTerm
from .._uncertainty import Ensemble, get_ensemble

# Samples × counts evaluated at once for intervals (about 100 MB of curves).
_CELLS = 4_000_000
_CHUNK = 250  # samples per evaluation at up to 16,000 counts; fewer beyond


@eqx.filter_jit
def _curve(model, config):
    def marginal(cfg):
        def speedup_at(n):
            return model.speedup(eqx.tree_at(lambda c: c.gpus, cfg, n))

        return jax.grad(speedup_at)(cfg.gpus)

    times = model(config)
    speedups = model.speedup(config)
    marginals = jax.vmap(marginal)(config)
    return times, speedups, marginals


@eqx.filter_jit
def _sample_curves(varying, shared, config):
    return jax.vmap(lambda v: _curve(eqx.combine(v, shared), config))(varying)


def curves_over_ensemble(fit: FitResult, config, method: str | None, draws: Ensemble | None = None):
    """``(times, speedups, marginals, undetermined)`` of the plausible models of
    `draws` (rows; by default `perfmodel.ensemble(fit, method)`, the draws
    `predict_interval` uses) at every count (columns); `undetermined` is True when the
    data leave open a parameter these curves depend on."""
    draws = get_ensemble(fit, method, draws)
    varying, shared = draws.models()
    size = draws.raw.shape[0]
    step = max(1, min(_CHUNK, _CELLS // max(1, int(config.gpus.shape[-1]))))
    parts = []
    with jax.enable_x64(True):
        for start in range(0, size, step):
            rows = np.minimum(np.arange(start, start + step), size - 1)
            chunk = jax.tree_util.tree_map(lambda x: x[rows], varying)
            parts.append([np.asarray(a) for a in _sample_curves(chunk, shared, config)])
    times, speedups, marginals = (np.concatenate(p)[:size] for p in zip(*parts))
    return times, speedups, marginals, bool(draws.undetermined(config).any())


class JaxCurves:
    """The curves of a `FitResult`'s model, in float64 (module docstring)."""

    def __init__(self, fit: FitResult):
        self.fit = fit

    def _config(self, counts, overrides):
        return self.fit.config(counts, **overrides).broadcast()

    def curve(self, counts: np.ndarray, overrides: dict):
        """``(times, speedups, marginals)`` of the fitted model at `counts`."""
        with jax.enable_x64(True):
            return tuple(map(np.asarray, _curve(self.fit.model, self._config(counts, overrides))))

    def get_ensemble(self, method: str | None, ensemble: Ensemble | None) -> Ensemble:
        """The draws every interval shares (`perfmodel._uncertainty.get_ensemble`)."""
        return get_ensemble(self.fit, method, ensemble)

    def ensemble_curves(self, counts: np.ndarray, overrides: dict, method, ensemble):
        """`curves_over_ensemble` at `counts`."""
        with jax.enable_x64(True):
            config = self._config(counts, overrides)
        return curves_over_ensemble(self.fit, config, method, ensemble)

    def parts(self, gpus: float, overrides: dict) -> tuple[dict, float, dict]:
        """``(seconds of each term, the step's seconds, each term's role)`` at `gpus`."""
        fit = self.fit
        with jax.enable_x64(True):
            config = fit.config(np.array([float(gpus)]), **overrides)
            parts = {
                k: float(np.asarray(v).ravel()[0]) for k, v in fit.model.breakdown(config).items()
            }
            total = float(np.asarray(fit.model(config)).ravel()[0])
        return parts, total, {t.name: t.role for t in fit.model.terms}

    def amdahl_bound(self, overrides: dict) -> float | None:
        """T(1) / t_serial, or None (no serial term, or the default blend outside the
        strong regime)."""
        fit = self.fit
        if not isinstance(fit.model, ScalingModel):
            # The default's Blend leaves Amdahl's law two doublings past its data: no
            # bound, but under strong scaling its floor is that law's serial part.
            with jax.enable_x64(True):
                config = fit.config(np.array([1.0]), **overrides)
                floor = fit.model.serial(config) if isinstance(fit.model, Blend) else None
                if floor is None:
                    return None
                bound = float(fit.model(config)[0] / floor[0])
                # A floor above the one-GPU time (a serial time set past the step) bounds
                # nothing: "Amdahl bound 0.04×" (review of 2026-12-07).
                return bound if bound >= 1.0 else None
        serial = [t.name for t in fit.model.terms if isinstance(t, SerialTerm)]
        if not serial:
            return None
        with jax.enable_x64(True):
            config = fit.config(np.array([1.0]), **overrides)
            parts = fit.model.breakdown(config)
            return float(fit.model(config)[0] / sum(parts[name][0] for name in serial))
