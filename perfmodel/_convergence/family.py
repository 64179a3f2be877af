"""Time to train as a fitted family: the critical-batch model of the work to the target
times the step time of a step-time family of GPU count and global batch.

``time(N, B) = S(B) · T_step(N, B)`` with ``S(B) = E(B)·D/B`` the optimizer steps to the
target, ``E(B) = E_min·(1 + B/B_noise)`` (McCandlish et al. 2018) fitted to the runs'
work (`fit_critical_batch`), and ``T_step`` a `FitResult` of any step family (by default
`batch_linear`, ``a + c·B/N``) fitted to the runs' seconds per step,
``time to train / steps``. The two fits share no parameter: the work to the target does
not depend on the hardware, the step time does not depend on convergence.

A prediction's interval joins, per side in quadrature on log time, the critical batch's
(profile likelihood of B_noise and the run-to-run scatter of the work), the step
family's (its parameters and noise, `perfmodel.predict_interval` without its own drift)
and a model-form drift per doubling of the GPU count or batch beyond the runs, whose
scale the runs' own rolling-origin extrapolations estimate (`_convergence.drift`).
"""

import dataclasses
import functools

import numpy as np

from .._data import Benchmarks
from .._errors import InputError
from .._fitting import fit, FitResult
from .._model import ScalingModel
from .._presets import build
from .._readers import TrainingRuns, WORK_UNITS
from .._uncertainty import check_level, Ensemble, ensemble, predict_interval
from .closed import steps_to_target
from .drift import Drift, DRIFT_PRIOR, DRIFT_PRIOR_DOF, estimate_drift
from .profile import CriticalBatchFit, fit_critical_batch, t_quantile, time_to_train_interval

STEP_FAMILY = "batch_linear"


@dataclasses.dataclass(frozen=True)
class TimeToTrainFit:
    """A time-to-train model fitted to runs: convergence and step time.

    Attributes:
        step: the step-time fit (seconds per step against ``gpus`` and ``global_batch``).
        critical: the critical-batch fit of the work to the target against the batch.
        runs: the runs it was fitted to (time to train, global batch, work).
        samples_per_unit: D, samples per unit of work (1 when the work is in samples).
        drift: the model-form drift beyond the runs (`Drift`).
    """

    step: FitResult
    critical: CriticalBatchFit
    runs: TrainingRuns
    samples_per_unit: float
    drift: Drift

    @functools.cached_property
    def _step_draws(self) -> dict[str, Ensemble]:
        return {}

    def step_ensemble(self, method: str | None = None) -> Ensemble:
        """Draws of the step fit without its own drift (the joint drift replaces it)."""
        draws = self._step_draws
        if method not in draws:
            draws[method] = ensemble(self.step, method, discrepancy=0.0)
        return draws[method]

    @property
    def work_unit(self) -> str:
        return self.runs.work_unit

    @property
    def source(self) -> str:
        return self.runs.data.source

    @property
    def noise_batch(self) -> float:
        """B_noise, the critical batch, samples."""
        return self.critical.noise_batch

    @property
    def work_min(self) -> float:
        """E_min, the work to the target with a vanishing batch (in `work_unit`)."""
        return self.critical.work_min

    @property
    def samples_min(self) -> float:
        """E_min·D: samples to the target with a vanishing batch."""
        return self.critical.work_min * self.samples_per_unit

    def noise_batch_interval(self, level: float = 0.9) -> tuple[float, float]:
        """The B_noise values (samples) the runs allow at `level` (profile likelihood);
        an end the data leave open is 0 or inf."""
        return self.critical.noise_batch_range(check_level(level))

    def steps(self, global_batch) -> np.ndarray:
        """Optimizer steps to the target at `global_batch`: ``E(B)·D/B``."""
        batch = np.asarray(global_batch, float)
        return steps_to_target(batch, self.work_min, self.noise_batch, self.samples_per_unit)

    def predict(
        self, gpus, global_batch, level: float | None = 0.9, method: str | None = None
    ) -> dict[str, np.ndarray]:
        """Time to train at (`gpus`, `global_batch`), broadcast together.

        Returns NumPy arrays: ``gpus``, ``global_batch``, ``step_time_s`` (seconds per
        step), ``steps_to_target``, ``work_to_target`` (in `work_unit`),
        ``time_to_train_s`` (seconds) and ``gpu_hours`` (N·time/3600). With `level`,
        also ``_lo``/``_hi`` of the step time, the work and the time to train: central
        intervals of probability `level` for a new run, the step family's
        (`perfmodel.predict_interval` with `method`) and the critical batch's
        (`CriticalBatchFit.predict_interval`) joined in quadrature in log time
        (`time_to_train_interval`).
        """
        gpus, batch = np.broadcast_arrays(np.asarray(gpus, float), np.asarray(global_batch, float))
        for name, values, low in (("gpus", gpus, 1.0), ("global_batch", batch, 0.0)):
            if not np.all(np.isfinite(values) & (values >= max(low, 1e-300))):
                raise InputError(f"{name}: expected positive numbers, got {values.ravel()[:4]}")
        shape = gpus.shape
        gpus, batch = gpus.ravel(), batch.ravel()
        per_work = self.samples_per_unit / batch
        if level is None:
            step = {"time_s": self.step.predict(gpus, global_batch=batch)["time_s"]}
            work = {"work": self.critical.work_at(batch)}
        else:
            level = check_level(level)
            draws = self.step_ensemble(method)
            step = predict_interval(self.step, gpus, level, ensemble=draws, global_batch=batch)
            work = self.critical.predict_interval(batch, level, drift=0.0)
        out = {
            "gpus": gpus,
            "global_batch": batch,
            "step_time_s": step["time_s"],
            "steps_to_target": work["work"] * per_work,
            "work_to_target": work["work"],
            "time_to_train_s": work["work"] * per_work * step["time_s"],
        }
        if level is not None:
            band = self._widen(time_to_train_interval(work, step, per_work), gpus, batch, level)
            out |= {
                "step_time_s_lo": step["time_s_lo"],
                "step_time_s_hi": step["time_s_hi"],
                "work_to_target_lo": work["work_lo"],
                "work_to_target_hi": work["work_hi"],
                "time_to_train_s_lo": band["time_to_train_s_lo"],
                "time_to_train_s_hi": band["time_to_train_s_hi"],
            }
        out["gpu_hours"] = gpus * out["time_to_train_s"] / 3600.0
        return {k: np.reshape(v, shape) for k, v in out.items()}

    def _widen(self, band, gpus, batch, level) -> dict[str, np.ndarray]:
        """`band` widened on each side, in quadrature on log time, by the drift's
        Student-t quantile × τ × the doublings beyond the runs fitted."""
        spread = t_quantile(0.5 + level / 2.0, self.drift.dof) * self.drift.tau
        spread = spread * self.drift.distance(gpus, batch)
        centre = np.log(band["time_to_train_s"])
        with np.errstate(divide="ignore", invalid="ignore"):
            below = np.hypot(centre - np.log(band["time_to_train_s_lo"]), spread)
            above = np.hypot(np.log(band["time_to_train_s_hi"]) - centre, spread)
        return {
            "time_to_train_s": band["time_to_train_s"],
            "time_to_train_s_lo": np.exp(centre - below),
            "time_to_train_s_hi": np.exp(centre + above),
        }


def step_data(runs: TrainingRuns, samples_per_unit: float) -> Benchmarks:
    """The runs as seconds per step: ``time to train · B / (work · D)``."""
    data = runs.data
    batch = data.config["global_batch"]
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        seconds = data.time_s * batch / (runs.work * samples_per_unit)
    bad = np.flatnonzero(~(np.isfinite(seconds) & (seconds > 0.0)))
    if bad.size:  # work near zero overflowed the step time, and the fitter traced back
        i = int(bad[0])
        raise InputError(
            f"{data.source}: the run on {data.gpus[i]:g} GPUs: {data.time_s[i]:.4g} s to "
            f"train at batch {batch[i]:g} over {runs.work[i]:.4g} {runs.work_unit} gives "
            f"{seconds[i]:.4g} s per step, outside float64; check its work and time"
        )
    return dataclasses.replace(data, source=f"{data.source} (seconds per step)", time_s=seconds)


def _runs(data, work, work_unit, samples_per_unit) -> TrainingRuns:
    if isinstance(data, TrainingRuns):
        if work is not None:
            raise InputError("work: already in the TrainingRuns given; pass one or the other")
        return data
    if not isinstance(data, Benchmarks):
        raise InputError(f"expected TrainingRuns or Benchmarks, got {type(data).__name__}")
    if work is None:
        raise InputError(f"{data.source}: give work= (each run's work to the target)")
    if work_unit not in WORK_UNITS:
        raise InputError(f"work_unit: expected one of {', '.join(WORK_UNITS)}, got {work_unit!r}")
    values = np.asarray(work, float).ravel()
    if values.shape != data.gpus.shape:
        raise InputError(
            f"{data.source}: {data.gpus.size} runs but {values.size} work values; give one per run"
        )
    per_unit = 1.0 if work_unit == "samples" else samples_per_unit
    return TrainingRuns(data, values, work_unit, per_unit)


def fit_time_to_train(
    data: TrainingRuns | Benchmarks,
    work=None,
    *,
    work_unit: str = "samples",
    samples_per_unit: float | None = None,
    step_family: str | ScalingModel = STEP_FAMILY,
    drift_prior: float = DRIFT_PRIOR,
    drift_prior_dof: float = DRIFT_PRIOR_DOF,
    **fit_options,
) -> TimeToTrainFit:
    """Fit time to train to runs: the critical batch to their work, a step family to
    their seconds per step.

    Args:
        data: `TrainingRuns` (`read_training_runs`), or `Benchmarks` of runs whose
            ``time_s`` is the time to train and whose config has ``global_batch``, with
            `work`.
        work: each run's work to the target, in `work_unit` (with `Benchmarks`).
        work_unit: ``"samples"`` or ``"epochs"``.
        samples_per_unit: samples per epoch (the dataset size) for work in epochs, when
            the runs do not give it.
        step_family: the step-time family: a preset name (default `batch_linear`) or a
            `ScalingModel`.
        drift_prior, drift_prior_dof: the prior drift of log time to train per doubling
            beyond the runs (τ₀) and its weight in doublings² (ν₀), pooled with the
            rolling origins (`_convergence.drift.estimate_drift`); 0 and 0 turn it off.
        fit_options: passed to `perfmodel.fit` for the step family.

    Raises:
        InputError: no global batch, work that is not positive, epochs without a dataset
            size, fewer than two runs.

    Example:
        >>> import perfmodel as pm
        >>> runs = pm.read_training_runs("datasets/time_to_train/mlperf07_dgxa100_ssd.csv")
        >>> ttt = pm.fit_time_to_train(runs)  # doctest: +SKIP
        >>> ttt.predict([1024], [4096])["time_to_train_s"]  # doctest: +SKIP
    """
    runs = _runs(data, work, work_unit, samples_per_unit)
    source = runs.data.source
    if "global_batch" not in runs.data.config:
        raise InputError(f"{source}: no global_batch: time to train needs each run's batch")
    per_unit = samples_per_unit if samples_per_unit is not None else runs.samples_per_unit
    if per_unit is None or not per_unit > 0:
        raise InputError(
            f"{source}: the work is in {runs.work_unit}: give {{arg:samples_per_unit}} "
            "(samples per epoch, the dataset size), or the samples to the target per run"
        )
    runs = dataclasses.replace(runs, samples_per_unit=float(per_unit))
    batch = runs.data.config["global_batch"]
    critical = fit_critical_batch(batch, runs.work, source=source)
    steps = step_data(runs, float(per_unit))
    if isinstance(step_family, ScalingModel):
        step = fit(step_family, steps, **fit_options)
    else:
        step = fit(build(step_family), steps, **fit_options)
    step_noise = float(np.sum(step.residuals**2)) / max(step.residuals.size - len(step.free), 1)
    drift = estimate_drift(
        runs,
        float(per_unit),
        critical.noise**2 + step_noise,
        prior=drift_prior,
        prior_dof=drift_prior_dof,
        predict=None if step.family == STEP_FAMILY and not fit_options else _refit(step),
    )
    return TimeToTrainFit(step, critical, runs, float(per_unit), drift)


def _refit(step: FitResult):
    """A rolling-origin predictor that refits the step family itself (not closed form)."""

    def predict(runs, per_unit, gpus, batch):
        data = runs.data
        b = data.config["global_batch"]
        critical = fit_critical_batch(b, runs.work, source=data.source)
        data = step_data(runs, per_unit)
        if data.distinct_configs() < len(step.free):
            return None
        refit = fit(step.model, data, fix=step.fixed, bounds=step.bounds)
        if refit.warnings:  # a parameter the subset leaves undetermined
            return None
        seconds = refit.predict(gpus, global_batch=batch)["time_s"]
        return critical.work_at(batch) * per_unit / batch * seconds

    return predict
