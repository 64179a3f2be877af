"""Figures of a fit: measurements and curve, speedup, efficiency, where the time goes.

matplotlib is imported only inside these functions, so ``import perfmodel`` stays fast.
Figures are built with `matplotlib.figure.Figure` directly (no pyplot), so they need no
display and leave no global state behind; pass ``ax=`` to draw into your own axes.
"""

import dataclasses
import io
import math
import os

import jax
import numpy as np

from .._errors import InputError
from .._fitting import FitResult
from .._levels import level_text
from .._questions import (
    amdahl_bound,
    DiminishingReturns,
    Optimum,
    recommend,
    Recommendation,
)
from .._text import printable

FIGURE_FORMATS = ("png", "svg", "pdf")
_OPTIMUM_STYLE = dict(color="tab:red", linestyle="--", linewidth=1.2)
_KNEE_STYLE = dict(color="tab:orange", linestyle=":", linewidth=1.6)
_POINT_STYLE = dict(
    marker="o", markersize=5, linestyle="none", markerfacecolor="none", markeredgewidth=1.2
)


@dataclasses.dataclass(frozen=True)
class Curves:
    """Everything the panels draw, computed once per figure.

    Attributes:
        fit: the fit drawn.
        gpus: GPU counts of the curves (not only integers, so curves are smooth).
        predicted: `FitResult.predict` at `gpus`.
        band: ``(lo, hi)`` of the measured quantity at `gpus`, or None.
        band_note: why there is no band, or its description.
        parts: seconds per term at `gpus` (`ScalingModel.breakdown`).
        optimum: the fastest GPU count up to `max_gpus`.
        knee: where returns diminish (marginal speedup below `threshold`).
        recommendation: the GPU count worth buying (`recommend`), whose optimum and
            knee these are: in whole nodes when the data state the node size, as
            ``perfmodel optimal`` answers.
        bound: Amdahl's bound on speedup, or None.
        quantity: axis label of the measured quantity, with its unit.
        log_x: whether GPU counts span a decade or more (then log axes).
    """

    fit: FitResult
    gpus: np.ndarray
    predicted: dict[str, np.ndarray]
    band: tuple[np.ndarray, np.ndarray] | None
    band_note: str
    parts: dict[str, np.ndarray]
    optimum: Optimum
    knee: DiminishingReturns
    bound: float | None
    quantity: str
    log_x: bool
    recommendation: Recommendation | None = None


def quantity_label(fit: FitResult) -> str:
    """Axis label of the measured quantity: ``step time (s)`` or the throughput's unit."""
    if fit.target != "throughput":
        return "step time (s)"
    return f"throughput ({fit.data.unit})"


def interval_band(fit: FitResult, gpus: np.ndarray, level: float):
    """``((lo, hi), note)``: the prediction interval of the measured quantity at `gpus`.

    ``(None, why)`` when the fit leaves no residual to estimate it from. Where the data
    do not determine the parameters the prediction depends on, lo and hi are NaN.
    """
    from .._uncertainty import predict_interval

    try:
        bands = predict_interval(fit, gpus, level=level)
    except InputError:
        return None, f"no {level_text(level)} interval: too few measurements for the parameters"
    key = "throughput" if fit.target == "throughput" else "time_s"
    lo, hi = np.asarray(bands[f"{key}_lo"], float), np.asarray(bands[f"{key}_hi"], float)
    open_ = ~(np.isfinite(lo) & np.isfinite(hi) & (lo > 0))
    if open_.all():
        return None, f"no {level_text(level)} interval: the data do not determine the parameters"
    lo, hi = np.where(open_, np.nan, lo), np.where(open_, np.nan, hi)
    note = f"{level_text(level)} prediction interval"
    return (lo, hi), note + (" (unbounded where blank)" if open_.any() else "")


def curves(
    fit: FitResult,
    *,
    max_gpus: int = 4096,
    gpus_range: tuple[float, float] | None = None,
    interval: float | None = 0.9,
    threshold: float = 0.5,
    answer_intervals: bool = False,
) -> Curves:
    """Compute what the panels draw: curves, interval band, breakdown, optimum, knee.

    Args:
        fit: a fitted model.
        max_gpus: the largest GPU count searched for the optimum and the knee.
        gpus_range: ``(lo, hi)`` GPU counts of the x axis; by default from 1 (or the
            smallest count measured) to a few times past the measurements, the knee and
            the optimum, at most `max_gpus`.
        interval: level of the band around the fitted curve, or None for no band.
        threshold: marginal speedup (dS/dN) below which returns diminish.
        answer_intervals: give the recommendation its confidence intervals (at
            `interval`), as a report shows them; a figure does not draw them.
    """
    if interval is not None and not 0 < interval < 1:
        raise InputError(f"interval level must be in (0, 1), got {interval}")
    # The answers `perfmodel optimal` gives (whole nodes when the node size is known),
    # so a figure or a report never names another count than the command line.
    level = interval if answer_intervals else None
    answer = recommend(fit, max_gpus=max_gpus, threshold=threshold, level=level)
    optimum, knee = answer.optimum, answer.knee
    measured = fit.data.gpus
    if gpus_range is None:
        lo = min(1.0, float(measured.min()))
        marks = [4.0 * float(measured.max()), 4.0 * (knee.gpus or 1)]
        if not optimum.at_limit:
            marks.append(2.0 * optimum.gpus)
        hi = max(min(max(marks), float(max_gpus)), float(measured.max()))
    else:
        lo, hi = map(float, gpus_range)
        if not 1 <= lo < hi:
            raise InputError(f"GPU range must satisfy 1 ≤ lo < hi, got {lo}:{hi}")
    gpus = np.unique(np.concatenate([np.geomspace(lo, hi, 240), measured[measured <= hi]]))
    predicted = fit.predict(gpus)
    with jax.enable_x64(True):
        config = fit.config(gpus).broadcast()
        parts = {k: np.asarray(v, float) for k, v in fit.model.breakdown(config).items()}
    band, note = None, "no interval requested"
    if interval is not None:
        band, note = interval_band(fit, gpus, interval)
    return Curves(
        fit=fit,
        gpus=gpus,
        predicted=predicted,
        band=band,
        band_note=note,
        parts=parts,
        optimum=optimum,
        knee=knee,
        bound=amdahl_bound(fit),
        quantity=quantity_label(fit),
        log_x=hi / lo >= 10.0,
        recommendation=answer,
    )


# Drawing ---------------------------------------------------------------------------


def _new_figure(figsize: tuple[float, float]):
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout="constrained")
    # Jupyter shows objects with a _repr_png_, so the figure displays without pyplot.
    fig._repr_png_ = lambda: figure_bytes(fig, "png")
    return fig


def _axes(ax):
    return _new_figure((5.5, 4.0)).add_subplot() if ax is None else ax


def _gpu_axis(ax, c: Curves) -> None:
    from matplotlib.ticker import FuncFormatter, NullFormatter

    if c.log_x:
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlim(c.gpus[0], c.gpus[-1])
    ax.set_xlabel("GPUs")
    ax.grid(True, which="major", alpha=0.3)


def _mark_answers(ax, c: Curves, *, label: bool) -> None:
    """Vertical lines at the optimum and the knee (labelled once per figure)."""
    lo, hi = c.gpus[0], c.gpus[-1]
    opt = c.optimum
    if lo <= opt.gpus <= hi:
        text = f"optimum (fastest): {opt.gpus} GPUs"
        if opt.at_limit:
            text += f" = {opt.limit_text(short=True)}"
        ax.axvline(opt.gpus, label=text if label else None, **_OPTIMUM_STYLE)
    elif label:
        where = f"at the {opt.limit_text(short=True)}, " if opt.at_limit else ""
        ax.plot([], [], label=f"optimum: {where}{opt.gpus} GPUs (off the axis)", **_OPTIMUM_STYLE)
    knee = c.knee
    if knee.gpus is not None and lo <= knee.gpus <= hi:
        text = f"diminishing returns: {knee.gpus} GPUs ({knee.criterion})"
        ax.axvline(knee.gpus, label=text if label else None, **_KNEE_STYLE)
    elif label:
        where = "none" if knee.gpus is None else f"{knee.gpus} GPUs, off the axis"
        ax.plot([], [], label=f"diminishing returns: {where}", **_KNEE_STYLE)


def _seconds_formatter():
    """``20 ms``, ``500 µs``; whole seconds stay seconds (``2000 s``, not ``2 ks``)."""
    from matplotlib.ticker import EngFormatter, FuncFormatter

    small = EngFormatter(unit="s")
    return FuncFormatter(lambda v, pos: f"{v:g} s" if abs(v) >= 1 else small(v, pos))


def source_name(source: str) -> str:
    """The file or folder a fit's data came from, without its path: a folder of logs read
    as ``"logs/mllog_ssd/ (seconds per step)"`` is ``"mllog_ssd (seconds per step)"``."""
    path, sep, what = source.partition(" (")
    return os.path.basename(os.path.normpath(path)) + sep + what


def _spans_decade(values: np.ndarray) -> bool:
    values = values[np.isfinite(values) & (values > 0)]
    return bool(values.size > 0 and values.max() / values.min() >= 10.0)


def _draw_measurements(ax, c: Curves, *, mark: bool = True) -> None:
    from matplotlib.ticker import EngFormatter, LogLocator, NullFormatter

    fit, data = c.fit, c.fit.data
    throughput = fit.target == "throughput"
    curve = c.predicted["throughput"] if throughput else c.predicted["time_s"]
    if c.band is not None:
        ax.fill_between(c.gpus, *c.band, color="tab:blue", alpha=0.18, lw=0, label=c.band_note)
    ax.plot(c.gpus, curve, color="tab:blue", lw=2, label=f"{fit.label} fit")
    distinct = len(np.unique(data.gpus))
    ax.plot(
        data.gpus,
        data.measured,
        color="black",
        label=f"measured ({data.gpus.size} runs at {distinct} GPU counts)",
        **_POINT_STYLE,
    )
    if c.band is None:
        ax.plot([], [], linestyle="none", label=c.band_note)
    if mark:
        _mark_answers(ax, c, label=True)
    _gpu_axis(ax, c)
    shown = np.concatenate([curve, data.measured])
    if c.band is not None:
        # The band may be wide far from the data; it must not squash the curve.
        shown = np.concatenate([shown, *(np.clip(b, curve / 3, curve * 3) for b in c.band)])
    shown = shown[np.isfinite(shown)]
    if _spans_decade(shown):
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_ylim(shown.min() / 1.15, shown.max() * 1.15)
    else:
        margin = 0.05 * (shown.max() - shown.min())
        ax.set_ylim(max(shown.min() - margin, 0.0), shown.max() + margin)
    ax.yaxis.set_major_formatter(EngFormatter() if throughput else _seconds_formatter())
    ax.set_ylabel(c.quantity)
    ax.set_title("measurements and fit")
    ax.legend(fontsize=7.5, loc="best")


def _measured_speedup(c: Curves) -> np.ndarray:
    return measured_speedup(c.fit)


def measured_speedup(fit) -> np.ndarray:
    """The measured points' speedup, for the speedup and efficiency panels (`fit`: a
    `FitResult`)."""
    # Relative to the fitted 1-GPU time, the model's own baseline: the data may not
    # include 1 GPU, and its noise would shift every point. Each point against the 1-GPU
    # time of its own configuration (a run at global batch 912 against one GPU at 912,
    # not at the fit's default of 2048: that read 199% efficiency).
    data = fit.data
    config = {k: np.asarray(v, dtype=float) for k, v in data.config.items()}
    one = fit.predict(np.ones_like(data.gpus, dtype=float), **config)["time_s"]
    return np.asarray(one, dtype=float) / data.time_s


def _draw_speedup(ax, c: Curves) -> None:
    data = c.fit.data
    speedup, measured = c.predicted["speedup"], _measured_speedup(c)
    ax.plot(c.gpus, c.gpus, color="grey", ls="--", lw=1, label="ideal (linear)")
    ax.plot(c.gpus, speedup, color="tab:blue", lw=2, label="model")
    ax.plot(data.gpus, measured, color="black", label="measured", **_POINT_STYLE)
    top = max(float(speedup.max()), float(measured.max()))
    if c.bound is not None and math.isfinite(c.bound) and c.bound <= 3.0 * top:
        ax.axhline(
            c.bound, color="tab:purple", ls="-.", lw=1.2, label=f"Amdahl bound {c.bound:.3g}×"
        )
        top = max(top, c.bound)
    elif c.bound is not None:
        ax.plot([], [], ls="none", label=f"Amdahl bound {c.bound:.3g}× (off scale)")
    _mark_answers(ax, c, label=False)
    _gpu_axis(ax, c)
    if c.log_x:
        ax.set_yscale("log", base=2)
        ax.yaxis.set_major_formatter(ax.xaxis.get_major_formatter())
    bottom = min(1.0, float(speedup.min()), float(measured.min()))
    ax.set_ylim(bottom * 0.8, top * (1.5 if c.log_x else 1.15))
    ax.set_ylabel("speedup over 1 GPU (×)")
    ax.set_title("speedup")
    ax.legend(fontsize=7.5, loc="best")


def _draw_efficiency(ax, c: Curves) -> None:
    from matplotlib.ticker import PercentFormatter

    data = c.fit.data
    efficiency = c.predicted["efficiency"]
    measured = _measured_speedup(c) / data.gpus
    ax.axhline(1.0, color="grey", ls="--", lw=1, label="ideal (100%)")
    ax.plot(c.gpus, efficiency, color="tab:blue", lw=2, label="model")
    ax.plot(data.gpus, measured, color="black", label="measured", **_POINT_STYLE)
    _mark_answers(ax, c, label=False)
    _gpu_axis(ax, c)
    top = max(1.05, float(np.max(measured)) * 1.05, float(efficiency.max()) * 1.05)
    ax.set_ylim(0.0, top)
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_ylabel("parallel efficiency (speedup / GPUs)")
    ax.set_title("efficiency")
    ax.legend(fontsize=7.5, loc="lower left")


def _draw_breakdown(ax, c: Curves, *, relative: bool = True) -> None:
    from matplotlib.ticker import PercentFormatter

    terms = {k: v for k, v in c.parts.items() if k != "overlap"}
    overlap = c.parts.get("overlap")
    gross = np.sum(list(terms.values()), axis=0)
    scale = gross if relative else np.ones_like(gross)
    layers = [v / scale for v in terms.values()]
    unit = "s per unit of work" if c.fit.target == "throughput" else "s per step"
    ax.stackplot(c.gpus, *layers, labels=list(terms), alpha=0.85)
    if overlap is not None:
        # Overlap hides part of the stack: hatch the hidden slice at its top.
        top = gross / scale
        ax.fill_between(
            c.gpus,
            top + overlap / scale,
            top,
            facecolor="white",
            edgecolor="black",
            alpha=0.5,
            hatch="///",
            lw=0,
            label="hidden by overlap",
        )
        if not relative:
            ax.plot(c.gpus, gross + overlap, color="black", lw=1.2, label="step time")
    _mark_answers(ax, c, label=False)
    _gpu_axis(ax, c)
    if relative:
        ax.set_ylim(0.0, 1.0)
        ax.yaxis.set_major_formatter(PercentFormatter(1.0))
        ax.set_ylabel("share of step time" + (" before overlap" if overlap is not None else ""))
    else:
        ax.yaxis.set_major_formatter(_seconds_formatter())
        ax.set_ylabel(f"time per term ({unit})")
    ax.set_title("where the time goes")
    ax.legend(fontsize=7.5, loc="center left", framealpha=0.9)


def _panel(draw, fit, ax, options, **draw_options):
    c = options if isinstance(options, Curves) else curves(fit, **options)
    ax = _axes(ax)
    draw(ax, c, **draw_options)
    return ax


def plot_measurements(fit: FitResult, ax=None, **options):
    """Measured points (every repeat) with the fitted curve and its interval band.

    Time fits show seconds per step; throughput fits show throughput. `options` go to
    `curves` (``max_gpus``, ``gpus_range``, ``interval``, ``threshold``).

    Returns:
        The matplotlib Axes drawn into (a new one in a new Figure when `ax` is None).
    """
    return _panel(_draw_measurements, fit, ax, options)


def plot_speedup(fit: FitResult, ax=None, **options):
    """Speedup over one GPU: model, measurements, the ideal line and Amdahl's bound."""
    return _panel(_draw_speedup, fit, ax, options)


def plot_efficiency(fit: FitResult, ax=None, **options):
    """Parallel efficiency (speedup / N) of the model and the measurements."""
    return _panel(_draw_efficiency, fit, ax, options)


def plot_breakdown(fit: FitResult, ax=None, *, relative: bool = True, **options):
    """Stacked step time per cost term against GPU count.

    Args:
        relative: draw each term's share of the step time (default) rather than its
            seconds. Overlap, when the model has it, is the hatched slice it hides.
    """
    return _panel(_draw_breakdown, fit, ax, options, relative=relative)


def plot_fit(
    fit: FitResult,
    *,
    title: str | None = None,
    relative_breakdown: bool = True,
    figsize: tuple[float, float] = (11.0, 8.0),
    **options,
):
    """The four panels of a fit in one matplotlib `Figure`.

    Measurements with the fitted curve and its interval band; speedup with the ideal
    line and Amdahl's bound; efficiency; the breakdown of step time per term. The
    optimum (fastest GPU count) and the point of diminishing returns are marked.

    Args:
        fit: a fitted model (`perfmodel.fit`, `fit_auto(...).best` or `load_fit`).
        title: the figure title; by default the data source, family and fit quality.
        relative_breakdown: breakdown as shares of the step time (else seconds).
        figsize: inches.
        options: passed to `curves` (``max_gpus``, ``gpus_range``, ``interval``,
            ``threshold``).

    Example:
        >>> import perfmodel as pm
        >>> fit = pm.fit("amdahl", pm.load_dataset("tf_dgx1_p100_vgg16_real"), n_starts=4)
        >>> fig = pm.plot_fit(fit)
        >>> [ax.get_title() for ax in fig.axes][:2]
        ['measurements and fit', 'speedup']
    """
    return figure(
        curves(fit, **options), title=title, relative_breakdown=relative_breakdown, figsize=figsize
    )


def figure(
    c: Curves,
    *,
    title: str | None = None,
    relative_breakdown: bool = True,
    figsize: tuple[float, float] = (11.0, 8.0),
):
    """`plot_fit` from curves already computed (`curves`), e.g. to reuse them."""
    fit = c.fit
    fig = _new_figure(figsize)
    axes = fig.subplots(2, 2)
    try:
        _draw_measurements(axes[0, 0], c)
        _draw_speedup(axes[0, 1], c)
        _draw_efficiency(axes[1, 0], c)
        _draw_breakdown(axes[1, 1], c, relative=relative_breakdown)
    except (OverflowError, ValueError) as error:  # limits of inf or NaN (9e306 s / 0.3 s)
        if not isinstance(error, OverflowError) and "NaN or Inf" not in str(error):
            raise
        raise InputError(OVERFLOW) from None
    if title is None:
        title = (
            f"{source_name(fit.data.source)}: {fit.label} fit ({fit.loss_kind} loss), "
            f"MAPE {fit.mape:.2f}%, R² {fit.r2:.4f}"
        )
    fig.suptitle(printable(title), fontsize=12)
    return fig


OVERFLOW = (
    "the figure's values overflow matplotlib's axes (times or speedups near 1e308: "
    "parameters far from any measured run?); predict and optimal still answer"
)


def figure_bytes(fig, fmt: str = "png", *, dpi: int = 100, colors: int = 256) -> bytes:
    """`fig` rendered as png, svg or pdf bytes, without dates in the metadata.

    PNGs are stored with a palette of `colors`: a third of the size of RGBA for line art,
    with no visible loss.
    """
    if fmt not in FIGURE_FORMATS:
        raise InputError(f"unknown image format {fmt!r}; use one of {', '.join(FIGURE_FORMATS)}")
    buffer = io.BytesIO()
    metadata = {"png": None, "svg": {"Date": None}, "pdf": {"CreationDate": None}}[fmt]
    try:
        fig.savefig(buffer, format=fmt, dpi=dpi, metadata=metadata)
    except OverflowError:  # matplotlib's tick arithmetic on values near float64's limit
        raise InputError(OVERFLOW) from None
    if fmt != "png":
        return buffer.getvalue()
    from PIL import Image

    buffer.seek(0)
    image = Image.open(buffer).convert("RGB")
    image = image.quantize(colors=colors, method=Image.Quantize.FASTOCTREE)
    out = io.BytesIO()
    image.save(out, format="png", optimize=True)
    return out.getvalue()


def save_figure(fig, path: str | os.PathLike, *, dpi: int = 100, colors: int = 256) -> None:
    """Write `fig` to `path` (png, svg or pdf by extension), atomically.

    The figure is rendered first, so an error leaves no file, half-written or not.
    """
    from .._files import atomic_write

    fmt = os.path.splitext(os.fspath(path))[1].lower().lstrip(".")
    if fmt not in FIGURE_FORMATS:
        raise InputError(f"{path}: unknown image format {fmt!r}; use .{', .'.join(FIGURE_FORMATS)}")
    data = figure_bytes(fig, fmt, dpi=dpi, colors=colors)
    with atomic_write(path, "wb") as stream:
        stream.write(data)
