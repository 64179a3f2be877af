"""The fitted data and model in stored (log/logit) coordinates, shared by the ensembles
and the intervals drawn from them, and the checks of their options."""

import equinox as eqx
import jax
from jax.flatten_util import ravel_pytree
import jax.numpy as jnp
import numpy as np

from .._config import Config
from .._errors import InputError
from .._fitting import as_float64, data_scale, FitResult, raw_bounds
from .._levels import check_level as check_level
from .._levels import METHODS as METHODS


def check_method(method: str) -> None:
    if method not in METHODS:
        raise InputError(f"unknown interval method {method!r}; valid: {', '.join(METHODS)}")


def partition(fit: FitResult):
    model = as_float64(fit.model)
    params, static = eqx.partition(model, model.raw_leaf_mask(set(fit.free)))
    _, unravel = ravel_pytree(params)
    return params, static, unravel


def flat_names(fit: FitResult) -> tuple[str, ...]:
    """The free parameter names in the order `ravel_pytree` lays out their leaves."""
    model = as_float64(fit.model)
    marked = model
    for i, name in enumerate(fit.free):
        marked = eqx.tree_at(model.leaf_getter(name), marked, jnp.asarray(float(i)))
    params, _ = eqx.partition(marked, model.raw_leaf_mask(set(fit.free)))
    return tuple(fit.free[int(i)] for i in np.asarray(ravel_pytree(params)[0]))


def residual_space(fit: FitResult):
    """The residual space of the fit's loss: ``(to, from)`` maps of time_s."""
    return _residual_space(fit.loss_kind, fit.target)


def _residual_space(kind: str, target: str):
    if kind != "squared":
        return jnp.log, jnp.exp
    if target == "throughput":
        return (lambda t: 1.0 / t), (lambda h: 1.0 / h)
    return (lambda t: t), (lambda h: h)


@eqx.filter_jit
def _predicted(params, static, theta, config):
    """Model time_s at `config` for flat stored parameters `theta` (laid out like
    `params`), compiled: one program instead of an eager operation per term."""
    _, unravel = ravel_pytree(params)
    return eqx.combine(unravel(theta), static)(config)


@eqx.filter_jit
def _space_jacobian(params, static, theta, config, kind: str, target: str):
    """d(residual-space prediction)/dθ at every config, compiled (see `_predicted`)."""
    to_space, _ = _residual_space(kind, target)
    return jax.jacfwd(lambda t: to_space(_predicted(params, static, t, config)))(theta)


class Problem:
    """The fitted data and model in stored coordinates, float64 (build inside x64).

    The model is evaluated at the distinct configurations only (`groups`, with each
    measurement's row in `index` and their multiplicities in `counts`); what is per
    measurement (`time_s`, residuals) is NumPy, gathered from them: a per-step log of
    10⁶ measurements at six GPU counts costs what six measurements do.
    """

    def __init__(self, fit: FitResult):
        self.fit = fit
        self.params, self.static, self.unravel = partition(fit)
        self.theta, _ = ravel_pytree(self.params)
        self.names = flat_names(fit)
        unique, self.index = fit.data.distinct()
        self.counts = np.bincount(self.index, minlength=len(unique)).astype(np.float64)
        fields = dict(zip(fit.data.config, unique[:, 1:].T))
        self.groups = Config(gpus=unique[:, 0], **fields)
        # The data as the fit's residuals place them around the current model: the
        # measurements themselves, except after `what_if` changed a parameter, when the
        # original residuals (and so the original uncertainty) are kept.
        sign = 1.0 if fit.target == "time" else -1.0
        fitted = np.asarray(self.predicted(self.theta, self.groups))
        self.fitted = np.broadcast_to(fitted, self.counts.shape)
        self.time_s = self.fitted[self.index] * np.exp(-sign * np.asarray(fit.residuals))
        self.to_space, self.from_space = residual_space(fit)
        self.n, self.k = int(self.time_s.shape[0]), int(self.theta.shape[0])
        model = eqx.combine(self.params, self.static)
        scale = data_scale(fit.data)
        self.lower, self.upper = raw_bounds(model, list(fit.free), fit.bounds, scale)
        self.raw_lo = np.asarray(ravel_pytree(self.lower)[0])
        self.raw_hi = np.asarray(ravel_pytree(self.upper)[0])

    @property
    def config(self) -> Config:
        """Every measurement's configuration (`groups` holds the distinct ones)."""
        return self.fit.data.to_config()

    def predicted(self, theta, config):
        """Model time_s at `config` for flat stored parameters `theta`."""
        return _predicted(self.params, self.static, theta, config)

    def space_jacobian(self, theta, config) -> np.ndarray:
        """d(residual-space prediction)/dθ at every config, ``(configs, k)``."""
        fit = self.fit
        jac = _space_jacobian(self.params, self.static, theta, config, fit.loss_kind, fit.target)
        return np.asarray(jac)

    def weighted_jacobian(self, theta=None) -> np.ndarray:
        """`space_jacobian` at the distinct configurations, each row times the square
        root of its count: ``JᵀJ`` (and the SVD's singular values and directions) of every
        measurement's residual, from ``(groups, k)`` rows."""
        theta = self.theta if theta is None else theta
        return self.space_jacobian(theta, self.groups) * np.sqrt(self.counts)[:, None]

    def _space(self, time_s: np.ndarray) -> np.ndarray:
        """`to_space` in NumPy, for arrays of every measurement."""
        if self.fit.loss_kind != "squared":
            return np.log(time_s)
        return 1.0 / time_s if self.fit.target == "throughput" else time_s

    def fitted_space(self) -> np.ndarray:
        return self._space(self.fitted)[self.index]

    def measured_space(self) -> np.ndarray:
        return self._space(self.time_s)

    def noise(self, prior: float, prior_dof: float) -> tuple[np.ndarray, float, float]:
        """``(residuals, s², ν)``: the residuals in the loss's space and the noise scale
        pooled with its prior, ``s² = (ν₀·s₀² + RSS) / (ν₀ + n − k)`` on
        ``ν = ν₀ + n − k`` degrees of freedom (the conjugate scaled-inverse-χ² update).
        `prior` is relative (log space); for the squared loss it is scaled by the RMS
        of the fitted values. An InputError when nothing, data or prior, gives ν > 0."""
        dof = prior_dof + self.n - self.k
        if not dof > 0:
            raise InputError(
                f"{self.fit.data.source}: the {self.fit.family} fit has {self.k} free "
                f"parameters and {self.n} measurements, which leaves no residual to "
                "estimate its uncertainty from, and no noise prior was given; measure "
                "more GPU counts, repeat measurements, or fix parameters with {arg:fix}"
            )
        fitted = self.fitted_space()
        residuals = self.measured_space() - fitted
        if self.fit.loss_kind == "squared":
            prior = prior * float(np.sqrt(np.mean(fitted**2)))
        return residuals, (prior_dof * prior**2 + float(np.sum(residuals**2))) / dof, dof


def along_unknown(problem: Problem, unknown: np.ndarray, config) -> np.ndarray:
    """True where the prediction at a config moves along a direction the data leave open."""
    if unknown.size == 0:
        return np.zeros(np.shape(config.gpus), dtype=bool)

    def log_time(theta):
        return jnp.log(problem.predicted(theta, config))

    jac = np.asarray(jax.jacfwd(log_time)(problem.theta))
    along = np.abs(jac @ unknown.T).max(axis=1)
    return along > 1e-6 * (np.abs(jac).max(axis=1) + 1e-300)


def log_scale(problem: Problem, predicted) -> np.ndarray:
    """d(log time)/d(residual space) at `predicted`: 1 for log losses, 1/|h| otherwise."""
    if problem.fit.loss_kind != "squared":
        return np.ones(np.shape(predicted))
    return 1.0 / np.abs(np.asarray(problem.to_space(predicted)))
