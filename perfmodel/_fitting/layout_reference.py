"""The reference layout that speedups of a hybrid fit are against, and layouts evaluated.

A hybrid fit's speedup against one GPU is meaningless (no large model runs on one GPU):
`reference_time` picks the fit's measured run of the workload predicted on the fewest
GPUs, a layout known to run, or else the valid layout on the fewest GPUs of those asked
for. `FitResult.predict`, ``perfmodel predict`` and ``perfmodel optimal`` divide by its
model time.
"""

import math

import jax
import numpy as np

from .._config import Config, LAYOUT_FIELDS, with_defaults, WORKLOAD_FIELDS
from .._errors import InputError
from .._presets import hybrid_kind
from .._terms import (
    basic_memory_per_gpu,
    GPUS,
    layout_status,
    memory_per_gpu,
    REASONS,
    USABLE_MEMORY,
)


def workload(values: dict, kind: str) -> tuple:
    """The model's shape and global batch (`WORKLOAD_FIELDS` of `kind`) in `values`."""
    return tuple(float(values.get(n, math.nan)) for n in WORKLOAD_FIELDS[kind])


def reference_layout(result, layouts: dict | None = None) -> dict[str, float] | None:
    """The fit's measured run on the fewest GPUs of the workload predicted (the model's
    shape and global batch, `WORKLOAD_FIELDS`): a layout known to be valid. None when
    no run measured that workload."""
    kind = hybrid_kind(result.model)
    first = {k: float(np.asarray(v).reshape(-1)[0]) for k, v in (layouts or {}).items()}
    wanted = workload(with_defaults(result.config_defaults, first), kind)
    runs = []
    for i in np.argsort(result.data.gpus, kind="stable"):
        values = {k: float(v[i]) for k, v in result.data.config.items()}
        values = {**result.config_defaults, **values, "gpus": float(result.data.gpus[i])}
        if workload(values, kind) == wanted:
            runs.append(values | {"measured_s": float(result.data.time_s[i])})
    return runs[0] if runs else None


def reference_time(result, layouts: dict | None = None) -> dict[str, float]:
    """`reference_layout`'s layout fields, predicted ``time_s``, what it is
    (``reference``) and its ``measured_s`` (None when not measured); without a measured
    run of the workload, the first valid row of `layouts`."""
    return reference_with_workload(result, layouts)[0]


def reference_with_workload(result, layouts: dict | None = None) -> tuple[dict, tuple]:
    """`reference_time` and the reference's workload (`workload`): speedups compare
    layouts of that workload only."""
    kind = hybrid_kind(result.model)
    reference, what = reference_values(result, layouts)
    measured = reference.pop("measured_s", None)
    one = {k: np.asarray([v]) for k, v in reference.items()}
    shown = {k: reference[k] for k in ("gpus", *LAYOUT_FIELDS) if k in reference}
    time_s = float(evaluate_layouts(result, one)["time_s"][0])
    found = {**shown, "time_s": time_s, "measured_s": measured, "reference": what}
    return found, workload(reference, kind)


def reference_values(result, layouts: dict | None = None) -> tuple[dict[str, float], str]:
    """Every `Config` value of the reference layout (``measured_s`` too when measured)
    and what it is: `reference_layout`, else the valid row of `layouts` on the fewest
    GPUs."""
    # "of this workload": the 22B run on 8 GPUs is the fit's fewest, not this reference
    # (review of 2026-12-06).
    what = "the fit's measured run of this workload on the fewest GPUs"
    reference = reference_layout(result, layouts)
    if reference is None and layouts is not None:
        found = evaluate_layouts(result, layouts)
        ok = np.flatnonzero(found["code"] == 0)
        if not len(ok):
            why = REASONS[int(np.ravel(found["code"])[0])]
            raise InputError(
                "no measured run of this workload, and no layout given is valid to compare "
                f"with (the first: {why})"
            )
        i = int(ok[np.argmin(np.asarray(layouts["gpus"])[ok])])
        reference = with_defaults(
            result.config_defaults, {k: float(v[i]) for k, v in layouts.items()}
        )
        what = "the valid layout on the fewest GPUs (no measured run of this workload)"
    if reference is None:
        raise InputError("no measured run of this workload to compare with")
    return reference, what


def row_workloads(result, layouts: dict) -> list[tuple]:
    """`workload` of each row of `layouts` (the fit's defaults where a field is not
    given)."""
    kind = hybrid_kind(result.model)
    n = len(np.asarray(layouts["gpus"]).reshape(-1))
    columns = {k: np.broadcast_to(np.ravel(np.asarray(v, float)), (n,)) for k, v in layouts.items()}
    return [
        workload(with_defaults(result.config_defaults, {k: v[i] for k, v in columns.items()}), kind)
        for i in range(n)
    ]


def reference_seconds(reference: dict) -> str:
    """``model 96.55 s, measured 94.42 s``: the reference's model time, which speedups
    divide, and its measured one when there is (else ``96.55 s``)."""
    if reference.get("measured_s") is None:
        return f"{reference['time_s']:.4g} s"
    return f"model {reference['time_s']:.4g} s, measured {reference['measured_s']:.4g} s"


def describe_layout(values: dict, fields=("gpus", *LAYOUT_FIELDS)) -> str:
    """``gpus=… tp=… …`` of the layout fields in `values`; a micro-batch count only where
    no size is given (the size decides the count: `Config.num_microbatches`)."""
    sized = float(values.get("microbatch_size", 0.0)) > 0.0
    shown = [k for k in fields if k in values and not (k == "microbatches" and sized)]
    return " ".join(f"{k}={float(values[k]):g}" for k in shown)


def memory_budget(result) -> dict[str, float]:
    """``{"gpu_memory_bytes": B}`` for a hybrid fit whose runs did not give it
    (`model_memory_budget` of its model), the budget every command holds its layouts to;
    {} when the runs gave it. (`predict` answered "ok" for 108 GB per GPU on an H100-80GB
    fit that `optimal` refused.)"""
    if "gpu_memory_bytes" in result.config_defaults:
        return {}
    return model_memory_budget(result.model)


def model_memory_budget(model) -> dict[str, float]:
    """``{"gpu_memory_bytes": B}`` for a Megatron-LM `hybrid` model: the share Megatron-Core
    leaves (`USABLE_MEMORY`) of the memory of the model's GPU (its ``gpu`` option,
    A100-80GB by default), in bytes; {} for other models. A sweep that named an H200
    counted every layout as fitting in memory unless the space gave the budget."""
    if not hybrid_kind(model):
        return {}
    _, spec = model_gpu(model)
    return {"gpu_memory_bytes": USABLE_MEMORY["megatron-core"] * spec["memory_bytes"]}


def model_gpu(model) -> tuple[str, dict[str, float]]:
    """The name and `GPUS` entry of the GPU a hybrid model was built for (its ``gpu``
    option; A100-80GB when it names none)."""
    gpu = dict(getattr(model, "options", {})).get("gpu", "A100-80GB")
    return gpu, GPUS.get(gpu, GPUS["A100-80GB"])


def evaluate_layouts(result, layouts: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``time_s`` (s per step), ``code`` (`layout_status`, memory against
    `memory_budget`) and ``memory_gb`` (GB per GPU, 10⁹ bytes, the `memory_per_gpu` total
    the status checks) of the fit at `layouts`."""
    kind = hybrid_kind(result.model)
    defaults = {**memory_budget(result), **result.config_defaults}
    memory = memory_per_gpu if kind == "hybrid" else basic_memory_per_gpu
    with jax.enable_x64(True):
        config = Config(**with_defaults(defaults, layouts))
        time_s = np.asarray(result.model(config), dtype=np.float64)
        code = np.asarray(layout_status(config, kind))
        memory_gb = np.asarray(memory(config)["total"], dtype=np.float64) / 1e9
    return {
        "time_s": np.broadcast_to(time_s, code.shape),
        "code": code,
        "memory_gb": np.broadcast_to(memory_gb, code.shape),
    }
