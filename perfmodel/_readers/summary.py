"""One training run read from a log, the warm-up rule for per-step logs, and the step
from runs to `Benchmarks`.

Every reader turns one log file (or one CSV run) into `RunSummary` rows; `to_benchmarks`
turns a list of them into the `Benchmarks` the fitting code takes.
"""

import dataclasses
import math

import numpy as np

from .._data import Benchmarks, MAX_DECADES, MAX_GPUS, stated_scaling
from .._errors import InputError

WARMUP_FACTOR = 1.2  # "auto": a leading interval slower than this × the steady median
AUTO_MIN_INTERVALS = 3  # logged intervals "auto" needs to tell a warm-up apart
AUTO_RULE = (
    f"auto: the first logged interval, and the leading ones slower than {WARMUP_FACTOR:g}× "
    "the median of the second half of the log (at most half the intervals)"
)
QUANTITIES = ("step_time", "time_to_train", "epoch_time")


@dataclasses.dataclass(frozen=True)
class RunSummary:
    """One training run, as a log describes it.

    Attributes:
        source: the file it was read from.
        line: the line it is anchored to (MLLOG: run_stop; per-step logs: the first
            interval kept after warm-up), 1-based.
        format: ``"mllog"``, ``"megatron"``, ``"lightning"`` or ``"csv"``.
        gpus: GPU count of the run (world size), or None when the log does not say.
        global_batch: samples per optimizer step, all GPUs together, or None.
        step_time_s: median seconds per step after warm-up (per-step logs), or None.
        steps_used: logged intervals (or MLLOG epochs) the median is taken over.
        warmup_dropped: leading logged intervals (or epochs) left out as warm-up.
        warmup_steps: optimizer steps those intervals cover (0 for MLLOG).
        warmup_rule: how the warm-up was chosen.
        time_to_train_s: MLLOG run_stop − run_start, seconds; None for per-step logs.
        epochs: epochs to the target (MLLOG: the epoch of the last evaluation), or None.
        samples: training samples to the target (MLLOG), or consumed so far (per-step
            logs), or None.
        epoch_time_s: median seconds per epoch after warm-up (MLLOG), or None.
        status: ``"success"``, ``"aborted"`` (MLLOG run_stop status) or ``""``.
        config: other `Config` fields the log gives (``tp``, ``pp``, ``microbatches``,
            ``seq_len``, ``gpus_per_node``), one float each.
        benchmark: what the run trains (MLLOG ``submission_benchmark``, e.g. ``"ssd"``),
            or ``""`` when the log does not say.
    """

    source: str
    line: int
    format: str
    gpus: int | None
    global_batch: float | None
    step_time_s: float | None = None
    steps_used: int = 0
    warmup_dropped: int = 0
    warmup_steps: int = 0
    warmup_rule: str = ""
    time_to_train_s: float | None = None
    epochs: float | None = None
    samples: float | None = None
    epoch_time_s: float | None = None
    status: str = ""
    config: dict = dataclasses.field(default_factory=dict)
    benchmark: str = ""

    def as_dict(self) -> dict:
        """The summary as one flat dict (config fields as their own keys)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out.update(out.pop("config"))
        return out


def steady_median(
    steps: np.ndarray, seconds: np.ndarray, warmup: int | str = "auto"
) -> tuple[float, int, int, str]:
    """Median seconds per step of a per-interval log, after dropping its warm-up.

    Each entry is one logged interval: `steps` the step count at its end, `seconds` the
    seconds per step over it. ``warmup="auto"`` drops the first interval (compilation,
    data-loader start) and then every leading interval slower than
    ``WARMUP_FACTOR`` × the median of the second half of the log, at most half of them;
    an integer drops the intervals ending at or before that step. With one or two
    intervals nothing is dropped by ``"auto"``.

    Returns:
        ``(median seconds per step, intervals dropped, steps dropped, rule)``.
    """
    steps, seconds = np.asarray(steps, float), np.asarray(seconds, float)
    n = seconds.size
    if isinstance(warmup, str):
        if warmup != "auto":
            raise InputError(f"warmup: expected 'auto' or a step count, got {warmup!r}")
        dropped = 0
        if n >= AUTO_MIN_INTERVALS:
            steady = float(np.median(seconds[n // 2 :]))
            dropped = 1
            while dropped < n // 2 and seconds[dropped] > WARMUP_FACTOR * steady:
                dropped += 1
        rule = AUTO_RULE
    else:
        if isinstance(warmup, bool) or not float(warmup).is_integer() or warmup < 0:
            raise InputError(f"warmup: expected 'auto' or a step count ≥ 0, got {warmup!r}")
        dropped = int(np.sum(steps <= warmup))
        if dropped >= n:
            raise InputError(
                f"warmup={warmup} drops every logged interval (the last ends at step "
                f"{int(steps[-1])}); give a smaller warm-up"
            )
        rule = f"the intervals ending at or before step {int(warmup)}"
    # The steps the dropped intervals cover: the step count where the last of them ends.
    warm_steps = int(steps[dropped - 1]) if dropped else 0
    return float(np.median(seconds[dropped:])), dropped, warm_steps, rule


def _value(run: RunSummary, quantity: str) -> float | None:
    return {
        "step_time": run.step_time_s,
        "time_to_train": run.time_to_train_s,
        "epoch_time": run.epoch_time_s,
    }[quantity]


def to_benchmarks(runs: list[RunSummary], quantity: str, source: str) -> Benchmarks:
    """`Benchmarks` with one row per run: ``gpus``, ``time_s`` = `quantity` (seconds per
    step, per run to the target, or per epoch) and the config fields every run gives.

    Raises:
        InputError: a run without a GPU count or without the quantity, or a config field
            that some runs give and others do not.
    """
    if quantity not in QUANTITIES:
        raise InputError(f"quantity: expected one of {', '.join(QUANTITIES)}, got {quantity!r}")
    if not runs:
        raise InputError(f"{source}: no runs to read")
    for run in runs:
        where = f"{run.source} line {run.line}" if run.line else run.source
        if run.gpus is None:
            hint = (
                " (or {arg:gpus_per_node}: the log gives the node count)"
                if run.format == "mllog"
                else ""
            )
            raise InputError(f"{where}: no GPU count in the log; pass {{arg:gpus}}{hint}")
        if not 1 <= run.gpus <= MAX_GPUS:  # as a CSV's gpus column
            raise InputError(f"{where}: expected a GPU count of 1 to {MAX_GPUS:,}, got {run.gpus}")
        value = _value(run, quantity)
        if value is None or not math.isfinite(value) or value <= 0:
            raise InputError(f"{where}: the log gives no {quantity.replace('_', ' ')} for this run")
    config = {}
    fields = {"global_batch"} | {k for run in runs for k in run.config}
    for name in sorted(fields):
        values = [
            run.global_batch if name == "global_batch" else run.config.get(name) for run in runs
        ]
        given = [v is not None for v in values]
        if not any(given):
            continue
        if not all(given):
            have = runs[given.index(True)]
            lack = runs[given.index(False)]
            raise InputError(
                f"{lack.source}: no {name} for this run, while {have.source} gives "
                f"{name} = {values[given.index(True)]:g}; pass {{arg:{name}}} to give it for all"
            )
        config[name] = np.asarray(values, dtype=float)
    gpus = np.asarray([run.gpus for run in runs], dtype=float)
    values = np.asarray([_value(run, quantity) for run in runs], dtype=float)
    low, high = int(np.argmin(values)), int(np.argmax(values))
    if np.log10(values[high]) - np.log10(values[low]) > MAX_DECADES:  # as a CSV's column
        named = [
            f"{r.source} line {r.line}" if r.line else r.source for r in (runs[low], runs[high])
        ]
        raise InputError(
            f"{named[0]}: {quantity.replace('_', ' ')} {values[low]:.3g} is more than "
            f"{MAX_DECADES:.0f} orders of magnitude below {values[high]:.3g} ({named[1]}); "
            "check the units and typos of those runs"
        )
    return Benchmarks(
        source=source,
        gpus=gpus,
        time_s=values,
        target="time",
        config=config,
        lines=np.asarray([run.line for run in runs]),
        scaling=stated_scaling(gpus, config.get("global_batch")),
        files=tuple(run.source for run in runs),
    )
