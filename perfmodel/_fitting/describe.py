"""What a fit and a family selection print: short reprs and the tables of ``summary()``.

`perfmodel fit` prints exactly these, so the library and the command line agree.
"""

import math
import textwrap

import numpy as np

from .._text import brief, counted, format_table, wrap
from .._units import work_name
from .member_errors import power_exponents

_UNDETERMINED = "is not identifiable"
# A one-sigma factor past this is printed as "> 100": the data barely bound the
# parameter, and its digits (up to e+21) say nothing more.
WIDEST_SPREAD = 100.0


def undetermined(fit) -> tuple[str, ...]:
    """The free parameters the data leave undetermined: flagged by the fit (pushed to
    the edge of their range, or compensated exactly by others) or of infinite variance.

    A blend's members are each fitted exactly, so its covariance, which cannot tell them
    apart, says nothing about them: only what their fits flagged counts (with fewer
    distinct GPU counts than the blend has coefficients, every one was "undetermined")."""
    errors = {} if getattr(fit.model, "family", "") == "blend" else fit.standard_errors()
    out = []
    for name in fit.free:
        # A blend's warnings are its members': "weak_data_parallel: <name> is not ...".
        flagged = any(
            w.startswith(f"{name} {_UNDETERMINED}") or f": {name} {_UNDETERMINED}" in w
            for w in fit.warnings
        )
        if flagged or errors.get(name, 0.0) == math.inf:
            out.append(name)
    return tuple(out)


def time_basis(fit) -> str:
    """What the model's seconds are per: ``"per step"`` as measured, ``"per image"`` of a
    throughput (seconds per unit of work, 1/throughput), ``"per GPU batch"`` of step
    times with a fixed per-GPU batch (the step divided by N). A serial time of 4.85 ms
    "per step" was N × 4.85 ms in a step at N GPUs."""
    if fit.target == "throughput":
        return f"per {work_name(fit.data.unit)}"
    return "per GPU batch" if fit.data.per_gpu else "per step"


def meanings(fit) -> dict[str, str]:
    """What each parameter is, as its spec says; a blend's power-law coefficient ``c``
    says its exponent e too, fitted with it but an option rather than a parameter, and
    e's standard error from the member's own fit (`member_errors.power_exponents`)."""
    specs = fit.model.parameter_specs()
    per = time_basis(fit)
    out = {name: spec.description.replace(" per step", f" {per}") for name, spec in specs.items()}
    if getattr(fit.model, "family", "") != "blend":
        return out
    for member, (exponent, error) in power_exponents(fit.model, fit.data).items():
        name = f"{member}.power.time"
        if name not in out:
            continue
        spread = f" ± {error:.2g}, 1 s.e." if math.isfinite(error) else ""
        value = f"{exponent:.3g}".replace("-", "−")
        stated = f"c·N^e (e = {value}{spread}; −1 is perfect scaling)"
        out[name] = out[name].replace("c·N^e", stated, 1)
    return out


def parameter_rows(fit) -> list[dict]:
    """One row per parameter: value, unit, spread (a factor, ×; for a fraction, ± its
    standard error as a share; "at bound" on a bound of the fit), meaning. Undetermined
    parameters come last, marked as such rather than with a meaningless value."""
    errors = fit.standard_errors()
    specs = fit.model.parameter_specs()
    meaning = meanings(fit)
    open_ = set(undetermined(fit))
    rows, last = [], []
    for name, value in fit.parameters().items():
        spec = specs[name]
        sd = errors.get(name, math.nan)
        if name in fit.fixed:
            spread = "fixed"
        elif name in open_:
            spread = "undetermined"
        elif _at_bound(value, fit.bounds.get(name)):
            spread = "at bound"  # the curvature there says nothing of how far it may move
        elif spec.kind == "fraction" and math.isfinite(sd):
            spread = f"±{sd * value * (1.0 - value):.2g}"  # the logit's s.e., as a share
        elif math.isfinite(sd) and sd > math.log(WIDEST_SPREAD):
            spread = f"> {WIDEST_SPREAD:g}"  # "5.18e+21" said no more, and read as a value
        elif math.isfinite(sd):
            spread = f"{math.exp(sd):.3g}"
        else:
            spread = "—"  # no residual degree of freedom to estimate it from
        row = {
            "parameter": name,
            "value": "—" if name in open_ else value,
            "unit": spec.unit,
            "± (×)": spread,
            "meaning": meaning[name],
        }
        (last if name in open_ else rows).append(row)
    return rows + last


def _at_bound(value: float, bounds) -> bool:
    """Whether a fitted `value` sits on one of its `bounds` ``(low, high)`` (None: none)."""
    return any(
        edge is not None and math.isclose(value, edge, rel_tol=1e-6, abs_tol=1e-12)
        for edge in (bounds or ())
    )


def header_lines(fit) -> list[str]:
    """The data (what was read, and as which unit), the model's quality and what the fit
    assumed about the measurements (`FitResult.assumed`: their scaling, their unit)."""
    data = fit.data
    first = (
        f"{data.source}: {counted(len(data.gpus), 'measurement')}, "
        f"{counted(data.distinct_configs(), 'distinct configuration')}, target {fit.target}"
    )
    read_as = getattr(data, "read_as", "")
    if read_as:
        first += f" ({read_as})"
    state = "converged" if fit.converged else "NOT converged"
    label = fit.label
    node = data.config.get("gpus_per_node")
    if getattr(fit.model, "regime", None) == "straddling" and node is not None:
        # "straddling" was said nowhere in the output (review of 2026-12-06).
        sizes = sorted({float(g) for g in np.ravel(node)})
        where = f"a node of {sizes[0]:g} GPUs" if len(sizes) == 1 else "their node"
        label = label.replace(
            "(straddling regime)",
            f"(straddling regime: measured on both sides of {where}, within it and across "
            "the network)",
        )
    second = (
        f"model {label} ({fit.loss_kind} loss, {fit.precision}): R² {fit.r2:.4f}, "
        f"MAPE {fit.mape:.2f}%, {state}"
    )
    assumed = getattr(fit, "assumed", "")
    return [first, second, f"assumed: {assumed}"] if assumed else [first, second]


def fit_summary(fit, width: int | None = 100) -> str:
    """The header, the parameter table and a note on undetermined parameters."""
    lines = [wrap(line, width) for line in header_lines(fit)]
    lines.append(format_table(parameter_rows(fit), width=width))
    open_ = undetermined(fit)
    if open_:
        note = (
            f"undetermined: {', '.join(open_)}. The data cannot tell "
            f"{'its' if len(open_) == 1 else 'their'} size: negligible here, or "
            "indistinguishable from another term; fix it with a known value to use it."
        )
        lines += textwrap.wrap(note, width or 10**6)
    return "\n".join(lines)


def fit_repr(fit) -> str:
    open_ = set(undetermined(fit))
    values = ", ".join(
        f"{k}=undetermined" if k in open_ else f"{k}={v:.4g}" for k, v in fit.parameters().items()
    )
    return brief(
        "FitResult",
        f"{fit.label} on {fit.data.source} ({counted(len(fit.data.gpus), 'measurement')})",
        f"R² {fit.r2:.4f}, MAPE {fit.mape:.2f}%",
        values,
        "" if fit.converged else "not converged",
    )


def selection_title(selection, blended: bool, margin: float) -> str:
    return (
        f"candidates (by {selection.criterion}, lower is better; the first, physical family "
        f"is kept unless another is lower by more than {margin:g}"
        + ("; the answer is the blend listed first" if blended else "")
        + "):"
    )


def selection_summary(selection, blended: bool, margin: float, width: int | None = 100) -> str:
    title = selection_title(selection, blended, margin)
    lines = textwrap.wrap(title, width) if width else [title]
    return "\n".join([*lines, format_table(selection.rows(), width=width)])


def selection_repr(selection) -> str:
    tried = ", ".join(
        f"{c.family}{' (chosen)' if c.fit is selection.best else ''}" for c in selection.candidates
    )
    # The blend has no criterion score ("—" in the table): "best blend … by bic" read as
    # if it had won on it (review of 2026-12-06).
    how = "the default" if selection.best.family == "blend" else f"by {selection.criterion}"
    return brief("Selection", f"best {selection.best.label}, {how}", tried)
