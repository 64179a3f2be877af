"""Closed forms of the single-curve families, written once against an array namespace.

Each function takes `xp` (``jax.numpy`` for the Equinox terms, ``numpy`` or the dual
numbers of `perfmodel._saved` for the JAX-free evaluation of saved fits) and physical
parameter values, and returns seconds (per step, or per unit of work), so that every
path evaluates the same expression. Sources of the formulas are in the docstrings of
the terms that call them (`perfmodel._terms`), the default's blend (`perfmodel._blend`)
and its conformal intervals (`perfmodel._uncertainty.conformal`).

This module imports NumPy only, never JAX: ``perfmodel predict`` and ``optimal``
evaluate saved fits without importing it.
"""

import math
import statistics

import numpy as np

FAR_FROM, FAR_TO = 1.0, 2.0  # doublings past the largest measured count (`Blend`)
# Doublings below the largest measured count over which an anchored blend hands its
# measured range over to its anchor (`anchor_share`).
ANCHOR_SPAN = 1.0
# The blend's regimes, weights and members (`perfmodel._blend`).
REGIMES = ("weak", "strong", "straddling")
NEAR = {
    "weak": {"amdahl": 0.4, "weak_data_parallel": 0.4, "power_law": 0.2},
    "strong": {"amdahl": 0.1, "power_law": 0.4, "power_law_flat": 0.1, "usl": 0.4},
    "straddling": {"weak_hierarchical": 0.9, "power_law_flat": 0.1},
}
FAR = {
    "weak": {"weak_data_parallel": 0.5, "power_law_flat": 0.5},
    "strong": {"weak_data_parallel": 0.5, "power_law_flat": 0.5},
    "straddling": {"power_law_flat": 1.0},
}
# Past a stated node of G GPUs that no measurement reaches beyond, the weights move to
# PAST_NODE as c(N) = `past_node` grows (`node_weight`): the straddling regime's FAR, the
# curve a table that has crossed the node extrapolates with. On the 89 published tables
# measured within one node and beyond it, fitted within: MAPE past the node 6.65 / 9.99
# → 3.54 / 5.59 (external + fresh) and 11.55 / 18.40 → 8.54 / 16.75 (blind), each set
# choosing it alone (`benchmarks/extrapolation_research/node_points.py`).
PAST_NODE = FAR["straddling"]
# Every family fitted, in this order (weak_hierarchical only when straddling); those
# without weight in a regime still count in the spread of the intervals.
MEMBERS = ("amdahl", "weak_data_parallel", "power_law", "power_law_flat", "usl")
STRADDLING_MEMBERS = (*MEMBERS, "weak_hierarchical")
# The families an anchored blend may hand its measured range over to: each fitted to
# every measurement with equal weights ("_flat"); all but power_law_flat are an extra
# member with NEAR and FAR weights 0.
ANCHORS = ("amdahl_flat", "weak_data_parallel_flat", "usl_flat", "power_law_flat")
STRADDLING_ANCHORS = (*ANCHORS, "weak_hierarchical_flat")


def member_names(regime: str, anchor: str = "") -> tuple[str, ...]:
    """The families fitted in `regime`, in `Blend.members` order; an `anchor` that is
    not one of them comes last."""
    names = STRADDLING_MEMBERS if regime == "straddling" else MEMBERS
    return names if not anchor or anchor in names else (*names, anchor)


def anchor_names(regime: str) -> tuple[str, ...]:
    """The anchors a blend of `regime` may have (`ANCHORS`)."""
    return STRADDLING_ANCHORS if regime == "straddling" else ANCHORS


def rms(values) -> float:
    """Root-mean-square of `values` (the conformal r of a blend's log residuals)."""
    return float(np.sqrt(np.mean(np.asarray(values, dtype=np.float64) ** 2)))


# The conformal intervals of the default blend (`perfmodel._uncertainty.conformal`):
# s(N) = (max(d, MIN_DOUBLINGS) + KAPPA·D + LAMBDA·r + NODE_KAPPA·c(N) + DOWN·b(N))
# ·(1 + (INSIDE − 1)·a(N)), and the quantiles q_L of the normalised held-out scores for
# series of few (≤ 3) or many (≥ MANY_COUNTS) counts; c(N) = clip(log2(N/G), 0, 1) past
# a node of G GPUs that no measurement reaches beyond (`past_node`), else 0; b(N) the
# doublings below the smallest measured count (`below_doublings`); a(N) the anchor's
# ramp (`anchor_share`: 1 from half the largest measured count down, 0 from it up).
KAPPA = 8.0
LAMBDA = 20.0
NODE_KAPPA = 5.5
MIN_DOUBLINGS = 0.25
# Inside and below the measured range (2026-12-06): chosen on the shipped series left
# out one count at a time, the smallest INSIDE (step 0.05) whose 90% intervals hold 90% of
# their interior counts, then the smallest DOWN (step 0.25) holding 90% of their smallest
# counts (`benchmarks/extrapolation_research/interior.py`).
INSIDE = 1.55
DOWN = 0.5
MANY_COUNTS = 4
INTERVAL_Q = {
    "few": {0.5: 0.0128, 0.8: 0.0289, 0.9: 0.0462},
    "many": {0.5: 0.0093, 0.8: 0.0320, 0.9: 0.0348},
}


def serial(xp, time, n):
    """Amdahl's serial part: ``t_s`` at every N."""
    return time * xp.ones_like(n)


def compute(xp, time, n, weak: bool):
    """Parallel compute: ``t/N`` (strong scaling) or ``t`` (weak scaling)."""
    return time * xp.ones_like(n) if weak else time / n


def coherency(xp, time, n):
    """The USL's pairwise coordination: ``t_κ·(N − 1)``."""
    return time * (n - 1.0)


def weak_allreduce(xp, latency, transfer, n, algorithm: str):
    """A weak-scaled step's all-reduce per unit of work: ring
    ``t_lat·(N−1)/N + t_bw·(N−1)/N²``; tree ``t_lat·log2(N)/N + t_bw·(N−1)/N²``."""
    hops = (n - 1.0) if algorithm == "ring" else xp.log2(n)
    return latency * hops / n + transfer * (n - 1.0) / n**2


def node_split(xp, ranks, gpus_per_node):
    """``(l, m)``: ``l = min(ranks, G)`` ranks per node, ``m = max(ranks/G, 1)`` nodes."""
    return xp.minimum(ranks, gpus_per_node), xp.maximum(ranks / gpus_per_node, 1.0)


def weak_hierarchical_allreduce(xp, intra, inter, n, gpus_per_node):
    """A weak-scaled two-level all-reduce per unit of work:
    ``t_intra·(l−1)/(l·N) + t_inter·(m−1)/(m·l·N)``."""
    local, nodes = node_split(xp, n, gpus_per_node)
    return (intra * (local - 1.0) / local + inter * (nodes - 1.0) / (nodes * local)) / n


def power_log(xp, time, exponent, log_exponent, n):
    """A PMNF term ``c·N^i·log2(N)^j``, j ∈ {0, 1, 2} written out so that values and
    gradients stay finite at N = 1."""
    log2n = xp.log2(n)
    j = log_exponent
    logs = xp.where(j == 0, 1.0, xp.where(j == 1, log2n, log2n * log2n))
    return time * n**exponent * logs


def far_share(xp, gpus, largest):
    """The blend's t(N) = clip((log2(N/largest) − FAR_FROM)/(FAR_TO − FAR_FROM), 0, 1).

    The ends are found by comparing N with ``largest·2^FAR_FROM`` and
    ``largest·2^FAR_TO`` (exact for whole counts), not by clipping the logarithm: the
    ends are GPU counts every search evaluates, and whether a vectorised log2 lands
    on them exactly would decide dS/dN there (0, half or all of the ramp's slope).
    """
    ramp = (xp.log2(gpus / largest) - FAR_FROM) / (FAR_TO - FAR_FROM)
    near = gpus <= largest * 2.0**FAR_FROM
    far = gpus >= largest * 2.0**FAR_TO
    return xp.where(near, 0.0, xp.where(far, 1.0, ramp))


def anchor_share(xp, gpus, largest):
    """An anchored blend's a(N) = clip(log2(largest/N)/ANCHOR_SPAN, 0, 1): 1 from
    ``largest·2^−ANCHOR_SPAN`` down, 0 from the largest measured count up (so the curve
    past the measurements is the blend's alone), linear in log2 N between; the ends found
    by comparing N with them, as in `far_share`."""
    ramp = xp.log2(largest / gpus) / ANCHOR_SPAN
    inside = gpus <= largest * 2.0**-ANCHOR_SPAN
    past = gpus >= largest
    return xp.where(inside, 1.0, xp.where(past, 0.0, ramp))


def member_weight(anchored, far, inside_weight, near_weight, far_weight):
    """A blend member's weight at N: ``a·inside + (1 − a)·((1 − t)·near + t·far)``, with
    a = `anchor_share` (0 when the blend has no anchor) and t = `far_share`."""
    outside = (1.0 - far) * near_weight + far * far_weight
    return anchored * inside_weight + (1.0 - anchored) * outside


def carried_shares(xp, n, largest, here: list, there: list) -> list:
    """The weights with which a what-if carries its changed members' change of log time
    (`perfmodel._blend.Blend.carrying`): each member's weight at N (`here`), and past the
    largest measured count not below its weight there (`there`), so that a change keeps
    the share of the curve it had next to the measurements where the weights move on to
    members without the parameter.

    Each member's share is its own, whatever else changed: a change that does nothing
    (``x1``) moves nothing, the changes of two members add up (in log time), and a
    member that weighs w at N moves the curve as w times its own change there. (Scaling
    the shares down to a sum of 1 made the answer depend on what else was named: a
    no-op ``power.time=x1`` moved a halved serial time's −15.4% at 64 GPUs to −14.1%.)
    A parameter that several members have sums to at most 1 over them in every regime
    (`NEAR`, `FAR`: the strong regime's compute time, Amdahl's law 0.1 and the USL 0.4
    carried, `weak_data_parallel` 0.5 past two doublings).

    Without the carry a halved serial time moved only the counts where Amdahl's law and
    the USL still weigh, the one-GPU time among them: past them the speedup fell and the
    count worth buying with it (review H2, 2026-12-07).
    """
    past = n > largest
    return [xp.where(past, xp.maximum(w, w_there), w) for w, w_there in zip(here, there)]


def carried_overhead(xp, n, mixed, fitted, fitted_one, extra: list, before: list, after: list):
    """The curve past the measurements with a what-if's carried share beyond the weight
    at N (`carried_shares` minus it, `extra`) applied to its perfect scaling and its loss.

    ``û(N) = M(N)·Π_f F_f(N)^extra_f`` with M = `mixed` (the changed members at their
    weights at N) and ``F_f = (P(N)·u'_f(1)/u_f(1) + O(N)·O'_f(N)/O_f(N)) / û₀(N)``: the
    fitted curve û₀ (`fitted` at N, `fitted_one` at 1 GPU) split into perfect scaling
    P = û₀(1)/N and what it loses to it, O = û₀(N) − P, each moved as the member's law
    moves its own: its one-GPU time ``u_f(1)`` and its overhead ``O_f = u_f(N) − u_f(1)/N``
    (`before`, `after`: pairs of the member's seconds at N and at 1 GPU, fitted and
    changed). Amdahl's law, 40% of a curve at the largest measured count and, past an
    unmeasured node, 2.4% efficient at 4096 GPUs where the curve is 78%, moved that
    curve's time by its own halved serial part (×0.51^0.4) to 93% efficiency (review of
    the carry); its overhead ratio moves only the curve's 22% of overhead (82%). Where
    a member has no overhead (faster than perfect scaling from its own one GPU), its
    overhead's ratio is taken as 1.
    """
    perfect = fitted_one / n
    overhead = xp.maximum(fitted - perfect, 0.0)
    log_factor = 0.0
    for share, (b, b1), (a, a1) in zip(extra, before, after):
        was, now = b - b1 / n, a - a1 / n
        ok = (was > 0) & (now > 0)
        moved = xp.where(ok, xp.where(ok, now, 1.0) / xp.where(ok, was, 1.0), 1.0)
        factor = (perfect * (a1 / b1) + overhead * moved) / (perfect + overhead)
        log_factor = log_factor + share * xp.log(factor)
    return mixed * xp.exp(log_factor)


SCALING_LOSS = "scaling_loss"  # the breakdown name of what a power law loses (`power_parts`)


def power_parts(seconds, time, n) -> dict:
    """A blend's power law ``c·N^e`` as breakdown parts: ``compute`` = c/N, perfect
    scaling from its one-GPU time c, and `SCALING_LOSS` = c·N^e − c/N, what it loses to
    that (every cost that does not shrink as 1/N, not split into physical terms; < 0
    where e < −1, a superlinear fit). `seconds` is c·N^e at `n`."""
    ideal = time / n
    return {"compute": ideal, SCALING_LOSS: seconds - ideal}


def node_weight(past, weight, node_weight):
    """A blend member's weight at N past an unmeasured node: ``(1 − c)·w + c·w_node``,
    c = `past_node` (0 within the node, 1 from two nodes on), w its weight without the
    node (`member_weight`) and w_node its PAST_NODE weight."""
    return (1.0 - past) * weight + past * node_weight


def outside_doublings(xp, gpus, lo, hi):
    """Doublings of N outside the measured range [lo, hi]: ``log2(N/hi)`` above it,
    ``log2(lo/N)`` below, 0 inside, with derivative 0 at the ends (found by comparing
    N with them, as in `far_share`)."""
    above = xp.where(gpus > hi, xp.log2(gpus / hi), 0.0)
    below = xp.where(gpus < lo, xp.log2(lo / gpus), 0.0)
    return above + below


def conformal_scale(
    xp, gpus, largest, spread, rms, min_doublings, kappa, lam, node=0.0, smallest=None
):
    """s(N) = (max(log2(N/largest), MIN_DOUBLINGS) + κ·D(N) + λ·r + NODE_KAPPA·c(N)
    + DOWN·b(N))·(1 + (INSIDE − 1)·a(N)) (conformal intervals; c = `past_node`, 0 when
    `node` is 0; b = `below_doublings`, 0 when `smallest` is None; a = `anchor_share`).

    The first sum is calibrated on forecasts past the measurements; at and past the
    largest measured count a = b = 0, so it is the whole scale there. Inside the range
    and below it, left-out measurements missed by more than it says (at 90%: 80% of the
    shipped interior counts held, 59% of the smallest), hence INSIDE and DOWN.
    """
    scale = xp.maximum(xp.log2(gpus / largest), min_doublings) + kappa * spread + lam * rms
    if node:
        scale = scale + NODE_KAPPA * past_node(xp, gpus, node)
    if smallest is not None:
        scale = scale + DOWN * below_doublings(xp, gpus, smallest)
    return scale * (1.0 + (INSIDE - 1.0) * anchor_share(xp, gpus, largest))


def below_doublings(xp, gpus, smallest):
    """b(N) = log2(smallest/N) below the smallest measured count, 0 from it up (the end
    found by comparing N with it, as in `far_share`)."""
    return xp.where(gpus < smallest, xp.log2(smallest / gpus), 0.0)


def best_efficiency(gpus, time_s, one_gpu) -> float:
    """E: the best parallel efficiency measured against the one-GPU time `one_gpu`,
    ``max_i û(1)/(N_i·u_i)`` (u in the model's seconds per unit of work); above 1 only
    for superlinear data."""
    work = np.asarray(gpus, dtype=np.float64) * np.asarray(time_s, dtype=np.float64)
    return float(one_gpu) / float(np.min(work))


# A draw held at the floor only when below it by more than this (log): at one GPU they
# are equal, and rounding must not pick the floor's slope there in one path only.
FLOOR_TIE = 1e-12


def linear_floor(xp, gpus, one_gpu, efficiency, centre, centre_one):
    """The least seconds per unit of work an interval or a draw may reach at N GPUs, from
    its own one-GPU time T(1): ``T(1)/(N·max(1, E, Ê(N)))``: perfect scaling, or the best
    efficiency E measured where that is above 1 (`best_efficiency`), or the curve's own
    efficiency at N, ``Ê(N) = û(1)/(N·û(N))`` (`centre_one` = û(1)), where the curve
    itself is already past both. A speedup of N GPUs stays at most N·max(1, E, Ê(N)):
    without the floor a far extrapolation's upper bound reached 162% efficiency at 4096
    GPUs from one node's measurements, and with a floor of ``min(T(1)/(N·max(1, E)),
    û(N))`` a draw with a slow one-GPU time still reached 194% at 23 GPUs (its own T(1)
    against the curve's û(N)). The draw with T(1) = û(1) has the floor at or below û."""
    curve = centre_one / (gpus * centre)
    return one_gpu / (gpus * xp.maximum(xp.maximum(1.0, efficiency), curve))


def capped_one_gpu(xp, one_gpu, centre_one, efficiency):
    """A draw's one-GPU time as its floor (`linear_floor`) takes it: at most
    ``û(1)·max(1, 1/E)``, the slowest one-GPU time from which no measured count scales
    better than perfectly (``min_i N_i·u_i``, E = `best_efficiency`), and never below
    û(1) (`centre_one`). Uncapped, a draw slow at one GPU, where the intervals are wide
    (below the smallest measured count), lifted its time at a measured count by as much:
    BERT measured on 8–256 GPUs had a speedup interval of 197–238× at 256 GPUs; 231–238×
    capped (2026-12-06)."""
    return xp.minimum(one_gpu, centre_one * xp.maximum(1.0, 1.0 / efficiency))


# Points per doubling of a ramp at which `held_efficiency` holds the curve (`hold_points`).
HOLD_STEPS = 8


def hold_points(largest, node: float = 0.0) -> list:
    """The counts past the measurements whose efficiency the blend's curve holds
    (`held_efficiency`): the largest measured count, and `HOLD_STEPS` + 1 points on each
    ramp where the weights move with N (`far_share`'s, and `past_node`'s when there is an
    unmeasured node G), evenly spaced in log2 N. Between the ramps the weights are
    constant and every member's GPU-seconds per unit of work grow with N, so the mix's
    do too; on a ramp, weight moving to a member that is faster there made the step time
    of a weak-scaled table fall from 32 to 56 GPUs (0.577 → 0.571 s, review round 13)."""
    steps = [k / HOLD_STEPS for k in range(HOLD_STEPS + 1)]
    points = [largest]
    points += [largest * 2.0 ** (FAR_FROM + (FAR_TO - FAR_FROM) * r) for r in steps]
    if node:
        points += [node * 2.0**r for r in steps]
    return points


def held_efficiency(xp, gpus, u, held):
    """u(N) held to at least ``u(M)·M/N`` for every hold point M < N (`held`: pairs
    ``(M, u(M))``, M from `hold_points`): a forecast's efficiency (∝ 1/(N·u)) does not
    rise above the curve's own at a smaller count past the measurements, nor above its
    own at the last count measured. Within the measurements a table may scale
    superlinearly (caches, a per-GPU batch that fits better); past them, and past a node
    nothing measured, a rise is the members' extrapolated exponent alone (3% of
    superlinearity in one node read as "cheapest at 4096 GPUs, 110% efficient", review
    round 10), or weight moving between members along a ramp of the blend. On the
    published series the hold at the largest count moved 36 of 506 forecasts, the mean
    error per set by −0.06 to +0.03 points (`benchmarks/RESULTS.md`, "Efficiency held
    past the measurements")."""
    for count, u_count in held:
        u = xp.where(gpus > count, xp.maximum(u, u_count * count / gpus), u)
    return u


def sustained_slowdown(gpus, u) -> bool:
    """Whether the measurements are slower per unit of work at each of their last two
    steps: the per-count median of log `u` (seconds per unit of work) strictly rises over
    the three largest measured counts. One slower step may be a node crossing that the next
    node recovers (a DLPerf table measured 6862/s at 8 GPUs, 6018/s at 16 and 11618/s at
    32); two in a row are contention that grows with N, as the USL's coherency term
    (the SPEC SDM91 table, fastest at 72 and slower at 108, 144 and 216, was forecast
    "still speeding up at 4096 GPUs", review of 2026-12-07). `slowdown_hold` holds the
    forecast past such measurements."""
    gpus, u = np.asarray(gpus, float), np.asarray(u, float)
    counts = np.unique(gpus)
    if len(counts) < 3:
        return False
    log_u = np.log(u)  # the median of the logs, as the reference's (even replicates)
    last = [float(np.median(log_u[gpus == count])) for count in counts[-3:]]
    return last[0] < last[1] < last[2]


def slowdown_hold(xp, gpus, u, largest, u_largest):
    """u(N) held at least at `u_largest`, the curve's own at the `largest` measured
    count, past it: after a `sustained_slowdown` no forecast is faster than the last
    count measured. The blend's far weights go to power laws that cannot turn back up,
    so without it the curve fell again past the slowdown (SPEC SDM91: 0.48 scripts/s at
    216 CPUs, 0.92 forecast at 864 and 2.3 at 13824). On every set and protocol of
    README's accuracy table the hold changes one forecast, that series' (8.38% → 6.75%
    error; `benchmarks/RESULTS.md`, "Past a sustained slowdown")."""
    return xp.where(gpus > largest, xp.maximum(u, u_largest), u)


def serial_floor(xp, gpus, u, largest, serial):
    """u(N) held at least at `serial` past the `largest` measured count: under a fixed
    global batch (the "strong" regime) the time of the fixed work cannot fall below the
    costs that do not shrink with N (a gradient all-reduce moves about 2S bytes per GPU
    whatever N, and the serial part of the step stays), which Amdahl's law fitted to the
    measurements estimates as its serial part s (``u = s + p/N``). The FAR members (a
    power law c·N^e among them) have no such floor: a table read as "serial 23% of the
    step at 13 GPUs" was forecast 83× faster at 1024 GPUs than on one (review round 13).
    Inside the measured range the data decide; on every published set and protocol the
    floor binds at no held-out count (they lie at most 8× past the largest measured
    count; `benchmarks/RESULTS.md`, "A floor under strong scaling")."""
    return xp.where(gpus > largest, xp.maximum(u, serial), u)


def past_node(xp, gpus, node):
    """c(N) = clip(log2(N/G), 0, 1): 0 within one node of G GPUs, 1 from two nodes on,
    linear in log2 N between (so that the intervals stay continuous in N). A collective
    whose ring crosses nodes runs at the network's bandwidth however many nodes it spans,
    so what was not measured is as uncertain at two nodes as at eight. The ends are found
    by comparing N with G and 2G, as in `far_share`."""
    ramp = xp.log2(gpus / node)
    return xp.where(gpus <= node, 0.0, xp.where(gpus >= 2.0 * node, 1.0, ramp))


def node_size(gpus, gpus_per_node) -> int:
    """G: the data's node size at their largest measured count (2 or more), else 0."""
    if gpus_per_node is None:
        return 0
    values = np.broadcast_to(np.asarray(gpus_per_node, dtype=np.float64), np.shape(gpus))
    value = float(values[int(np.argmax(np.asarray(gpus, dtype=np.float64)))])
    return int(value) if value >= 2.0 else 0


def fixed_global_batch(global_batch) -> int | None:
    """The global batch when the measurements keep one fixed (a ``global_batch`` column
    with one value: strong scaling), else None: past that many GPUs a GPU would get less
    than one sample."""
    if global_batch is None:
        return None
    values = np.asarray(global_batch, dtype=np.float64).ravel()
    if values.size == 0 or not np.all(values == values[0]):
        return None  # it grows with the count (weak scaling): no limit
    return int(values[0]) if np.isfinite(values[0]) and values[0] >= 1 else None


def unmeasured_node(gpus, gpus_per_node) -> float:
    """G (`node_size`) when every measured count fits in one node of G GPUs, else 0:
    then nothing measured says what the network between nodes costs, and the intervals
    past G widen by NODE_KAPPA·c(N) (`past_node`).

    Every measurement must fit in its own row's node (a 4-GPU run on nodes of 2 crossed
    one, whatever the node at the largest count).

    NODE_KAPPA is the smallest (step 0.5) for which the 90% intervals hold 90% of the 177
    counts past one node of the 89 published tables measured within one node and beyond
    it (`benchmarks/external`, `benchmarks/fresh`, `benchmarks/blind`), fitted on the
    counts within, with the points of `PAST_NODE`: 50 / 80 / 90% intervals then hold
    0.63 / 0.85 / 0.91 of them, 0.90 at two nodes and at four (without it 0.31 / 0.59 /
    0.68). Learned on these tables, so in-sample;
    `benchmarks/extrapolation_research/node_intervals.py` prints that and what it holds
    on tables it was not learned on.
    """
    node = node_size(gpus, gpus_per_node)
    if not node:
        return 0.0
    n = np.asarray(gpus, dtype=np.float64)
    per_row = np.broadcast_to(np.asarray(gpus_per_node, dtype=np.float64), n.shape)
    return float(node) if np.all(n <= per_row) else 0.0


def data_node(data) -> float:
    """`unmeasured_node` of a fit's measurements (`Benchmarks`, or a saved fit's data)."""
    return unmeasured_node(data.gpus, data.config.get("gpus_per_node"))


def quantile(level: float, which: str = "many") -> float:
    """q_L of the normalised score at `level` from table `which` (module docstring)."""
    q = INTERVAL_Q[which]
    levels = [0.0, *sorted(q)]
    values = [0.0, *(q[k] for k in sorted(q))]
    if level <= levels[-1]:
        return float(np.interp(level, levels, values))
    normal = statistics.NormalDist()
    return values[-1] * normal.inv_cdf((1 + level) / 2) / normal.inv_cdf((1 + levels[-1]) / 2)


def scores(samples: int, seed: int, which: str = "many") -> np.ndarray:
    """ζ for `samples` ensemble members: a random sign times ``q_U`` (table `which`), U
    uniform on (0, 1), so that ``P(|ζ| ≤ q_L) = L`` at every level."""
    rng = np.random.default_rng(seed)
    levels = rng.uniform(0.0, 1.0, samples)
    signs = rng.choice([-1.0, 1.0], samples)
    q = INTERVAL_Q[which]
    grid = [0.0, *sorted(q)]
    values = np.interp(levels, grid, [0.0, *(q[k] for k in sorted(q))])  # `quantile`, at once
    tail = levels > grid[-1]
    values[tail] = [quantile(float(u), which) for u in levels[tail]]
    return signs * values


def one_gpu_scores(zeta) -> np.ndarray:
    """ζ₁: each ensemble member's score for its own one-GPU time where no single GPU was
    measured, the members' ζ in reverse order: drawn alike and paired with another
    member's ζ, so that the error of the forecast one-GPU time is independent of the
    error at N (the speedup's log error is their difference), the same in the JAX and the
    fit file's paths."""
    return np.asarray(zeta, dtype=np.float64)[::-1].copy()


def replicate_noise(data) -> tuple[float, int]:
    """σ and ν: the pooled standard deviation of log time among measurements of one
    configuration (the same GPU count and the same value in every other column),
    ``σ² = Σ_g Σ_i (log t_i − mean_g log t)² / ν``, ν = n − k for n measurements in k
    configurations: the pure error of the lack-of-fit test (Draper & Smith, *Applied
    Regression Analysis*, 3rd ed., §2.1), what a repeat of a measured run varies by,
    whatever the curve. (0, 0) where no configuration was measured twice."""
    gpus = np.asarray(data.gpus, dtype=np.float64)
    columns = [gpus] + [
        np.broadcast_to(np.asarray(v, dtype=np.float64), gpus.shape)
        for _, v in sorted(data.config.items())
    ]
    log_t = np.log(np.asarray(data.time_s, dtype=np.float64))
    _, group = np.unique(np.stack(columns, axis=1), axis=0, return_inverse=True)
    group = group.reshape(-1)
    dof = int(log_t.size - group.max() - 1)
    if dof <= 0:
        return 0.0, 0
    means = np.bincount(group, weights=log_t) / np.bincount(group)
    return float(np.sqrt(np.sum((log_t - means[group]) ** 2) / dof)), dof


def student_t_quantile(p: float, dof: int) -> float:
    """Quantile `p` ∈ (0.5, 1) of Student's t with a whole number `dof` ≥ 1 of degrees of
    freedom, by bisection on its closed-form two-sided probability ``A(t|ν)``
    (Abramowitz & Stegun 26.7.3–4: θ = atan(t/√ν); a finite sum in cos²θ), in NumPy-free
    Python for the JAX-free path; the normal quantile from ν = 1000 on."""
    if dof >= 1000:
        return statistics.NormalDist().inv_cdf(p)

    def two_sided(t: float) -> float:
        theta = math.atan(t / math.sqrt(dof))
        c2, s = math.cos(theta) ** 2, math.sin(theta)
        if dof % 2:  # odd: (2/π)(θ + sinθ·cosθ·(1 + 2/3·cos²θ + (2·4)/(3·5)·cos⁴θ + …))
            term, total = 1.0, 1.0 if dof > 1 else 0.0
            for k in range(1, (dof - 1) // 2):
                term *= c2 * (2 * k) / (2 * k + 1)
                total += term
            return 2.0 / math.pi * (theta + s * math.cos(theta) * total)
        term, total = 1.0, 1.0  # even: sinθ·(1 + ½cos²θ + (1·3)/(2·4)·cos⁴θ + …)
        for k in range(1, dof // 2):
            term *= c2 * (2 * k - 1) / (2 * k)
            total += term
        return s * total

    goal, lo, hi = 2.0 * p - 1.0, 0.0, 1.0
    while two_sided(hi) < goal:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if two_sided(mid) < goal else (lo, mid)
        if hi - lo <= 1e-12 * hi:
            break
    return 0.5 * (lo + hi)


def noise_half_width(level: float, sigma: float, dof: int) -> float:
    """``t_{(1+L)/2, ν}·σ``: the half-width, in log time, of the `level` interval of one
    new measurement about its configuration's mean (`replicate_noise`); 0 without
    repeats. Added in quadrature to the conformal half-width ``q_L·s(N)``, whose scores
    are errors of the curve on published tables that repeat no run: a table whose
    repeats scatter by ±13% had a 90% interval (±9%) that held neither of its two
    measurements at its largest count (review of 2026-12-07)."""
    if dof <= 0 or sigma <= 0.0:
        return 0.0
    return student_t_quantile(0.5 * (1.0 + level), dof) * sigma
