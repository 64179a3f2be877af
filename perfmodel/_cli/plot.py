"""`perfmodel plot` and `perfmodel report`: a fit file as a figure or a page to share."""

import contextlib
import os

from .._errors import InputError
from .._files import all_or_nothing
from .._io import load_fit, read_document
from .common import check_outputs, message


def figure_options(args) -> dict:
    """The `curves` options from parsed `add_figure_options` arguments (their types
    checked the ranges)."""
    return {"max_gpus": args.max_gpus, "interval": args.interval, "threshold": args.threshold}


def _check_output(path: str, formats: tuple[str, ...], what: str) -> None:
    # Before any work: a wrong extension or folder should not cost a fit or a render.
    fmt = os.path.splitext(path)[1].lower().lstrip(".")
    if fmt not in formats:
        raise InputError(f"{path}: unknown {what} format {fmt!r}; use ." + ", .".join(formats))
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise InputError(f"{path}: directory {folder} does not exist")


def check_report_path(path: str) -> None:
    """An InputError for a report path that cannot be written (before fitting)."""
    from .._show import REPORT_FORMATS as FORMATS

    _check_output(path, FORMATS, "report")


def report_outputs(path: str, flag: str, training: bool = False) -> dict[str, str]:
    """The files a report at `path` writes, by flag: a Markdown report's figures too (a
    time-to-train report has two)."""
    outputs = {flag: path}
    if path.lower().endswith(".md"):
        outputs[f"{flag} (its figure)"] = os.path.splitext(path)[0] + ".png"
        if training:
            from .._show import training_figure_path

            outputs[f"{flag} (its time-to-train figure)"] = training_figure_path(path)
    return outputs


def run_plot(args) -> int:
    from .._show import curves, figure, save_figure
    from .._show import FIGURE_FORMATS as FORMATS

    check_outputs({"-o": args.output}, [args.fit])
    _check_output(args.output, FORMATS, "image")
    result = load_fit(args.fit)
    from .._questions import refuse_layout_fit

    refuse_layout_fit(result, "plot")
    from .._convergence import has_time_to_train, load_time_to_train

    if has_time_to_train(args.fit):  # what it answers: time to train, and the batch
        from .._show import plot_time_to_train

        options = figure_options(args)
        drawn = plot_time_to_train(
            load_time_to_train(args.fit), level=options["interval"], max_gpus=options["max_gpus"]
        )
    else:
        c = curves(result, **figure_options(args))
        with _named(args.fit):
            drawn = figure(c, relative_breakdown=args.breakdown == "share")
    with _named(args.fit):
        save_figure(drawn, args.output, dpi=args.dpi)
    message(f"wrote {args.output}")
    return 0


@contextlib.contextmanager
def _named(path: str):
    """An InputError raised while drawing, with the fit file it drew named first."""
    try:
        yield
    except InputError as error:
        text = str(error)
        raise InputError(text if text.startswith(f"{path}:") else f"{path}: {text}") from None


def stored_selection(path: str):
    """The ``"selection"`` object a fit file written by ``perfmodel fit`` holds, or None."""
    return read_document(path).get("selection")


def run_report(args) -> int:
    from .._convergence import has_time_to_train, load_time_to_train
    from .._show import write_report

    training_file = has_time_to_train(args.fit)
    check_outputs(report_outputs(args.output, "-o", training_file), [args.fit])
    check_report_path(args.output)
    result = load_fit(args.fit)
    from .._questions import refuse_layout_fit

    refuse_layout_fit(result, "report")
    # A time-to-train fit file: its step fit, and what it answers about training.
    training = load_time_to_train(args.fit) if training_file else None
    with all_or_nothing(), _named(args.fit):  # a Markdown report and its figure, or neither
        written = write_report(
            result,
            args.output,
            selection=stored_selection(args.fit),
            time_to_train=training,
            **figure_options(args),
        )
    message("wrote " + ", ".join(written))
    return 0
