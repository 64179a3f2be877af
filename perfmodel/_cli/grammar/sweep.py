"""The arguments of `perfmodel sweep`."""

import argparse

from ..common import POSITIVE, whole
from .handler import Handler
from .vocabulary import DEFAULT_MAX_CONFIGS, PRECISIONS, SWEEP_OBJECTIVES


def register(subparsers) -> None:
    p = subparsers.add_parser("sweep", help="sweep a design space described in a TOML file")
    p.add_argument("space", help="space file (TOML): model, fixed values, axes, options")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument(
        "-o",
        "--output",
        help="also write the result here: with a .csv name the ranked configurations (the "
        "top table: axes, step time, samples/s, cost, …) as CSV, else all of it as JSON",
    )
    p.add_argument(
        "--top",
        type=whole(1),
        help="how many best configurations to list (at most the number of configurations)",
    )
    p.add_argument(
        "--objective",
        type=_sweep_objective,
        choices=SWEEP_OBJECTIVES,
        help="rank by time or cost per sample, or by time-to-train or cost-to-train (with "
        "the convergence of a time-to-train fit)",
    )
    p.add_argument(
        "--convergence",
        metavar="FIT",
        help="with --objective time-to-train|cost-to-train: the time-to-train fit whose "
        "critical batch gives the steps to the target (default: the space's model.fit)",
    )
    p.add_argument("--per", help="comma-separated axes to report the best for each value of")
    p.add_argument("--precision", choices=PRECISIONS, help="float32 (default) or float64")
    p.add_argument(
        "--max-configs",
        type=POSITIVE,
        help=f"refuse larger spaces without --yes (default {DEFAULT_MAX_CONFIGS:.0e})",
    )
    p.add_argument("--yes", action="store_true", help="sweep a space above --max-configs")
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        help="show progress on stderr (default: on a terminal, for long sweeps)",
    )
    p.add_argument(
        "--distributed",
        action="store_true",
        help="join a multi-host JAX cluster first (jax.distributed.initialize: Slurm and "
        "Open MPI are detected, elsewhere give the three options below); run the same "
        "command in every process: they sweep together and only process 0 prints and "
        "writes",
    )
    p.add_argument("--coordinator", metavar="HOST:PORT", help="with --distributed: process 0")
    p.add_argument("--num-processes", type=whole(1), help="with --distributed: processes in all")
    p.add_argument("--process-id", type=whole(0), help="with --distributed: this process's index")
    p.add_argument(
        "--init-timeout",
        type=POSITIVE,
        default=None,
        metavar="SECONDS",
        help="with --distributed: how long to wait for every process to join (JAX aborts "
        "the process when they do not; default 120)",
    )
    p.set_defaults(run=Handler("sweep", "run_sweep"))


def _sweep_objective(text: str) -> str:
    """`sweep --objective` values: hyphens or underscores (time-to-train)."""
    return text.replace("-", "_")
