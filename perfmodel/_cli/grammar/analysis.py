"""The arguments of `perfmodel explain`, `require`, `whatif` and `next`."""

from ..._levels import LARGEST_COUNT
from ..common import LEVEL, number, POSITIVE, PROBABILITY, whole
from .handler import Handler
from .shared import MAX_GPUS_TYPE
from .vocabulary import NEXT_QUANTITIES, SET_HELP


def register(subparsers) -> None:
    p = subparsers.add_parser("explain", help="time per term and what each parameter buys")
    p.add_argument("fit", help="fit JSON written by `perfmodel fit -o`")
    p.add_argument("--gpus", required=True, help="GPU count(s), comma-separated, e.g. 64,512")
    p.add_argument(
        "--factor",
        type=number(above=1, at_most=1e6),  # 1e100 took a time to 0 and divided by it
        default=2.0,
        help="improvement tried per parameter (2; > 1, up to 1e6)",
    )
    p.add_argument("--set", action="append", metavar="NAME=VALUE", help=SET_HELP)
    p.add_argument("--json", action="store_true", help="print a JSON object")
    p.set_defaults(run=Handler("analysis", "run_explain"))

    p = subparsers.add_parser("require", help="the parameter value (or GPU count) a target needs")
    p.add_argument("fit", help="fit JSON written by `perfmodel fit -o`")
    p.add_argument(
        "--param",
        required=True,
        help="the parameter to solve for (e.g. allreduce.bandwidth_inter), or gpus",
    )
    goal = p.add_mutually_exclusive_group(required=True)
    goal.add_argument("--efficiency", type=POSITIVE, help="efficiency (speedup/N) at least this")
    goal.add_argument("--speedup", type=POSITIVE, help="speedup over one GPU at least this")
    goal.add_argument("--time", type=POSITIVE, help="seconds per step at most this")
    goal.add_argument("--throughput", type=POSITIVE, help="work (or steps) per second at least")
    goal.add_argument(
        "--serial-share", type=PROBABILITY, help="serial part at most this fraction of the step"
    )
    p.add_argument(
        "--gpus", type=whole(1), help="the GPU count of the target (not with --param gpus)"
    )
    p.add_argument(
        "--max-gpus",
        type=whole(1, LARGEST_COUNT, "the largest GPU count the other commands take"),
        default=1_000_000,
        help="largest count for --param gpus (1e6; searched on a log grid)",
    )
    p.add_argument("--set", action="append", metavar="NAME=VALUE", help=SET_HELP)
    p.add_argument("--json", action="store_true", help="print a JSON object")
    p.set_defaults(run=Handler("analysis", "run_require"))

    p = subparsers.add_parser("whatif", help="change parameters and compare before and after")
    p.add_argument("fit", help="fit JSON written by `perfmodel fit -o`")
    p.add_argument("--set", action="append", metavar="NAME=VALUE", required=True, help=SET_HELP)
    p.add_argument("--gpus", help="GPU counts to compare (default: powers of 2 to --max-gpus)")
    p.add_argument(
        "--max-gpus", type=MAX_GPUS_TYPE, default=4096, help="search limit of the optimum (4096)"
    )
    p.add_argument("--threshold", type=POSITIVE, default=0.5, help="knee: marginal speedup (0.5)")
    p.add_argument(
        "--efficiency-floor", type=number(above=0, at_most=1), help="knee: efficiency floor"
    )
    p.add_argument("-o", "--output", help="write the changed fit here as JSON")
    p.add_argument("--json", action="store_true", help="print a JSON object")
    p.set_defaults(run=Handler("analysis", "run_whatif"))

    p = subparsers.add_parser("next", help="which GPU count to benchmark next")
    p.add_argument("fit", help="fit JSON written by `perfmodel fit -o`")
    p.add_argument(
        "--candidates", required=True, help="GPU counts you could still benchmark, e.g. 16,32,64"
    )
    p.add_argument(
        "--quantity",
        default="auto",
        choices=NEXT_QUANTITIES,
        help="what to pin down: the optimum, the knee, or the time at --max-gpus "
        "(auto: the optimum if it is a turning point, else the knee)",
    )
    p.add_argument("--level", type=LEVEL, default=0.9, help="interval probability (0.9)")
    p.add_argument("--max-gpus", type=MAX_GPUS_TYPE, default=4096, help="search limit (4096)")
    p.add_argument("--threshold", type=POSITIVE, default=0.5, help="knee: marginal speedup (0.5)")
    p.add_argument("--json", action="store_true", help="print a JSON object")
    p.set_defaults(run=Handler("analysis", "run_next"))
