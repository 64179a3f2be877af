"""Exact fits of models linear in their parameters, without an optimiser.

Most cost terms are linear in one coefficient each: a time (serial, compute, latency,
coherency, a PMNF coefficient) or the inverse of a rate (a bandwidth, a FLOP rate). A
model made of such terms, without an overlap fraction, is

``T(config) = o(config) + Σ_j Φ_j(config)·g_j``,  ``g_j = θ_j`` (times) or ``1/θ_j`` (rates),

with every ``g_j ≥ 0`` and ``o`` the fixed parameters' share. Fitting it is then a
non-negative least-squares problem (Lawson & Hanson, *Solving Least Squares Problems*,
1974, ch. 23) — exactly for the ``"relative"`` loss (``Σ w·(T̂/T − 1)²``) and the
``"squared"`` loss on time — or a short sequence of them (projected Gauss-Newton) for
the ``"log"`` loss and the squared loss on throughput. Every iterate is the exact
optimum of its linearisation, so the answer is the global optimum of a convex problem
(relative, squared time) or a stationary point checked by its KKT conditions (log).
No JIT compilation is needed: a small CSV fits in milliseconds, and the families with a
NumPy twin (`twin`) are evaluated without JAX.
"""

import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._model import AbstractScalingModel, ScalingModel
from .problem import as_float64
from .twin import seconds_at

# λ of the ridge λ·Σ_j (c_j·g_j/s)², s the data's time scale and c_j 1 for a time (its
# column is dimensionless) or max|Φ_j| for a rate: one minimiser even when columns are
# dependent (an undetermined parameter), and far below any measurement's weight.
RIDGE = 1e-8
_CHECK = 1e-9  # relative error allowed in the linearity check


@dataclasses.dataclass(frozen=True)
class Linear:
    """A model in its linear form at given configurations.

    Attributes:
        names: the free parameters, in the column order of `design`.
        design: ``Φ``, seconds per unit of each ``g_j``, ``(n, k)``.
        offset: ``o``, seconds from the fixed parameters, ``(n,)``.
        inverse: True where ``g_j = 1/θ_j`` (a rate), False where ``g_j = θ_j``.
    """

    names: tuple[str, ...]
    design: np.ndarray
    offset: np.ndarray
    inverse: np.ndarray

    def physical(self, g: np.ndarray) -> dict[str, float]:
        """Parameter values from coefficients ``g`` (0 becomes 0 or inf)."""
        with np.errstate(divide="ignore"):
            values = np.where(self.inverse, 1.0 / g, g)
        return dict(zip(self.names, map(float, values)))

    def coefficients(self, values: dict[str, float]) -> np.ndarray:
        """``g`` from parameter values (the inverse of `physical`)."""
        v = np.array([values[name] for name in self.names], dtype=np.float64)
        with np.errstate(divide="ignore"):
            return np.where(self.inverse, 1.0 / v, v)


@eqx.filter_jit
def _evaluate(model: AbstractScalingModel, free: tuple[str, ...], inverse, coefficients, config):
    """Seconds at every config for each row of `coefficients` (``g`` of the free
    parameters), in one compiled call per model structure and data shape."""

    def one(g):
        values = jnp.where(inverse, 1.0 / g, g)
        return model.with_raw({n: jnp.log(v) for n, v in zip(free, values)})(config)

    return jax.vmap(one)(coefficients)


def linear_form(model: AbstractScalingModel, config, free: list[str]) -> Linear | None:
    """`model`'s linear form at `config` (a batched `Config`), or None when it is not
    linear in its free parameters (an overlap fraction, a non-linear term).

    The columns are evaluated with one coefficient at 1 and the others at 0; the form is
    then checked at two random coefficient vectors to `_CHECK` relative error.
    """
    if not isinstance(model, ScalingModel):  # the default's Blend: a product of powers
        return None
    specs = model.parameter_specs()
    if model.logit_overlap is not None or any(specs[n].kind == "fraction" for n in free):
        return None
    inverse = np.array([specs[n].kind == "bandwidth" for n in free])
    k = len(free)
    checks = np.random.default_rng(0).uniform(0.5, 2.0, (2, k))
    rows = np.concatenate([np.zeros((1, k)), np.eye(k), checks])
    with np.errstate(divide="ignore", invalid="ignore"):
        seconds = seconds_at(model, config, free, np.where(inverse, 1.0 / rows, rows))
    if seconds is None:  # no NumPy twin: the model through JAX
        with jax.enable_x64(True), np.errstate(divide="ignore"):
            seconds = np.asarray(
                _evaluate(
                    as_float64(model), tuple(free), jnp.asarray(inverse), jnp.asarray(rows), config
                ),
                dtype=np.float64,
            )
    offset, design = seconds[0], (seconds[1 : k + 1] - seconds[0]).T
    if not (np.all(np.isfinite(design)) and np.all(np.isfinite(offset))):
        return None
    expected = offset[None, :] + checks @ design.T
    if not np.allclose(seconds[k + 1 :], expected, rtol=_CHECK, atol=0.0):
        return None
    return Linear(tuple(free), design, offset, inverse)


def nnls(a: np.ndarray, b: np.ndarray, tolerance: float = 1e-12) -> np.ndarray:
    """``argmin ‖a·x − b‖₂`` subject to ``x ≥ 0``: the active-set algorithm of Lawson and
    Hanson (1974, ch. 23, algorithm NNLS)."""
    m, k = a.shape
    x = np.zeros(k)
    passive = np.zeros(k, dtype=bool)
    gradient = a.T @ (b - a @ x)
    scale = tolerance * max(1.0, float(np.abs(a).max()) * float(np.abs(b).max(initial=1.0)))
    for _ in range(3 * k + 10):
        if passive.all() or gradient[~passive].max(initial=-np.inf) <= scale:
            break
        candidates = np.where(passive, -np.inf, gradient)
        passive[int(np.argmax(candidates))] = True
        for _ in range(3 * k + 10):
            z = np.zeros(k)
            z[passive] = np.linalg.lstsq(a[:, passive], b, rcond=None)[0]
            if np.all(z[passive] > 0):
                x = z
                break
            blocking = passive & (z <= 0)
            alpha = np.min(x[blocking] / (x[blocking] - z[blocking]))
            x = x + alpha * (z - x)
            passive &= x > scale
            x[~passive] = 0.0
        gradient = a.T @ (b - a @ x)
    return x


def _ridged(rows: np.ndarray, target: np.ndarray, penalty: np.ndarray):
    """The stacked system ``[rows; diag(penalty)]·x = [target; 0]`` with unit-norm
    columns (which keeps it well conditioned), and the column norms to undo that."""
    stacked = np.vstack([rows, np.diag(penalty)])
    peak = np.max(np.abs(stacked), axis=0)  # scaled first: squares of 1e200 overflow
    peak = np.where(peak > 0, peak, 1.0)
    norms = peak * np.linalg.norm(stacked / peak, axis=0)
    norms = np.where(norms > 0, norms, 1.0)
    a = stacked / norms
    b = np.concatenate([target, np.zeros(rows.shape[1])])
    return a, b, norms


def _transform(kind: str, target: str):
    """``(h, h')``: the residual space of a loss, ``h(T)`` and its derivative."""
    if kind in ("log", "huber"):
        return np.log, lambda p: 1.0 / p
    if kind == "squared" and target == "throughput":
        return (lambda p: 1.0 / p), (lambda p: -1.0 / p**2)
    return (lambda p: p), (lambda p: np.ones_like(p))


def solve(
    form: Linear,
    time_s: np.ndarray,
    weights: np.ndarray,
    kind: str,
    target: str,
    *,
    scale: float | None = None,
    ridge: float = RIDGE,
    iterations: int = 100,
) -> tuple[np.ndarray, int]:
    """The coefficients ``g ≥ 0`` that minimise the loss `kind` (see `objective`) of the
    linear form against `time_s` under `weights`; and the iterations used.

    ``"relative"``: ``Σ w·(T̂/t − 1)²`` (one NNLS); ``"squared"``: ``Σ w·(q̂ − q)²`` on
    the measured quantity q (time: one NNLS; throughput: Gauss-Newton); ``"log"``:
    ``Σ w·(log T̂ − log t)²`` (Gauss-Newton from the relative solution). Each Gauss-Newton
    step solves the NNLS of the linearised residuals and is halved until the loss falls.
    """
    root_w = np.sqrt(weights)
    phi, offset = form.design, form.offset
    scale = float(np.median(time_s)) if scale is None else scale
    magnitude = np.where(form.inverse, np.abs(phi).max(axis=0, initial=0.0), 1.0)
    penalty = np.sqrt(ridge) * magnitude / scale
    if kind == "relative":
        rows = phi * (root_w / time_s)[:, None]
        a, b, norms = _ridged(rows, root_w * (1.0 - offset / time_s), penalty)
        return nnls(a, b) / norms, 1
    if kind == "squared" and target == "time":
        s = float(np.mean(time_s))
        rows = phi * (root_w / s)[:, None]
        a, b, norms = _ridged(rows, root_w * (time_s - offset) / s, penalty / s * scale)
        return nnls(a, b) / norms, 1
    h, dh = _transform(kind, target)
    norm = float(np.mean(1.0 / time_s)) if kind == "squared" else 1.0

    def loss(g):
        p = offset + phi @ g
        if np.any(p <= 0):
            return np.inf
        return float(np.sum(weights * ((h(p) - h(time_s)) / norm) ** 2))

    g, steps = solve(form, time_s, weights, "relative", target, scale=scale, ridge=ridge)
    if not np.isfinite(loss(g)):
        g = np.full(phi.shape[1], 1.0)
    value = loss(g)
    for iteration in range(iterations):
        p = offset + phi @ g
        slope = dh(p)
        rows = phi * (root_w * slope / norm)[:, None]
        target_rows = root_w * (h(time_s) - h(p) + slope * (phi @ g)) / norm
        a, b, norms = _ridged(rows, target_rows, penalty)
        proposal = nnls(a, b) / norms
        step, improved = 1.0, False
        for _ in range(40):
            trial = g + step * (proposal - g)
            trial_value = loss(trial)
            if trial_value <= value:
                improved = True
                break
            step /= 2.0
        if not improved:
            break
        change = abs(value - trial_value)
        g, value = trial, trial_value
        if change <= 1e-15 * max(value, 1e-300):
            break
    return g, steps + iteration + 1
