"""The figure of a time-to-train fit: time to the target and the batch that gets there.

A time-to-train fit answers with a GPU count *and* a global batch (`plan_training`), so
its step-time figure, drawn at one batch, puts runs made at other batches off the curve
(an 8-GPU run at a small batch reads as 140% efficient). This figure draws what the fit
answers instead: the time to train with the best global batch at each GPU count, its
interval and the runs' measured times (left), and that best batch against the batches
the runs used (right). matplotlib is imported inside `plot_time_to_train` only.
"""

import numpy as np

from .._convergence import plan_training, TimeToTrainFit
from .._levels import level_text
from .._text import printable
from .plot import (
    _KNEE_STYLE,
    _new_figure,
    _OPTIMUM_STYLE,
    _POINT_STYLE,
    _seconds_formatter,
    source_name,
)
from .training import best_batch_curve


def plot_time_to_train(
    fit: TimeToTrainFit,
    *,
    level: float | None = 0.9,
    max_gpus: int = 4096,
    title: str | None = None,
    figsize: tuple[float, float] = (11.0, 4.6),
):
    """Time to train against GPUs at the best batch, with the runs; the best batch.

    Example:
        >>> import perfmodel as pm
        >>> runs = pm.read_training_runs("datasets/time_to_train/mlperf07_dgxa100_ssd.csv")
        >>> fig = pm.plot_time_to_train(pm.fit_time_to_train(runs))  # doctest: +SKIP
        >>> [ax.get_title() for ax in fig.axes]  # doctest: +SKIP
        ['time to train, best global batch', 'global batch that trains fastest']
    """
    plan = plan_training(fit, objective="time", level=level, max_gpus=max_gpus)
    curve = best_batch_curve(plan)  # its grid is the same at any level
    data = fit.runs.data
    run_gpus = np.asarray(data.gpus, float)
    run_batch = np.asarray(data.config["global_batch"], float)
    fig = _new_figure(figsize)
    left, right = fig.subplots(1, 2)
    gpus, seconds = curve["gpus"], curve["time_to_train_s"]
    left.plot(gpus, seconds, color="tab:blue", linewidth=2.0, label="model, best batch")
    if level is not None:
        band = fit.predict(gpus, curve["global_batch"], level)
        left.fill_between(
            gpus,
            band["time_to_train_s_lo"],
            band["time_to_train_s_hi"],
            color="tab:blue",
            alpha=0.18,
            linewidth=0,
            label=f"{level_text(level)} interval for a new run",
        )
    left.plot(run_gpus, data.time_s, color="black", label="measured runs", **_POINT_STYLE)
    for n, b, t in zip(run_gpus, run_batch, data.time_s):
        left.annotate(f"B={b:g}", (n, t), textcoords="offset points", xytext=(5, 4), fontsize=7)
    where = f"fastest: {plan.gpus:g} GPUs at batch {plan.global_batch:g}"
    left.axvline(plan.gpus, label=where, **_OPTIMUM_STYLE)
    if plan.knee_gpus is not None:
        left.axvline(
            plan.knee_gpus, label=f"diminishing returns: {plan.knee_gpus:g}", **_KNEE_STYLE
        )
    left.set_ylabel("time to train")
    left.set_title("time to train, best global batch")
    right.step(gpus, curve["global_batch"], where="mid", color="tab:blue", label="fastest batch")
    right.plot(run_gpus, run_batch, color="black", label="measured runs", **_POINT_STYLE)
    if np.isfinite(fit.noise_batch):
        right.axhline(
            fit.noise_batch,
            color="tab:purple",
            linestyle="-.",
            linewidth=1.2,
            label=f"critical batch B_noise {fit.noise_batch:.4g}",
        )
    right.set_ylabel("global batch (samples per step)")
    right.set_title("global batch that trains fastest")
    from matplotlib.ticker import FuncFormatter, NullFormatter

    for ax in (left, right):
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_yscale("log")
        ax.set_xlabel("GPUs")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    left.yaxis.set_major_formatter(_seconds_formatter())  # after the scale, which resets it
    right.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}"))
    right.yaxis.set_minor_formatter(FuncFormatter(lambda y, _: f"{y:g}"))
    if title is None:
        title = (
            f"{source_name(data.source).partition(' (')[0]}: time to train, "
            f"{fit.step.family} step fit and critical batch"
        )
    fig.suptitle(printable(title), fontsize=12)
    return fig
