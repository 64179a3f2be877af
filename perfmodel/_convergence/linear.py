"""The step time ``T = a + c·B/N`` fitted in closed form (profile likelihood on the
per-GPU batch): the start value and reference of the `batch_linear` family."""

import dataclasses
from statistics import NormalDist

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float
import numpy as np

from .._errors import InputError
from .profile import CriticalBatchFit, DRIFT, fit_critical_batch

STEP_NOISE_FLOOR = 0.01  # relative noise of one step-time measurement assumed at least


class LinearStepTime(eqx.Module):
    """`linear_step_time` with its parameters stored as logarithms.

    Fields:
        log_overhead: log a, seconds per step.
        log_sample_time: log c, seconds per sample on one GPU.
    """

    log_overhead: Float[Array, ""] = eqx.field(converter=jnp.asarray)
    log_sample_time: Float[Array, ""] = eqx.field(converter=jnp.asarray)

    def __call__(self, gpus: ArrayLike, batch: ArrayLike) -> Float[Array, "..."]:
        """Seconds per step at `gpus` GPUs and global batch `batch`."""
        return jnp.exp(self.log_overhead) * (
            1.0 + batch / gpus * jnp.exp(self.log_sample_time - self.log_overhead)
        )


@dataclasses.dataclass(frozen=True)
class LinearStepFit:
    """`LinearStepTime` fitted to step times (or times per epoch × batch).

    ``T = a·(1 + x/x₀)`` with x = B/N the per-GPU batch and x₀ = a/c has the critical-
    batch model's form, so it is fitted the same way (`fit_critical_batch` on x, with
    E_min → a and B_noise → x₀) and shares its profile-likelihood intervals.

    Attributes:
        model: the fitted parameters.
        profile: the fit on the per-GPU batch (a `CriticalBatchFit`).
        gpus_range: the smallest and largest GPU counts fitted.
    """

    model: LinearStepTime
    profile: CriticalBatchFit
    gpus_range: tuple[float, float]

    @property
    def overhead_s(self) -> float:
        return float(np.exp(self.model.log_overhead))

    @property
    def sample_time_s(self) -> float:
        return float(np.exp(self.model.log_sample_time))

    def predict_interval(self, gpus, batch, level: float = 0.9, drift: float = DRIFT):
        """Step time at (`gpus`, `batch`) with a central interval of probability
        `level`: the profile range and measurement noise (`CriticalBatchFit`), and a
        model-form drift of `drift` in log time per doubling of N outside the GPU
        counts fitted, added in quadrature."""
        gpus, batch = np.broadcast_arrays(np.asarray(gpus, float), np.asarray(batch, float))
        band = self.profile.predict_interval(batch / gpus, level)
        lo, hi = self.gpus_range
        doublings = np.log2(np.maximum(gpus / hi, 1.0)) + np.log2(np.maximum(lo / gpus, 1.0))
        extra = NormalDist().inv_cdf(0.5 + level / 2.0) * drift * doublings
        centre = np.log(band["work"])
        below = np.hypot(centre - np.log(band["work_lo"]), extra)
        above = np.hypot(np.log(band["work_hi"]) - centre, extra)
        return {
            "time_s": band["work"],
            "time_s_lo": np.exp(centre - below),
            "time_s_hi": np.exp(centre + above),
        }


def fit_linear_step_time(
    gpus, batch, step_time_s, *, source: str = "<arrays>", noise_floor: float = STEP_NOISE_FLOOR
) -> LinearStepFit:
    """Fit ``T = a + c·B/N`` to step times measured at GPU counts `gpus` and global
    batches `batch` (squared log error; a and c > 0).

    Raises:
        InputError: as `fit_critical_batch`, naming the per-GPU batch.
    """
    gpus, batch = np.asarray(gpus, float).ravel(), np.asarray(batch, float).ravel()
    if gpus.shape != batch.shape or not np.all(np.isfinite(gpus) & (gpus >= 1)):
        raise InputError(f"{source}: gpus: expected one GPU count ≥ 1 per global batch")
    profile = fit_critical_batch(
        batch / gpus, step_time_s, source=f"{source} (per-GPU batch)", noise_floor=noise_floor
    )
    log_a = profile.model.log_work_min
    with jax.enable_x64(True):
        model = LinearStepTime(log_a, log_a - profile.model.log_noise_batch)
    model = jax.tree_util.tree_map(lambda x: np.asarray(x, np.float64), model)
    return LinearStepFit(model, profile, (float(gpus.min()), float(gpus.max())))
