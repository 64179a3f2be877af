"""Statistical efficiency of large batches in closed form: steps and work to a target as
a function of the global batch, and time (or cost) to train as those steps times the
step time.

McCandlish et al. (2018, "An Empirical Model of Large-Batch Training") find that, with the
learning rate tuned for each batch, the optimizer steps S and the training examples E
needed to reach a given loss trade off along a hyperbola::

    (S/S_min − 1)(E/E_min − 1) = 1,   S = S_min·(1 + B_noise/B),   E = E_min·(1 + B/B_noise)

with E = B·S. B_noise (samples) is the critical batch: well below it doubling the batch
halves the steps (E stays near E_min); well above it the steps stay near S_min and the
extra samples are wasted. E may be counted in samples or in epochs (samples / dataset
size D); then S = E·D/B, and `samples_per_unit` = D converts.

Time to train at N GPUs and global batch B is ``S(B)·T_step(N, B)``, with the step time
from any step-time family; its cost is ``N·time/3600·price`` (GPU-hours at price 1).
Every function broadcasts over NumPy or JAX arrays; the parameters travel in a small
Equinox module, `CriticalBatch`, stored as logarithms.
"""

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float


def work_to_target(batch, work_min, noise_batch):
    """Examples (or epochs) to the target at global batch `batch`: ``E_min·(1 + B/B_noise)``.

    Args:
        batch: global batch B, samples per step.
        work_min: E_min, the work needed with a vanishing batch (samples, or epochs).
        noise_batch: B_noise, samples (inf: work independent of the batch).
    """
    return work_min * (1.0 + batch / noise_batch)


def steps_to_target(batch, work_min, noise_batch, samples_per_unit=1.0):
    """Optimizer steps to the target: ``S = E·D/B = S_min·(1 + B_noise/B)`` with
    ``S_min = E_min·D/B_noise``; `samples_per_unit` D is the samples per unit of work
    (1 when E is in samples, the dataset size when in epochs)."""
    return work_to_target(batch, work_min, noise_batch) * samples_per_unit / batch


def steps_min(work_min, noise_batch, samples_per_unit=1.0):
    """S_min = E_min·D/B_noise, the steps needed with an unbounded batch."""
    return work_min * samples_per_unit / noise_batch


def hyperbola(steps, work, steps_min_, work_min):
    """``(S/S_min − 1)(E/E_min − 1)``: 1 on the McCandlish trade-off curve."""
    return (steps / steps_min_ - 1.0) * (work / work_min - 1.0)


def statistical_efficiency(batch, noise_batch):
    """E_min/E(B) = 1/(1 + B/B_noise): the fraction of the samples at batch B that a
    vanishing batch would have needed (1 far below the critical batch, → 0 above)."""
    return 1.0 / (1.0 + batch / noise_batch)


def doubling_gain(batch, noise_batch):
    """S(B)/S(2B) = (1 + B_noise/B)/(1 + B_noise/(2B)): how many times fewer steps a
    doubled batch needs (→ 2 far below the critical batch, → 1 far above)."""
    return (1.0 + noise_batch / batch) / (1.0 + noise_batch / (2.0 * batch))


def time_to_train(step_time_s, batch, work_min, noise_batch, samples_per_unit=1.0):
    """Seconds to the target: ``S(B)·T_step`` with `step_time_s` seconds per step at B."""
    return steps_to_target(batch, work_min, noise_batch, samples_per_unit) * step_time_s


def cost_to_train(
    step_time_s, gpus, batch, work_min, noise_batch, samples_per_unit=1.0, price_per_gpu_hour=1.0
):
    """``N·time/3600·price``: GPU-hours to the target at price 1, else currency."""
    seconds = time_to_train(step_time_s, batch, work_min, noise_batch, samples_per_unit)
    return gpus * seconds / 3600.0 * price_per_gpu_hour


def optimal_batch(overhead_s, per_sample_s, noise_batch):
    """The batch minimising time to train at a fixed GPU count when the step time is
    linear in the batch, ``T_step = a + b·B`` (a: seconds per step that do not grow with
    the batch — communication, optimizer, launch; b: seconds per sample of the step at
    that GPU count): ``B* = sqrt(a·B_noise/b)``, where the steps saved by a larger batch
    stop paying for its longer step. (Time = S_min·(a + b·B + a·B_noise/B + b·B_noise),
    whose derivative in B vanishes there.)"""
    return (overhead_s * noise_batch / per_sample_s) ** 0.5


def minimum_time(overhead_s, per_sample_s, work_min, noise_batch, samples_per_unit=1.0):
    """The time to train at `optimal_batch`: ``S_min·(√a + √(b·B_noise))²``, seconds."""
    s_min = steps_min(work_min, noise_batch, samples_per_unit)
    return s_min * (overhead_s**0.5 + (per_sample_s * noise_batch) ** 0.5) ** 2


class CriticalBatch(eqx.Module):
    """The critical-batch model of the work to a target, parameters stored as logarithms.

    Fields:
        log_work_min: log E_min, E_min in the unit of the work it was fitted to (samples
            or epochs).
        log_noise_batch: log B_noise, B_noise in samples (the unit of the global batch).
    """

    log_work_min: Float[Array, ""] = eqx.field(converter=jnp.asarray)
    log_noise_batch: Float[Array, ""] = eqx.field(converter=jnp.asarray)

    @property
    def work_min(self) -> Float[Array, ""]:
        return jnp.exp(self.log_work_min)

    @property
    def noise_batch(self) -> Float[Array, ""]:
        return jnp.exp(self.log_noise_batch)

    def __call__(self, batch: ArrayLike) -> Float[Array, "..."]:
        """Work to the target at `batch` (unit of E_min); finite gradients at any batch."""
        return jnp.exp(self.log_work_min + jnp.log1p(batch * jnp.exp(-self.log_noise_batch)))

    def steps(self, batch: ArrayLike, samples_per_unit: ArrayLike = 1.0) -> Float[Array, "..."]:
        """Optimizer steps to the target at `batch`, ``E(B)·D/B``."""
        return self(batch) * samples_per_unit / batch


def linear_step_time(gpus, batch, overhead_s, sample_time_s):
    """Seconds per step of data-parallel training whose compute splits the global batch
    over the GPUs: ``T = a + c·B/N`` — `overhead_s` a (seconds per step that neither
    more GPUs nor a smaller batch shorten: all-reduce, optimizer, launch) plus
    `sample_time_s` c (seconds of compute per sample on one GPU) × the per-GPU batch.
    At a fixed N it is `optimal_batch`'s ``a + b·B`` with ``b = c/N``."""
    return overhead_s + sample_time_s * batch / gpus
