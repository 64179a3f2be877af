"""The time-to-train part of a report: what a time-to-train fit answers, beside its step.

A time-to-train fit (`perfmodel fit --time-to-train`, MLPerf logs) is a step-time fit and
a critical-batch fit of the work to the target, ``E(B) = E_min·(1 + B/B_noise)``
(McCandlish et al. 2018). Its question is the GPU count *and* global batch that train
fastest or cheapest (`perfmodel.plan_training`, as ``perfmodel optimal --objective
time-to-train`` answers it), not the fastest step; these tables say that, how well the
runs are reproduced, and the best batch at each GPU count.
"""

import math

import numpy as np

from .._convergence import MIN_GAIN, plan_training, TimeToTrainFit
from .._levels import level_text
from .._text import counted


def _seconds(value: float) -> str:
    """``67.61 s``, ``1.52 h``: times to train read in the unit a person would use."""
    if value is None or not math.isfinite(value):
        return "—"
    if value >= 2 * 3600:
        return f"{value / 3600:.3g} h"
    if value >= 120:
        return f"{value / 60:.3g} min"
    return f"{value:.4g} s"


def _interval(lo: float, hi: float) -> str:
    return f"{_seconds(lo)} – {_seconds(hi)}"


def summary_lines(fit: TimeToTrainFit, level: float) -> list[str]:
    """The convergence fit in two sentences."""
    lo, hi = fit.noise_batch_interval(level)
    data = fit.runs.data
    return [
        f"Time to train of {data.gpus.size} runs trained to the target: steps to the target "
        f"from the critical batch E = E_min·(1 + B/B_noise), B_noise = {fit.noise_batch:.4g} "
        f"samples ({level_text(level)} interval {lo:.4g}–{hi:.4g}), E_min = {fit.work_min:.4g} "
        f"{fit.work_unit}; seconds per step from the {fit.step.family} fit below.",
    ]


def answer_rows(fit: TimeToTrainFit, level: float, max_gpus: int = 4096) -> list[dict]:
    """Fastest and cheapest (GPU count, global batch), the knee, the critical batch."""
    fastest = plan_training(fit, objective="time", level=level, max_gpus=max_gpus)
    cheapest = plan_training(fit, objective="cost", level=level, max_gpus=max_gpus)
    rows = []
    for label, found in (("fastest to train", fastest), ("cheapest to train", cheapest)):
        hours = found.gpus * found.time_to_train_s / 3600.0
        # The cost plan's reason restates the answer; keep only what it adds.
        reason = found.reason.partition("; ")[2] if label.startswith("cheapest") else found.reason
        rows.append(
            {
                "question": label,
                "answer": f"{counted(found.gpus, 'GPU')} at global batch {found.global_batch:g}"
                + _outside(fit, found.gpus, found.global_batch),
                "detail": f"{_seconds(found.time_to_train_s)} to the target ({level_text(level)} "
                f"interval {_interval(*found.time_interval_s)}), "
                f"{counted(hours, 'GPU-hour', '.4g')}, "
                f"{found.steps:.4g} steps" + (f"; {reason}" if reason else ""),
            }
        )
    if fastest.knee_gpus is not None:
        rows.append(
            {
                "question": "diminishing returns",
                "answer": f"past {counted(fastest.knee_gpus, 'GPU')}",
                "detail": "a doubling of the GPUs (with the best batch at each count) saves "
                f"less than {MIN_GAIN:.0%} of the time to train",
            }
        )
    return rows


def _outside(fit: TimeToTrainFit, gpus: float, batch: float) -> str:
    """`` (extrapolated: …)`` when (`gpus`, `batch`) lies outside the runs' range."""
    data = fit.runs.data
    batches = np.asarray(data.config["global_batch"], float)
    said = []
    if not data.gpus.min() <= gpus <= data.gpus.max():
        said.append(f"runs at {data.gpus.min():g}–{data.gpus.max():g} GPUs")
    if not batches.min() <= batch <= batches.max():
        said.append(f"global batch {batches.min():g}–{batches.max():g}")
    return f" (extrapolated: {' and '.join(said)} measured)" if said else ""


def run_rows(fit: TimeToTrainFit) -> list[dict]:
    """Every run: its measured time to train against the model's, at its own batch."""
    data = fit.runs.data
    batch = np.asarray(data.config["global_batch"], float)
    predicted = fit.predict(data.gpus, batch, None)["time_to_train_s"]
    lines = data.lines if data.lines is not None else [None] * data.gpus.size
    rows = []
    for line, n, b, measured, model in zip(lines, data.gpus, batch, data.time_s, predicted):
        row = {} if line is None else {"line": int(line)}
        row.update(
            {
                "gpus": f"{n:g}",
                "global_batch": f"{b:g}",
                "measured time to train": _seconds(float(measured)),
                "model": _seconds(float(model)),
                "error": f"{(model / measured - 1.0):+.1%}",
            }
        )
        rows.append(row)
    return rows


def best_batch_curve(plan) -> dict[str, np.ndarray]:
    """At every GPU count of a `TrainingPlan`'s grid: the global batch that trains fastest
    and its time to train (s); counts where no batch of the grid is valid are left out."""
    times = np.where(np.isfinite(plan.time_grid_s), plan.time_grid_s, np.inf)
    ok = np.isfinite(times).any(axis=1)
    best = np.argmin(times[ok], axis=1)
    return {
        "gpus": np.asarray(plan.gpus_grid, float)[ok],
        "global_batch": np.asarray(plan.batch_grid, float)[best],
        "time_to_train_s": times[ok][np.arange(best.size), best],
    }


def _ran_at(fit: TimeToTrainFit, gpus: float, best: float) -> str:
    """`` (measured)`` after a measured count whose runs used the best batch, else
    `` (measured at global_batch 912)``: "8 (measured) | 512" read as if batch 512 had
    run there (newcomer review of 2026-12-07)."""
    batches = fit.runs.data.config.get("global_batch")
    if batches is None:
        return " (measured)"
    ran = np.unique(np.asarray(batches, dtype=np.float64)[fit.runs.data.gpus == gpus])
    if ran.size == 1 and ran[0] == best:
        return " (measured)"
    return f" (measured at global_batch {', '.join(f'{b:g}' for b in ran)})"


def best_batch_rows(fit: TimeToTrainFit, max_gpus: int = 4096) -> list[dict]:
    """The batch that trains fastest at each power-of-two GPU count and measured count."""
    curve = best_batch_curve(plan_training(fit, objective="time", level=None, max_gpus=max_gpus))
    measured = set(np.unique(fit.runs.data.gpus).tolist())
    rows = []
    for n, batch, seconds in zip(curve["gpus"], curve["global_batch"], curve["time_to_train_s"]):
        power = n >= 1 and math.log2(n) == int(math.log2(n))
        if not (power or n in measured):
            continue
        rows.append(
            {
                "gpus": f"{n:g}" + (_ran_at(fit, n, batch) if n in measured else ""),
                "best global batch": f"{batch:g}",
                "time to train": _seconds(float(seconds)),
                "GPU-hours": f"{n * seconds / 3600.0:.4g}",
            }
        )
    return rows
