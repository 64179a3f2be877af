"""MLPerf result files: ``:::MLLOG {json}`` lines, one run per file.

The lines follow mlcommons/logging (``mlperf_logging.mllog``): a JSON object with
``time_ms``, ``key``, ``value`` and ``metadata``. As in its compliance parser, text before
``:::MLLOG`` on a line (an ``srun`` rank label such as ``0: ``) is ignored, and lines
without ``:::MLLOG`` are noise (shell trace, framework output) and skipped. Several ranks
may print the same record; the first ``run_start`` and the first ``run_stop`` after it
define the run.

What is read:

* time to train: ``run_stop.time_ms − run_start.time_ms``, seconds;
  ``run_stop.metadata.status`` (``success`` or ``aborted``);
* ``global_batch_size``;
* epochs to the target: the ``epoch_num`` of the last ``eval_accuracy`` (else the
  largest ``epoch_num`` of an ``epoch_stop``/``block_stop``);
* samples to the target: the largest ``metadata.samples_count`` where logged; else
  ``train_samples`` when it is logged after the last evaluation (BERT v0.7 logs the
  samples trained there); else epochs × ``train_samples`` (then the dataset size);
* epoch time: the median ``epoch_stop − epoch_start`` after warm-up (`steady_median`);
* GPUs: ``number_of_nodes`` × ``accelerators_per_node`` where logged; else the node count
  of ``submission_platform`` ("32xNVIDIA DGX A100") × `gpus_per_node` (given, or known
  for the systems in `KNOWN_SYSTEMS`); or `gpus` given by the caller.
"""

import json
import math
import re

import numpy as np

from .._config import LARGEST_VALUE
from .._data import MAX_GPUS
from .._errors import InputError
from .summary import RunSummary, steady_median

TOKEN = ":::MLLOG"
# GPUs per node of systems whose MLPerf submissions name them in submission_platform.
KNOWN_SYSTEMS = {
    "DGX A100": 8,
    "DGX-A100": 8,
    "DGX H100": 8,
    "DGX-H100": 8,
    "DGX-2H": 16,
    "DGX2-H": 16,
    "DGX2H": 16,
    "DGX-2": 16,
    "DGX-1": 8,
}
_PLATFORM_RE = re.compile(r"^\s*(\d+)\s*x\s*(.+?)\s*$")


def _number(value, what: str, where: str, *, integer: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        kind = "a whole number ≥ 1" if integer else "a positive number"
        raise InputError(f"{where}: {what}: expected {kind}, got {json.dumps(value)}")
    value = float(value)
    if not math.isfinite(value) or value <= 0 or (integer and not value.is_integer()):
        kind = "a whole number ≥ 1" if integer else "a positive number"
        raise InputError(f"{where}: {what}: expected {kind}, got {value:g}")
    return value


def parse_records(text: str, source: str) -> list[tuple[int, dict]]:
    """``(line number, record)`` of every ``:::MLLOG`` line of `text`.

    Raises:
        InputError: a ``:::MLLOG`` line whose JSON does not parse, is not an object, or
            lacks a numeric ``time_ms`` or a string ``key``.
    """
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        at = line.find(TOKEN)
        if at < 0:
            continue
        where = f"{source} line {number}"
        body = line[at + len(TOKEN) :].strip()
        try:
            record = json.loads(body)
        except json.JSONDecodeError as error:
            raise InputError(
                f"{where}: malformed MLLOG record: expected a JSON object after "
                f"':::MLLOG ' ({error.msg} at character {error.pos + 1}; a line cut off "
                "or two ranks' output run together?)"
            )
        except (ValueError, RecursionError):  # a number of 4300+ digits, arrays 10⁵ deep
            raise InputError(
                f"{where}: malformed MLLOG record: expected a JSON object after ':::MLLOG ' "
                "(a number of thousands of digits, or nesting thousands deep)"
            )
        if not isinstance(record, dict):
            raise InputError(f"{where}: malformed MLLOG record: expected a JSON object")
        if not isinstance(record.get("key"), str):
            raise InputError(f"{where}: MLLOG record without a string 'key'")
        time_ms = record.get("time_ms")
        # JSON's NaN and Infinity parse as floats: a NaN run_start was reported on the
        # run_stop line as "no time to train" (fuzz round 10).
        numeric = not isinstance(time_ms, bool) and isinstance(time_ms, (int, float))
        if not (numeric and abs(time_ms) < 1e308 and math.isfinite(time_ms)):  # 10**400
            raise InputError(
                f"{where}: MLLOG record {record['key']!r}: expected a finite number in "
                f"'time_ms', got {json.dumps(time_ms)}"
            )
        metadata = record.get("metadata")
        if metadata is None:
            record["metadata"] = {}
        elif not isinstance(metadata, dict):
            raise InputError(
                f"{where}: MLLOG record {record['key']!r}: expected an object in "
                f"'metadata', got {json.dumps(metadata)}"
            )
        records.append((number, record))
    return records


def _gpus(first: dict, source: str, gpus, gpus_per_node) -> tuple[int | None, float | None]:
    """GPU count and GPUs per node from the log, or from the caller's options."""
    nodes_logged = first.get("number_of_nodes")
    per_node_logged = first.get("accelerators_per_node")
    if gpus is not None:
        return int(gpus), gpus_per_node
    if nodes_logged is not None and per_node_logged is not None:
        (line_n, nodes), (line_a, per_node) = nodes_logged, per_node_logged
        nodes = _number(nodes, "number_of_nodes", f"{source} line {line_n}", integer=True)
        per_node = _number(
            per_node, "accelerators_per_node", f"{source} line {line_a}", integer=True
        )
        if nodes * per_node > MAX_GPUS:
            raise InputError(
                f"{source} line {line_n}: number_of_nodes: {nodes:g} nodes of {per_node:g} "
                f"GPUs, expected at most {MAX_GPUS:,} GPUs"
            )
        return int(nodes * per_node), per_node
    platform = first.get("submission_platform")
    if platform is None:
        return None, gpus_per_node
    line, value = platform
    match = _PLATFORM_RE.match(value) if isinstance(value, str) else None
    if match is None:
        if gpus_per_node is None:
            return None, None
        raise InputError(
            f"{source} line {line}: submission_platform: expected '<nodes>x<system>' "
            f"(e.g. '32xNVIDIA DGX A100') to count nodes, got {json.dumps(value)}; "
            "pass {arg:gpus} instead"
        )
    nodes, system = int(match.group(1)), match.group(2)
    if gpus_per_node is None:
        known = [n for name, n in KNOWN_SYSTEMS.items() if system.endswith(name)]
        if not known:
            return None, None
        gpus_per_node = known[0]
    if not 1 <= nodes * gpus_per_node <= MAX_GPUS:  # '0xNVIDIA DGX A100' fitted 0 GPUs
        raise InputError(
            f"{source} line {line}: submission_platform: expected 1 or more nodes and at "
            f"most {MAX_GPUS:,} GPUs, got {json.dumps(value)[:60]}"
        )
    return int(nodes * gpus_per_node), float(gpus_per_node)


def read_mllog(
    text: str,
    source: str,
    *,
    gpus: int | None = None,
    gpus_per_node: float | None = None,
    warmup: int | str = "auto",
) -> RunSummary:
    """The run of one MLPerf result file (its text), as a `RunSummary`.

    Args:
        text: the file's text.
        source: its name, for messages.
        gpus: the run's GPU count, when the log does not give it.
        gpus_per_node: GPUs per node, to turn submission_platform's node count into GPUs.
        warmup: warm-up epochs left out of the median epoch time (`steady_median`).

    Raises:
        InputError: naming the file, the line and what was expected.
    """
    records = parse_records(text, source)
    if not records:
        raise InputError(
            f"{source}: no ':::MLLOG' lines; expected an MLPerf result file with lines such "
            'as \':::MLLOG {"key": "run_start", "time_ms": ...}\''
        )
    first: dict[str, tuple[int, object]] = {}  # key -> (line, value) of its first record
    start = stop = None
    batch = None
    last_eval_epoch = None
    stop_epochs, samples_counts = [], []
    train_samples = []  # (line, time_ms, value)
    epoch_open: dict[float, float] = {}
    epochs_timed: list[tuple[float, float]] = []  # (epoch, seconds)
    last_eval_ms = -math.inf
    for line, record in records:
        key, time_ms, metadata = record["key"], float(record["time_ms"]), record["metadata"]
        value = record.get("value")
        where = f"{source} line {line}"
        if stop is not None:
            if key == "run_start" and time_ms > stop[1]:
                raise InputError(
                    f"{where}: a second run_start after the run_stop at line {stop[0]}; "
                    "expected one run per result file (split the file)"
                )
            continue  # ranks repeating the last records
        first.setdefault(key, (line, value))
        if key == "run_start":
            if start is None:
                start = (line, time_ms)
            continue
        if key == "run_stop":
            if start is None:
                raise InputError(f"{where}: run_stop before any run_start")
            if time_ms < start[1]:
                raise InputError(
                    f"{where}: run_stop at time_ms {time_ms:.0f} precedes run_start "
                    f"(line {start[0]}, time_ms {start[1]:.0f})"
                )
            status = metadata.get("status", "")
            if not isinstance(status, str):
                raise InputError(f"{where}: run_stop status: expected a string")
            stop = (line, time_ms, status)
            continue
        if key == "global_batch_size":
            size = _number(value, "global_batch_size", where)
            if size != int(size) or size > LARGEST_VALUE:  # 912.5 samples was taken as a batch
                raise InputError(
                    f"{where}: global_batch_size {size:g}; expected whole samples, at most "
                    f"{LARGEST_VALUE:g} (as a CSV's global_batch)"
                )
            if batch is not None and size != batch[1]:
                raise InputError(
                    f"{where}: global_batch_size {size:g} differs from {batch[1]:g} at line "
                    f"{batch[0]}; expected one global batch per run"
                )
            batch = (line, size)
        elif key == "train_samples":
            train_samples.append((line, time_ms, _number(value, "train_samples", where)))
        if "samples_count" in metadata:
            samples_counts.append(_number(metadata["samples_count"], "samples_count", where))
        epoch = metadata.get("epoch_num")
        if epoch is not None and key in ("eval_accuracy", "epoch_start", "epoch_stop"):
            epoch = _number(epoch, "epoch_num", where)  # DLRM logs fractions of an epoch
            if key == "eval_accuracy":
                if isinstance(value, float) and not math.isfinite(value):
                    raise InputError(  # a run that reached its target did not score NaN
                        f"{where}: eval_accuracy is {value}; expected the accuracy reached"
                    )
                if last_eval_epoch is not None and epoch < last_eval_epoch[1]:
                    raise InputError(  # a stale record made the work to the target 10× less
                        f"{where}: eval_accuracy at epoch_num {epoch:g} after one at "
                        f"{last_eval_epoch[1]:g} (line {last_eval_epoch[0]}); expected "
                        "evaluations in epoch order"
                    )
                last_eval_epoch, last_eval_ms = (line, epoch), time_ms
            elif key == "epoch_start":
                epoch_open[epoch] = time_ms
            elif epoch in epoch_open:
                epochs_timed.append((epoch, (time_ms - epoch_open.pop(epoch)) / 1000.0))
            if key == "epoch_stop":
                stop_epochs.append(epoch)
        if key == "block_stop" and "first_epoch_num" in metadata:
            stop_epochs.append(_number(metadata["first_epoch_num"], "first_epoch_num", where))
    if start is None:
        raise InputError(
            f"{source}: no run_start record; expected one ':::MLLOG' line with "
            '"key": "run_start" per result file'
        )
    if stop is None:
        raise InputError(
            f"{source}: run_start at line {start[0]} but no run_stop: the run did not finish "
            '(expected a \':::MLLOG\' line with "key": "run_stop")'
        )
    epochs = last_eval_epoch[1] if last_eval_epoch is not None else max(stop_epochs, default=None)
    samples = max(samples_counts) if samples_counts else None
    if samples is None and train_samples:
        line, time_ms, value = train_samples[-1]
        if time_ms >= last_eval_ms:
            samples = value  # logged at the end: the samples trained
        elif epochs is not None:
            samples = epochs * value  # logged at the start: the dataset size
    epoch_time, used, dropped, rule = None, 0, 0, ""
    if epochs_timed:
        order = sorted(epochs_timed)
        numbers = np.array([e for e, _ in order], float)
        seconds = np.array([s for _, s in order], float)
        epoch_time, dropped, _, rule = steady_median(numbers, seconds, warmup)
        used = len(order) - dropped
    n_gpus, per_node = _gpus(first, source, gpus, gpus_per_node)
    config = {} if per_node is None else {"gpus_per_node": float(per_node)}
    return RunSummary(
        source=source,
        line=stop[0],
        format="mllog",
        gpus=n_gpus,
        global_batch=None if batch is None else batch[1],
        steps_used=used,
        warmup_dropped=dropped,
        warmup_rule=rule,
        time_to_train_s=(stop[1] - start[1]) / 1000.0,
        epochs=None if epochs is None else float(epochs),
        samples=samples,
        epoch_time_s=epoch_time,
        status=stop[2],
        config=config,
        benchmark=str(first.get("submission_benchmark", (0, ""))[1] or ""),
    )
