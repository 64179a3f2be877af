"""Options several commands share: the answers of `predict` and `optimal` (also read by
`perfmodel._cli.quick`, which parses them without JAX), intervals, figures, layouts of
hybrid fits and time-to-train fits."""

import argparse

from ..._levels import METHODS
from ..common import LEVEL, number, POSITIVE, whole
from .vocabulary import LAYOUT_OPTIONS, MAX_GPUS, TRAIN_OBJECTIVES

# At least 2: a search of 1 GPU has nothing to compare ("buy 1 GPU: speedup 1× (1–1×)").
MAX_GPUS_TYPE = whole(2, MAX_GPUS, "the search compares every GPU count from 1 to it")


def _currency(text: str) -> str:
    """``--currency``: printable, at most 16 characters (a newline split the answer's lines,
    in every kind of fit's answer)."""
    if not text.isprintable() or len(text) > 16:
        raise argparse.ArgumentTypeError(
            f"expected a currency name such as USD (printable, at most 16 characters), got {text!r}"
        )
    return text


def add_optimal_options(p) -> None:
    p.add_argument(
        "--max-gpus",
        type=MAX_GPUS_TYPE,
        default=4096,
        help=f"largest GPU count (4096; at most {MAX_GPUS})",
    )
    p.add_argument(
        "--objective",
        default=None,
        type=_hyphenated,
        choices=("time", "cost", *TRAIN_OBJECTIVES),
        help="time: fastest; cost: fewest GPU-hours per unit of work; with a time-to-train "
        "fit, time-to-train or cost-to-train: the GPU count and global batch that reach "
        "the target fastest or cheapest (default: time; for a time-to-train fit "
        "time-to-train, or cost-to-train with --deadline)",
    )
    p.add_argument(
        "--price-per-gpu-hour", type=POSITIVE, help="price of a GPU for an hour, in --currency"
    )
    p.add_argument(
        "--currency", type=_currency, default="", help="currency of the prices, e.g. USD"
    )
    p.add_argument(
        "--deadline",
        type=POSITIVE,
        help="seconds per step (per unit of work for throughput, per GPU batch for steps "
        "of a fixed per-GPU batch): also the cheapest count meeting it; with --objective "
        "cost, the optimum",
    )
    p.add_argument(
        "--budget",
        type=POSITIVE,
        help="currency per hour: also the fastest count within it (needs --price-per-gpu-hour)",
    )
    p.add_argument(
        "--multiple-of",
        type=whole(1),
        default=None,
        help="only 1 and multiples of this, for the recommendation, the knee and the optimum "
        "(default: gpus_per_node when the fit's data give it, else 1); for the "
        "time-to-train objectives, the step of their GPU grid (four counts per doubling)",
    )
    p.add_argument(
        "--threshold",
        type=POSITIVE,
        default=0.5,
        help="diminishing returns once one more GPU adds less speedup (0.5)",
    )
    p.add_argument(
        "--efficiency-floor",
        type=number(above=0, at_most=1),
        help="diminishing returns once efficiency falls below this",
    )


def add_interval_options(p, what: str) -> None:
    p.add_argument(
        "--interval",
        type=LEVEL,
        metavar="LEVEL",
        help=f"probability of a central interval, e.g. 0.9; {what}",
    )
    p.add_argument(
        "--method",
        default=None,
        choices=METHODS,
        help="conformal (the default blend's intervals, calibrated on published series), "
        "laplace (a single family's default) or a vmapped bootstrap",
    )


def add_figure_options(p) -> None:
    """Options shared by `plot`, `report` and `fit --report`."""
    p.add_argument(
        "--max-gpus",
        type=MAX_GPUS_TYPE,
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


def add_layout_options(p) -> None:
    """`predict` options giving layouts of hybrid fits."""
    for field, flag in LAYOUT_OPTIONS.items():
        p.add_argument(flag, metavar="N[,N...]", help=f"hybrid fits: {field} per row")
    p.add_argument(
        "--layouts",
        metavar="CSV",
        help="hybrid fits: a CSV of configurations (a gpus column and any Config fields)",
    )


def add_train_predict_options(p) -> None:
    """`predict`'s option for time-to-train fits."""
    p.add_argument(
        "--global-batch",
        help="time-to-train fits: global batch per row (one value, or one per GPU count; "
        "default: the batch that trains fastest at each count)",
    )


def add_train_optimal_options(p) -> None:
    """`optimal`'s options for time and cost to train."""
    p.add_argument(
        "--global-batch",
        help="time-to-train fits: global batches to consider, comma-separated (default: "
        "powers of two from the smallest batch measured / 4 to the largest × 16)",
    )
    p.add_argument(
        "--min-gain",
        type=number(above=0, below=1),
        default=0.1,
        help="time-to-train fits: the answer's 'why' names the count past which a doubling "
        "of the GPUs saves less than this share of the time (0.1); the fastest count stands",
    )


def _hyphenated(text: str) -> str:
    """`--objective` values with hyphens or underscores (``time_to_train``), as `sweep`
    takes them: `optimal` refused the spelling `sweep --help` lists (review of
    2026-12-07)."""
    return text.replace("_", "-")
