"""Does the design model reproduce published Megatron-LM runs, and pick their layouts?

Reads ``datasets/megatron_published_runs.csv`` (Narayanan et al. SC'21 Table 1, Korthikanti
et al. 2022 Table 5 and Figure 1; sources in ``datasets/SOURCES.md``) or any CSV with the
same columns (``--csv``) and prints, per row:

* predicted against published iteration time, with the compute efficiency uncalibrated
  (`_megatron_reference.PRIOR_EFFICIENCY`) and calibrated on at most two rows
  (``--calibrate ID,ID``; default the two cheapest runs, see `DEFAULT_CALIBRATION`);
* predicted against published memory per GPU (Figure 1 rows: the transformer layers'
  parameters + gradients + optimizer state, and their activations, GiB);
* the model's best layout (tp, pp, micro-batch size, interleaving, recomputation) at the
  row's GPU count and global batch, with memory feasibility, against the published one,
  and how much slower the model finds the published (tp, pp) than its own pick;
* Calculon's error on the same row, where its validation publishes one.

The model is perfmodel's `hybrid` family (`perfmodel.hybrid`, JAX), calibrated with
`perfmodel.fit` (e_max and d0 free, every other parameter fixed at the GPU's published
numbers); beside it, per row, the error of the NumPy reference `_megatron_reference` it
was ported from (the research model, same formulas) and Calculon's published error.
``--model reference`` runs everything on the reference instead (fast; the research
scripts in ``megatron_research/`` use it). The last line printed is one JSON object:
``mean_abs_error_pct``, ``max_abs_error_pct`` (calibrated, over the timing rows not fitted
on), per-table summaries, ``memory_max_abs_error_pct``, ``layout_within_2pct`` (share of
timing rows whose published (tp, pp) is within 2% of the pick) and ``rows``.

Run from the repository root (about a minute on 2 CPU cores; ``--model reference`` a
few seconds)::

    python benchmarks/megatron.py
    python benchmarks/megatron.py --calibrate T1_1.7B,T5_1T_full
    python benchmarks/megatron.py --csv my_runs.csv --calibrate RUN_A
    python benchmarks/megatron.py --csv datasets/megatron_published_runs.csv \
        benchmarks/megatron_unseen_runs.csv   # Table 5's calibration, other runs predicted

``--csv`` takes several files: their rows are read as one table (each file needs the
columns of `REQUIRED_COLUMNS`), so the calibration rows can come from one file and the
rows predicted from another.
"""

import argparse
import itertools
import json
import math
import os
import sys

import jax  # noqa: E402
import numpy as np
import pandas as pd
from scipy.optimize import least_squares

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _megatron_reference as ref  # noqa: E402

import perfmodel as pm  # noqa: E402
from perfmodel._csvtext import header_columns  # noqa: E402  (the package's CSV header check)

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_CSV = os.path.join(HERE, "..", "datasets", "megatron_published_runs.csv")
REQUIRED_COLUMNS = (
    "id",
    "dataset",
    "hidden",
    "heads",
    "layers",
    "seq_len",
    "vocab",
    "tp",
    "pp",
    "gpus",
    "global_batch",
    "measured",
    "value",
)
# The two cheapest published runs with distinct shapes: Table 5's 22B on 8 GPUs (pp = 1,
# h/t = 768, pins d0) and 175B on 64 GPUs (interleaved pp = 8, h/t = 1536). Everything else
# (32–3072 GPUs, and Table 1's 2021 software) is predicted.
DEFAULT_CALIBRATION = ("T5_22B_full", "T5_175B_full")
GIB = 2.0**30

# Settings published outside the CSV: NVIDIA/Megatron-LM examples/sc21/run_table_1.sh
# @cf547dea (the authors' scripts for [N21] Table 1): micro-batch size (MBS), layers per
# virtual stage (interleave = L/(pp·NLPVS)) and DDP implementation (torch DDP overlaps
# the gradient all-reduce with the last backward pass; local DDP does not).
SC21_TABLE1 = {
    "T1_1.7B": dict(microbatch_size=16, interleave=1, ddp="torch"),
    "T1_3.6B": dict(microbatch_size=16, interleave=1, ddp="torch"),
    "T1_7.5B": dict(microbatch_size=16, interleave=1, ddp="torch"),
    "T1_18.4B": dict(microbatch_size=8, interleave=1, ddp="torch"),
    "T1_39.1B": dict(microbatch_size=4, interleave=1, ddp="local"),
    "T1_76.1B": dict(microbatch_size=2, interleave=3, ddp="local"),  # 60/4/5
    "T1_145.6B": dict(microbatch_size=2, interleave=2, ddp="local"),  # 80/8/5
    "T1_310.1B": dict(microbatch_size=1, interleave=2, ddp="local"),  # 96/16/3
    "T1_529.6B": dict(microbatch_size=1, interleave=3, ddp="local"),  # 105/35/1
    "T1_1008B": dict(microbatch_size=1, interleave=1, ddp="local"),
}

# Software stack of each published set (see `_megatron_reference.STACKS`).
DATASET_STACK = {"N21_T1": "megatron-2021", "K22_T5": "megatron-2022", "K22_F1": "megatron-2022"}
DEFAULT_STACK = "megatron-core"

# Hardware per `gpu` column: the library's published numbers (`perfmodel.GPUS`: spec
# sheets and nccl-tests, with sources), with the share of memory the closed form may fill
# under Megatron-Core (`perfmodel.USABLE_MEMORY`: CUDA context, NCCL buffers and
# fragmentation); `row_settings` applies its row's stack's share instead (2021: 0.74, from
# [N21] Figure 17). H100 is untested here: no H100 row in this repository.
USABLE_MEMORY = dict(pm.USABLE_MEMORY)  # a copy: research scripts may change it
HARDWARE = {
    name: dict(
        {k: v for k, v in gpu.items() if k not in ("e_max", "d0")},
        gpus_per_node=8.0,
        memory_bytes=gpu["memory_bytes"] * USABLE_MEMORY[DEFAULT_STACK],
    )
    for name, gpu in pm.GPUS.items()
}


def stack_hardware(gpu: str, stack_name: str) -> dict:
    """`HARDWARE` of `gpu` with the memory budget of software stack `stack_name`."""
    hw = dict(HARDWARE[gpu])
    physical = pm.GPUS[gpu]["memory_bytes"]
    hw["memory_bytes"] = physical * USABLE_MEMORY.get(stack_name, USABLE_MEMORY[DEFAULT_STACK])
    return hw


MODELS = ("library", "reference")
STACK_FIELDS = (
    "async_tp",
    "grad_accum_fusion",
    "dp_overlap",
    "scatter_gather",
    "flash_attention",
    "grad_bytes",
    "deallocate_outputs",
)

# Calculon (calculon-ai/calculon @caa4b11f, `calculon llm-validation`, the validation of
# Isaev et al. SC'23 against [K22]): signed error of Calculon's prediction against the
# published value, % (its "Delta" column is 1 − calc/profile). Table 1 of [N21] is not in
# Calculon's validation.
CALCULON_ERROR_PCT = {
    "T5_22B_full": -1.72,
    "T5_22B_seqsel": 3.33,
    "T5_175B_full": -0.56,
    "T5_175B_seqsel": -0.81,
    "T5_530B_full": 1.72,
    "T5_530B_seqsel": -8.87,
    "T5_1T_full": -4.60,
    "T5_1T_seqsel": -7.62,
    "F1_22B_none_params": -10.84,
    "F1_22B_seqsel_params": -10.84,
    "F1_175B_none_params": -10.17,
    "F1_175B_seqsel_params": -10.17,
    "F1_530B_none_params": -7.40,
    "F1_530B_seqsel_params": -7.40,
    "F1_1T_none_params": -5.55,
    "F1_1T_seqsel_params": -5.55,
    "F1_22B_none_activations": 0.32,
    "F1_22B_seqsel_activations": 8.74,
    "F1_175B_none_activations": 0.14,
    "F1_175B_seqsel_activations": 2.75,
    "F1_530B_none_activations": 0.14,
    "F1_530B_seqsel_activations": 2.12,
    "F1_1T_none_activations": 0.15,
    "F1_1T_seqsel_activations": 2.30,
}

MICROBATCH_SIZES = (1, 2, 4, 8, 16, 32)
INTERLEAVES = (1, 2, 3, 4, 5, 6, 8)
TENSOR_PARALLEL = (1, 2, 4, 8)
RECOMPUTE_BY_STACK = {
    "megatron-2021": (ref.NONE, ref.FULL),
    "megatron-2022": (ref.NONE, ref.SELECTIVE, ref.FULL),
    "megatron-core": (ref.NONE, ref.SELECTIVE, ref.FULL),
}
# What a row's ``value`` may be (its ``measured`` column). Times of one iteration, directly
# or through what was published instead: hardware TFLOP/s per GPU ([N21]: the iteration's
# FLOPs with recomputation, ``hw_flops_per_iter`` or `ref.iteration_flops`) or that as a
# share of the peak; model FLOPs utilisation (the FLOPs without recomputation over the
# peak, a fraction or a percentage); tokens or sequences per second of the whole job.
TIME_MEASURES = (
    "tflops_per_gpu",
    "pct_peak",
    "mfu",
    "iter_time_s",
    "iter_time_ms",
    "tokens_per_s",
    "tokens_per_s_per_gpu",
    "samples_per_s",
)
POSITIVE_COLUMNS = ("hidden", "heads", "layers", "seq_len", "vocab", "tp", "pp", "gpus")
POSITIVE_COLUMNS += ("global_batch", "value")
MEMORY_MEASURES = {
    "params_grads_optimizer_gib": "layer_states",
    "activations_gib": "layer_activations",
}


def _num(x, default=math.nan):
    try:
        value = float(x)
    except (TypeError, ValueError):
        return default
    return default if math.isnan(value) else value


ARCH_COLUMNS = {
    "query_groups": "g",
    "ffn_hidden": "f",
    "gated_mlp": "gated",
    "untied_embeddings": "untied",
}
"""Optional CSV columns beyond GPT's shape (grouped-query attention, the MLP width,
SwiGLU, an untied output layer) and their names in `_megatron_reference.widths`."""


def row_arch(row: pd.Series) -> dict:
    """The row's `ARCH_COLUMNS` that are given (blank or 0 for the counts: GPT's)."""
    arch = {}
    for column, key in ARCH_COLUMNS.items():
        value = _num(row.get(column))
        if value > 0 or (key in ("gated", "untied") and value == 0):
            arch[key] = value
    return arch


def row_settings(row: pd.Series) -> dict:
    """Shape, layout and software settings of one CSV row (published, or documented)."""
    extra = SC21_TABLE1.get(row["id"], {})
    stack_name = None if _blank(row.get("stack")) else str(row["stack"]).strip()
    stack_name = stack_name or DATASET_STACK.get(row["dataset"], DEFAULT_STACK)
    stack = dict(ref.STACKS[stack_name])
    if "ddp" in extra:
        stack["dp_overlap"] = 1 if extra["ddp"] == "torch" else 0
    hw = stack_hardware(row_gpu(row), stack_name)
    if _num(row.get("peak_tflops")) > 0:
        hw["peak_flops"] = _num(row["peak_tflops"]) * 1e12
    recompute = row_recompute(row)
    return dict(
        h=_num(row["hidden"]),
        a=_num(row["heads"]),
        s=_num(row["seq_len"]),
        V=_num(row["vocab"]),
        L=_num(row["layers"]),
        t=_num(row["tp"]),
        p=_num(row["pp"]),
        d=_num(row.get("dp"), _num(row["gpus"]) / (_num(row["tp"]) * _num(row["pp"]))),
        B=_num(row["global_batch"]),
        gpus=_num(row["gpus"]),
        b=_num(extra.get("microbatch_size", row.get("microbatch_size"))),
        v=_num(extra.get("interleave", row.get("interleave"))),
        recompute=ref.RECOMPUTE_CODES.get(recompute, ref.FULL),
        sp=_num(row.get("seq_parallel"), 0.0),
        zero=_num(row.get("zero"), 0.0),
        stack_name=stack_name,
        stack=stack,
        hw=hw,
        arch=row_arch(row),
    )


def evaluate(cfg: dict, eff: dict, model: str = "library", **override) -> dict:
    """Iteration time and memory per GPU of a row's settings (arrays allowed), by part.

    ``model="library"``: `perfmodel.hybrid` (`library_model`, `library_config`);
    ``"reference"``: `ref.iteration_time` and `ref.memory_per_gpu`. Each part dict has a
    ``"total"``.
    """
    c = dict(cfg, **override)
    if c.get("stack_name") == "megatron-2021" and c["stack"]["dp_overlap"]:
        c["stack"] = dict(c["stack"], dp_overlap=torch_ddp_overlap(c["p"]))
    if model == "library":
        with jax.enable_x64(True):
            config = library_config(c)
            found = library_model(c, eff)
            time = {k: np.asarray(v) for k, v in found.breakdown(config).items()}
            time["total"] = np.asarray(found(config))
            memory = {k: np.asarray(v) for k, v in pm.memory_per_gpu(config).items()}
            status = np.asarray(pm.layout_status(config))
        return dict(time=time, memory=memory, status=status)
    return reference_evaluate(c, eff)


def torch_ddp_overlap(pp) -> np.ndarray:
    """Whether the 2021 software's gradient all-reduce overlaps the backward, per layout.

    Megatron-LM @50a4b5fa overlaps it only with PyTorch DDP, and only without pipelining:
    `schedules.forward_backward_no_pipelining` alone wraps the micro-batches in
    ``model.no_sync()``; the pipelined schedules run several forwards before a backward,
    which PyTorch DDP's reducer does not allow, so every pp > 1 run used local DDP
    (examples/sc21/run_table_1.sh: ``DDP=torch`` for the pp = 1 rows, ``local`` for the
    others), whose all-reduce follows the last backward (`DataParallelTerm`).
    """
    return np.where(np.asarray(pp, dtype=float) > 1.0, 0.0, 1.0)


def library_config(c: dict) -> pm.Config:
    """The `perfmodel.Config` of a row's settings (arrays broadcast)."""
    fields = dict(
        gpus=c["gpus"],
        gpus_per_node=c["hw"]["gpus_per_node"],
        tp=c["t"],
        pp=c["p"],
        layers=c["L"],
        hidden=c["h"],
        heads=c["a"],
        seq_len=c["s"],
        vocab=c["V"],
        global_batch=c["B"],
        microbatch_size=c["b"],
        interleave=c["v"],
        recompute=c["recompute"],
        seq_parallel=c["sp"],
        zero=c["zero"],
        gpu_memory_bytes=c["hw"]["memory_bytes"],
        **{k: c["stack"][k] for k in STACK_FIELDS},
        **{
            column: c["arch"][key]
            for column, key in ARCH_COLUMNS.items()
            if key in c.get("arch", {})
        },
    )
    shape = np.broadcast_shapes(*(np.shape(v) for v in fields.values()))
    return pm.Config(**{k: np.broadcast_to(np.asarray(v, float), shape) for k, v in fields.items()})


def library_model(c: dict, eff: dict) -> pm.ScalingModel:
    """`perfmodel.hybrid` with the row's hardware (`HARDWARE`) and efficiency `eff`."""
    hw = c["hw"]
    return pm.hybrid(
        peak_flops=hw["peak_flops"],
        hbm_bandwidth=hw["hbm_bandwidth"],
        nvlink_bandwidth=hw["nvlink_bandwidth"],
        nvlink_latency=hw["nvlink_latency"],
        network_bandwidth=hw["network_bandwidth"],
        network_latency=hw["network_latency"],
        e_max=eff["e_max"],
        d0=eff["d0"],
    )


def reference_evaluate(c: dict, eff: dict) -> dict:
    """`ref.iteration_time` and `ref.memory_per_gpu` of settings `c` (arrays allowed)."""
    m = c["B"] / (c["d"] * c["b"])
    args = (c["h"], c["a"], c["s"], c["V"], c["L"], c["b"], c["t"], c["p"], c["d"], c["v"])
    mode = (c["recompute"], c["sp"], c["zero"], c["stack"])
    arch = c.get("arch") or None
    time = ref.iteration_time(*args, c["B"], *mode, c["hw"], eff, arch)
    memory = ref.memory_per_gpu(*args, m, *mode, arch)
    return dict(time=time, memory=memory, status=None)


def layout_space(cfg: dict, tp=None, pp=None, recompute_search: str = "stack") -> dict:
    """Valid layouts at the row's GPU count and global batch, as flat arrays.

    tp ∈ {1, 2, 4, 8} dividing the heads, within a node; pp dividing the layers;
    dp = gpus/(tp·pp) dividing the batch; micro-batch sizes dividing B/dp; interleaving v
    with v·pp dividing the layers, pp > 2 and m a multiple of pp for v > 1 (Megatron's
    interleaved schedule); recomputation: every mode of the row's software stack
    (``recompute_search="stack"``) or the row's own (``"row"``); sequence parallelism and
    ZeRO as in the row. `tp`/`pp` pin those axes.
    """
    L, gpus, B = int(cfg["L"]), int(cfg["gpus"]), int(cfg["B"])
    groups = int(cfg.get("arch", {}).get("g", cfg["a"]))
    tps = (
        [
            t
            for t in TENSOR_PARALLEL
            if int(cfg["a"]) % t == 0 and groups % t == 0 and t <= cfg["hw"]["gpus_per_node"]
        ]
        if tp is None
        else [int(tp)]
    )
    pps = [p for p in range(1, L + 1) if L % p == 0] if pp is None else [int(pp)]
    recomputes = (
        RECOMPUTE_BY_STACK.get(cfg["stack_name"], (cfg["recompute"],))
        if recompute_search == "stack"
        else (cfg["recompute"],)
    )
    grid = np.array(
        list(itertools.product(tps, pps, MICROBATCH_SIZES, INTERLEAVES, recomputes)),
        dtype=np.float64,
    ).T
    t, p, b, v, r = grid
    d = gpus / (t * p)
    m = B / (d * b)
    whole = lambda x: (x == np.floor(x)) & (x >= 1)  # noqa: E731
    ok = whole(d) & whole(m) & (L % (p * v) == 0)
    ok &= (v == 1) | ((p > 2) & (np.mod(m, p) == 0))
    return {k: x[ok] for k, x in dict(t=t, p=p, b=b, v=v, recompute=r, d=d).items()}


def _feasible_seconds(result: dict, cfg: dict) -> np.ndarray:
    """Iteration seconds where valid and within memory (the library's `layout_status`,
    or the reference's memory), else inf."""
    if result["status"] is not None:
        ok = result["status"] == 0
    else:
        ok = result["memory"]["total"] <= cfg["hw"]["memory_bytes"]
    return np.where(ok, result["time"]["total"], np.inf)


def search(
    cfg: dict,
    eff: dict,
    tp=None,
    pp=None,
    recompute_search="stack",
    min_layers=0.0,
    model: str = "library",
):
    """Fastest memory-feasible layout: ``(seconds, layout dict)``; ``(inf, None)`` if none.

    `min_layers` drops layouts with fewer layers per pipeline stage.
    """
    space = layout_space(cfg, tp, pp, recompute_search)
    keep = cfg["L"] / space["p"] >= min_layers
    space = {k: x[keep] for k, x in space.items()}
    if space["t"].size == 0:
        return math.inf, None
    seconds = _feasible_seconds(evaluate(cfg, eff, model, **space), cfg)
    i = int(np.argmin(seconds))
    if not np.isfinite(seconds[i]):
        return math.inf, None
    return float(seconds[i]), {k: float(x[i]) for k, x in space.items()}


def fill_unpublished(cfg: dict, eff: dict, model: str = "library") -> dict:
    """A row with no published micro-batch size or interleaving: the model's best ones
    at the published (tp, pp) and recomputation (as the authors tuned them)."""
    if not (math.isnan(cfg["b"]) or math.isnan(cfg["v"])):
        return cfg
    space = layout_space(cfg, cfg["t"], cfg["p"])
    keep = space["recompute"] == cfg["recompute"]
    if not math.isnan(cfg["b"]):
        keep &= space["b"] == cfg["b"]
    if not math.isnan(cfg["v"]):
        keep &= space["v"] == cfg["v"]
    space = {k: x[keep] for k, x in space.items()}
    if space["t"].size == 0:
        return dict(
            cfg,
            b=1.0 if math.isnan(cfg["b"]) else cfg["b"],
            v=1.0 if math.isnan(cfg["v"]) else cfg["v"],
        )
    seconds = _feasible_seconds(evaluate(cfg, eff, model, **space), cfg)
    i = int(np.argmin(seconds))
    return dict(cfg, b=float(space["b"][i]), v=float(space["v"][i]), filled=True)


def published_seconds(row: pd.Series) -> float:
    """Published iteration time (s): the CSV's, or F/(N·X) from the TFLOP/s per GPU (F from
    the CSV's ``hw_flops_per_iter``, else `ref.iteration_flops` of the row's shape)."""
    value = _num(row.get("iter_time_s"))
    if value > 0:
        return value
    measured, value, gpus = row["measured"], _num(row["value"]), _num(row["gpus"])
    tokens = _num(row["global_batch"]) * _num(row["seq_len"])
    direct = {
        "iter_time_s": lambda: value,
        "iter_time_ms": lambda: value / 1e3,
        "tokens_per_s": lambda: tokens / value,
        "tokens_per_s_per_gpu": lambda: tokens / (value * gpus),
        "samples_per_s": lambda: _num(row["global_batch"]) / value,
    }
    if measured in direct:
        return direct[measured]()
    if measured == "tflops_per_gpu":
        return row_flops(row) / (gpus * value * 1e12)
    share = value / 100.0 if value > 1.0 else value  # a percentage, or a fraction
    if measured == "pct_peak":
        return row_flops(row) / (gpus * row_peak_flops(row) * share)
    if measured == "mfu":
        model = _num(row.get("model_flops_per_iter"))
        flops = model if model > 0 else row_flops(row, ref.NONE)
        return flops / (gpus * row_peak_flops(row) * share)
    return math.nan


def _share_within(items: list) -> float | None:
    """Share of `items` with a layout gap whose gap is at most 2% (None without any)."""
    gaps = [i["layout_gap_pct"] for i in items if i.get("layout_gap_pct") is not None]
    return float(np.mean([g <= 2.0 for g in gaps])) if gaps else None


def row_flops(row: pd.Series, recompute: int | None = None) -> float:
    """FLOPs of one iteration of `row`: the CSV's ``hw_flops_per_iter``, else
    `ref.iteration_flops` of its shape with its recomputation (or `recompute`: `ref.NONE`
    gives the model FLOPs of an MFU)."""
    flops = _num(row.get("hw_flops_per_iter"))
    if flops > 0 and recompute is None:
        return flops
    if recompute is None:
        recompute = ref.RECOMPUTE_CODES[row_recompute(row)]
    return float(
        ref.iteration_flops(
            row["hidden"],
            row["seq_len"],
            row["layers"],
            row["vocab"],
            row["global_batch"],
            recompute,
            row["heads"],
            row_arch(row) or None,
        )
    )


def row_peak_flops(row: pd.Series) -> float:
    """Peak FLOP/s of one GPU of `row`: its ``peak_tflops``, else its GPU's spec sheet."""
    peak = _num(row.get("peak_tflops"))
    return peak * 1e12 if peak > 0 else pm.GPUS[row_gpu(row)]["peak_flops"]


def row_gpu(row: pd.Series) -> str:
    """The `perfmodel.GPUS` key of the row's ``gpu`` (blank: A100-80GB, the GPU of every
    run in `DEFAULT_CSV`; `check_rows` refuses names `perfmodel.gpu_named` does not know)."""
    name = row.get("gpu")
    return "A100-80GB" if _blank(name) else pm.gpu_named(str(name))


def row_recompute(row: pd.Series) -> str:
    """The row's ``recompute`` (none, selective or full; blank: full, as in [N21])."""
    name = row.get("recompute")
    return "full" if _blank(name) else str(name).strip().lower()


def _blank(value) -> bool:
    """An empty CSV cell (NaN once read), or only spaces."""
    if isinstance(value, float) and math.isnan(value):
        return True
    return value is None or not str(value).strip()


WHOLE_COLUMNS = ("hidden", "heads", "layers", "seq_len", "vocab", "tp", "pp", "gpus")
WHOLE_COLUMNS += ("global_batch",)
OPTIONAL_WHOLE = ("dp", "microbatch_size", "interleave", "query_groups", "ffn_hidden")
OPTIONAL_POSITIVE = ("peak_tflops", "iter_time_s", "hw_flops_per_iter", "model_flops_per_iter")
OPTIONAL_CHOICES = {
    "seq_parallel": (0, 1),
    "gated_mlp": (0, 1),
    "untied_embeddings": (0, 1),
    "zero": (0, 1, 2, 3),
}
SHARES = ("pct_peak", "mfu")  # a percentage up to 100, or a fraction up to 1


def check_rows(frame: pd.DataFrame, path) -> None:
    """Stop with one line naming the file, line, row id and column of the first cell that
    is not what `row_settings` and `published_seconds` need (`frame`'s index is the
    row's place among the file's lines after the header: `read_runs`)."""
    known = (*TIME_MEASURES, *MEMORY_MEASURES)
    for i, row in frame.iterrows():
        if _blank(row.get("id")):
            raise SystemExit(f"{_names(path)}, line {i + 2}, column id: expected a run id")
        where = f"{_names(path)}, line {i + 2} (id {row['id']})"

        def stop(column, expected, got):
            got = "" if _blank(got) else got
            raise SystemExit(f"{where}, column {column}: expected {expected}, got {got!r}")

        for column in WHOLE_COLUMNS:
            if not _whole(row[column]):
                stop(column, "a positive whole number", row[column])
        if not (math.isfinite(_num(row["value"])) and _num(row["value"]) > 0):
            stop("value", "a positive number", row["value"])
        for column in OPTIONAL_WHOLE:
            if not _blank(row.get(column)) and not _whole(row[column]):
                stop(column, "a positive whole number or nothing", row[column])
        for column in OPTIONAL_POSITIVE:
            value = _num(row.get(column))
            if not _blank(row.get(column)) and not (math.isfinite(value) and value > 0):
                stop(column, "a positive number or nothing", row[column])
        peak = _num(row.get("peak_tflops"))
        if math.isfinite(peak) and not 1.0 <= peak <= 10_000.0:
            stop("peak_tflops", "one GPU's dense peak in TFLOP/s (1 to 10000)", row["peak_tflops"])
        for column, choices in OPTIONAL_CHOICES.items():
            if not _blank(row.get(column)) and _num(row[column]) not in choices:
                stop(column, f"one of {', '.join(map(str, choices))} or nothing", row[column])
        tp, pp, gpus = _num(row["tp"]), _num(row["pp"]), _num(row["gpus"])
        if gpus % (tp * pp):
            stop("gpus", f"a multiple of tp × pp = {tp * pp:g}", row["gpus"])
        if _num(row["heads"]) % tp:
            stop("heads", f"a multiple of tp = {tp:g} (Megatron-LM splits heads)", row["heads"])
        v = 1.0 if _blank(row.get("interleave")) else _num(row["interleave"])
        if _num(row["layers"]) % (pp * v):
            stop("layers", f"a multiple of pp × interleave = {pp * v:g}", row["layers"])
        dp = _num(row.get("dp"))
        if not math.isnan(dp) and dp * tp * pp != gpus:
            stop("dp", f"gpus / (tp × pp) = {gpus / (tp * pp):g}", row["dp"])
        replicas, b = gpus / (tp * pp), _num(row.get("microbatch_size"))
        if _num(row["global_batch"]) % replicas:
            stop(
                "global_batch",
                f"a multiple of dp = gpus / (tp × pp) = {replicas:g}",
                row["global_batch"],
            )
        if math.isfinite(b) and _num(row["global_batch"]) % (replicas * b):
            stop(
                "microbatch_size",
                f"a divisor of global_batch / dp = {_num(row['global_batch']) / replicas:g}",
                row["microbatch_size"],
            )
        if not _blank(row.get("gpu")) and pm.gpu_named(str(row["gpu"])) is None:
            stop("gpu", f"one of {', '.join(pm.GPUS)} (or A100, H100, DGX H100, ...)", row["gpu"])
        if not _blank(row.get("stack")) and str(row["stack"]).strip() not in ref.STACKS:
            stop("stack", f"one of {', '.join(ref.STACKS)}", row["stack"])
        if row_recompute(row) not in ref.RECOMPUTE_CODES:
            stop("recompute", f"one of {', '.join(ref.RECOMPUTE_CODES)}", row["recompute"])
        if row["measured"] not in known:
            stop("measured", f"one of {', '.join(known)}", row["measured"])
        if row["measured"] in SHARES and not _num(row["value"]) <= 100.0:
            stop("value", f"a {row['measured']} up to 100 (%) or 1 (a fraction)", row["value"])


def _whole(value) -> bool:
    number = _num(value)
    return math.isfinite(number) and number >= 1 and number == int(number)


BOUNDS = {"e_max": (0.3, 0.95), "d0": (1.0, 5000.0)}


def fit_efficiency(
    cfgs: list, seconds: list, prior: dict = ref.PRIOR_EFFICIENCY, model: str = "library"
) -> dict:
    """Fit (e_max, d0) of the GEMM efficiency to ≤ 2 rows' times (log error).

    One row fits e_max alone (d0 stays at the prior); two rows fit both. Bounds
    (`BOUNDS`): e_max ∈ [0.3, 0.95] (cuBLAS does not sustain more of the tensor-core
    peak), d0 ∈ [1, 5000] elements. The library fits with `perfmodel.fit` (every other
    parameter fixed at the rows' hardware); the reference with SciPy's least squares.
    """
    if not cfgs:
        return dict(prior)
    names = ["e_max"] if len(cfgs) == 1 else ["e_max", "d0"]
    if model == "library":
        return _fit_library(cfgs, seconds, prior, names)
    lower = {"e_max": BOUNDS["e_max"][0], "d0": 0.0}

    def residual(x):
        eff = dict(prior, **dict(zip(names, x)))
        return [
            math.log(float(evaluate(c, eff, model)["time"]["total"]) / s)
            for c, s in zip(cfgs, seconds)
        ]

    sol = least_squares(
        residual,
        [prior[n] for n in names],
        bounds=([lower[n] for n in names], [BOUNDS[n][1] for n in names]),
    )
    return dict(prior, **dict(zip(names, map(float, sol.x))))


def _fit_library(cfgs: list, seconds: list, prior: dict, names: list) -> dict:
    if any(c["hw"] != cfgs[0]["hw"] for c in cfgs):
        raise SystemExit("--calibrate: the rows run on different hardware; calibrate on one")
    with jax.enable_x64(True):
        configs = [library_config(c) for c in cfgs]
        columns = {
            name: [float(getattr(config, name)) for config in configs]
            for name in pm.Config.__dataclass_fields__
            if name != "gpus"
        }
        data = pm.from_arrays(
            [float(c.gpus) for c in configs], list(seconds), source="calibration", **columns
        )
        start = library_model(cfgs[0], prior)
        free = {f"compute.{n}" for n in names}
        fix = {k: float(v) for k, v in start.parameters().items() if k not in free}
        bounds = {f"compute.{n}": BOUNDS[n] for n in names}
        found = pm.fit(start, data, fix=fix, bounds=bounds)
        values = found.parameters()
    return dict(prior, **{n: values[f"compute.{n}"] for n in names})


def _layout_str(lay: dict | None) -> str:
    if lay is None:
        return "none feasible"
    names = {ref.NONE: "none", ref.SELECTIVE: "sel", ref.FULL: "full"}
    return (
        f"tp{lay['t']:.0f} pp{lay['p']:.0f} b{lay['b']:.0f} v{lay['v']:.0f} "
        f"{names[int(lay['recompute'])]}"
    )


SENSITIVITY_PARAMETERS = ("e_max", "d0", "nvlink_bandwidth", "network_bandwidth", "hbm_bandwidth")


def sensitivities(cfg: dict, eff: dict, step: float = 1e-3, model: str = "library") -> dict:
    """d ln T / d ln θ of the row's iteration time for the efficiency and link parameters.

    A parameter is identifiable from a set of rows when its column of these elasticities
    is large and not proportional to another's (see `identifiability`).
    """
    base = math.log(float(evaluate(cfg, eff, model)["time"]["total"]))
    out = {}
    for name in SENSITIVITY_PARAMETERS:
        if name in eff:
            moved = evaluate(cfg, dict(eff, **{name: eff[name] * math.exp(step)}), model)
        else:
            hw = dict(cfg["hw"], **{name: cfg["hw"][name] * math.exp(step)})
            moved = evaluate(dict(cfg, hw=hw), eff, model)
        out[name] = (math.log(float(moved["time"]["total"])) - base) / step
    return out


def identifiability(rows: list) -> dict:
    """Condition number of the calibration rows' elasticities in (e_max, d0).

    Large (≳ 30) means the two rows cannot tell e_max from d0 apart.
    """
    cal = [r["sensitivity"] for r in rows if r.get("calibration") and "sensitivity" in r]
    if len(cal) < 2:
        return dict(condition_number=None)
    jac = np.array([[c["e_max"], c["d0"]] for c in cal])
    sv = np.linalg.svd(jac, compute_uv=False)
    return dict(condition_number=float(sv[0] / sv[-1]) if sv[-1] > 0 else math.inf)


def read_runs(csv_paths) -> pd.DataFrame:
    """The rows of every CSV in `csv_paths` (one path or several) as one table; each file
    must have `REQUIRED_COLUMNS`, and row ids must not repeat."""
    frames = []
    for path in _paths(csv_paths):
        try:  # blank lines kept as empty rows, so that the index counts the file's lines
            frame = pd.read_csv(path, skip_blank_lines=False).dropna(how="all")
        except (OSError, UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as e:
            raise SystemExit(f"{path}: not a readable CSV ({str(e).splitlines()[0]})") from None
        try:  # pandas read a repeated column as `tp.1`, which nothing reads
            with open(path, encoding="utf-8-sig") as stream:
                header_columns(stream.readline().rstrip("\r\n"), os.fspath(path))
        except pm.InputError as e:
            raise SystemExit(str(e)) from None
        missing = [c for c in REQUIRED_COLUMNS if c not in frame.columns]
        if missing:
            raise SystemExit(f"{path}: missing column(s) {', '.join(missing)}")
        check_rows(frame, path)
        frames.append(frame)
    frame = pd.concat(frames, ignore_index=True)
    if frame.empty:
        raise SystemExit(f"{_names(csv_paths)}: no runs (a header and no rows)")
    repeated = sorted(set(frame["id"][frame["id"].duplicated()]))
    if repeated:
        raise SystemExit(
            f"{_names(csv_paths)}: row id(s) {', '.join(map(str, repeated))} appear twice"
        )
    return frame


def _paths(csv_paths) -> list:
    return [csv_paths] if isinstance(csv_paths, (str, os.PathLike)) else list(csv_paths)


def _names(csv_paths) -> str:
    """The CSV path(s), comma-separated: relative to the working folder when inside it."""

    def name(path) -> str:
        relative = os.path.relpath(path)
        return os.fspath(path) if relative.startswith("..") else relative

    return ",".join(name(p) for p in _paths(csv_paths))


def run(
    csv_path,
    calibrate: tuple[str, ...],
    quiet: bool = False,
    recompute_search: str = "stack",
    model: str = "library",
) -> dict:
    """Every row of `csv_path` predicted by `model` (see the module docstring)."""
    if model not in MODELS:
        raise SystemExit(f"--model: expected one of {', '.join(MODELS)}, got {model!r}")
    frame = read_runs(csv_path)
    unknown = [i for i in calibrate if i not in set(frame["id"])]
    if unknown:
        raise SystemExit(f"--calibrate: no row with id {', '.join(unknown)} in {_names(csv_path)}")
    prior = dict(ref.PRIOR_EFFICIENCY)
    rows = []
    for _, row in frame.iterrows():
        cfg = row_settings(row)
        kind = (
            "time"
            if row["measured"] in TIME_MEASURES
            else ("memory" if row["measured"] in MEMORY_MEASURES else "other")
        )
        rows.append(
            dict(
                row=row,
                cfg=fill_unpublished(cfg, prior, model),
                kind=kind,
                published=published_seconds(row) if kind == "time" else _num(row["value"]),
            )
        )
    fit_rows = [r for r in rows if r["row"]["id"] in calibrate and r["kind"] == "time"]
    fit_cfgs, fit_seconds = [r["cfg"] for r in fit_rows], [r["published"] for r in fit_rows]
    eff = fit_efficiency(fit_cfgs, fit_seconds, prior, model)
    # The research model beside it, calibrated the same way on its own.
    ref_eff = (
        eff if model == "reference" else fit_efficiency(fit_cfgs, fit_seconds, prior, "reference")
    )
    largest_difference = 0.0

    out_rows = []
    lines = []
    header = (
        f"{'id':26s} {'published':>10s} {'uncal':>9s} {'err%':>6s} {'calib':>9s} "
        f"{'err%':>6s} {'ref%':>6s} {'calculon%':>9s} {'mem':>6s}  {'published layout':22s} "
        f"{'model pick':22s} {'gap%':>5s}"
    )
    lines.append(header)
    for r in rows:
        row, cfg = r["row"], r["cfg"]
        rid = row["id"]
        item = dict(
            id=rid,
            dataset=row["dataset"],
            calibration=rid in calibrate,
            measured=row["measured"],
            published=r["published"],
            calculon_error_pct=CALCULON_ERROR_PCT.get(rid),
        )
        if r["kind"] == "time":
            raw = float(evaluate(cfg, prior, model)["time"]["total"])
            parts = evaluate(cfg, eff, model)
            cal = float(parts["time"]["total"])
            reference = float(evaluate(cfg, ref_eff, "reference")["time"]["total"])
            same = float(evaluate(cfg, eff, "reference")["time"]["total"])
            largest_difference = max(largest_difference, abs(cal / same - 1.0))
            best_s, best = search(cfg, eff, recompute_search=recompute_search, model=model)
            pub_s, pub = search(
                cfg, eff, tp=cfg["t"], pp=cfg["p"], recompute_search=recompute_search, model=model
            )
            gap = 100.0 * (pub_s / best_s - 1.0) if math.isfinite(best_s) else None
            few = best is not None and cfg["L"] / best["p"] < 2.0
            item.update(
                predicted_uncalibrated=raw,
                error_uncalibrated_pct=100.0 * (raw / r["published"] - 1.0),
                predicted=cal,
                error_pct=100.0 * (cal / r["published"] - 1.0),
                reference_error_pct=100.0 * (reference / r["published"] - 1.0),
                breakdown={k: float(x) for k, x in parts["time"].items()},
                memory_gib=float(parts["memory"]["total"]) / GIB,
                published_layout=dict(
                    tp=cfg["t"],
                    pp=cfg["p"],
                    microbatch_size=cfg["b"],
                    interleave=cfg["v"],
                    recompute=int(cfg["recompute"]),
                ),
                model_layout=None
                if best is None
                else dict(
                    tp=best["t"],
                    pp=best["p"],
                    microbatch_size=best["b"],
                    interleave=best["v"],
                    recompute=int(best["recompute"]),
                ),
                layout_gap_pct=gap,
                pick_under_two_layers_per_stage=bool(few),
                filled_by_model=bool(cfg.get("filled", False)),
                sensitivity=sensitivities(cfg, eff, model=model),
            )
            if few:  # how much faster than the best with ≥ 2 layers per stage
                two_s, _ = search(
                    cfg, eff, recompute_search=recompute_search, min_layers=2.0, model=model
                )
                item["pick_gain_over_two_layers_pct"] = 100.0 * (two_s / best_s - 1.0)
            calc = (
                "" if item["calculon_error_pct"] is None else f"{item['calculon_error_pct']:+.2f}"
            )
            published = dict(
                t=cfg["t"], p=cfg["p"], b=cfg["b"], v=cfg["v"], recompute=cfg["recompute"]
            )
            gap_text = "" if gap is None else f"{gap:.1f}"
            lines.append(
                f"{rid:26s} {r['published']:9.3f}s {raw:8.3f}s "
                f"{item['error_uncalibrated_pct']:+6.1f} {cal:8.3f}s {item['error_pct']:+6.1f} "
                f"{item['reference_error_pct']:+6.1f} "
                f"{calc:>9s} {item['memory_gib']:5.1f}G  {_layout_str(published):22s} "
                f"{_layout_str(best):22s} {gap_text:>5s}" + (" *" if rid in calibrate else "")
            )
        elif r["kind"] == "memory":
            mem = evaluate(cfg, eff, model)["memory"]
            pred = float(mem[MEMORY_MEASURES[row["measured"]]]) / GIB
            same = float(evaluate(cfg, eff, "reference")["memory"]["total"])
            largest_difference = max(largest_difference, abs(float(mem["total"]) / same - 1.0))
            item.update(
                predicted=pred,
                error_pct=100.0 * (pred / r["published"] - 1.0),
                predicted_total_gib=float(mem["total"]) / GIB,
                layout_gap_pct=None,
            )
            calc = (
                "" if item["calculon_error_pct"] is None else f"{item['calculon_error_pct']:+.2f}"
            )
            lines.append(
                f"{rid:26s} {r['published']:8.2f}G {'':9s} {'':6s} {pred:8.2f}G "
                f"{item['error_pct']:+6.1f} {'':6s} {calc:>9s}  (memory, GiB per GPU)"
            )
        else:
            item.update(error_pct=None, layout_gap_pct=None)
        out_rows.append(item)

    def summary(items, key="error_pct"):
        errs = [abs(i[key]) for i in items if i.get(key) is not None]
        if not errs:
            return None
        return dict(
            rows=len(errs),
            mean_abs_error_pct=float(np.mean(errs)),
            max_abs_error_pct=float(np.max(errs)),
        )

    timing = [i for i in out_rows if i["measured"] in TIME_MEASURES]
    held_out = [i for i in timing if not i["calibration"]]
    memory = [i for i in out_rows if i["measured"] in MEMORY_MEASURES]
    gaps = [i["layout_gap_pct"] for i in timing if i["layout_gap_pct"] is not None]
    tables = {}
    for name in sorted({i["dataset"] for i in out_rows}):
        items = [i for i in out_rows if i["dataset"] == name]
        tables[name] = dict(
            calibrated=summary([i for i in items if not i["calibration"]]),
            calibrated_all_rows=summary(items),
            uncalibrated=summary(items, "error_uncalibrated_pct"),
            layout_within_2pct=_share_within(items),
        )
    result = dict(
        csv=_names(csv_path),
        model="perfmodel.hybrid" if model == "library" else "benchmarks/_megatron_reference.py",
        calibration=list(calibrate),
        efficiency=eff,
        reference_efficiency=ref_eff,
        library_vs_reference_max_rel_diff=largest_difference,
        mean_abs_error_pct=summary(held_out)["mean_abs_error_pct"] if held_out else None,
        max_abs_error_pct=summary(held_out)["max_abs_error_pct"] if held_out else None,
        uncalibrated=summary(timing, "error_uncalibrated_pct"),
        memory_max_abs_error_pct=summary(memory)["max_abs_error_pct"] if memory else None,
        memory_mean_abs_error_pct=summary(memory)["mean_abs_error_pct"] if memory else None,
        layout_within_2pct=float(np.mean([g <= 2.0 for g in gaps])) if gaps else None,
        recompute_search=recompute_search,
        identifiability=identifiability(out_rows),
        picks_under_two_layers_per_stage=sum(
            i.get("pick_under_two_layers_per_stage", False) for i in timing
        ),
        tables=tables,
        rows=out_rows,
        at_bound=bound_notes(eff, len(fit_rows)),
    )
    if not quiet:
        print(
            f"{result['model']}: compute efficiency e_max={eff['e_max']:.4f}, "
            f"d0={eff['d0']:.1f} (calibrated on {', '.join(calibrate) or 'nothing'}; prior "
            f"e_max={prior['e_max']}, d0={prior['d0']}); ref% = the NumPy reference, "
            f"calibrated alike (e_max={ref_eff['e_max']:.4f}, d0={ref_eff['d0']:.1f}); "
            f"largest library/reference difference at the same efficiency "
            f"{largest_difference:.1e}"
        )
        print("\n".join(lines))
        for name, tab in tables.items():
            print(
                f"{name}: calibrated {tab['calibrated']}; uncalibrated {tab['uncalibrated']}; "
                f"layout within 2%: {tab['layout_within_2pct']}"
            )
        for note in result["at_bound"]:
            print(f"warning: {note}")
    return result


def bound_notes(eff: dict, fitted_rows: int) -> list[str]:
    """A sentence per calibrated parameter that ended at a bound of `BOUNDS`: there the
    runs ask for what the model's hardware cannot give, and the errors say more about the
    fixed numbers (the peak, the links) than about the fit."""
    names = ["e_max"] if fitted_rows == 1 else ["e_max", "d0"] if fitted_rows else []
    notes = []
    for name in names:
        low, high = BOUNDS[name]
        if eff[name] >= high * (1 - 1e-6):
            why = (
                "the calibration runs are faster than the model allows on this GPU and "
                "software: is peak_tflops right (FP8 runs: twice the BF16 peak, 1979 on "
                "H100), is gpu the GPU used, and is the stack the run's (a 2023+ run is "
                "megatron-core: flash attention, overlapped gradient reduction)?"
                if name == "e_max"
                else "the runs' GEMMs lose more to their size than the model expects"
            )
            notes.append(f"{name} ended at its upper bound {high:g}: {why}")
        elif eff[name] <= low * (1 + 1e-6) and name == "e_max":
            notes.append(
                f"e_max ended at its lower bound {low:g}: the calibration runs are slower than "
                "30% of the peak; is peak_tflops right, and were they measured as the CSV says?"
            )
        elif eff[name] <= low * (1 + 1e-6):
            notes.append(
                f"d0 ended at its lower bound {low:g}: the runs' smaller GEMMs are no slower "
                "than their larger ones, so the size penalty is gone and e_max carries the "
                "fit alone; two runs of different shapes and the same software pin it"
            )
    return notes


RUN_COLUMNS = (
    "gpus",
    "time_s",
    "tp",
    "pp",
    "layers",
    "hidden",
    "heads",
    "seq_len",
    "vocab",
    "global_batch",
    "microbatch_size",
    "interleave",
    "recompute",
    "seq_parallel",
    "zero",
    *STACK_FIELDS,
    "gpus_per_node",
    "gpu_memory_bytes",
)


def write_runs(csv_path, out: str) -> None:
    """The timing rows of `csv_path` as a `perfmodel fit` CSV (one column per `Config`
    field the hybrid family reads, iteration seconds in ``time_s``, the published set in
    ``series``); `benchmarks/megatron_runs.csv` is this of the default CSV."""
    frame = read_runs(csv_path)
    names = {v: k for k, v in ref.RECOMPUTE_CODES.items()}
    rows = []
    for _, row in frame[frame["measured"].isin(TIME_MEASURES)].iterrows():
        c = fill_unpublished(row_settings(row), ref.PRIOR_EFFICIENCY, "reference")
        config = library_config(c)
        values = {n: float(getattr(config, n)) for n in RUN_COLUMNS if n != "time_s"}
        values["time_s"] = round(published_seconds(row), 6)
        values["recompute"] = names[int(values["recompute"])]
        rows.append({"series": row["dataset"], **{n: values[n] for n in RUN_COLUMNS}})
    table = pd.DataFrame(rows)
    for name in RUN_COLUMNS:
        if name not in ("time_s", "recompute") and (table[name] == table[name].round()).all():
            table[name] = table[name].astype(np.int64)
    table.to_csv(out, index=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--csv",
        nargs="+",
        default=[DEFAULT_CSV],
        metavar="PATH",
        help="runs CSV(s), read as one table (default: the published set)",
    )
    parser.add_argument(
        "--calibrate",
        default=",".join(DEFAULT_CALIBRATION),
        help="comma-separated row ids to fit the compute efficiency on "
        f"(at most two; empty: none; default {','.join(DEFAULT_CALIBRATION)})",
    )
    parser.add_argument(
        "--recompute-search",
        choices=("stack", "row"),
        default="stack",
        help="layout search over every recomputation mode of the row's "
        "software (stack, default) or only the row's own (row)",
    )
    parser.add_argument(
        "--model",
        choices=MODELS,
        default="library",
        help="perfmodel's hybrid family (library, default) or the NumPy reference",
    )
    parser.add_argument(
        "--write-runs",
        metavar="PATH",
        help="write the timing rows as a `perfmodel fit` CSV to PATH and stop",
    )
    args = parser.parse_args()
    if args.write_runs:
        write_runs(args.csv, args.write_runs)
        return
    calibrate = tuple(i for i in args.calibrate.split(",") if i)
    if len(calibrate) > 2:
        raise SystemExit("--calibrate: at most two rows")
    if len(set(calibrate)) < len(calibrate):
        raise SystemExit(f"--calibrate: {calibrate[0]} given twice; name two different rows")
    absent = [p for p in args.csv if not os.path.exists(p)]
    if absent:
        raise SystemExit(f"--csv: {', '.join(absent)} not found")
    result = run(args.csv, calibrate, recompute_search=args.recompute_search, model=args.model)
    print(json.dumps(_finite(result)))


def _finite(x):
    """`x` with NaN and infinities as null, so the last line is strict JSON."""
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_finite(v) for v in x]
    if isinstance(x, (float, np.floating)):
        return float(x) if math.isfinite(x) else None
    if isinstance(x, np.integer):
        return int(x)
    return x


if __name__ == "__main__":
    try:
        main()
    except SystemExit as stop:  # bad input: its one line, and status 2 as the CLI's
        if isinstance(stop.code, str):
            print(f"megatron.py: error: {stop.code}", file=sys.stderr)
            raise SystemExit(2) from None
        raise
