"""Published scaling models, as baselines for `accuracy.py` (NumPy and SciPy only).

Every baseline is a function ``fit_X(gpus, measured, target, **info) -> predict`` where
`measured` is the quantity as measured — work per second when ``target ==
"throughput"``, seconds otherwise — and ``predict(gpus)`` returns the same quantity at
other GPU counts. `info` carries what a CSV may state: ``gpus_per_node`` (one value)
and ``strong`` (True when the global batch is fixed, False for a fixed per-GPU batch;
the default, None, means weak scaling, which every published throughput table here is).

Seconds per unit of work (``1/throughput``) and seconds per step are the same physics:
with a fixed per-GPU batch b a step of N GPUs does ``b·N`` units of work, so the step
time is proportional to ``N/throughput``; with a fixed global batch it is proportional
to ``1/throughput``. The baselines that model a step (Pollux, Optimus) use the first by
default and the second with ``strong=True``; the constant factor (b or the global
batch) is unknown and does not matter to them (Pollux's loss is in log time and its
priors are ratios; Optimus' least squares scale with it).

The laws:

* Amdahl's law, least squares on the measured quantity: throughput
  ``X(N) = X1·N/(1 + s(N−1))``, time ``t(N) = t_s + t_p/N`` (Amdahl 1967).
* USL, least squares on the measured quantity: ``X(N) = γN/(1 + σ(N−1) + κN(N−1))``,
  time ``1/X`` (Gunther 1993, "Guerrilla Capacity Planning", 2007).
* Ernest (Venkataraman et al., "Ernest: Efficient Performance Prediction for
  Large-Scale Advanced Analytics", NSDI'16, §3.2): job time
  ``θ0 + θ1·(scale/machines) + θ2·log(machines) + θ3·machines`` with θ ≥ 0 by
  non-negative least squares (`scipy.optimize.nnls`) on time. For a fixed input (the
  work of one unit) scale is constant and the features are ``1, 1/N, log N, N``; on
  throughput data it is fitted to seconds per unit of work, ``1/X``.
* Power law ``t(N) = a·N^−b`` (``X = N^b/a``), least squares in log-log.
* Pollux (Qiao et al., "Pollux: Co-adaptive Cluster Scheduling for Goodput-Optimized
  Deep Learning", OSDI'21, §3.2, and its code, petuum/adaptdl
  ``adaptdl/adaptdl/goodput.py``): see `fit_pollux`.
* Optimus (Peng et al., "Optimus: An Efficient Dynamic Resource Scheduler for Deep
  Learning Clusters", EuroSys'18, §3.2): see `fit_optimus`.
* `fit_loo_classic`: among Amdahl, USL, Ernest and the power law, the one with the
  smallest leave-one-GPU-count-out error on the training counts.
"""

import math

import numpy as np
from scipy.optimize import curve_fit, minimize, nnls

EPS = 1e-8  # goodput.py's lower bound of every time parameter (and its "no sync" time)


def _arrays(gpus, measured):
    n, y = np.asarray(gpus, float), np.asarray(measured, float)
    if n.shape != y.shape or n.size == 0:
        raise ValueError("gpus and measured must be non-empty arrays of one shape")
    if np.any(n < 1) or np.any(~(y > 0)):
        raise ValueError("gpus must be ≥ 1 and measured > 0")
    return n, y


def _time_per_unit(y, target):
    """Seconds per unit of work (throughput) or seconds (time) from the measured."""
    return 1.0 / y if target == "throughput" else y


def _as_measured(t, target):
    t = np.asarray(t, float)
    with np.errstate(divide="ignore"):
        return 1.0 / t if target == "throughput" else t


# Amdahl, USL ---------------------------------------------------------------------


def _x_amdahl(n, x1, s):
    return x1 * n / (1.0 + s * (n - 1.0))


def _x_usl(n, gamma, sigma, kappa):
    return gamma * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))


def _t_amdahl(n, t_s, t_p):
    return t_s + t_p / n


def _t_usl(n, gamma, sigma, kappa):
    return 1.0 / _x_usl(n, gamma, sigma, kappa)


def fit_amdahl(gpus, measured, target="throughput", **info):
    """Amdahl's law by least squares on the measured quantity (`curve_fit`)."""
    return _least_squares("amdahl", *_arrays(gpus, measured), target)


def fit_usl(gpus, measured, target="throughput", **info):
    """USL by least squares on the measured quantity (`curve_fit`)."""
    return _least_squares("usl", *_arrays(gpus, measured), target)


def _least_squares(law, n, y, target):
    # Least squares on y / median(y): the same minimiser, but curve_fit's tolerances
    # behave for seconds per unit of work of 1e-5 as for images per second of 1e4.
    unit = float(np.median(y))
    fitted = _least_squares_scaled(law, n, y / unit, target)
    return lambda m: fitted(m) * unit


def _least_squares_scaled(law, n, y, target):
    one = float(np.median(y[n == n.min()]) * (n.min() if target == "throughput" else 1.0))
    if target == "throughput":
        if law == "amdahl":
            f, p0, bounds = _x_amdahl, [[one, 0.01]], ([0, 0], [np.inf, 1])
        else:
            f, p0 = _x_usl, [[one, 0.01, 1e-4], [one, 0.1, 1e-6]]
            bounds = ([0, 0, 0], [np.inf, 1, np.inf])
    elif law == "amdahl":
        t1 = one * n.min()
        f, p0, bounds = _t_amdahl, [[0.05 * t1, 0.95 * t1]], ([0, 0], [np.inf, np.inf])
    else:
        f, p0 = _t_usl, [[1.0 / (one * n.min()), 0.01, 1e-4]]
        bounds = ([0, 0, 0], [np.inf, 1, np.inf])
    best, best_cost = None, np.inf
    for start in p0:
        try:
            p, _ = curve_fit(f, n, y, p0=start, bounds=bounds, maxfev=20000)
        except (RuntimeError, ValueError):
            continue
        cost = float(np.sum((f(n, *p) - y) ** 2))
        if cost < best_cost:
            best, best_cost = p, cost
    if best is None:
        raise RuntimeError(f"{law} least squares did not converge")
    return lambda m: f(np.asarray(m, float), *best)


# Ernest ---------------------------------------------------------------------------


def ernest_features(n):
    """Ernest's features for a fixed input: ``1, 1/N, log N, N``."""
    n = np.asarray(n, float)
    return np.stack([np.ones_like(n), 1.0 / n, np.log(n), n], axis=-1)


def fit_ernest(gpus, measured, target="throughput", **info):
    """Ernest: NNLS of time on ``1, 1/N, log N, N`` (seconds per unit of work for
    throughput), θ ≥ 0."""
    n, y = _arrays(gpus, measured)
    t = _time_per_unit(y, target)
    scale = float(np.median(t))  # NNLS is scale-equivariant; this keeps it well scaled
    theta, _ = nnls(ernest_features(n), t / scale)
    theta = theta * scale

    def predict(m):
        return _as_measured(ernest_features(m) @ theta, target)

    predict.theta = theta
    return predict


# Power law ------------------------------------------------------------------------


def fit_power_law(gpus, measured, target="throughput", **info):
    """``t = a·N^−b`` by least squares of log t on log N (b unbounded)."""
    n, y = _arrays(gpus, measured)
    t = _time_per_unit(y, target)
    if len(np.unique(n)) < 2:
        raise RuntimeError("a power law needs two GPU counts")
    slope, intercept = np.polyfit(np.log(n), np.log(t), 1)

    def predict(m):
        return _as_measured(np.exp(intercept + slope * np.log(np.asarray(m, float))), target)

    predict.a, predict.b = float(np.exp(intercept)), float(-slope)
    return predict


# Pollux ---------------------------------------------------------------------------

# goodput.py's PerfParams, less the compute split: alpha_c + beta_c·local_bsz is one
# time t_grad here (see fit_pollux).
POLLUX_NAMES = ("t_grad", "alpha_n", "beta_n", "alpha_r", "beta_r", "gamma")


def pollux_step_time(params, nodes, replicas):
    """Pollux's step time ``(T_grad^γ + T_sync^γ)^(1/γ)``.

    ``T_sync = α_n + β_n·max(N−2, 0)`` when the replicas span nodes, ``α_r +
    β_r·max(N−2, 0)`` when they share one, and (nearly) 0 for one replica, as in
    goodput.py's ``_predict_network_time`` (whose ``max(N − 2, 1e-8)`` is kept).
    """
    t_grad, alpha_n, beta_n, alpha_r, beta_r, gamma = params
    nodes, replicas = np.asarray(nodes, float), np.asarray(replicas, float)
    inter, intra = nodes > 1, replicas > 1
    alpha = np.where(inter, alpha_n, np.where(intra, alpha_r, EPS))
    beta = np.where(inter, beta_n, np.where(intra, beta_r, EPS))
    t_sync = alpha + beta * np.maximum(replicas - 2.0, EPS)
    return (t_grad**gamma + t_sync**gamma) ** (1.0 / gamma)


def _pollux_objective(params, nodes, replicas, step):
    t_grad, alpha_n, beta_n, alpha_r, beta_r, gamma = params
    predicted = pollux_step_time(params, nodes, replicas)
    rmsle = np.sqrt(np.mean((np.log(predicted) - np.log(step)) ** 2))
    reg_gamma = 1e-3 * (gamma - 1.0) ** 2
    reg_retrogress = 1e-2 * ((beta_n / alpha_n) ** 2 + (beta_r / alpha_r) ** 2)
    return rmsle + reg_gamma + reg_retrogress


def fit_pollux(
    gpus, measured, target="throughput", *, gpus_per_node=None, strong=None, two_level=True, **info
):
    """Pollux's throughput model, fitted as goodput.py's ``fit_perf_params`` does.

    Step time ``T_iter = (T_grad^γ + T_sync^γ)^(1/γ)``, γ ∈ [1, 10] (γ = 1: no overlap of
    compute and synchronisation; large γ: full overlap), with ``T_sync`` affine in the
    number of replicas N: ``α + β·(N − 2)``, with (α_n, β_n) when the replicas span
    several nodes and (α_r, β_r) inside one (two levels across the node boundary; with
    ``two_level=False`` or no `gpus_per_node` every count is taken as one node, one
    level). Throughput is ``b·N / T_iter``.

    Loss, bounds and priors as in goodput.py: root-mean-square log error of the step
    time, plus ``1e-3·(γ − 1)²`` (towards less overlap) and ``1e-2·((β_n/α_n)² +
    (β_r/α_r)²)`` (towards less retrogression); every time ≥ 1e-8, γ in [1, 10]; start
    0.1, 0.01 for each (α, β) and 1.001 for γ; L-BFGS-B (SciPy's `minimize` with bounds,
    as goodput.py), gradients by finite differences (goodput.py uses autograd). The
    (α, β) of a level without measurements are fixed at their lower bound, and both β
    when no count exceeds 2; without multi-node measurements the inter-node pair is
    then raised to 1.1 × the intra-node one (goodput.py's prior that inter-node sync is
    slower).

    Our measurements have only the total step time: goodput.py also fits the time of an
    accumulation step (``α_c + β_c·local_bsz``) to its own measurements, and with one
    local batch fixes α_c to half of it. Here the compute time of a step at the fixed
    per-GPU batch is one free parameter, ``T_grad`` (started at the median step time of
    the fewest GPUs); with ``strong=True`` (a fixed global batch) the local batch is
    ``B/N`` and ``T_grad = α_c + β_c·B/N`` keeps both. Step times are rescaled so the
    median at the fewest GPUs is 1 (goodput.py's bounds and starts are in seconds of
    real steps, which are of that order); predictions are scaled back.
    """
    n, y = _arrays(gpus, measured)
    per_unit = _time_per_unit(y, target)
    # Step time up to a constant: b·N·(seconds per unit) for weak scaling, B·(seconds
    # per unit) for strong scaling.
    step = per_unit * (1.0 if strong else n)
    scale = float(np.median(step[n == n.min()]))
    step = step / scale
    if two_level and gpus_per_node is not None:
        g = float(np.atleast_1d(gpus_per_node)[0])
        nodes_of = lambda m: np.ceil(np.asarray(m, float) / g)  # noqa: E731
    else:
        nodes_of = lambda m: np.ones_like(np.asarray(m, float))  # noqa: E731
    nodes = nodes_of(n)

    if strong:
        # T_grad = alpha_c + beta_c·(1/N) in units of the global batch.
        def unpack(q):
            return (q[0] + q[6] / n, *q[1:6])

        start = [0.5, 0.1, 0.01, 0.1, 0.01, 1.001, 0.5]
        lower = [EPS, EPS, EPS, EPS, EPS, 1.0, EPS]
        upper = [np.inf] * 5 + [10.0, np.inf]
    else:

        def unpack(q):
            return tuple(q)

        start = [float(np.median(step[n == n.min()])), 0.1, 0.01, 0.1, 0.01, 1.001]
        lower = [EPS, EPS, EPS, EPS, EPS, 1.0]
        upper = [np.inf] * 5 + [10.0]
    fixed = set()
    if not np.any(nodes > 1):
        fixed |= {1, 2}
    if not np.any((nodes == 1) & (n > 1)):
        fixed |= {3, 4}
    if not np.any(n > 2):
        fixed |= {2, 4}
    for i in fixed:
        start[i] = lower[i]
    free = [i for i in range(len(start)) if i not in fixed]

    def full(z):
        q = np.array(start, float)
        q[free] = z
        return q

    def objective(z):
        q = full(z)
        return _pollux_objective(unpack(q), nodes, n, step)

    result = minimize(
        objective,
        np.array(start, float)[free],
        method="L-BFGS-B",
        bounds=[(lower[i], upper[i]) for i in free],
    )
    q = full(result.x)
    if not np.any(nodes > 1):
        q[1] = max(q[1], q[3] * 1.1)
        q[2] = max(q[2], q[4] * 1.1)

    def predict(m):
        m = np.asarray(m, float)
        if strong:
            params = (q[0] + q[6] / m, *q[1:6])
        else:
            params = tuple(q)
        step_m = pollux_step_time(params, nodes_of(m), m) * scale
        return _as_measured(step_m / (1.0 if strong else m), target)

    predict.params = dict(zip(POLLUX_NAMES + (("beta_c",) if strong else ()), q))
    return predict


# Optimus --------------------------------------------------------------------------


def fit_optimus(gpus, measured, target="throughput", *, strong=None, **info):
    """Optimus' speed function of synchronous data-parallel training, by NNLS.

    Optimus models the training speed (steps per second) of a job with p parameter
    servers and w workers and a global batch M as ``f(p, w) = (θ0·M/w + θ1 + θ2·w/p +
    θ3·w + θ4·p)^−1``, θ ≥ 0, fitted by non-negative least squares on the step time
    ``1/f``. With an all-reduce there are no parameter servers: at fixed p the terms
    ``θ2·w/p`` and ``θ4·p`` are ``θ3'·w`` and a constant, so the step time is
    ``θ0·M/w + θ1 + θ3·w`` over w = N GPUs. With a fixed per-GPU batch b (weak
    scaling, the default) ``M = b·N`` and the first term is a constant too: step time
    ``θ1 + θ3·N``. Fitted to the step time up to a constant (``N/X``, or ``1/X`` with
    ``strong=True``); the form was taken from the paper as recalled in this module's
    review, not re-read from its text (no copy was found): see `benchmarks/RESULTS.md`.
    """
    n, y = _arrays(gpus, measured)
    per_unit = _time_per_unit(y, target)
    step = per_unit * (1.0 if strong else n)
    scale = float(np.median(step))

    def features(m):
        m = np.asarray(m, float)
        columns = [np.ones_like(m), m] + ([1.0 / m] if strong else [])
        return np.stack(columns, axis=-1)

    theta, _ = nnls(features(n), step / scale)

    def predict(m):
        m = np.asarray(m, float)
        step_m = features(m) @ theta * scale
        return _as_measured(step_m / (1.0 if strong else m), target)

    predict.theta = theta * scale  # (θ1, θ3[, θ0·M]) of the step time up to its constant
    return predict


# Leave-one-out among the classic laws ---------------------------------------------

CLASSIC = {
    "amdahl": fit_amdahl,
    "usl": fit_usl,
    "ernest": fit_ernest,
    "power_law": fit_power_law,
}
CLASSIC_PARAMETERS = {"amdahl": 2, "usl": 3, "ernest": 4, "power_law": 2}


def loo_errors(gpus, measured, target="throughput", laws=CLASSIC, **info):
    """Mean absolute relative error of each law predicting each training GPU count
    from the others (inf where a fold fails or has fewer counts than the law's
    parameters, Ernest excepted: NNLS takes any number)."""
    n, y = _arrays(gpus, measured)
    counts = np.unique(n)
    errors = {}
    for name, fit in laws.items():
        k = CLASSIC_PARAMETERS.get(name, 2)
        if name != "ernest" and len(counts) - 1 < k:
            errors[name] = math.inf
            continue
        folds = []
        try:
            for c in counts:
                keep = n != c
                predict = fit(n[keep], y[keep], target, **info)
                p = predict(n[~keep])
                folds.append(np.mean(np.abs(p - y[~keep]) / y[~keep]))
        except (RuntimeError, ValueError, np.linalg.LinAlgError):
            errors[name] = math.inf
            continue
        value = float(np.mean(folds))
        errors[name] = value if np.isfinite(value) else math.inf
    return errors


def fit_loo_classic(gpus, measured, target="throughput", **info):
    """The classic law (Amdahl, USL, Ernest, power law) with the smallest
    leave-one-GPU-count-out error on the training counts (`loo_errors`), refitted to
    all of them; ties go to the earlier law. ``predict.law`` names it."""
    errors = loo_errors(gpus, measured, target, **info)
    lowest = min(errors.values())
    # ties (within 1e-6 of a relative error, e.g. Ernest with only its 1 and 1/N terms is Amdahl's
    # law) go to the earlier, simpler law
    law = next(name for name in CLASSIC if errors[name] <= lowest + 1e-6)
    if not math.isfinite(errors[law]):
        law = "amdahl"
    predict = CLASSIC[law](gpus, measured, target, **info)

    def chosen(m):
        return predict(m)

    chosen.law = law
    return chosen


BASELINES = {
    "ernest": fit_ernest,
    "power law": fit_power_law,
    "pollux (1 level)": lambda *a, **k: fit_pollux(*a, **{**k, "two_level": False}),
    "pollux (2 levels)": fit_pollux,
    "optimus": fit_optimus,
    "loo classic": fit_loo_classic,
}
