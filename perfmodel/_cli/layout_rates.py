"""What a hybrid fit's layout search answers besides the step time: the workload it
searched for, the per-GPU rates of its picks, and why an efficiency exceeds 100%.

A newcomer review (2026-12-07) read "optimal (time): 480 GPUs … efficiency 290.9%"
with no word of the model or batch searched for, nor of why a larger count was three
times as efficient: the fewest GPUs on which any layout fits spent two thirds of its
step in ZeRO-3's parameter gathers. Large-model trainers compare layouts by model FLOPs
utilisation and tokens per second per GPU (`step_rates`), which no command printed.
"""

import math

import jax

from .._config import Config, WORKLOAD_FIELDS
from .._presets import hybrid_kind
from .._terms import model_parameters, step_rates

PARTS = ("compute", "kernels", "tensor", "p2p", "allreduce")
"""The terms of the `hybrid` family, in the order of its breakdown (seconds per step)."""

PART_WORDS = {
    "compute": "the GEMMs",
    "kernels": "memory-bound kernels",
    "tensor": "tensor-parallel collectives",
    "p2p": "pipeline sends",
    "allreduce": "data-parallel collectives (ZeRO's gathers included)",
}


def workload_of(result, fixed: dict, changed: tuple[str, ...]) -> dict | None:
    """The model shape and global batch a search of a ``hybrid`` fit is for, its
    parameter count, and where the values come from (the fit's run, or ``--set``)."""
    if hybrid_kind(result.model) != "hybrid":
        return None
    values = {k: float(fixed[k]) for k in WORKLOAD_FIELDS["hybrid"] if k in fixed}
    with jax.enable_x64(True):
        parameters = float(model_parameters(Config(gpus=1.0, **fixed_config(fixed))))
    given = [k for k in WORKLOAD_FIELDS["hybrid"] if k in changed]
    return {**values, "parameters": parameters, "set": given}


def fixed_config(fixed: dict) -> dict:
    """`fixed` without ``gpus`` (a layout gives it)."""
    return {k: v for k, v in fixed.items() if k != "gpus"}


def rates_of(result, fixed: dict, layout: dict, time_s: float) -> dict | None:
    """`step_rates` of `layout` at `time_s` seconds per step (None for a fit other than
    ``hybrid``, whose FLOPs its shape does not give)."""
    peak = result.parameters().get("compute.peak_flops")
    if hybrid_kind(result.model) != "hybrid" or not peak:
        return None
    with jax.enable_x64(True):
        config = Config(**{**fixed_config(fixed), **layout})
        rates = step_rates(config, time_s, peak)
    return {
        "mfu": float(rates.mfu),
        "hardware_tflops_per_gpu": float(rates.hardware_tflops_per_gpu),
        "tokens_per_s_per_gpu": float(rates.tokens_per_s_per_gpu),
    }


def breakdown_of(row) -> dict[str, float]:
    """Seconds per step of each term of a search's row (``compute_s``, …)."""
    return {p: float(row[f"{p}_s"]) for p in PARTS if f"{p}_s" in row}


def workload_line(workload: dict | None) -> str | None:
    """``workload: a 530B-parameter model (layers 105, hidden 20480, …), global batch
    280 (--set …)``."""
    if not workload:
        return None
    size = workload["parameters"]
    scale = next((f"{size / d:.3g}{u}" for d, u in ((1e12, "T"), (1e9, "B")) if size >= d), None)
    scale = scale or f"{size / 1e6:.3g}M"
    shape = ", ".join(
        f"{word} {workload[k]:g}"
        for k, word in (
            ("layers", "layers"),
            ("hidden", "hidden"),
            ("heads", "heads"),
            ("seq_len", "sequence"),
            ("vocab", "vocabulary"),
        )
        if k in workload
    )
    batch = f", global batch {workload['global_batch']:g}" if "global_batch" in workload else ""
    given = workload["set"]
    source = " (the fit's run)"
    if given:
        source = f" (--set {', '.join(given)}; the rest the fit's run's)"
    return f"workload: a {scale}-parameter model ({shape}){batch}{source}"


def rates_text(rates: dict | None) -> str:
    """``, MFU 52.1% (162 TFLOP/s per GPU counting recomputation, 1234 tokens/s per GPU)``
    or ``""``."""
    if not rates or not all(math.isfinite(v) for v in rates.values()):
        return ""
    return (
        f", MFU {rates['mfu']:.1%} ({rates['hardware_tflops_per_gpu']:.3g} TFLOP/s per GPU "
        f"counting recomputation, {rates['tokens_per_s_per_gpu']:.4g} tokens/s per GPU)"
    )


def superlinear_line(document: dict) -> str | None:
    """Why an efficiency above 100% is the layouts', not scaling's: the term on which the
    baseline layout spends the most GPU-seconds more than the pick per step, and its share
    of the baseline's step. None when no efficiency shown exceeds 100%."""
    base = document.get("baseline") or {}
    pick = document.get("breakdown")
    mine = base.get("breakdown")
    shown = [document["efficiency"], (document.get("worth_buying") or {}).get("efficiency", 0.0)]
    if not pick or not mine or max(shown) <= 1.0:
        return None
    n_base, n_pick = base["gpus"], document["gpus"]
    excess = {p: mine[p] * n_base - pick.get(p, 0.0) * n_pick for p in mine}
    part = max(excess, key=excess.get)
    share = mine[part] / base["time_s"] if base["time_s"] > 0 else math.nan
    layout = base.get("layout") or {}
    recipe = ", ".join(
        f"{k}={layout[k]:g}" for k in ("recompute", "zero", "pp", "tp") if k in layout
    )
    return (
        f"  efficiency above 100% is the layouts', not scaling's: the best layout at "
        f"{n_base:g} GPUs ({recipe}) spends {mine[part]:.4g} s of its {base['time_s']:.4g} s "
        f"step ({share:.0%}) on {PART_WORDS.get(part, part)}; the pick spends "
        f"{pick.get(part, 0.0):.4g} s of {document['time_s']:.4g} s on them. More GPUs let "
        "layouts that need less of it fit in memory"
    )
