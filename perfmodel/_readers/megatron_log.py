"""Megatron-LM training logs: one log per run, one ``iteration`` line per log interval.

``training_log`` in Megatron-LM (``megatron/training.py``, later
``megatron/training/training.py``) prints, every ``--log-interval`` iterations::

     iteration      100/  500000 | consumed samples:        51200 | elapsed time per
     iteration (ms): 1234.5 | learning rate: 1.500E-04 | global batch size:   512 | ...

(one line; recent versions prefix a ``[YYYY-MM-DD hh:mm:ss]`` timestamp). The elapsed
time is the mean over the interval. The GPU count comes from the ``using world size: N,
... tensor-model-parallel size: T, pipeline-model-parallel size: P`` line of argument
parsing, else from the ``world_size ...... N`` line of the argument dump, else from the
caller. The argument dump also gives the model's shape and recipe (`MODEL_FIELDS`:
``num_layers``, ``hidden_size``, ``num_attention_heads``, ``num_query_groups`` with
``group_query_attention``, ``ffn_hidden_size``, ``padded_vocab_size``, ``swiglu``,
``untie_embeddings_and_output_weights``, ``sequence_parallel``, ``use_flash_attn``,
``recompute_granularity``), so a folder of logs fits the `hybrid` family. Other lines are
noise and skipped.

A log whose global batch changes (``--rampup-batch-size``) gives one run per global
batch: the step time at each.
"""

import math
import re

import numpy as np

from .._errors import InputError
from .summary import RunSummary, steady_median

ITERATION_RE = re.compile(r"\biteration\s+(\d+)\s*/\s*(\d+)\s*\|")
_WORLD_RE = re.compile(r"using world size:\s*(\d+)")
_PARALLEL_NAMES = {"tp": "tensor-model-parallel size", "pp": "pipeline-model-parallel size"}
_PARALLEL_RE = {k: re.compile(rf"{name}:\s*(\d+)") for k, name in _PARALLEL_NAMES.items()}
_ARGUMENT_RE = re.compile(r"^\s*([a-z_]+) \.{3,} (\S+)\s*$")
_PADDED_VOCAB_RE = re.compile(
    r"padded vocab \(size: \d+\) with \d+ dummy tokens \(new size: (\d+)\)"
)
_ARGUMENTS = {
    "world_size": "gpus",
    "tensor_model_parallel_size": "tp",
    "pipeline_model_parallel_size": "pp",
    "micro_batch_size": "micro_batch_size",
    "seq_length": "seq_len",
    "num_layers": "layers",
    "hidden_size": "hidden",
    "num_attention_heads": "heads",
    "ffn_hidden_size": "ffn_hidden",
    "padded_vocab_size": "vocab",
    "num_query_groups": "query_groups",
}
"""Numeric arguments of the dump and the `Config` field each gives."""
_FLAGS = {
    "swiglu": "gated_mlp",
    "untie_embeddings_and_output_weights": "untied_embeddings",
    "sequence_parallel": "seq_parallel",
    "use_flash_attn": "flash_attention",
    "group_query_attention": "group_query_attention",
}
"""True/False arguments of the dump and the field each sets to 1/0."""
_RECOMPUTE = {"None": 0.0, "selective": 1.0, "full": 2.0}  # --recompute-granularity
MODEL_FIELDS = (
    "tp",
    "pp",
    "seq_len",
    "layers",
    "hidden",
    "heads",
    "ffn_hidden",
    "vocab",
    "gated_mlp",
    "untied_embeddings",
    "seq_parallel",
    "flash_attention",
    "recompute",
)
"""The fields a run takes from its log (with ``query_groups`` under grouped-query
attention), so that ``fit --model hybrid`` reads the model's shape and recipe."""
ELAPSED = "elapsed time per iteration (ms)"
BATCH = "global batch size"
CONSUMED = "consumed samples"
LONGEST_ITERATION_MS = 1e9  # 11.6 days: a longer "iteration" is a garbled line


def _positive(text: str, what: str, where: str) -> float:
    try:  # Python's float() reads "8_06.3" as 806.3: no log prints an underscore there
        value = math.nan if "_" in text else float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise InputError(f"{where}: {what}: expected a positive number, got {text!r}")
    return value


def _count(text: str, what: str, where: str) -> float:
    """A whole number ≥ 1 (a GPU count, a parallel size, a layer count …): a world size
    of 2.5 had been read as 2 GPUs, silently."""
    value = _positive(text, what, where)
    if value != math.floor(value):
        raise InputError(f"{where}: {what}: expected a whole number ≥ 1, got {text!r}")
    return value


def _argument(name: str, text: str, number: int, where: str, settings: dict) -> None:
    """One ``name ...... value`` line of the argument dump into `settings` (first wins)."""
    if name in _ARGUMENTS and text != "None":
        settings.setdefault(_ARGUMENTS[name], (number, _count(text, name, where)))
    elif name in _FLAGS:
        if text not in ("True", "False"):
            raise InputError(f"{where}: {name}: expected True or False, got {text!r}")
        settings.setdefault(_FLAGS[name], (number, 1.0 if text == "True" else 0.0))
    elif name == "recompute_granularity":
        if text not in _RECOMPUTE:
            raise InputError(
                f"{where}: {name}: expected one of {', '.join(_RECOMPUTE)}, got {text!r}"
            )
        settings.setdefault("recompute", (number, _RECOMPUTE[text]))


def _check_layout(source: str, gpus: float, config: dict, settings: dict) -> None:
    """tp × pp must divide the GPU count: tp 3 on 8 GPUs was fitted, with 24 micro-batches
    derived from it, by every model but the hybrid one."""
    tp, pp = config.get("tp", 1.0), config.get("pp", 1.0)
    dp = gpus / (tp * pp)
    if dp < 1 or dp != math.floor(dp):
        line = settings.get("tp", settings.get("pp", (0, 0)))[0]
        raise InputError(
            f"{source} line {line}: tensor-parallel size {tp:g} × pipeline-parallel size "
            f"{pp:g} does not divide the {gpus:g} GPUs; expected a layout that runs"
        )


def _fields(line: str, start: int) -> dict[str, str]:
    """``name: value`` fields between ``|`` from `start` on, in one pass (a regular
    expression took 47 s over a 40 kB field and did not end on a 5 MB line)."""
    fields = {}
    for piece in line[start:].split("|"):
        name, colon, value = piece.partition(":")
        if colon and name.strip():
            fields[name.strip()] = value.strip()
    return fields


def read_megatron(
    text: str,
    source: str,
    *,
    gpus: int | None = None,
    global_batch: float | None = None,
    warmup: int | str = "auto",
) -> list[RunSummary]:
    """The run(s) of one Megatron-LM log (its text): one `RunSummary` per global batch.

    Args:
        text: the log's text.
        source: its name, for messages.
        gpus: the GPU count, when the log has no world-size line (or to override it).
        global_batch: the global batch, when the iteration lines do not print it.
        warmup: leading intervals left out of the median (`steady_median`).

    Raises:
        InputError: naming the file, the line and what was expected.
    """
    world: tuple[int, int] | None = None  # (line, value)
    settings: dict[str, tuple[int, float]] = {}
    parallel: dict[str, tuple[int, float]] = {}  # tp and pp of the world-size line
    rows = []  # (line, iteration, ms, batch, consumed)
    for number, line in enumerate(text.splitlines(), start=1):
        where = f"{source} line {number}"
        match = ITERATION_RE.search(line)
        if match is None:
            found = _WORLD_RE.search(line)
            if found:
                value = int(found.group(1))
                if value < 1:  # a GPU count of 0 divided by zero further on
                    raise InputError(f"{where}: world size {value}; expected a GPU count ≥ 1")
                if world is not None and world[1] != value:
                    raise InputError(
                        f"{where}: world size {value} differs from {world[1]} at line "
                        f"{world[0]}; expected one run per log (split the file)"
                    )
                world = (number, value)
                for name, pattern in _PARALLEL_RE.items():
                    size = pattern.search(line)
                    if size:
                        what = _PARALLEL_NAMES[name]
                        parallel[name] = (number, _count(size.group(1), what, where))
                continue
            padded = _PADDED_VOCAB_RE.search(line)
            if padded:  # build_tokenizer's line, where the dump has no padded_vocab_size
                settings.setdefault("vocab", (number, float(padded.group(1))))
            argument = _ARGUMENT_RE.match(line)
            if argument:
                _argument(argument.group(1), argument.group(2), number, where, settings)
            continue
        fields = _fields(line, match.end())
        if ELAPSED not in fields:
            raise InputError(
                f"{where}: iteration line without '{ELAPSED}: <number>' (a line cut off?); "
                "expected ' iteration N/M | consumed samples: ... | elapsed time per "
                "iteration (ms): ... | ...'"
            )
        ms = _positive(fields[ELAPSED], ELAPSED, where)
        if ms > LONGEST_ITERATION_MS:  # 1e300 ms vanished into the median (review 2026-12-07)
            raise InputError(
                f"{where}: {ELAPSED}: expected at most {LONGEST_ITERATION_MS:g} ms (11.6 days), "
                f"got {fields[ELAPSED]!r}"
            )
        batch = global_batch
        if BATCH in fields:
            batch = _positive(fields[BATCH], BATCH, where)
        elif batch is None:
            raise InputError(
                f"{where}: iteration line without '{BATCH}: <number>'; pass {{arg:global_batch}}"
            )
        consumed = _positive(fields[CONSUMED], CONSUMED, where) if CONSUMED in fields else None
        iteration = int(match.group(1))
        if rows and iteration <= rows[-1][1]:
            raise InputError(
                f"{where}: iteration {iteration} after iteration {rows[-1][1]} at line "
                f"{rows[-1][0]}; expected increasing iterations (a restarted or second run: "
                "give each as its own file)"
            )
        rows.append((number, iteration, ms, batch, consumed))
    if not rows:
        raise InputError(
            f"{source}: no Megatron-LM iteration lines; expected lines like ' iteration "
            "100/ 500000 | consumed samples: 51200 | elapsed time per iteration (ms): "
            "1234.5 | ... | global batch size: 512 | ...'"
        )
    if world is not None and "gpus" in settings and settings["gpus"][1] != world[1]:
        line, value = settings["gpus"]
        raise InputError(
            f"{source} line {world[0]}: world size {world[1]} differs from world_size "
            f"{value:g} in the arguments at line {line}; expected one run per log"
        )
    for name, (line, value) in parallel.items():
        if name in settings and settings[name][1] != value:
            raise InputError(
                f"{source} line {line}: {name} {value:g} differs from {settings[name][1]:g} "
                f"in the arguments at line {settings[name][0]}; expected one run per log"
            )
        settings[name] = (line, value)
    if gpus is None:
        if world is not None:
            gpus = world[1]
        elif "gpus" in settings:
            gpus = int(settings["gpus"][1])
    config = {k: v for k, (_, v) in settings.items() if k in MODEL_FIELDS}
    if "query_groups" in settings and settings.get("group_query_attention", (0, 0.0))[1] > 0:
        config["query_groups"] = settings["query_groups"][1]
    micro = settings.get("micro_batch_size")
    runs = []
    for batch in dict.fromkeys(r[3] for r in rows):
        chosen = [r for r in rows if r[3] == batch]
        iterations = np.array([r[1] for r in chosen], float)
        seconds = np.array([r[2] for r in chosen], float) / 1000.0
        median, dropped, warm, rule = steady_median(iterations, seconds, warmup)
        # The iteration where this batch's first interval begins: the previous line's.
        first = rows.index(chosen[0])
        begins = rows[first - 1][1] if first else 0
        warm = warm - begins if dropped else 0
        extra = dict(config)
        if gpus is not None and (extra.get("tp", 1.0) * extra.get("pp", 1.0)) > 1:
            _check_layout(source, gpus, extra, settings)
        if micro is not None and gpus is not None:
            dp = gpus / (extra.get("tp", 1.0) * extra.get("pp", 1.0))
            extra["microbatches"] = batch / (dp * micro[1])
            if extra["microbatches"] < 1 or extra["microbatches"] != round(extra["microbatches"]):
                raise InputError(
                    f"{source} line {micro[0]}: micro_batch_size {micro[1]:g} × "
                    f"{dp:g} data-parallel ranks does not divide the global batch of "
                    f"{batch:g}; expected a whole number of micro-batches per step"
                )
        runs.append(
            RunSummary(
                source=source,
                line=chosen[dropped][0],
                format="megatron",
                gpus=gpus,
                global_batch=batch,
                step_time_s=median,
                steps_used=len(chosen) - dropped,
                warmup_dropped=dropped,
                warmup_steps=warm,
                warmup_rule=rule,
                samples=chosen[-1][4],
                config=extra,
            )
        )
    return runs
