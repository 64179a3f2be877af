"""The same physics whatever the column: measurements as seconds per unit of work.

Throughput (work per second), seconds per unit of work and seconds per step of a fixed
global batch all describe how fast a fixed amount of work gets done: seconds per unit
of work ``u ∝ 1/throughput ∝ t``. Step times of a fixed batch per GPU do not: a step
of N GPUs does N times the work, ``u ∝ t/N``. Which one a time column holds is what
the user states (`Benchmarks.scaling`: ``"strong"`` is a fixed global batch), or else
what the measurements show: weak-scaling step times stay flat or rise with N, while
times per unit of work fall about as 1/N. The rule: a least-squares log-log slope of
the time against N above `WEAK_STEP_SLOPE` is a step time of a fixed per-GPU batch,
unless it ends more than `SUPERLINEAR_GAIN` times shorter than it starts (that batch would
scale superlinearly: one global batch is read instead, when weak scaling is not stated).

On the 372 time columns of the shipped and external series (every throughput series
as seconds per unit of work and as seconds per step, every protocol's training counts)
the rule is right every time: per-unit slopes are at most −0.37, step-time slopes at
least −0.16 (`docs/design/extrapolation.md`). It fails for per-unit times of a table
that gains less than N^0.25 (parallel efficiency below 18% at 8 GPUs).

A family whose formula reads the global batch (`batch_linear`'s ``a + c·B/N``, the
hybrid families) already shares each run's batch over its GPUs: its times stay seconds per
step, whatever the scaling, or the work would be counted twice. Rows at one GPU count that
differ in the batch or the layout (`WORKLOAD_COLUMNS`) are different workloads; a family
that does not read those columns cannot tell them from noise (`mixed_workloads`).
"""

import dataclasses

import numpy as np

from .._config import WORKLOAD_FIELDS
from .._data import Benchmarks
from .._model import AbstractScalingModel
from .._reads import model_fields
from .._text import counted

SCALINGS = ("weak", "strong")
WEAK_STEP_SLOPE = -0.25
# A time column that falls slower than the slope rule's N^-0.25 but ends this many times
# shorter than it starts (median at the largest count against the smallest) would, as
# steps of a fixed per-GPU batch, be that much superlinear: it is read as a fixed global
# batch unless weak scaling is stated. The corpus's step columns reach 1.37 (a DGX-2 BERT
# table, `benchmarks/extrapolation_research/unit_rule.py`); 10, 7, 6, 5.8, 5.9 s on
# 1-16 GPUs (1.69) was read as weak scaling and answered "Buy 64 GPUs, efficiency 102%".
SUPERLINEAR_GAIN = 1.5
# Columns that say what a run computes or how it is laid out, global batch first: rows
# at one GPU count that differ in them are different runs, not repeats. Micro-batches
# are left out: at a fixed micro-batch size they follow the global batch (a ramp-up).
WORKLOAD_COLUMNS = tuple(
    dict.fromkeys(
        ("global_batch", "tp", "pp", *WORKLOAD_FIELDS["hybrid"], *WORKLOAD_FIELDS["hybrid_basic"])
    )
)


def workload_read(model: AbstractScalingModel) -> frozenset[str]:
    """The `WORKLOAD_COLUMNS` that `model`'s formula reads, traced (`model_fields`):
    ``global_batch`` for `batch_linear`, tp and pp for `data_parallel` (its all-reduce
    spans gpus/(tp·pp) ranks), the shape and layout for the hybrid families, none for a
    `Blend` or a family of the GPU count alone."""
    return model_fields(model) & frozenset(WORKLOAD_COLUMNS)


def log_log_slope(data: Benchmarks) -> float:
    """Least-squares slope of log(time) against log(GPUs) over the measurements."""
    if len(np.unique(data.gpus)) < 2:
        return -1.0
    return float(np.polyfit(np.log(data.gpus), np.log(data.time_s), 1)[0])


def step_gain(data: Benchmarks) -> float:
    """Median time at the smallest GPU count over the median at the largest (1 for one
    count): how many times shorter the last step is than the first."""
    gpus, time = np.asarray(data.gpus), np.asarray(data.time_s)
    if len(np.unique(gpus)) < 2:
        return 1.0
    return float(np.median(time[gpus == gpus.min()]) / np.median(time[gpus == gpus.max()]))


def per_unit_of_work(
    data: Benchmarks, model: AbstractScalingModel | None = None
) -> tuple[Benchmarks, str]:
    """`data` with `time_s` proportional to seconds per unit of work, and a sentence
    saying what was assumed and why; for a `model` whose formula reads the global batch
    (`workload_read`), seconds per step instead.

    Throughput and per-GPU data are returned as they are. A time column stated to be a
    fixed global batch (``scaling="strong"``) is per unit of work already; otherwise the
    slope rule of the module decides, and step times of a fixed per-GPU batch become
    ``per_gpu`` data (`time_s` divided by the GPU count). A family that reads
    ``global_batch`` (``T = a + c·B/N``) divides by the GPU count itself: its time
    columns stay (or become again) the step times measured, whatever the scaling.
    """
    if data.target == "throughput":
        return data, "seconds per unit of work = 1 / throughput, whatever the scaling"
    if model is not None and "global_batch" in workload_read(model):
        steps = dataclasses.replace(data, time_s=data.measured, per_gpu=False)
        scaling = f"{data.scaling} scaling" if data.scaling else "the scaling"
        return steps, (
            f"seconds per step of each run's global batch: the {model.family} family reads "
            f"global_batch and shares it over the GPUs itself, so {scaling} changes "
            "nothing and the time is not divided by the GPU count"
        )
    if data.per_gpu:
        return data, "step times of a fixed per-GPU batch, divided by the GPU count"
    slope = log_log_slope(data)
    if data.scaling == "strong":
        stated = "a fixed global batch (stated): the time of a step is per unit of work"
        if slope > 0:  # more GPUs sharing one batch should shorten the step
            stated += (
                f"; but the step time grows with the GPUs (log-log slope {slope:+.2f}), as "
                "steps of a fixed per-GPU batch do: check that the global batch was fixed"
            )
        return data, stated
    said = "stated weak scaling; " if data.scaling == "weak" else ""
    gain = step_gain(data)
    if slope > WEAK_STEP_SLOPE and data.scaling is None and gain > SUPERLINEAR_GAIN:
        # Fitted as a stated fixed global batch would be (the blend's strong regime).
        return dataclasses.replace(data, scaling="strong"), (
            f"time against GPUs has a log-log slope of {slope:.2f} (> {WEAK_STEP_SLOPE}), "
            f"but the step at {np.max(data.gpus):g} GPUs is {gain:.3g}× shorter than at "
            f"{np.min(data.gpus):g}: as steps of a fixed per-GPU batch that is "
            f"{gain:.0%} efficiency, so read as steps of one global batch shared by every "
            "run (strong scaling); if the batch per GPU was fixed, say --weak-scaling "
            '(scaling="weak" in Python)'
        )
    if slope > WEAK_STEP_SLOPE:
        converted = dataclasses.replace(data, time_s=data.time_s / data.gpus, per_gpu=True)
        return converted, (
            f"{said}time against GPUs has a log-log slope of {slope:.2f} (> "
            f"{WEAK_STEP_SLOPE}): the step time of a fixed per-GPU batch, so work grows "
            "with the GPUs"
        )
    unstated = (
        ""
        if data.scaling
        else "; weighed as a fixed batch per GPU unless stated: for one global batch "
        'in every run say so (--strong-scaling; scaling="strong" to load_benchmarks or '
        "from_arrays in Python)"
    )
    return data, (
        f"{said}time against GPUs has a log-log slope of {slope:.2f} (≤ {WEAK_STEP_SLOPE}): "
        f"seconds per unit of work, or per step of a fixed global batch{unstated}"
    )


def batches_at_one_count(data: Benchmarks) -> tuple[float, np.ndarray] | None:
    """The first GPU count whose rows differ in ``global_batch``, and their batches; None
    when every count has one batch (or the data give none)."""
    if "global_batch" not in data.config:
        return None
    batches = np.asarray(data.config["global_batch"], dtype=np.float64)
    for n in np.unique(data.gpus):
        at = batches[data.gpus == n]
        if np.ptp(at) > 0:
            return float(n), np.unique(at)
    return None


def mixed_workloads(data: Benchmarks, model: AbstractScalingModel | None = None) -> str:
    """One line when rows at the same GPU count differ in a `WORKLOAD_COLUMNS` column
    that `model` does not read (they measure different workloads, which the fit takes
    for scatter of one), naming the file, the first such count, the values and what to
    do; else ``""``."""
    read = workload_read(model) if model is not None else frozenset()
    for column in WORKLOAD_COLUMNS:
        if column in read or column not in data.config:
            continue
        values = np.asarray(data.config[column], dtype=np.float64)
        counts = [n for n in np.unique(data.gpus) if np.ptp(values[data.gpus == n]) > 0]
        if not counts:
            continue
        first = counts[0]
        shown = ", ".join(f"{v:g}" for v in np.unique(values[data.gpus == first]))
        others = len(counts) - 1
        more = f" (and at {counted(others, 'other GPU count')})" if others else ""
        who = "the model" if model is None else f"the {model.family} model"
        remedy = (
            "fit --model batch_linear, which reads global_batch"
            if column == "global_batch"
            else "fit --model hybrid, which reads the shape and the layout"
        )
        return (
            f"{data.source}: the rows at {counted(first, 'GPU')} differ in {column} "
            f"({shown}){more}: "
            f"different workloads, but {who} does not read {column}, so it takes their "
            f"difference for scatter and its speedups mix {column} with the GPU count; "
            f"{remedy}, or keep one {column} per GPU count"
        )
    return ""


# Repeats of one configuration further apart than this are a typo, not noise (the widest
# spread of repeated runs in the shipped MLPerf time-to-train logs is under 1.5×).
REPEAT_SPREAD = 3.0


def repeats_apart(data: Benchmarks) -> str:
    """One line when two rows of one configuration (GPU count and every config column)
    are more than `REPEAT_SPREAD` apart, naming the file, their lines and the ratio (a
    time typed in ms among seconds was fitted as scatter, the answer moved from 5 to 16
    GPUs, without a word); else ``""``."""
    keys = np.column_stack([data.gpus, *(np.asarray(v, float) for v in data.config.values())])
    _, group = np.unique(keys, axis=0, return_inverse=True)
    group = group.reshape(-1)
    measured = np.asarray(data.measured, dtype=np.float64)
    order = np.lexsort((measured, group))  # by group, then by value: ends are min and max
    starts = np.flatnonzero(np.r_[True, np.diff(group[order]) != 0])
    ends = np.r_[starts[1:], len(order)] - 1
    low, high = order[starts], order[ends]
    ratio = measured[high] / measured[low]
    for k in np.flatnonzero(ratio > REPEAT_SPREAD)[:1]:
        low_row, high_row = int(low[k]), int(high[k])
        rows = sorted((low_row, high_row))
        if data.files is None:
            at = [i + 1 if data.lines is None else int(data.lines[i]) for i in rows]
            where = f"{data.source} {'rows' if data.lines is None else 'lines'} {at[0]} and {at[1]}"
        else:  # runs of several logs: "lines 44 and 44" named neither
            where = f"{data.where(rows[0])} and {data.where(rows[1])}"
        gpus = counted(int(data.gpus[low_row]), "GPU")
        return (
            f"{where}: the same {gpus} measured {ratio[k]:.3g}× apart "
            f"({measured[low_row]:.4g} and {measured[high_row]:.4g}): a unit typed wrong, or "
            "another run? The fit takes it for scatter; fix or drop one"
        )
    return ""


def nodes_disagree(data: Benchmarks) -> str:
    """One line when the rows give different node sizes (``gpus_per_node``), naming the
    file, the sizes and the one the answers use (the largest run's, `_closed.node_size`):
    three rows of 8 and one of 3 answered "2 nodes of 3" without a word; else ``""``."""
    if "gpus_per_node" not in data.config:
        return ""
    sizes = np.broadcast_to(np.asarray(data.config["gpus_per_node"], float), data.gpus.shape)
    if np.all(sizes == sizes[0]):
        return ""
    used = sizes[int(np.argmax(data.gpus))]
    odd = int(np.flatnonzero(sizes != used)[0])
    where = data.where(odd)
    shown = ", ".join(f"{v:g}" for v in np.unique(sizes))
    return (
        f"{data.source}: the rows give different node sizes ({shown}; {where} says "
        f"{sizes[odd]:g}): the answers use {used:g}, the largest run's; were these runs on "
        "one machine?"
    )
