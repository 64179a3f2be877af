"""`perfmodel plot` and `perfmodel report`: a fit file as a figure or a page to share."""

import contextlib
import os

from .._errors import InputError
from .._files import all_or_nothing
from .._io import load_fit, read_document
from .._questions import MAX_GPUS
from .common import check_outputs, LEVEL, message, POSITIVE, whole


def register(subparsers) -> None:
    p = subparsers.add_parser("plot", help="plot a fit: curve, speedup, efficiency, breakdown")
    p.add_argument("fit", help="fit JSON written by `perfmodel fit -o`")
    p.add_argument("-o", "--output", required=True, help="image to write: .png, .svg or .pdf")
    add_figure_options(p)
    p.add_argument(
        "--dpi", type=whole(10, 1000), default=100, help="resolution of a PNG (100; 10 to 1000)"
    )
    p.add_argument(
        "--breakdown",
        default="share",
        choices=("share", "seconds"),
        help="breakdown panel as each term's share of the step (default) or its seconds",
    )
    p.set_defaults(run=_run_plot)

    p = subparsers.add_parser("report", help="one self-contained HTML (or Markdown) report")
    p.add_argument("fit", help="fit JSON written by `perfmodel fit -o`")
    p.add_argument("-o", "--output", required=True, help="report.html, or report.md (+ .png)")
    add_figure_options(p)
    p.set_defaults(run=_run_report)


def add_figure_options(p) -> None:
    """Options shared by `plot`, `report` and `fit --report`."""
    p.add_argument(
        "--max-gpus",
        type=whole(1, MAX_GPUS, "every GPU count up to it is evaluated"),
        default=4096,
        help=f"largest GPU count searched for the optimum and the knee (4096; at most {MAX_GPUS})",
    )
    p.add_argument(
        "--interval",
        type=LEVEL,
        default=0.9,
        help="level of the interval band and intervals (0.9)",
    )
    p.add_argument(
        "--threshold",
        type=POSITIVE,
        default=0.5,
        help="diminishing returns once one more GPU adds less speedup (0.5)",
    )


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


def _run_plot(args) -> int:
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


def _run_report(args) -> int:
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
