"""The same physics whatever the column: measurements as seconds per unit of work.

Throughput (work per second), seconds per unit of work and seconds per step of a fixed
global batch all describe how fast a fixed amount of work gets done: seconds per unit
of work ``u ∝ 1/throughput ∝ t``. Step times of a fixed batch per GPU do not: a step
of N GPUs does N times the work, ``u ∝ t/N``. Which one a time column holds is what
the user states (`Benchmarks.scaling`: ``"strong"`` is a fixed global batch), or else
what the measurements show: weak-scaling step times stay flat or rise with N, while
times per unit of work fall about as 1/N. The rule: a least-squares log-log slope of
the time against N above `WEAK_STEP_SLOPE` is a step time of a fixed per-GPU batch.

On the 372 time columns of the shipped and external series (every throughput series
as seconds per unit of work and as seconds per step, every protocol's training counts)
the rule is right every time: per-unit slopes are at most −0.37, step-time slopes at
least −0.16 (`docs/design/extrapolation.md`). It fails for per-unit times of a table
that gains less than N^0.25 (parallel efficiency below 18% at 8 GPUs).
"""

import dataclasses

import numpy as np

from .._data import Benchmarks

SCALINGS = ("weak", "strong")
WEAK_STEP_SLOPE = -0.25


def log_log_slope(data: Benchmarks) -> float:
    """Least-squares slope of log(time) against log(GPUs) over the measurements."""
    if len(np.unique(data.gpus)) < 2:
        return -1.0
    return float(np.polyfit(np.log(data.gpus), np.log(data.time_s), 1)[0])


def per_unit_of_work(data: Benchmarks) -> tuple[Benchmarks, str]:
    """`data` with `time_s` proportional to seconds per unit of work, and a sentence
    saying what was assumed and why.

    Throughput and per-GPU data are returned as they are. A time column stated to be a
    fixed global batch (``scaling="strong"``) is per unit of work already; otherwise the
    slope rule of the module decides, and step times of a fixed per-GPU batch become
    ``per_gpu`` data (`time_s` divided by the GPU count).
    """
    if data.target == "throughput":
        return data, f"read {data.unit} as work per second"
    if data.per_gpu:
        return data, "step times of a fixed per-GPU batch, divided by the GPU count"
    if data.scaling == "strong":
        return data, "a fixed global batch (stated): the time of a step is per unit of work"
    slope = log_log_slope(data)
    said = "stated weak scaling; " if data.scaling == "weak" else ""
    if slope > WEAK_STEP_SLOPE:
        converted = dataclasses.replace(data, time_s=data.time_s / data.gpus, per_gpu=True)
        return converted, (
            f"{said}time against GPUs has a log-log slope of {slope:.2f} (> "
            f"{WEAK_STEP_SLOPE}): the step time of a fixed per-GPU batch, so work grows "
            "with the GPUs"
        )
    return data, (
        f"{said}time against GPUs has a log-log slope of {slope:.2f} (≤ {WEAK_STEP_SLOPE}): "
        "seconds per unit of work, or per step of a fixed global batch"
    )
