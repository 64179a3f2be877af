"""Fitting α (latency) and β (bandwidth) of collectives to nccl-tests measurements.

Each (collective, rank count) gets its own curve, in the α-β model of `collective_time`
(ring) and the bus-bandwidth convention of nccl-tests:

    t(S) = A(n)·α + f·S/β,

with A(n) the latency steps of a ring (2(n−1) for all-reduce, n−1 otherwise) and f the
bytes each rank moves at bandwidth β per message byte. With ``factor="nominal"`` f is
nccl-tests' factor F(n) (2(n−1)/n for all-reduce), so β is the asymptotic bus bandwidth.
NCCL's tree, NVLS and SHARP paths move other amounts; with ``factor="fitted"`` f is free.
Timings determine only f/β, so a fitted factor is measured against a link bandwidth you
give (NVLink, NIC): its efficiency F(n)/f > 1 means fewer bytes than a ring would move.
"""

import dataclasses
import functools
import math

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float
import numpy as np

from .._errors import InputError
from .._fitting import (
    convergence,
    fit_quality,
    huber,
    HUBER_DELTA,
    laplace_covariance,
    LOSSES,
    multistart_adam,
    project,
    refine_lbfgs,
)
from .._terms import collective_time
from .._text import counted
from .data import group_keys, measurements

FACTORS = ("nominal", "fitted")
# Physical ranges the stored logs are kept in: seconds, bytes/s, bytes per byte.
RANGES = {"latency": (1e-12, 1.0), "bandwidth": (1.0, 1e15), "factor": (1e-3, 1e3)}


def ring_coefficients(op: str, n) -> tuple[np.ndarray, np.ndarray]:
    """``(A, F)`` with ``collective_time(op, "ring", n, S, α, β) = A·α + F·S/β``.

    A counts latency steps; F is nccl-tests' bus-bandwidth factor.
    """
    with jax.enable_x64(True):
        n = jnp.asarray(n, dtype=jnp.float64)
        steps = collective_time(op, "ring", n, jnp.zeros_like(n), 1.0, 1.0)
        factor = collective_time(op, "ring", n, jnp.ones_like(n), 0.0, 1.0)
        return np.asarray(steps), np.asarray(factor)


def point_loss(predicted, measured, kind: str, scale) -> Float[Array, " n"]:
    """Per-measurement loss: ``(log t̂ − log t)²`` (``"log"``), its Huber version
    (``"huber"``) or ``((t̂ − t)/scale)²`` (``"squared"``, `scale` in seconds)."""
    if kind == "squared":
        return ((predicted - measured) / scale) ** 2
    residual = jnp.log(predicted) - jnp.log(measured)
    if kind == "huber":
        return huber(residual, HUBER_DELTA)
    return residual**2


def _predict(params, fixed, group, steps, size):
    p = {**fixed, **params}
    latency = jnp.exp(p["log_latency"])[group]
    per_byte = jnp.exp(p["log_factor"] - p["log_bandwidth"])[group]
    return steps * latency + per_byte * size


def collective_objective(
    params, fixed, group, steps, size, time_s, scale, weights, kind: str
) -> Float[Array, ""]:
    """Weighted mean `point_loss` of ``t̂ = A·α_g + f_g·S/β_g`` (seconds).

    `params` and `fixed` hold ``log_latency``, ``log_bandwidth`` and ``log_factor``
    between them, one value per group; `group` maps measurements to groups.
    """
    predicted = _predict(params, fixed, group, steps, size)
    return jnp.sum(weights * point_loss(predicted, time_s, kind, scale)) / jnp.sum(weights)


@dataclasses.dataclass(frozen=True)
class CollectiveGroupFit:
    """The α-β fit of one collective at one rank count.

    Attributes:
        collective: e.g. ``"all_reduce"``.
        n_ranks: ranks taking part.
        latency_s: α, seconds per latency step of a ring.
        bandwidth: β, bytes/s: the bus bandwidth (nominal factor), or the link
            bandwidth given for a fitted factor.
        factor: f, bytes moved at β per message byte.
        nominal_factor: nccl-tests' factor F(n).
        factor_fitted: whether `factor` was fitted.
        log_stderr: Laplace standard error of the log of each free parameter.
        r2: coefficient of determination of the times.
        mape: mean absolute percentage error of the times, percent.
        rows: the measurements: message_bytes (bytes the algbw refers to), placement,
            time_s, busbw_bytes_per_s (printed), time_s_fit, busbw_fit_bytes_per_s,
            source, line.
    """

    collective: str
    n_ranks: int
    latency_s: float
    bandwidth: float
    factor: float
    nominal_factor: float
    factor_fitted: bool
    log_stderr: dict[str, float]
    r2: float
    mape: float
    rows: dict[str, np.ndarray]

    def __repr__(self) -> str:
        return (
            f"<CollectiveGroupFit: {self.collective} at {self.n_ranks} ranks, α "
            f"{self.latency_s:.3g} s, bus bandwidth {self.busbw:.3g} B/s, MAPE {self.mape:.2f}%>"
        )

    @property
    def steps(self) -> float:
        """Latency steps A(n) of a ring."""
        return float(ring_coefficients(self.collective, [self.n_ranks])[0][0])

    @property
    def base_latency_s(self) -> float:
        """Seconds for a message of zero bytes, A(n)·α."""
        return self.steps * self.latency_s

    @property
    def seconds_per_byte(self) -> float:
        """The bandwidth slope f/β, seconds per message byte."""
        return self.factor / self.bandwidth

    @property
    def busbw(self) -> float:
        """Asymptotic bus bandwidth in nccl-tests' convention, β·F(n)/f (bytes/s)."""
        return self.nominal_factor / self.seconds_per_byte

    @property
    def efficiency(self) -> float:
        """F(n)/f: above 1 the algorithm moves fewer bytes than a ring."""
        return self.nominal_factor / self.factor

    def predict(self, message_bytes) -> np.ndarray:
        """Seconds for messages of `message_bytes` bytes."""
        size = np.asarray(message_bytes, dtype=np.float64)
        return self.base_latency_s + self.seconds_per_byte * size


@dataclasses.dataclass(frozen=True)
class CollectiveFit:
    """α-β fits of nccl-tests measurements, one per (collective, n_ranks).

    Attributes:
        groups: the fits, ordered by collective then rank count.
        factor: ``"nominal"`` or ``"fitted"``.
        link_bandwidth: the β a fitted factor is measured against (bytes/s), or None.
        loss_kind: ``"log"``, ``"squared"`` or ``"huber"``.
        loss: final value of the loss (mean over the measurements).
        converged: True when the optimiser reached a stationary point.
        message: convergence, identifiability and notes, readable.
        warnings: identifiability warnings.
        notes: how the logs were read, e.g. a size column that is not algbw's bytes.
        sources: the logs read.
    """

    groups: tuple[CollectiveGroupFit, ...]
    factor: str
    link_bandwidth: float | None
    loss_kind: str
    loss: float
    converged: bool
    message: str
    warnings: tuple[str, ...]
    notes: tuple[str, ...]
    sources: tuple[str, ...]
    precision: str = "float64"

    def __repr__(self) -> str:
        groups = ", ".join(f"{g.collective}@{g.n_ranks}" for g in self.groups)
        count = counted(len(self.groups), "group")
        return f"<CollectiveFit: {count} ({groups}), {self.factor} factor>"

    def group(self, collective: str, n_ranks: int | None = None) -> CollectiveGroupFit:
        """The fit of `collective` (at `n_ranks` when several rank counts were fitted)."""
        found = [
            g for g in self.groups if g.collective == collective and n_ranks in (None, g.n_ranks)
        ]
        if len(found) != 1:
            have = ", ".join(f"{g.collective} at {g.n_ranks} ranks" for g in self.groups)
            what = "several" if found else "no"
            raise InputError(f"{what} fits of {collective} (n_ranks={n_ranks}); have: {have}")
        return found[0]


# Fitting --------------------------------------------------------------------------------


def _check(factor, link_bandwidth, loss, n_starts):
    if loss not in LOSSES:
        raise InputError(f"unknown loss {loss!r}; valid: {', '.join(LOSSES)}")
    if factor not in FACTORS:
        raise InputError(f"factor must be one of {', '.join(FACTORS)}, got {factor!r}")
    if link_bandwidth is not None and not (0 < link_bandwidth < math.inf):
        raise InputError(f"link bandwidth must be a positive bytes/s, got {link_bandwidth}")
    if factor == "fitted" and link_bandwidth is None:
        raise InputError(
            "a fitted bus-bandwidth factor needs the link bandwidth in bytes/s "
            "({arg:link_bandwidth}): the timings determine only "
            "factor/bandwidth. Give the NVLink or NIC bandwidth of one GPU, say "
            "4.5e11 for an H100's NVLink or 5e10 for a 400 Gb/s NIC"
        )
    if factor == "nominal" and link_bandwidth is not None:
        raise InputError(
            "a link bandwidth ({arg:link_bandwidth}) applies to a fitted factor only: "
            "add --factor fitted (factor='fitted' from Python)"
        )
    if n_starts < 1:
        raise InputError(f"n_starts must be ≥ 1, got {n_starts}")


def _bucket(n: int, least: int) -> int:
    # Padded shapes let fits of other logs reuse the compiled optimiser.
    return max(least, 1 << (n - 1).bit_length())


def fit_collective(
    parsed_or_paths,
    *,
    collective: str | None = None,
    n_ranks: int | None = None,
    factor: str = "nominal",
    link_bandwidth: float | None = None,
    loss: str = "log",
    n_starts: int = 16,
    adam_steps: int = 300,
    lbfgs_steps: int = 200,
    seed: int = 0,
) -> CollectiveFit:
    """Fit α and β (or the factor f) per collective and rank count, in float64.

    ``t = A(n)·α + f·S/β`` with f = F(n), nccl-tests' factor (``factor="nominal"``;
    β is then the asymptotic bus bandwidth), or f free against a given β
    (``factor="fitted"`` with `link_bandwidth`).

    Args:
        parsed_or_paths: nccl-tests log paths and/or `parse_nccl_tests` frames.
        collective: fit only this collective; names it for logs that do not.
        n_ranks: ranks, for logs without ``#  Rank`` lines; keeps only those rows.
        factor: ``"nominal"`` or ``"fitted"``.
        link_bandwidth: β for a fitted factor, bytes/s.
        loss: ``"log"`` (relative errors, default), ``"squared"`` or ``"huber"``.
        n_starts: starting points of the multi-start Adam phase.
        adam_steps: Adam steps per start.
        lbfgs_steps: maximum L-BFGS iterations.
        seed: seed of the starting points.

    Raises:
        InputError: malformed logs (naming file and line), no rows for the collective or
            rank count asked for, or inconsistent options.

    Example:
        >>> from perfmodel import load_nccl_log
        >>> result = fit_collective(load_nccl_log("nccl_tests_44_2x2080ti"))
        >>> round(result.group("all_reduce").busbw / 1e9)  # GB/s
        21
    """
    _check(factor, link_bandwidth, loss, n_starts)
    rows, notes = measurements(parsed_or_paths, collective=collective, n_ranks=n_ranks)
    with jax.enable_x64(True):
        return _fit_float64(
            rows, notes, factor, link_bandwidth, loss, n_starts, adam_steps, lbfgs_steps, seed
        )


def _arrays(rows, keys, group):
    """Padded float64 arrays for the objective: group, steps, size, time, scale, weights."""
    n, g = len(group), len(keys)
    steps, nominal = np.ones(n), np.ones(n)
    for i, (op, ranks) in enumerate(keys):
        steps[group == i], nominal[group == i] = (c[0] for c in ring_coefficients(op, [ranks]))
    mean = np.array([rows["time_s"][group == i].mean() for i in range(g)])
    size = _bucket(n, 64)
    pad = size - n
    arrays = (
        np.concatenate([group, np.zeros(pad, np.int32)]),
        np.concatenate([steps, np.ones(pad)]),
        np.concatenate([rows["message_bytes"], np.ones(pad)]),
        np.concatenate([rows["time_s"], np.ones(pad)]),
        np.concatenate([mean[group], np.ones(pad)]),
        np.concatenate([np.ones(n), np.zeros(pad)]),
    )
    return tuple(map(jnp.asarray, arrays)), steps, nominal


def _starts(rows, keys, group, steps, nominal, factor, link_bw, n_starts, seed, g_pad):
    g = len(keys)
    time_s, size = rows["time_s"], rows["message_bytes"].clip(1.0)
    alpha = np.ones(g_pad)
    slope = np.ones(g_pad)  # seconds per byte, f/β
    for i in range(g):
        mask = group == i
        alpha[i] = time_s[mask].min() / steps[mask][0]
        slope[i] = (time_s[mask] / size[mask]).min()
    f_nominal = np.ones(g_pad)
    f_nominal[:g] = [nominal[group == i][0] for i in range(g)]
    spread = np.random.default_rng(seed).uniform(-3.0, 1.0, (n_starts, g_pad)) * math.log(10.0)
    starts = {"log_latency": np.log(alpha) + spread}
    if factor == "nominal":
        fixed = {"log_factor": np.log(f_nominal)}
        starts["log_bandwidth"] = np.log(f_nominal / slope) - spread[::-1] / 3.0
    else:
        fixed = {"log_bandwidth": np.full(g_pad, math.log(link_bw))}
        starts["log_factor"] = np.log(slope * link_bw) + spread[::-1] / 3.0
    return starts, fixed


def _fit_float64(rows, notes, factor, link_bw, loss, n_starts, adam_steps, lbfgs_steps, seed):
    keys, group = group_keys(rows)
    g_pad = _bucket(len(keys), 2)
    data, steps, nominal = _arrays(rows, keys, group)
    starts, fixed = _starts(
        rows, keys, group, steps, nominal, factor, link_bw, n_starts, seed, g_pad
    )
    lower = {k: jnp.full(g_pad, math.log(RANGES[k[4:]][0])) for k in starts}
    upper = {k: jnp.full(g_pad, math.log(RANGES[k[4:]][1])) for k in starts}
    fixed = {k: jnp.asarray(v) for k, v in fixed.items()}
    starts = {k: jnp.asarray(v) for k, v in starts.items()}
    starts = jax.vmap(project, in_axes=(0, None, None))(starts, lower, upper)
    args = (fixed, *data, loss)
    ends, _ = multistart_adam(collective_objective, starts, lower, upper, adam_steps, args)
    # Groups share no parameter: keep the best start of each group on its own.
    per_group = np.asarray(_group_losses(ends, fixed, *data, kind=loss, g_pad=g_pad))
    per_group = np.where(np.isfinite(per_group), per_group, np.inf)
    best = np.argmin(per_group, axis=0)
    start = {k: v[best, np.arange(g_pad)] for k, v in ends.items()}
    # The start's loss as L-BFGS sums it (the per-group sums above round otherwise).
    start_value, start_gnorm = map(float, _value_and_gnorm(start, *args))
    params, value, gnorm, iterations = refine_lbfgs(
        collective_objective, start, lower, upper, lbfgs_steps, args
    )
    value, gnorm = float(value), float(gnorm)
    # From a start already at the minimum, L-BFGS may end a rounding error above it: only
    # a loss that is non-finite or really higher sends us back (with the start's gradient).
    if not value <= start_value + 1e-12 * abs(start_value):
        params, value, gnorm = start, start_value, start_gnorm
    physical = {
        k[4:]: np.exp(np.asarray({**fixed, **params}[k], dtype=np.float64))[: len(keys)]
        for k in ("log_latency", "log_bandwidth", "log_factor")
    }
    free = [k[4:] for k in starts]
    at_edge = {
        name: np.minimum(
            np.asarray(params[f"log_{name}"] - lower[f"log_{name}"]),
            np.asarray(upper[f"log_{name}"] - params[f"log_{name}"]),
        )[: len(keys)]
        < 1e-6
        for name in free
    }
    return _result(
        rows, notes, keys, group, physical, free, at_edge, factor, link_bw, loss, value, gnorm,
        adam_steps + int(iterations),
    )  # fmt: skip


@functools.partial(jax.jit, static_argnames=("kind",))
def _value_and_gnorm(params, fixed, group, steps, size, time_s, scale, weights, kind):
    """`collective_objective` at `params` and the norm of its gradient."""
    value, grad = jax.value_and_grad(collective_objective)(
        params, fixed, group, steps, size, time_s, scale, weights, kind
    )
    squares = [jnp.sum(g**2) for g in jax.tree_util.tree_leaves(grad)]
    return value, jnp.sqrt(sum(squares))


@functools.partial(jax.jit, static_argnames=("kind", "g_pad"))
def _group_losses(ends, fixed, group, steps, size, time_s, scale, weights, kind, g_pad):
    """Loss summed per group (not divided) for every start: shape (starts, groups)."""

    def one(params):
        predicted = _predict(params, fixed, group, steps, size)
        per_point = weights * point_loss(predicted, time_s, kind, scale)
        return jax.ops.segment_sum(per_point, group, num_segments=g_pad)

    return jax.vmap(one)(ends)


def jacobian_log_params(
    steps, size, latency, per_byte, free, loss, predicted
) -> Float[np.ndarray, "n k"]:
    """∂residual/∂(log α, log β or log f) of one group's ``t̂ = A·α + (f/β)·S``.

    Residuals are ``log t̂ − log t`` (or ``t̂ − t`` for the squared loss).
    """
    columns = {
        "latency": np.full_like(size, steps * latency),
        "bandwidth": -per_byte * size,
        "factor": per_byte * size,
    }
    jac = np.stack([columns[name] for name in free], axis=1)
    return jac if loss == "squared" else jac / predicted[:, None]


# A measurement this many times off its fitted time (or this fraction of it) is named:
# the α-β fits of the shipped logs stay within 1.5×, and a glitch of 10× or more stands out.
MISFIT_FACTOR = 3.0


def misfits(op: str, n: int, where: dict, time_s, predicted, loss: str) -> list[str]:
    """A warning naming the measurements of one group at least `MISFIT_FACTOR` times off
    the fit (file, line, placement, measured and fitted µs), worst first; none if none.

    `where` holds each measurement's ``source``, ``line`` and ``placement``.
    """
    ratio = np.asarray(time_s) / np.asarray(predicted)
    off = np.maximum(ratio, 1.0 / ratio)
    worst = [int(i) for i in np.argsort(-off, kind="stable") if off[i] >= MISFIT_FACTOR]
    if not worst:
        return []
    named = "; ".join(
        f"{where['source'][i]} line {where['line'][i]}, "
        f"{str(where['placement'][i]).replace('_', '-')} time {time_s[i] * 1e6:.4g} us where "
        f"the fit gives {predicted[i] * 1e6:.4g} us ({ratio[i]:.3g}×)"
        for i in worst[:3]
    )
    named += f"; and {len(worst) - 3} more" if len(worst) > 3 else ""
    one = len(worst) == 1
    if loss == "huber":
        remedy = f"the huber loss limits {'its' if one else 'their'} pull; remove "
        remedy += f"{'it' if one else 'them'} from the log to fit without {'it' if one else 'them'}"
    else:
        remedy = (
            f"{'it pulls' if one else 'they pull'} the fit of the others: remove "
            f"{'it' if one else 'them'} from the log and fit again, or fit with the huber "
            "loss (--loss huber; loss='huber' from Python)"
        )
    return [
        f"{op} at {n} ranks: {len(worst)} of {len(off)} measurements "
        f"{'is' if one else 'are'} over {MISFIT_FACTOR:g}× off the fit (an outlier, or a "
        f"unit slip?): {named}. {remedy[0].upper()}{remedy[1:]}"
    ]


# In-place and out-of-place runs of one size agree within a few percent on the shipped
# logs; a median ratio past this is two different measurements fitted as one link.
PLACEMENT_FACTOR = 1.5


def placement_gap(op: str, n: int, where: dict, size, time_s) -> list[str]:
    """A warning when one group's in-place and out-of-place times disagree: the median
    over the sizes measured both ways of their ratio is past `PLACEMENT_FACTOR` (2.5×
    on every row was averaged into one bandwidth, β 63 GB/s between 40 and 100)."""
    placement = np.asarray(where["placement"]).astype(str)
    size, time_s = np.asarray(size, float), np.asarray(time_s, float)
    # Mean time per (size, placement), by bincount: a mask per size was quadratic (92 s
    # for a log of 50,000 sizes; fuzz round 12).
    sizes, index = np.unique(size, return_inverse=True)
    means = {}
    for kind in ("in_place", "out_of_place"):
        chosen = placement == kind
        count = np.bincount(index[chosen], minlength=sizes.size)
        total = np.bincount(index[chosen], weights=time_s[chosen], minlength=sizes.size)
        means[kind] = np.where(count > 0, total / np.maximum(count, 1), np.nan)
    both = np.flatnonzero(np.isfinite(means["in_place"]) & np.isfinite(means["out_of_place"]))
    if both.size == 0:
        return []
    ratios = means["in_place"][both] / means["out_of_place"][both]
    first = (index == both[0]) & (placement == "out_of_place")
    lines = [int(np.asarray(where["line"])[first][0])]
    median = float(np.median(ratios))
    if 1.0 / PLACEMENT_FACTOR <= median <= PLACEMENT_FACTOR:
        return []
    source = np.asarray(where["source"])[0]
    return [
        f"{op} at {n} ranks: in-place times are a median {median:.3g}× the out-of-place ones "
        f"over the {both.size} sizes measured both ways (e.g. {source} line {lines[0]}): "
        "they are fitted as one link, between the two; if one placement is the one to "
        "model, keep only its column's rows"
    ]


def _group_fit(i, op, n, rows, mask, physical, free, at_edge, factor, loss, warnings):
    size, time_s = rows["message_bytes"][mask], rows["time_s"][mask]
    steps, nominal = (float(c[0]) for c in ring_coefficients(op, [n]))
    latency, bandwidth, f = (physical[k][i] for k in ("latency", "bandwidth", "factor"))
    predicted = steps * latency + f / bandwidth * size
    residuals = predicted - time_s if loss == "squared" else np.log(predicted / time_s)
    jac = jacobian_log_params(steps, size, latency, f / bandwidth, free, loss, predicted)
    cov = laplace_covariance(jac, residuals)
    sd = np.full(len(free), math.inf) if cov is None else np.sqrt(np.abs(np.diag(cov)))
    stderr = dict(zip(free, map(float, sd)))
    for name, sd in stderr.items():
        if at_edge[name][i] or not math.isfinite(sd):
            warnings.append(
                f"{op} at {n} ranks: {name} is not identifiable (the measurements cannot "
                "tell it: the smallest messages are bandwidth-bound, or the largest "
                "latency-bound)"
            )
        elif sd > 2.0:
            warnings.append(
                f"{op} at {n} ranks: {name} is poorly determined (Laplace error a factor "
                f"{math.exp(min(sd, 50.0)):.3g})"
            )
    where = {k: rows[k][mask] for k in ("source", "line", "placement")}
    warnings += misfits(op, n, where, time_s, predicted, loss)
    warnings += placement_gap(op, n, where, size, time_s)
    r2, mape = fit_quality(time_s, predicted)
    out = {k: rows[k][mask] for k in ("message_bytes", "placement", "time_s", "source", "line")}
    out["busbw_bytes_per_s"] = rows["busbw_bytes_per_s"][mask]
    out["time_s_fit"] = predicted
    out["busbw_fit_bytes_per_s"] = size / predicted * nominal
    return CollectiveGroupFit(
        collective=op,
        n_ranks=int(n),
        latency_s=float(latency),
        bandwidth=float(bandwidth),
        factor=float(f),
        nominal_factor=nominal,
        factor_fitted=factor == "fitted",
        log_stderr=stderr,
        r2=r2,
        mape=mape,
        rows=out,
    )


def _result(
    rows, notes, keys, group, physical, free, at_edge, factor, link_bw, loss, value, gnorm, steps
) -> CollectiveFit:
    warnings: list[str] = []
    groups = tuple(
        _group_fit(i, op, n, rows, group == i, physical, free, at_edge, factor, loss, warnings)
        for i, (op, n) in enumerate(keys)
    )
    converged, message = convergence(value, gnorm, steps, warnings)
    return CollectiveFit(
        groups=groups,
        factor=factor,
        link_bandwidth=link_bw,
        loss_kind=loss,
        loss=value,
        converged=converged,
        message=message,
        warnings=tuple(warnings),
        notes=tuple(notes),
        sources=tuple(dict.fromkeys(rows["source"].tolist())),
    )
