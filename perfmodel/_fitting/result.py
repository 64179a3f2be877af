"""`FitResult`: a fitted model, the data it was fitted to and how well it fits."""

import dataclasses
import math

import jax
import numpy as np

from .._config import Config, with_defaults
from .._data import Benchmarks
from .._levels import check_gpu_counts
from .._model import AbstractScalingModel, ScalingModel
from .._presets import hybrid_kind
from .._terms import OUT_OF_MEMORY, REASONS
from .layout_reference import evaluate_layouts, reference_with_workload, row_workloads


@dataclasses.dataclass(frozen=True)
class Component:
    """One family inside the default blend (`fit_blend`): its fitted model and weights.

    Attributes:
        family: the member's name (``power_law_flat``: the power law fitted with equal
            weights).
        weight: its weight up to one doubling past the largest measured count (NEAR).
        model: the fitted model, in the blend's seconds.
        far: its weight from two doublings on (FAR); both 0: fitted for the intervals'
            spread only, or the anchor.
        anchor: True for the member the measured range is handed over to
            (`perfmodel._blend`: weight 1 from half the largest measured count down).
    """

    family: str
    weight: float
    model: ScalingModel
    far: float = 0.0
    anchor: bool = False


@dataclasses.dataclass(frozen=True)
class FitResult:
    """A fitted model and how well it fits.

    Attributes:
        model: the fitted `ScalingModel`, or the default's `Blend` (leaves are float64
            NumPy arrays).
        data: the benchmarks it was fitted to.
        loss_kind: ``"log"``, ``"squared"`` or ``"huber"``.
        loss: final value of the loss.
        converged: True when the optimiser reached a stationary point.
        message: a readable account of convergence and identifiability.
        num_steps: Adam steps per start plus L-BFGS iterations.
        r2: coefficient of determination on the measured quantity.
        mape: mean absolute percentage error on the measured quantity, in percent.
        residuals: ``log(predicted / measured)`` per measurement.
        free: names of the fitted parameters; the rest were fixed.
        fixed: fixed parameter values (physical units).
        bounds: user bounds (physical units) per parameter.
        raw_covariance: Laplace covariance of the free parameters in their stored
            (log/logit) form, or None when the data leave no degrees of freedom.
        warnings: identifiability and convergence warnings.
        config_defaults: config values used for predictions at new GPU counts.
        precision: floating-point precision the fit ran in.
        components: for the default blend (`fit_blend`), each member and its NEAR and
            FAR weights; empty for a fit of one family.
        intervals: how this fit's intervals are drawn by default: ``"laplace"``, or
            ``"conformal"`` for a blend (calibrated across published series).
        assumed: what was assumed about the measurements (their scaling, their unit),
            in a sentence, or "".
        unanchored_residuals: for an anchored blend, the residuals of the fitted blend
            without its anchor (the curve that extrapolates; the conformal r), kept
            through `what_if` as `residuals` are; None otherwise.
        covariance_from: what `raw_covariance` was computed from: ``"measurements"``,
            or `perfmodel._schema.JOINT` for a fit to step times and nccl-tests logs
            together (`perfmodel.fit_joint`), whose Laplace draws then take it rather than the
            step times' alone.
    """

    model: AbstractScalingModel
    data: Benchmarks
    loss_kind: str
    loss: float
    converged: bool
    message: str
    num_steps: int
    r2: float
    mape: float
    residuals: np.ndarray
    free: tuple[str, ...]
    fixed: dict[str, float]
    bounds: dict[str, tuple[float | None, float | None]]
    raw_covariance: np.ndarray | None
    warnings: tuple[str, ...]
    config_defaults: dict[str, float]
    precision: str = "float64"
    components: tuple[Component, ...] = ()
    intervals: str = "laplace"
    assumed: str = ""
    unanchored_residuals: np.ndarray | None = None
    covariance_from: str = "measurements"

    def __repr__(self) -> str:
        from .describe import fit_repr

        return fit_repr(self)

    def summary(self, width: int | None = 100) -> str:
        """What `perfmodel fit` prints about the fit: the data, the quality and the
        parameter table (undetermined parameters marked as such), `width` columns wide."""
        from .describe import fit_summary

        return fit_summary(self, width)

    @property
    def family(self) -> str:
        return self.model.family

    @property
    def target(self) -> str:
        return self.data.target

    @property
    def label(self) -> str:
        """The family, and for the default blend its regime (its weights are in
        `message`)."""
        if self.components:
            return f"blend ({getattr(self.model, 'regime', 'changed')} regime)"
        return self.family

    def parameters(self) -> dict[str, float]:
        """Fitted physical parameter values by name (float64).

        The value of a parameter in `undetermined` is where the fit left it (often near
        0, e.g. 2.3e-22), not a measurement of it; `summary()` and ``perfmodel fit``
        print "undetermined" there."""
        with jax.enable_x64(True):
            return {k: float(v) for k, v in self.model.parameters().items()}

    @property
    def undetermined(self) -> tuple[str, ...]:
        """The free parameters whose size the data cannot tell (pushed to the edge of their
        range, compensated exactly by others, or of infinite variance): negligible here,
        or indistinguishable from another term. Fix one with a known value to use it."""
        from .describe import undetermined

        return undetermined(self)

    def standard_errors(self) -> dict[str, float]:
        """Laplace standard error of each free parameter, relative (log scale) for
        times and bandwidths, absolute on the logit for fractions; NaN when unknown."""
        if self.raw_covariance is None:
            return {name: math.nan for name in self.free}
        sd = np.sqrt(np.clip(np.diag(self.raw_covariance), 0.0, None))
        return dict(zip(self.free, map(float, sd)))

    def config(self, gpus, **overrides) -> Config:
        """A `Config` at `gpus` (counts ≥ 1) with the fitted data's other config values."""
        return Config(gpus=check_gpu_counts(gpus), **with_defaults(self.config_defaults, overrides))

    def predict(self, gpus, **overrides) -> dict[str, np.ndarray]:
        """Predicted ``time_s`` (and ``throughput``), ``speedup`` and ``efficiency``.

        `time_s` is seconds per step, or per unit of work for throughput fits;
        speedup and efficiency are relative to one GPU (the gain in throughput when each
        GPU keeps its batch). For a `hybrid` fit, which no layout runs on one GPU, they
        are relative to a reference layout instead (`layout_reference.reference_time`:
        the fit's measured run of the workload on the fewest GPUs, else the valid layout
        asked for on the fewest GPUs), NaN for layouts that are not valid or of another
        workload, and ``status`` says why a layout could not run (`perfmodel.REASONS`).
        """
        if hybrid_kind(self.model):
            return self._predict_layouts(gpus, **overrides)
        with jax.enable_x64(True):
            config = self.config(gpus, **overrides)
            seconds = np.asarray(self.model(config), dtype=float)
            out = {
                "gpus": np.asarray(config.gpus, dtype=float),
                "time_s": seconds * np.asarray(config.gpus) if self.data.per_gpu else seconds,
                "speedup": np.asarray(self.model.speedup(config), dtype=float),
                "efficiency": np.asarray(self.model.efficiency(config), dtype=float),
            }
        if self.target == "throughput":  # an array as the others, also of one count
            out["throughput"] = np.asarray(1.0 / out["time_s"])
        return out

    def _predict_layouts(self, gpus, **overrides) -> dict[str, np.ndarray]:
        given = {"gpus": np.asarray(check_gpu_counts(gpus), dtype=float)}
        given |= {k: np.asarray(v, dtype=float) for k, v in overrides.items()}
        shape = np.broadcast_shapes(*(v.shape for v in given.values()))
        layouts = {k: np.broadcast_to(v, shape).reshape(-1) for k, v in given.items()}
        found = evaluate_layouts(self, layouts)
        reference, wanted = reference_with_workload(self, layouts)
        same = np.asarray([w == wanted for w in row_workloads(self, layouts)])
        code = found["code"].reshape(-1)
        valid = (code == 0) | (code == OUT_OF_MEMORY)
        seconds = found["time_s"].reshape(-1)
        speedup = np.where(valid & same, reference["time_s"] / seconds, np.nan)
        return {
            "gpus": layouts["gpus"].reshape(shape),
            "time_s": np.where(valid, seconds, np.nan).reshape(shape),
            "speedup": speedup.reshape(shape),
            "efficiency": (speedup * reference["gpus"] / layouts["gpus"]).reshape(shape),
            "status": np.asarray(["ok" if c == 0 else REASONS[c] for c in code]).reshape(shape),
        }


def convergence(value: float, gnorm: float, steps: int, warnings) -> tuple[bool, str]:
    """Whether a fit reached a stationary point, and a readable message with its warnings."""
    tolerance = 1e-6 * max(1.0, value)
    converged = gnorm <= tolerance
    message = (
        "converged"
        if converged
        else f"not converged: gradient norm {gnorm:.3g} > {tolerance:.3g} after {steps} steps"
    )
    if warnings:
        message += "; " + "; ".join(warnings)
    return converged, message
