"""A fit as one self-contained page to share: HTML (figure embedded) or Markdown.

The page holds the answers (the GPU count worth buying, as `perfmodel optimal` says
it, the fastest count, diminishing returns, Amdahl's bound,
what each parameter would buy), the fitted parameters with units and intervals, the
candidate families compared, predictions with their interval, the figure and the data.
"""

import base64
import dataclasses
import datetime
import html
import math
import os

import numpy as np

from .._catalog import run_note
from .._errors import InputError
from .._files import all_or_nothing, atomic_write, package_version
from .._fitting import FitResult, meanings, Selection, time_basis, undetermined
from .._levels import level_text
from .._questions import CHECKED_AHEAD, past_checked, peak_note
from .._text import counted
from . import training as training_tables
from .plot import Curves, curves, figure, figure_bytes, interval_band, quantity_label, source_name
from .training_figure import plot_time_to_train

REPORT_FORMATS = ("html", "md")


@dataclasses.dataclass(frozen=True)
class _Table:
    title: str
    rows: list[dict]
    note: str = ""


def _si(value: float, unit: str) -> str:
    """``332.6 µs``, ``49.1 GB/s``, ``2000 s`` (never ks); plain numbers for fractions."""
    if value is None or not math.isfinite(value):
        return "—"
    if unit in ("", "1", "fraction") or (unit == "s" and abs(value) >= 1):
        return f"{value:.4g}" + (" s" if unit == "s" else "")
    exponent = 0 if value == 0 else int(math.floor(math.log10(abs(value)) / 3))
    exponent = max(-4, min(4, exponent))
    prefix = {-4: "p", -3: "n", -2: "µ", -1: "m", 0: "", 1: "k", 2: "M", 3: "G", 4: "T"}
    return f"{value / 1000.0**exponent:.4g} {prefix[exponent]}{unit}"


def _measured_format(fit: FitResult):
    """Header and formatter of the measured quantity: seconds, or throughput as given."""
    if fit.target == "throughput":
        return quantity_label(fit), lambda v: f"{v:.4g}" if math.isfinite(v) else "—"
    return "time per step", lambda v: _si(v, "s")


def selection_rows(selection) -> tuple[str, list[dict]] | None:
    """The candidates compared as ``(criterion, rows)``.

    `selection` is a `Selection` from `fit_auto`, the ``"selection"`` object a fit file
    written by ``perfmodel fit`` holds, or None.
    """
    if selection is None:
        return None
    if isinstance(selection, Selection):
        return selection.criterion, selection.rows()
    try:
        criterion = str(selection["criterion"])
        rows = [dict(r) for r in selection["candidates"]]
        for row in rows:  # null: a score the criterion cannot give (the blend's)
            if row.get(criterion, "") is None:
                row[criterion] = "—"
        return criterion, rows
    except (KeyError, TypeError, ValueError) as error:
        raise InputError(
            "malformed 'selection' in the fit file: expected an object with 'criterion' "
            f"and a list of 'candidates' objects ({error!r})"
        )


# An interval wider than this (hi/lo) is said in words: its ends ("6.8e-249 ps – 2.5e+247
# s") say nothing more.
WIDEST_INTERVAL = 1e4


def _parameter_rows(fit: FitResult, level: float) -> list[dict]:
    from .._uncertainty import parameter_intervals

    specs = fit.model.parameter_specs()
    meaning = meanings(fit)
    try:
        intervals = parameter_intervals(fit, level)
    except InputError:  # as many free parameters as measurements
        intervals = {}
    n = int(np.size(fit.data.gpus))
    none = f"none: {counted(len(fit.free), 'free parameter')} for {counted(n, 'measurement')}"
    open_ = set(undetermined(fit))
    rows = []
    for name, value in fit.parameters().items():
        spec = specs[name]
        if name in fit.fixed:
            interval = "fixed"
        elif name in open_:
            interval = "undetermined: the data show no such term"
        elif name not in intervals:
            interval = f"{none}, no residual to estimate it from"
        else:
            lo, hi = intervals[name]
            if math.isfinite(hi) and lo > 0 and hi / lo > WIDEST_INTERVAL:
                interval = f"barely bounded by the data (wider than ×{WIDEST_INTERVAL:g})"
            elif math.isfinite(hi) and lo > 0:
                interval = f"{_si(lo, spec.unit)} – {_si(hi, spec.unit)}"
            elif fit.family == "blend":  # its member's own fit (`parameter_intervals`)
                interval = (
                    f"none: {name.split('.', 1)[0]}'s own fit leaves no residual to "
                    "estimate it from"
                )
            else:
                interval = "not determined by the data"
        rows.append(
            {
                "parameter": name,
                "value": "—" if name in open_ else _si(value, spec.unit),
                f"{level_text(level)} interval": interval,
                "meaning": meaning[name],
            }
        )
    return rows


def _at_optimum(fit: FitResult, time_s: float, gpus: int) -> str:
    if fit.target == "throughput":
        name, _, unit = quantity_label(fit).partition(" (")
        return f"{name} {1.0 / time_s:.4g} {unit.rstrip(')')}".rstrip()
    # Steps of a fixed per-GPU batch: the optimum's seconds are per GPU batch.
    return f"step {_si(time_s * (gpus if fit.data.per_gpu else 1), 's')}"


def _answer_rows(fit: FitResult, c: Curves) -> list[dict]:
    opt, knee, rec = c.optimum, c.knee, c.recommendation
    limit = f" ({opt.limit_text()})" if opt.at_limit else ""
    rows = []
    if rec is not None:
        rows.append(
            {
                "question": "GPUs worth buying",
                "answer": counted(rec.gpus, "GPU"),
                "detail": " ".join(
                    [rec.sentence, *(f"{c[0].upper()}{c[1:]}." for c in rec.caveats())]
                ),
            }
        )
    rows += [
        {
            "question": "fastest GPU count",
            "answer": counted(opt.gpus, "GPU") + limit,
            "detail": f"{_at_optimum(fit, opt.time_s, opt.gpus)}, speedup {opt.speedup:.3g}×, "
            f"efficiency {opt.efficiency:.1%} (searched up to {opt.searched}"
            # As `fit` and `optimal` say it; the report did not (review of 2026-12-07).
            + "".join(f"; {far}" for far in [past_checked(opt.gpus, fit)] if far)
            + ")"
            + peak_note(fit, opt.gpus),
        }
    ]
    if knee.gpus is None:
        rows.append(
            {
                "question": "diminishing returns",
                "answer": "not reached",
                "detail": f"up to {knee.searched} GPUs",
            }
        )
    else:
        rows.append(
            {
                "question": "diminishing returns",
                "answer": f"from {counted(knee.gpus, 'GPU')}",
                "detail": knee.summary(),
            }
        )
    if c.bound is None and fit.family == "blend":
        return rows  # far ahead its weights leave Amdahl's law: no bound (`amdahl_bound`)
    bound = "no serial term" if c.bound is None else f"{c.bound:.4g}×"
    rows.append(
        {
            "question": "Amdahl bound on speedup",
            "answer": bound,
            "detail": "T(1) / serial time: no GPU count beats it",
        }
    )
    return rows


def _measured_label(fit, gpus: float) -> str:
    """`` (measured)`` after a measured count, or `` (measured at global_batch 912)``
    when what was measured there ran another configuration than the one predicted (the
    fit's defaults) in a field the model reads: the row is not the measurement. A field
    the model does not read (the default blend's global_batch) changes no prediction: an
    MLPerf table labelled 8 and 16 GPUs "measured at global_batch 256" but not 256 GPUs,
    predicted alike. `fit`: a `FitResult`."""
    from .._reads import model_fields

    at = fit.data.gpus == gpus
    differ = [
        (name, values)
        for name, values in fit.data.config.items()
        if name in fit.config_defaults
        and np.any(np.asarray(values)[at] != float(fit.config_defaults[name]))
    ]
    read = model_fields(fit.model) if differ else frozenset()  # a trace: only when needed
    other = [
        f"{name} {', '.join(f'{v:g}' for v in np.unique(np.asarray(values)[at]))}"
        for name, values in differ
        if name in read
    ]
    return f" (measured at {'; '.join(other)})" if other else " (measured)"


def _prediction_rows(fit: FitResult, c: Curves, level: float) -> tuple[list[dict], str]:
    # Every doubling up to the plotted range and on to the fastest count found, so the
    # table reaches the count the answers name.
    top = max(float(c.gpus[-1]), float(c.optimum.gpus))
    counts = {float(n) for n in np.unique(fit.data.gpus)}
    counts |= {2.0**k for k in range(0, 24) if 2.0**k <= top}
    counts |= {float(c.optimum.gpus)} | ({float(c.knee.gpus)} if c.knee.gpus else set())
    gpus = np.array(sorted(counts))
    predicted = fit.predict(gpus)
    key = "throughput" if fit.target == "throughput" else "time_s"
    band, note = interval_band(fit, gpus, level)
    measured = set(fit.data.gpus.tolist())
    largest = float(np.max(fit.data.gpus))
    header, show = _measured_format(fit)
    rows = []
    for i, n in enumerate(gpus):
        row = {"gpus": f"{n:g}" + (_measured_label(fit, n) if n in measured else "")}
        if n > CHECKED_AHEAD * largest:  # past what the accuracy benchmarks check
            row["gpus"] += f" (extrapolated beyond {CHECKED_AHEAD:g}×)"
        elif n > largest:  # as `fit` calls every count past the largest measured
            row["gpus"] += " (extrapolated)"
        row[header] = show(float(predicted[key][i]))
        if band is not None:
            row[note] = f"{show(float(band[0][i]))} – {show(float(band[1][i]))}"
        row["speedup"] = f"{predicted['speedup'][i]:.3g}×"
        row["efficiency"] = f"{predicted['efficiency'][i]:.1%}"
        rows.append(row)
    return rows, note


def _sensitivity_table(fit: FitResult, c: Curves) -> _Table:
    from .._questions import idle_change, sensitivity

    n = c.knee.gpus or int(fit.data.gpus.max())
    where = "where returns diminish" if c.knee.gpus else "the largest GPU count measured"
    s = sensitivity(fit, n)
    throughput = fit.target == "throughput"
    values = fit.parameters()
    rows, idle = [], []
    for p in s.ranked():
        if p.undetermined:
            rows.append({"parameter": p.name, "value": "—", "effect": "undetermined"})
            continue
        if idle_change(p):
            idle.append(p.name)
            continue
        change = p.change
        value, improved = _si(p.value, p.unit), f"{change.label}: {_si(change.value, p.unit)}"
        if p.members:  # one change to every member of a blend that has the parameter
            ends = (min(values[m] for m in p.members), max(values[m] for m in p.members))
            value = " – ".join(dict.fromkeys(_si(v, p.unit) for v in ends))
            value = f"{value} ({len(p.members)} members)"
            improved = f"{change.label}: every member's"
        effect = (
            f"throughput {1.0 / (1.0 + change.time_change) - 1.0:+.1%}"
            if throughput
            else f"step time {change.time_change:+.1%}"
        )
        rows.append(
            {
                "parameter": p.name + (" (fixed)" if p.fixed else ""),
                "value": value,
                "elasticity d log T / d log θ": f"{p.elasticity:+.3f}",
                "improved": improved,
                "effect": effect,
                "speedup": f"{s.speedup:.3g}× → {change.speedup:.3g}×",
            }
        )
    limiting = (
        f"At {n} GPUs the largest term besides compute is {s.limiting}. " if s.limiting else ""
    )
    note = limiting + "Each parameter improved 2× alone, the model evaluated exactly."
    if s.groups:
        note += (
            " A parameter several of the blend's members have (compute.time, …) is changed in"
            " all of them at once, as `perfmodel whatif --set NAME=x0.5` does."
        )
    if idle:
        note += f" Changing nothing measurable here (< 0.05%): {', '.join(idle)}."
    note = " ".join((*(f"{n}." for n in s.notes), note))
    return _Table(f"What would move it: sensitivities at {n} GPUs ({where})", rows, note)


def _data_rows(fit: FitResult) -> list[dict]:
    data = fit.data
    predicted = fit.predict(data.gpus, **{k: v for k, v in data.config.items()})
    key = "throughput" if fit.target == "throughput" else "time_s"
    header, show = _measured_format(fit)
    rows = []
    for i in np.argsort(data.gpus, kind="stable"):
        row = {
            "line": "" if data.lines is None else int(data.lines[i]),
            "gpus": f"{data.gpus[i]:g}",
        }
        row.update({k: f"{v[i]:g}" for k, v in data.config.items()})
        measured, model = float(data.measured[i]), float(predicted[key][i])
        row[f"measured {header}"] = show(measured)
        row["model"] = show(model)
        row["error"] = f"{(model / measured - 1.0):+.1%}"
        rows.append(row)
    return rows


def _sections(fit: FitResult, c: Curves, compared, level: float, training=None) -> list[_Table]:
    if training is None:
        tables = [_Table("Answers", _answer_rows(fit, c)), _sensitivity_table(fit, c)]
    else:
        batch = fit.config_defaults.get("global_batch")
        at = "" if batch is None else f" at global batch {batch:g}"
        tables = [
            _Table(
                "Time to train",
                training_tables.answer_rows(training, level, int(c.optimum.searched)),
            ),
            _Table(
                f"Step time{at} (the step fit)",
                _answer_rows(fit, c),
                "The fastest step is not the fastest training: past the critical batch "
                "more steps are needed (the table above). This table, the figure below and "
                f"the predictions are the step fit{at}; runs measured at other batches "
                "sit off its curve (each run at its own batch: 'Time to train of the runs').",
            ),
            _sensitivity_table(fit, c),
            _Table(
                "Best global batch per GPU count",
                training_tables.best_batch_rows(training, int(c.optimum.searched)),
            ),
            _Table(
                "Time to train of the runs",
                training_tables.run_rows(training),
                "Each run at its own GPU count and global batch; error = model / measured − 1.",
            ),
        ]
    basis = time_basis(fit)
    note = f"Values in SI units; times are {basis}"
    if fit.target == "throughput":
        note += " (seconds per unit of work: 1/throughput)."
    elif basis == "per GPU batch":
        note += " (a step at N GPUs is N of them: the per-GPU batch is fixed)."
    else:
        note += "."
    if fit.family == "blend":
        note += (
            " Each member family is fitted alone: a coefficient's interval is its member's"
            " (Student-t on the measurements less that member's coefficients), and a"
            " member with as few measurements as coefficients has none."
        )
    tables.append(_Table(f"Fitted parameters: {fit.label}", _parameter_rows(fit, level), note))
    if compared is not None:
        criterion, rows = compared
        tables.append(_Table(f"Candidate families (by {criterion}, lower is better)", rows))
    rows, note = _prediction_rows(fit, c, level)
    tables.append(_Table("Predictions", rows, "" if rows and note in rows[0] else note))
    tables.append(_Table("Data", _data_rows(fit), "error = model / measured − 1."))
    return tables


def _summary(fit: FitResult, training=None, level: float = 0.9) -> list[str]:
    data = fit.data
    lines = [] if training is None else training_tables.summary_lines(training, level)
    lines += [
        f"{data.gpus.size} measurements of {data.target} at {len(np.unique(data.gpus))} GPU "
        f"counts ({int(data.gpus.min())}–{int(data.gpus.max())}) from {data.source}"
        f"{run_note(data.source)}.",
        f"Model {fit.label}, {fit.loss_kind} loss, {fit.precision}: R² {fit.r2:.4f}, "
        f"MAPE {fit.mape:.2f}%, {fit.message.split(';')[0]}.",
    ]
    return lines + [f"Warning: {w}" for w in fit.warnings]


_CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1150px;
       color: #222; padding: 0 1em; }
h1 { font-size: 1.5em; } h2 { font-size: 1.15em; margin-top: 1.8em; }
table { border-collapse: collapse; margin: .5em 0; font-size: 13px; }
th, td { border-bottom: 1px solid #ddd; padding: 3px 10px; text-align: left; }
th { background: #f4f4f4; } td { font-variant-numeric: tabular-nums; }
.note { color: #555; font-size: 12px; } .warn { color: #a40; }
img { max-width: 100%; border: 1px solid #eee; }
"""


def _cell(value) -> str:
    if isinstance(value, bool):
        return "yes" if value else ""
    if isinstance(value, float):
        return f"{value:.4g}" if math.isfinite(value) else "—"
    return "" if value is None else str(value)


def _html_table(table: _Table) -> str:
    columns = list(table.rows[0]) if table.rows else []
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(_cell(r.get(c)))}</td>" for c in columns) + "</tr>"
        for r in table.rows
    )
    note = f'<p class="note">{html.escape(table.note)}</p>' if table.note else ""
    return f"<h2>{html.escape(table.title)}</h2>\n<table><tr>{head}</tr>{body}</table>{note}"


def _md_table(table: _Table) -> str:
    columns = list(table.rows[0]) if table.rows else []

    def row(cells):
        return "| " + " | ".join(str(x).replace("|", "\\|") for x in cells) + " |"

    lines = [f"## {table.title}", "", row(columns), row(["---"] * len(columns))]
    lines += [row(_cell(r.get(c)) for c in columns) for r in table.rows]
    if table.note:
        lines += ["", f"*{table.note}*"]
    return "\n".join(lines)


def _title(fit: FitResult, training=None) -> str:
    # A folder of logs read as "logs/ (seconds per step)" names itself, not "".
    name = source_name(fit.data.source)
    if training is not None:
        return f"Time-to-train report: {name.partition(' (')[0]}"
    return f"Scaling report: {name}"


def _footer() -> str:
    stamp = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    return f"Written by perfmodel {package_version()} on {stamp}."


def _training_png(training, c: Curves, level: float, dpi: int) -> bytes:
    """The time-to-train figure (`plot_time_to_train`) over the page's GPU range."""
    drawn = plot_time_to_train(training, level=level, max_gpus=int(c.optimum.searched))
    return figure_bytes(drawn, "png", dpi=dpi)


def _html(fit: FitResult, c: Curves, compared, level: float, dpi: int, training=None) -> str:
    tables = _sections(fit, c, compared, level, training)
    image = base64.b64encode(figure_bytes(figure(c), "png", dpi=dpi)).decode("ascii")
    lead = []  # a time-to-train page: its own figure under the time-to-train table
    if training is not None:
        data = base64.b64encode(_training_png(training, c, level, dpi)).decode("ascii")
        lead = [
            f'<img alt="time to train at the fastest batch" src="data:image/png;base64,{data}">'
        ]
    summary = "".join(
        f'<p class="{"warn" if line.startswith("Warning") else ""}">{html.escape(line)}</p>'
        for line in _summary(fit, training, level)
    )
    title = html.escape(_title(fit, training))
    head = 1 if training is None else 2  # the figure under the step's table
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{title}</title><style>{_CSS}</style></head><body>",
        f"<h1>{title}</h1>",
        summary,
        *(_html_table(t) for t in tables[:1]),
        *lead,
        *(_html_table(t) for t in tables[1:head]),
        f'<img alt="scaling plots of the fit" src="data:image/png;base64,{image}">',
        *(_html_table(t) for t in tables[head:]),
        f'<p class="note">{html.escape(_footer())}</p>',
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def _markdown(
    fit: FitResult, c: Curves, compared, level: float, image: str, training=None, lead=None
) -> str:
    tables = _sections(fit, c, compared, level, training)
    summary = _summary(fit, training, level)
    # A time-to-train page puts its figure (`lead`) under the time-to-train table and the
    # step fit's figure under the step's table.
    head = 1 if training is None else 2
    parts = [f"# {_title(fit, training)}", "", *summary, ""]
    for k, table in enumerate(tables[:head]):
        parts += [_md_table(table), ""]
        if k == 0 and lead is not None:
            parts += [f"![time to train at the fastest batch]({lead})", ""]
    parts += [f"![scaling plots of the fit]({image})", ""]
    for table in tables[head:]:
        parts += [_md_table(table), ""]
    parts.append(f"*{_footer()}*")
    return "\n".join(parts) + "\n"


def report_html(
    fit: FitResult,
    *,
    selection=None,
    interval: float = 0.9,
    dpi: int = 100,
    time_to_train=None,
    **options,
) -> str:
    """One self-contained HTML page about `fit`, the figure embedded as a PNG.

    Args:
        fit: a fitted model.
        selection: the candidates compared: a `Selection` (`fit_auto`) or the
            ``"selection"`` object of a fit file; None leaves that section out.
        interval: level of the parameter and prediction intervals.
        dpi: resolution of the embedded figure.
        time_to_train: a `TimeToTrainFit` whose step fit is `fit`: the page then
            answers first when to stop adding GPUs to *train* (`plan_training`), the
            best batch per GPU count and how well its runs are reproduced.
        options: passed to `curves` (``max_gpus``, ``gpus_range``, ``threshold``).
    """
    compared = selection_rows(selection)
    c = curves(fit, interval=interval, answer_intervals=True, **options)
    return _html(fit, c, compared, interval, dpi, time_to_train)


def report_markdown(
    fit: FitResult,
    *,
    image: str,
    selection=None,
    interval: float = 0.9,
    time_to_train=None,
    **options,
) -> str:
    """The page of `report_html` as Markdown, linking the figure at path `image`."""
    compared = selection_rows(selection)
    c = curves(fit, interval=interval, answer_intervals=True, **options)
    return _markdown(fit, c, compared, interval, image, time_to_train)


def training_figure_path(path: str) -> str:
    """Where a Markdown time-to-train report at `path` writes its time-to-train figure."""
    return os.path.splitext(os.fspath(path))[0] + "_time_to_train.png"


def write_report(
    fit: FitResult,
    path: str | os.PathLike,
    *,
    selection=None,
    interval: float = 0.9,
    dpi: int = 100,
    time_to_train=None,
    **options,
) -> list[str]:
    """Write the report of `fit` to `path`: ``.html`` (self-contained) or ``.md``.

    A Markdown report links its figure, written beside it as ``<name>.png`` (and, with
    `time_to_train`, ``<name>_time_to_train.png``, `training_figure_path`). Files are
    written atomically, once everything has been computed. `time_to_train` as in
    `report_html`.

    Returns:
        The paths written.
    """
    path = os.fspath(path)
    fmt = os.path.splitext(path)[1].lower().lstrip(".")
    if fmt not in REPORT_FORMATS:
        raise InputError(f"{path}: unknown report format {fmt!r}; use .html or .md")
    compared = selection_rows(selection)  # a malformed one fails before the work
    c = curves(fit, interval=interval, answer_intervals=True, **options)
    if fmt == "html":
        files = {path: _html(fit, c, compared, interval, dpi, time_to_train)}
    else:
        image = os.path.splitext(path)[0] + ".png"
        name = os.path.basename(image)
        files = {image: figure_bytes(figure(c), "png", dpi=dpi)}
        lead = None
        if time_to_train is not None:  # its own figure too, beside the step's
            lead = training_figure_path(path)
            files[lead] = _training_png(time_to_train, c, interval, dpi)
            lead = os.path.basename(lead)
        files[path] = _markdown(fit, c, compared, interval, name, time_to_train, lead)
    with all_or_nothing():  # a Markdown report and its figure, or neither
        for name, content in files.items():
            with atomic_write(name, "wb") as stream:
                if not isinstance(content, bytes):  # a lone surrogate (non-UTF-8 name) escaped
                    content = content.encode("utf-8", "backslashreplace")
                stream.write(content)
    return list(files)
