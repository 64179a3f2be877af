"""What to measure next: which GPU count narrows the interval on the answer the most.

The fit's Laplace covariance C (of the stored log/logit parameters θ) and residual
variance σ² describe what the data know. One more measurement at N adds a row
``j = ∂r(N)/∂θ`` to the Jacobian, which updates the covariance by rank one
(Sherman-Morrison): ``C' = C − C j jᵀ C / (σ² + jᵀ C j)``. The quantity of interest q
(the optimal GPU count, the point of diminishing returns, or the step time at a target
count; all in log) has gradient ``g = ∂q/∂θ``, by the implicit-function theorem for the
optimum (``∂T/∂N = 0``) and the knee (``dS/dN = threshold``), so its variance goes from
``gᵀCg`` to ``gᵀC'g = gᵀCg − (gᵀCj)² / (σ² + jᵀCj)`` (the delta method).

The interval on q now is the confidence interval from the same draws as every other
interval (`perfmodel.ensemble`: parameters and, outside the measured counts, model-form
drift), so it is the one `predict --kind confidence` and `optimal --interval` report.
The interval expected after a measurement narrows its parameter part by the delta
method's ratio and its drift part by the doublings of N still outside the measured
counts.
"""

from collections.abc import Sequence
import dataclasses
import math

import equinox as eqx
import jax
from jax.flatten_util import ravel_pytree
import jax.numpy as jnp
import numpy as np

from .. import _closed
from .._config import Config
from .._errors import InputError
from .._fitting import fit_auto, FitResult
from .._levels import LARGEST_COUNT, level_text
from .._text import brief, counted, refit_command
from .._uncertainty import Ensemble, ensemble, log_time_draws, predict_interval
from .elasticity import check_gpus, format_seconds
from .inverse import solve_bracketed
from .measured import past_checked
from .query import diminishing_returns, optimal_gpus, searched_up_to

QUANTITIES = ("auto", "optimum", "knee", "time")


@dataclasses.dataclass(frozen=True)
class MeasurementValue:
    """What one more measurement at `gpus` would do to the interval.

    Attributes:
        gpus: the candidate GPU count.
        sd_before, sd_after: standard deviation of log q now and after the measurement
            (the parameters' part).
        shrink: the fraction of the interval's width (in log) the measurement removes:
            of `interval_after` against the interval now where there is one (its drift
            part shrinks too, by the doublings the count brings inside), else
            ``1 − sd_after / sd_before``; the ranking is by it.
        interval_after: the confidence interval expected after it (None when q stays
            undetermined).
        measured: True when the data already hold this count (it would be a repeat).
        reason: one readable sentence.
    """

    gpus: int
    sd_before: float
    sd_after: float
    shrink: float
    interval_after: tuple[float, float] | None
    measured: bool
    reason: str

    def __repr__(self) -> str:
        return brief("MeasurementValue", self.reason)


@dataclasses.dataclass(frozen=True)
class NextMeasurements:
    """Candidates ranked by how much one measurement narrows the interval on q.

    Attributes:
        quantity: ``"optimum"``, ``"knee"`` or ``"time"``.
        description: what q is, e.g. ``"the optimal GPU count"``.
        estimate: q now (GPUs, or seconds for ``"time"``).
        at_gpus: the GPU count of the ``"time"`` quantity (else None).
        level: the interval's probability, e.g. 0.9.
        interval: its confidence interval now, from the ensemble's draws (None when the
            data leave q undetermined).
        ranking: best first.
        note: why this quantity, and any caveat.
        interval_kind: ``"confidence"``: the intervals are for q itself (the curve),
            not for a new measurement.
        searched: the largest GPU count the optimum and the knee were searched to; an
            interval that reaches it says so.
    """

    quantity: str
    description: str
    estimate: float
    at_gpus: int | None
    level: float
    interval: tuple[float, float] | None
    ranking: tuple[MeasurementValue, ...]
    note: str
    interval_kind: str = "confidence"
    searched: int | None = None

    def __repr__(self) -> str:
        best = self.ranking[0] if self.ranking else None
        return brief(
            "NextMeasurements",
            f"{self.description} ≈ {_value(self.quantity, self.estimate)}",
            "" if best is None else f"measure {best.gpus} GPUs next ({best.shrink:.0%} narrower)",
        )

    def summary(self) -> str:
        """What `perfmodel next` prints: q, its interval, then the ranking."""
        line = f"{self.description}: {_value(self.quantity, self.estimate)}"
        if self.interval is not None:
            band = _span(self.quantity, self.interval)
            lo, hi = self.interval
            if self.quantity != "time" and self.searched is not None and hi >= self.searched:
                # "64–4.1e+03" hid that 4096 is where the search stopped (fuzz round 11).
                band = f"{lo:.3g} to past {self.searched}, the end of the search"
            line += f" ({level_text(self.level)} confidence interval {band})"
        lines = [line]
        if self.note:
            lines.append(f"note: {self.note}")
        lines.append("\nranked, most informative first:")
        for i, m in enumerate(self.ranking, 1):
            lines.append(f"{i:3d}. {m.reason} ({m.shrink:.0%} narrower, in log)")
        return "\n".join(lines)


def _value(quantity: str, value: float) -> str:
    return format_seconds(value) if quantity == "time" else f"{value:.4g} GPUs"


def _observable(predicted, loss: str, target: str):
    # The residual's scale, as in the fit's Laplace covariance.
    if loss != "squared":
        return jnp.log(predicted)
    return 1.0 / predicted if target == "throughput" else predicted


@eqx.filter_jit
def _jacobian(params, static, config, loss: str, target: str):
    """∂(observable at each config)/∂θ, one row per config."""
    flat, unravel = ravel_pytree(params)

    def observe(theta):
        return _observable(eqx.combine(unravel(theta), static)(config), loss, target)

    return jax.jacfwd(observe)(flat)


@eqx.filter_jit
def _condition(params, static, config, u, quantity: str, threshold):
    """For q at ``N = e^u``: the equation h(u) it solves, ∂h/∂u and ∂q/∂θ.

    ``"time"``: q = log T(N), no equation (h = 0). ``"optimum"``: h = ∂log T/∂u.
    ``"knee"``: h = dS/dN − threshold. Then ``∂q/∂θ = −(∂h/∂θ)/(∂h/∂u)``.
    """
    flat, unravel = ravel_pytree(params)

    def log_time(theta, u):
        config_u = eqx.tree_at(lambda c: c.gpus, config, jnp.exp(u))
        return jnp.log(eqx.combine(unravel(theta), static)(config_u))

    if quantity == "time":
        return jnp.zeros(()), jnp.ones(()), jax.grad(log_time)(flat, u)
    if quantity == "optimum":
        h = jax.grad(log_time, argnums=1)
    else:

        def h(theta, u):
            def speedup(u):
                return jnp.exp(log_time(theta, jnp.zeros_like(u)) - log_time(theta, u))

            return jax.grad(speedup)(u) / jnp.exp(u) - threshold

    h_u = jax.grad(h, argnums=1)(flat, u)
    return h(flat, u), h_u, -jax.grad(h)(flat, u) / h_u


def _check_candidates(candidates) -> np.ndarray:
    values = [check_gpus(c, "candidates") for c in np.atleast_1d(candidates).tolist()]
    if not values:
        raise InputError("candidates: expected at least one GPU count")
    for value in values:
        if value != round(value):
            raise InputError(f"candidates: expected whole GPU counts, got {value:g}")
        if value > LARGEST_COUNT:  # 10⁷ was ranked first, "100% narrower" (fuzz round 11)
            raise InputError(
                f"candidates: expected GPU counts from 1 to {LARGEST_COUNT:,}, got {value:g}"
            )
    return np.asarray(sorted(set(values)), dtype=np.float64)


def _residual_variance(fit: FitResult) -> float:
    """σ² = Σr²/(n − k) on the scale of the fit's residuals."""
    r = fit.residuals
    if fit.loss_kind == "squared":
        r = fit.data.measured * np.expm1(fit.residuals)  # predicted − measured
    return float(np.sum(r**2)) / (r.size - len(fit.free))


def _variance(information: np.ndarray, g: np.ndarray) -> float:
    """``gᵀ A⁻¹ g``, infinite when g has weight on a direction A does not constrain."""
    eigenvalues, vectors = np.linalg.eigh(information)
    null = eigenvalues <= 1e-14 * max(eigenvalues.max(), 0.0)
    weights = vectors.T @ g
    if np.any(np.abs(weights[null]) > 1e-3 * np.linalg.norm(g)):
        return math.inf
    return float(np.sum(weights[~null] ** 2 / eigenvalues[~null]))


def _continuous(fit, params, static, quantity, guess: float, threshold) -> float | None:
    """The continuous root of h near the whole count `guess`, or None if h keeps its sign."""
    config = fit.config(guess)

    def fun(u):
        h, h_u, _ = _condition(params, static, config, jnp.asarray(u), quantity, threshold)
        return float(h), float(h_u)

    lo, hi = math.log(max(guess - 1.0, 1.0)), math.log(guess + 1.0)
    try:
        return math.exp(solve_bracketed(fun, lo, hi)[0])
    except ValueError:
        return None


def _pick(fit, params, static, quantity, max_gpus, threshold):
    """(quantity, estimate, at_gpus, note) for the requested or automatic quantity."""
    notes = []
    if quantity in ("auto", "optimum"):
        best = optimal_gpus(fit, max_gpus=max_gpus, multiple_of=1)
        if not best.at_limit and best.gpus > 1:
            n = _continuous(fit, params, static, "optimum", float(best.gpus), threshold)
            if n is not None:
                return "optimum", n, None, ""
        where = f"at {best.gpus} GPU(s)"
        if best.at_limit:
            where = f"at the {best.limit_text(short=True)}"
        notes.append(f"the optimal GPU count is {where} ({best.gpus}), not a turning point")
        if quantity == "optimum":
            raise InputError(f"cannot narrow the optimum: {notes[0]}; ask for knee or time")
    if quantity in ("auto", "knee"):
        knee = diminishing_returns(fit, threshold=threshold, max_gpus=max_gpus, multiple_of=1)
        if knee.gpus is not None and knee.gpus > 1:
            n = _continuous(fit, params, static, "knee", float(knee.gpus), threshold)
            if n is not None:
                if quantity == "auto":  # asked for, it needs no "so … is used"
                    notes.append(
                        f"so the point of diminishing returns (dS/dN = {threshold:g}) is used"
                    )
                return "knee", n, None, "; ".join(notes)
        notes.append(f"no point of diminishing returns below {max_gpus} GPUs")
        if quantity == "knee":
            raise InputError(f"cannot narrow the knee: {notes[-1]}; ask for time")
    notes.append(f"so the step time at {max_gpus} GPUs is used")
    time_s = float(fit.predict([max_gpus])["time_s"][0])
    return "time", time_s, max_gpus, "; ".join(notes) if quantity == "auto" else ""


def _describe(quantity: str, at_gpus) -> str:
    return {
        "optimum": "the optimal GPU count",
        "knee": "the point of diminishing returns",
        "time": f"the step time at {counted(at_gpus, 'GPU')}" if at_gpus else "",
    }[quantity]


def _span(quantity: str, interval: tuple[float, float]) -> str:
    lo, hi = interval
    if quantity == "time":
        return f"{format_seconds(lo)}–{format_seconds(hi)}"
    return f"{lo:.3g}–{hi:.3g}"


def next_measurements(
    fit: FitResult,
    candidates: Sequence[float],
    *,
    quantity: str = "auto",
    level: float = 0.9,
    max_gpus: int = 4096,
    threshold: float = 0.5,
    ensemble: Ensemble | None = None,
) -> NextMeasurements:
    """Rank `candidates` by how much one more measurement there narrows the interval on q.

    Args:
        fit: a fitted model with a Laplace covariance (`FitResult.raw_covariance`). The
            default blend has none (its intervals are conformal): its measurements are
            refitted with the single family `fit_auto` prefers for them
            (``average=False``), which ranks the candidates, and the note says so.
        candidates: GPU counts that could still be benchmarked.
        quantity: ``"optimum"`` (the continuous optimal GPU count, where ∂T/∂N = 0),
            ``"knee"`` (where the marginal speedup dS/dN falls to `threshold`),
            ``"time"`` (the step time at `max_gpus`), or ``"auto"``: the optimum when it
            is a turning point inside the search, else the knee, else the time.
        level: probability of the interval (default 0.9).
        max_gpus: the search limit of the optimum and the knee, and the count of
            ``"time"``.
        threshold: dS/dN of the knee.
        ensemble: draws of `perfmodel.ensemble(fit)` for the intervals (default: the
            Laplace draws every interval of this fit uses).

    Returns:
        `NextMeasurements`, best candidate first. Without residual variance (as many
        measurements as free parameters) the ranking is by relative shrinkage, which
        does not depend on σ².

    Raises:
        InputError: bad candidates or options, a fit without free parameters, or a
            quantity the data cannot determine at all.
    """
    counts = _check_candidates(candidates)
    refitted, blend = "", None
    if fit.intervals == "conformal":  # the blend: no covariance for a measurement to narrow
        if fit.fixed:  # a what-if's changes (or fixed members) a refit would drop
            raise InputError(
                f"next refits the default blend's measurements with one family, which would "
                f"drop what this fit fixed or changed ({', '.join(fit.fixed)}): refit one "
                f"family ({refit_command(fit.data.source)}), change it, and ask again"
            )
        blend, fit = fit, fit_auto(fit.data, average=False).best
        refitted = (
            f"ranked with {fit.family}, the single family preferred for these measurements "
            "(the default blend has no covariance for a measurement to narrow; "
            f"{refit_command(fit.data.source, fit.family)} gives this fit)"
        )
        ensemble = None  # the blend's draws are not this family's
    if quantity not in QUANTITIES:
        raise InputError(f"unknown quantity {quantity!r}; valid: {', '.join(QUANTITIES)}")
    if not 0 < level < 1:
        raise InputError(f"level must be in (0, 1), got {level}")
    max_gpus = int(check_gpus(max_gpus, "max_gpus"))
    if not fit.free:
        raise InputError("every parameter of this fit is fixed: no measurement can change it")
    draws = ensemble
    with jax.enable_x64(True):
        mask = fit.model.raw_leaf_mask(set(fit.free))
        params, static = eqx.partition(fit.model, mask)
        picked, estimate, at_gpus, note = _pick(fit, params, static, quantity, max_gpus, threshold)
        u = math.log(at_gpus if picked == "time" else estimate)
        g = np.asarray(
            _condition(params, static, fit.config(1.0), jnp.asarray(u), picked, threshold)[2]
        )
        rows = np.asarray(_jacobian(params, static, fit.config(counts), fit.loss_kind, fit.target))
        before, after, sigma2 = _variances(fit, params, static, g, rows)
    band = _Band.of(fit, picked, estimate, at_gpus, level, max_gpus, threshold, draws)
    apart = (
        _blend_apart(blend, fit.family, picked, estimate, max_gpus, threshold) if refitted else ""
    )
    note = "; ".join(filter(None, [refitted, note, apart, _node_note(fit, counts)]))
    answer = _rank(fit, counts, picked, estimate, at_gpus, level, before, after, band, note)
    if refitted:  # its value and interval are that family's, not what `optimal` says
        answer = dataclasses.replace(answer, description=f"{answer.description} of {fit.family}")
    return dataclasses.replace(answer, searched=int(searched_up_to(fit, max_gpus, {})))


# A family's answer this many times from the blend's is said beside the ranking.
FAMILY_APART = 1.5


def _blend_apart(blend, family: str, picked: str, estimate: float, max_gpus, threshold) -> str:
    """When `next` ranks with a single family, the default blend's own optimum or knee,
    which `optimal` prints: "the point of diminishing returns of amdahl: 19.86 GPUs
    (18–22)" beside `optimal`'s "from 104 GPUs" read as a contradiction (review round
    11), and 32.71 beside 24 unexplained as well (review of 2026-12-06). Where one is
    `FAMILY_APART` or more times the other, the note says they disagree. "" for the
    time at a count."""
    if picked == "knee":
        found = diminishing_returns(blend, threshold=threshold, max_gpus=max_gpus)  # as optimal
        theirs, what = found.gpus, "point of diminishing returns"
    elif picked == "optimum":
        theirs, what = optimal_gpus(blend, max_gpus=max_gpus).gpus, "optimum"
    else:
        return ""
    disagree = "the two disagree past the measurements, which a candidate's measurement settles"
    if theirs is None:
        return (
            f"the default blend's {what} is past {max_gpus} GPUs, far from {family}'s: {disagree}"
        )
    said = (
        f"the default blend's {what} is {counted(theirs, 'GPU')} (perfmodel optimal), "
        f"{family}'s {estimate:.4g}"
    )
    if max(theirs, estimate) < FAMILY_APART * min(theirs, estimate):
        return said
    return f"{said}: {disagree}"


def _node_note(fit: FitResult, counts: np.ndarray) -> str:
    """What the ranking cannot see when every measurement fits in one node and some
    candidate crosses it: the network between nodes, which the model's curve guesses
    (`_closed.unmeasured_node`); the first candidate past the node measures it."""
    node = _closed.data_node(fit.data)
    past = counts[counts > node] if node else counts[:0]
    if not past.size:
        return ""
    first = int(past.min())
    return (
        f"every count measured fits in one node of {node:g} GPUs, so nothing measured says "
        "what the network between nodes costs and this ranking takes the model's guess of "
        f"it; measuring {first} GPUs shows it, whatever the ranking"
    )


def _variances(fit, params, static, g, rows):
    """Variance of q now and after one measurement at each candidate row of J."""
    cov = fit.raw_covariance
    if cov is not None and np.all(np.isfinite(cov)):
        sigma2 = _residual_variance(fit)
        cg, cj = cov @ g, rows @ cov  # cj[i] = C jᵢ (C is symmetric)
        before = float(g @ cg)
        after = before - (cj @ g) ** 2 / (sigma2 + np.einsum("ij,ij->i", cj, rows))
        return before, np.maximum(after, 0.0), sigma2
    # Unconstrained directions (infinite variance) or no σ²: work with the information
    # matrix, in which a new row can constrain a direction the data left free.
    data = fit.data
    config = Config(gpus=data.gpus, **data.config)
    jac = np.asarray(_jacobian(params, static, config, fit.loss_kind, fit.target))
    sigma2 = None if cov is None else _residual_variance(fit)
    scale = 1.0 if sigma2 is None else sigma2
    information = jac.T @ jac / scale
    before = _variance(information, g)
    after = np.array([_variance(information + np.outer(j, j) / scale, g) for j in rows])
    return before, after, sigma2


def _doublings(n: float, lo: float, hi: float) -> float:
    """Doublings of N outside the measured counts [lo, hi] (0 inside), as the drift."""
    return max(0.0, math.log2(n / hi)) + max(0.0, math.log2(lo / n))


@dataclasses.dataclass(frozen=True)
class _Band:
    """The confidence interval of q from the ensemble, and how its log-variance splits
    between the parameters and the model-form drift (at q's GPU count)."""

    interval: tuple[float, float] | None
    parameter_share: float
    drift_sd: float
    at: float
    measured: tuple[float, float]

    @classmethod
    def of(cls, fit, picked, estimate, at_gpus, level, max_gpus, threshold, draws):
        try:
            if draws is None:
                draws = ensemble(fit)
        except InputError:
            return cls(None, 1.0, 0.0, 1.0, (1.0, 1.0))
        if picked == "time":
            band = predict_interval(fit, [at_gpus], level, kind="confidence", ensemble=draws)
            lo, hi = float(band["time_s_lo"][0]), float(band["time_s_hi"][0])
        elif picked == "optimum":
            found = optimal_gpus(
                fit, max_gpus=max_gpus, multiple_of=1, interval=level, ensemble=draws
            )
            lo, hi = found.gpus_interval
        else:
            found = diminishing_returns(
                fit,
                threshold=threshold,
                max_gpus=max_gpus,
                multiple_of=1,
                interval=level,
                ensemble=draws,
            )
            lo, hi = found.gpus_interval
        bounded = lo is not None and hi is not None and 0 < lo and math.isfinite(hi)
        if bounded and picked == "knee":
            # The search gives the first whole count past the knee; the estimate is the
            # continuous root, in (k − 1, k]: "8.659 GPUs (90% confidence interval 9–10)"
            # put the estimate outside its own interval (review round 10b).
            lo = min(max(1.0, lo - 1.0), estimate)
        at = float(at_gpus if picked == "time" else estimate)
        log_t = log_time_draws(fit, draws, [at])[:, 0]
        measured = draws.gpus_range
        drift = draws.drift * _doublings(at, *measured)
        parameter, moved = float(np.var(log_t - drift)), float(np.var(drift))
        share = parameter / (parameter + moved) if parameter + moved > 0 else 1.0
        return cls(
            (float(lo), float(hi)) if bounded else None,
            share,
            float(np.std(draws.drift)),
            at,
            measured,
        )

    def factor(self, ratio: float, gpus: float) -> float | None:
        """How much the interval's log-width shrinks by measuring `gpus` (after/before):
        the parameter part by `ratio` (sd after / sd before), the drift by the doublings
        left outside the measured counts; None without an interval."""
        if self.interval is None or not math.isfinite(ratio):
            return None
        before = _doublings(self.at, *self.measured)
        left = _doublings(self.at, min(self.measured[0], gpus), max(self.measured[1], gpus))
        drift = (left / before) ** 2 if before > 0 else 1.0
        return math.sqrt(self.parameter_share * ratio**2 + (1.0 - self.parameter_share) * drift)

    def after(self, estimate: float, ratio: float, gpus: float) -> tuple[float, float] | None:
        """The interval expected after measuring `gpus` (`factor`)."""
        factor = self.factor(ratio, gpus)
        if factor is None:
            return None
        lo, hi = self.interval
        below = max(math.log(estimate / lo), 0.0) * factor
        above = max(math.log(hi / estimate), 0.0) * factor
        return (estimate * math.exp(-below), estimate * math.exp(above))


def _rank(fit, counts, picked, estimate, at_gpus, level, before, after, band, note):
    description = _describe(picked, at_gpus)
    sd0 = math.sqrt(before)
    if sd0 == 0.0:
        raise InputError(
            f"the fit leaves {description} no uncertainty (its variance is 0: the model "
            "passes through every measurement, or the fit file says so), so no measurement "
            "can narrow it; with real timings, repeat a count to give the fit some noise"
        )
    if not math.isfinite(sd0) and not np.any(np.isfinite(after)):
        raise InputError(
            f"the data cannot determine {description} (its variance is unbounded) and no "
            "single candidate fixes that; fix a parameter when fitting ({arg:fix}, then ask "
            "again) or measure more counts"
        )
    if fit.raw_covariance is None:
        note = "; ".join(
            filter(
                None,
                [
                    note,
                    "the fit has no residual degrees of freedom: candidates are ranked by the "
                    "relative narrowing, which does not need σ², and the interval leans on "
                    "the prior noise of the ensemble",
                ],
            )
        )
    now = band.interval if math.isfinite(sd0) else None
    measured = set(fit.data.gpus.tolist())
    ranking = []
    for n, var in zip(counts, after):
        sd1 = math.sqrt(var)
        shrink = 1.0 - sd1 / sd0 if math.isfinite(sd0) else (1.0 if math.isfinite(sd1) else 0.0)
        later = None if now is None else band.after(estimate, sd1 / sd0, float(n))
        if later is not None:  # the interval printed: its parameter and drift parts
            shrink = 1.0 - band.factor(sd1 / sd0, float(n))
        repeat = " (a repeat of a measured count)" if n in measured else ""
        far = past_checked(float(n), fit)  # "measuring 10000000 GPUs" ranked first, bare
        repeat += f" ({far})" if far else ""
        if now is not None and later is not None:
            reason = (
                f"measuring {int(n)} GPUs{repeat} is expected to shrink the "
                f"{level_text(level)} confidence interval on {description} from "
                f"{_span(picked, now)} to {_span(picked, later)}"
            )
        elif not math.isfinite(sd0) and math.isfinite(sd1):
            reason = f"measuring {int(n)} GPUs{repeat} makes {description} determinable"
        else:
            reason = f"measuring {int(n)} GPUs{repeat} narrows {description} by {shrink:.0%}"
        ranking.append(MeasurementValue(int(n), sd0, sd1, shrink, later, n in measured, reason))
    # Most narrowing first: of the printed interval where there is one, so the order
    # follows the intervals each line shows.
    ranking.sort(key=lambda m: (-m.shrink, m.sd_after, m.gpus))
    return NextMeasurements(
        quantity=picked,
        description=description,
        estimate=estimate,
        at_gpus=at_gpus,
        level=level,
        interval=now,
        ranking=tuple(ranking),
        note=note,
    )
