"""What a training step of a GPT transformer achieves per GPU: model FLOPs utilisation,
hardware FLOP/s and tokens per second.

The numbers large-model trainers compare layouts and clusters by: Megatron-LM logs the
hardware TFLOP/s per GPU (the FLOPs of `iteration_flops`, recomputation included, over
the step time) [N21 §5.1]; PaLM's model FLOPs utilisation counts only the FLOPs the
model needs, without recomputation, against the peak (Chowdhery et al. 2022, arXiv
2204.02311, App. B) [K22 §6].
"""

import dataclasses

import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float

from ..._config import Config
from .shape import iteration_flops


@dataclasses.dataclass(frozen=True)
class StepRates:
    """Per-GPU rates of one training step.

    Attributes:
        mfu: model FLOPs utilisation, ``F_model / (T·N·peak)``: the FLOPs of the step
            without recomputation (`iteration_flops` at recompute none) over what N GPUs
            at their peak dense FLOP/s do in T seconds (a fraction).
        hardware_tflops_per_gpu: ``F_hw / (T·N) / 10¹²``, F_hw the FLOPs actually run,
            recomputation included: what Megatron-LM logs (TFLOP/s).
        tokens_per_s_per_gpu: ``B·s / (T·N)``, sequences of s tokens in a global batch of
            B (tokens/s).
    """

    mfu: Float[Array, "..."]
    hardware_tflops_per_gpu: Float[Array, "..."]
    tokens_per_s_per_gpu: Float[Array, "..."]


def step_rates(
    config: Config, step_time_s: Float[ArrayLike, "..."], peak_flops: Float[ArrayLike, ""]
) -> StepRates:
    """`StepRates` of a step of `step_time_s` seconds on `config` (its shape, global batch,
    recomputation and ``gpus``), at `peak_flops` dense FLOP/s per GPU.

    Example:
        >>> import perfmodel as pm
        >>> gpt3 = pm.Config(gpus=1024.0, hidden=12288, seq_len=2048, layers=96,
        ...                  vocab=51200, global_batch=1536, recompute=2)
        >>> rates = step_rates(gpt3, 27.0, 312e12)  # GPT-3 175B, 27 s per step on A100s
        >>> round(float(rates.hardware_tflops_per_gpu)), round(float(rates.mfu), 2)
        (163, 0.39)
    """
    time_s = jnp.asarray(step_time_s)
    gpu_seconds = time_s * config.gpus
    hardware = iteration_flops(config)
    model = iteration_flops(dataclasses.replace(config, recompute=0.0 * config.recompute))
    return StepRates(
        mfu=model / (gpu_seconds * peak_flops),
        hardware_tflops_per_gpu=hardware / gpu_seconds / 1e12,
        tokens_per_s_per_gpu=config.global_batch * config.seq_len / gpu_seconds,
    )
