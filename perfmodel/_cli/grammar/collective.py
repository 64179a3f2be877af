"""The arguments of `perfmodel fit-collective`."""

from ..._catalog import list_nccl_logs
from ..common import MAX_SEED, MAX_STARTS, number, whole
from .handler import Handler
from .vocabulary import COLLECTIVE_FACTORS, LOSSES, OPS


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "fit-collective",
        help="fit latency and bandwidth of collectives to nccl-tests logs",
        description="Fit t = A(n)·α + f·S/β per collective and rank count to the text "
        "output of nccl-tests (all_reduce_perf and friends; in-place and out-of-place "
        "rows both kept). β is the bus bandwidth in nccl-tests' convention; with "
        "--factor fitted, f is fitted against --link-bandwidth.",
    )
    p.add_argument("logs", nargs="*", metavar="LOG", help="nccl-tests output files")
    p.add_argument(
        "--dataset",
        action="append",
        metavar="NAME",
        help="a shipped log (repeatable): " + ", ".join(i.name for i in list_nccl_logs()),
    )
    p.add_argument("-o", "--output", help="write the fit here as JSON")
    p.add_argument("--json", action="store_true", help="print the fit as JSON")
    p.add_argument("--collective", choices=OPS, help="fit only this collective")
    p.add_argument("--ranks", type=whole(1), help="ranks, for logs without '#  Rank' lines")
    p.add_argument(
        "--factor",
        default="nominal",
        choices=COLLECTIVE_FACTORS,
        help="nominal: nccl-tests' bus-bandwidth factor (default); fitted: bytes moved "
        "per message byte, fitted against --link-bandwidth",
    )
    p.add_argument(
        "--link-bandwidth",
        type=number(at_least=1e6, at_most=1e14),  # 400 was GB/s given as B/s: "R² −2.4e11"
        help=(
            "bytes/s of one rank's slowest link (--factor fitted; e.g. 5e10 for one "
            "400 Gb/s NIC per GPU), from 1e6 to 1e14"
        ),
    )
    p.add_argument(
        "--loss",
        default="log",
        choices=LOSSES,
        help=f"{', '.join(LOSSES)} (default log: every message size weighs alike)",
    )
    p.add_argument(
        "--starts",
        type=whole(1, MAX_STARTS),
        default=16,
        help=f"multi-start points (default 16, at most {MAX_STARTS})",
    )
    p.add_argument("--seed", type=whole(0, MAX_SEED), default=0, help="seed of the starting points")
    p.set_defaults(run=Handler("collective", "run_fit_collective"))
