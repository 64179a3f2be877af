"""The arguments of `perfmodel plot` and `perfmodel report`."""

from ..common import whole
from .handler import Handler
from .shared import add_figure_options


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
    p.set_defaults(run=Handler("plot", "run_plot"))

    p = subparsers.add_parser("report", help="one self-contained HTML (or Markdown) report")
    p.add_argument("fit", help="fit JSON written by `perfmodel fit -o`")
    p.add_argument("-o", "--output", required=True, help="report.html, or report.md (+ .png)")
    add_figure_options(p)
    p.set_defaults(run=Handler("plot", "run_report"))
