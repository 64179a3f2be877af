"""The arguments of `perfmodel fit`, `predict`, `optimal`, `demo` and `datasets`."""

import argparse

from ..._levels import KINDS as INTERVAL_KINDS
from ..common import MAX_SEED, MAX_STARTS, POSITIVE, whole
from .handler import Handler
from .shared import (
    add_interval_options,
    add_layout_options,
    add_optimal_options,
    add_train_optimal_options,
    add_train_predict_options,
)
from .vocabulary import (
    CRITERIA,
    DEFAULT_CRITERION,
    DEFAULT_STARTS,
    DEMO_DATASET,
    FAMILY_NAMES,
    GPU_NAMES,
    LOG_FORMATS,
    LOG_QUANTITIES,
    LOSSES,
    SET_HELP,
    WORK_UNITS,
)


def register(subparsers) -> None:
    p = subparsers.add_parser("fit", help="fit a model to a benchmark CSV")
    p.add_argument(
        "csv",
        help="benchmark CSV: gpus and time_s/time_ms/time_us/throughput, or the name of a "
        "shipped dataset (`perfmodel datasets`)",
    )
    add_log_options(p)
    p.add_argument("-o", "--output", help="write the fit here as JSON")
    _add_fit_options(p)
    add_hybrid_fit_options(p)
    add_collective_options(p)
    p.add_argument("--json", action="store_true", help="print the fit as JSON")
    p.add_argument(
        "--report", metavar="PATH", help="also write a report: .html (self-contained) or .md"
    )
    p.set_defaults(run=Handler("fit", "run_fit"))

    p = subparsers.add_parser("predict", help="predict step time at GPU counts")
    p.add_argument("fit", help="fit JSON written by `perfmodel fit -o`")
    p.add_argument("--gpus", help="comma-separated GPU counts, e.g. 1,8,64")
    add_layout_options(p)
    p.add_argument("--set", action="append", metavar="NAME=VALUE", help=SET_HELP)
    add_interval_options(p, "adds time_s_lo/_hi (throughput_lo/_hi) and speedup_lo/_hi per row")
    p.add_argument(
        "--kind",
        default="prediction",
        choices=INTERVAL_KINDS,
        help="prediction: where a new measurement would fall (default); confidence: the "
        "curve itself, from the same draws `next` and `optimal` use, for a single family's "
        "fit (the default blend's intervals are conformal, for new measurements only)",
    )
    add_train_predict_options(p)
    p.add_argument("--json", action="store_true", help="print a JSON list of rows")
    p.set_defaults(run=Handler("fit", "run_predict"))

    p = subparsers.add_parser(
        "optimal", help="the GPU count worth buying, the fastest and the cheapest"
    )
    p.add_argument("fit", help="fit JSON written by `perfmodel fit -o`")
    add_optimal_options(p)
    p.add_argument(
        "--gpus",
        type=whole(1, 10_000_000, "the layout search runs at that one count"),
        default=None,
        help="with a hybrid fit: the best layout at exactly this GPU count",
    )
    p.add_argument("--set", action="append", metavar="NAME=VALUE", help=SET_HELP)
    add_interval_options(
        p,
        "the recommendation's confidence intervals (default 0.9); also adds one on the "
        "optimum and the knee to --json",
    )
    add_train_optimal_options(p)
    p.add_argument("--json", action="store_true", help="print a JSON object")
    p.set_defaults(run=Handler("fit", "run_optimal"))

    p = subparsers.add_parser("demo", help="the main job on a dataset shipped with perfmodel")
    p.add_argument("--dataset", default=DEMO_DATASET, help="a name from `perfmodel datasets`")
    p.add_argument("--model", default="auto", help="auto or " + ", ".join(FAMILY_NAMES))
    p.add_argument(
        "--json",
        action="store_true",
        help="print the fit, its recommendation and the predictions as JSON",
    )
    p.set_defaults(run=Handler("fit", "run_demo"))

    p = subparsers.add_parser("datasets", help="list the datasets shipped with perfmodel")
    p.add_argument(
        "--json",
        action="store_true",
        help="print a JSON list: name, rows, GPU counts, quantity, scaling",
    )
    p.set_defaults(run=Handler("fit", "run_datasets"))


def _add_fit_options(p) -> None:
    p.add_argument(
        "--model",
        default="auto",
        help="auto (default: every family the data determine, best by "
        "--criterion) or one of " + ", ".join(FAMILY_NAMES),
    )
    p.add_argument(
        "--criterion",
        default=DEFAULT_CRITERION,
        choices=CRITERIA,
        help=f"model selection criterion for --model auto (default {DEFAULT_CRITERION}); "
        "the first candidate is kept unless another scores clearly better",
    )
    p.add_argument(
        "--no-blend",
        "--no-average",
        dest="average",
        action="store_false",
        help="with --model auto, answer with the single family the criterion prefers "
        "instead of the default blend (a geometric mean of amdahl, weak_data_parallel, "
        "power laws and usl whose weights depend on the regime and on how far ahead), "
        "which extrapolates published series better",
    )
    p.add_argument(
        "--loss",
        default=None,
        choices=LOSSES,
        help="log (relative error, default), squared (least squares on the "
        "measured quantity), relative or huber (robust to outliers); giving it "
        "turns off --model auto's blend",
    )
    scaling = p.add_mutually_exclusive_group()
    scaling.add_argument(
        "--weak-scaling",
        action="store_true",
        help="each GPU keeps its batch as GPUs are added: a time column is the step time "
        "of more work (default: inferred from the data, and said)",
    )
    scaling.add_argument(
        "--strong-scaling",
        action="store_true",
        help="the global batch is fixed: a time column is the time of a fixed amount of work",
    )
    p.add_argument(
        "--fix",
        action="append",
        metavar="NAME=VALUE",
        help="hold a parameter at a known value (repeatable)",
    )
    p.add_argument(
        "--bound",
        action="append",
        metavar="NAME=LO:HI",
        help="keep a parameter inside [LO, HI]; leave a side empty (repeatable)",
    )
    p.add_argument("--gpus-column", help="name of the GPU-count column")
    p.add_argument("--time-column", help="name of the time column")
    p.add_argument(
        "--time-unit",
        default=None,
        choices=("s", "ms", "us"),
        help="unit of --time-column (default: the unit its name ends in, as in Time_ms, "
        "else s); a name and a unit that disagree are refused",
    )
    p.add_argument("--throughput-column", help="name of the throughput column")
    p.add_argument(
        "--throughput-unit",
        metavar="WORK/TIME",
        help="what the throughput counts, per s, min, h or day (images/s, scripts/hour: "
        "read as per second); default: a shipped dataset's unit, else the rate the "
        "column's name states (images_per_min, tokens/s), else work/s",
    )
    p.add_argument("--series", help="the series to fit when the CSV has a 'series' column")
    p.add_argument(
        "--starts",
        type=whole(1, MAX_STARTS),
        default=DEFAULT_STARTS,
        help=f"multi-start points (default {DEFAULT_STARTS}, at most {MAX_STARTS})",
    )
    p.add_argument("--seed", type=whole(0, MAX_SEED), default=0, help="seed of the starting points")


def add_hybrid_fit_options(p) -> None:
    """`fit` options of the hybrid family."""
    p.add_argument(
        "--gpu",
        type=_gpu,
        default=None,
        help=f"with --model hybrid: the GPU whose published numbers fix what the runs "
        f"do not determine: {', '.join(GPU_NAMES)} or a spelling of one (A100, DGX H100, "
        "H100-SXM5-80GB; default: the runs' gpu column, else A100-80GB)",
    )


def _gpu(text: str) -> str:
    """`--gpu`: the key of `GPUS` that `text` spells (`gpu_named`)."""
    from ..._terms import gpu_named  # JAX, as the fit it is given to

    named = gpu_named(text)
    if named is None:
        raise argparse.ArgumentTypeError(
            f"expected one of {', '.join(GPU_NAMES)} (or a spelling such as A100, H100), "
            f"got {text!r}; another GPU: --gpu A100-80GB with its numbers as --fix "
            "compute.peak_flops=…, compute.hbm_bandwidth=…, tensor.bandwidth=…, "
            "allreduce.bandwidth_inter=… and a gpu_memory_bytes column"
        )
    return named


def add_collective_options(p) -> None:
    """The `fit` options that bring nccl-tests measurements into a training fit."""
    p.add_argument(
        "--with-collective",
        nargs="+",
        action="extend",
        metavar="LOG",
        help="fit jointly with these nccl-tests logs: the model's all-reduce latency and "
        "bandwidth are shared (needs message_bytes in the CSV)",
    )
    p.add_argument(
        "--collective-fit",
        metavar="FILE",
        help="fix the model's link parameters from `perfmodel fit-collective -o FILE`",
    )
    p.add_argument(
        "--collective-weight",
        type=POSITIVE,
        default=1.0,
        help="weight of the nccl-tests loss against the step-time loss (1)",
    )
    p.add_argument(
        "--collective-ranks", type=whole(1), help="ranks, for logs without '#  Rank' lines"
    )


def add_log_options(p) -> None:
    """`fit`'s options for logs and time to train."""
    p.add_argument("more", nargs="*", metavar="PATH", help="more log files or folders")
    g = p.add_argument_group("training logs and time to train")
    g.add_argument(
        "--format",
        choices=LOG_FORMATS,
        help="read training logs: MLPerf result files (mllog), Megatron-LM logs, PyTorch "
        "Lightning CSVLogger metrics or a tracker CSV export (csv); detected from the "
        "content for folders, several files or a file without a gpus column",
    )
    g.add_argument(
        "--time-to-train",
        action="store_true",
        help="fit time to train (the critical batch × the step time) to runs trained to a "
        "target: MLPerf result files (the default for them) or a CSV with gpus, time_s "
        "(to the target), global_batch and samples or epochs",
    )
    g.add_argument("--work", choices=WORK_UNITS, help="work to the target (default: samples)")
    g.add_argument(
        "--samples-per-epoch", type=POSITIVE, help="dataset size, when the work is in epochs"
    )
    g.add_argument(
        "--quantity",
        choices=LOG_QUANTITIES,
        help="what a log's runs measure for a step-time fit (default: step_time; MLPerf: "
        "time_to_train, fitted as time to train unless this is given)",
    )
    g.add_argument(
        "--gpus",
        type=_log_gpus,
        help="GPU count of every run, when a log lacks it; or one per log file, in the order "
        "given (8,16)",
    )
    g.add_argument(
        "--gpus-per-node",
        type=whole(1),
        help="GPUs per node: of an MLPerf system, or of every row of a benchmark CSV "
        "without a gpus_per_node column (fits then know where the network starts)",
    )
    g.add_argument("--global-batch", type=POSITIVE, help="global batch, when a log lacks it")
    g.add_argument(
        "--warmup",
        default="auto",
        help="per-step logs: 'auto' (default: the first logged interval and slow leading "
        "ones) or a step count to drop",
    )
    g.add_argument("--step-column", help="CSV logs: the optimizer-step column")
    g.add_argument("--timestamp-column", help="CSV logs: a wall-clock column, seconds")
    g.add_argument("--batch-column", help="CSV logs: a global-batch column")
    g.add_argument("--all-runs", action="store_true", help="MLPerf: keep aborted runs too")


def _log_gpus(text: str) -> int | tuple[int, ...]:
    """`fit --gpus`: one whole count for every run, or a comma-separated count per log."""
    counts = tuple(whole(1)(part.strip()) for part in text.split(","))
    return counts[0] if len(counts) == 1 else counts
