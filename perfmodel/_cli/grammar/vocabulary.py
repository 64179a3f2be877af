"""The names the command line offers, copied from the library so that parsing imports
no JAX: the families, criteria and losses of `fit`, the collectives, GPUs and layout
fields of the hybrid family, the readers' formats, the sweep's objectives.

Each is the library's own tuple or value where it is defined (named beside it);
`tests/test_startup.py` checks that every copy still equals its source.
"""

FAMILY_NAMES = (  # perfmodel._presets.FAMILIES
    "amdahl",
    "usl",
    "data_parallel",
    "hybrid",
    "hybrid_basic",
    "pmnf",
    "weak_data_parallel",
    "weak_hierarchical",
    "power_law",
    "blend",
    "batch_linear",
)
CRITERIA = ("bic", "aicc", "loo")  # perfmodel._fitting.CRITERIA
DEFAULT_CRITERION = "bic"  # perfmodel._fitting.DEFAULT_CRITERION
LOSSES = ("log", "squared", "huber", "relative")  # perfmodel._fitting.LOSSES
DEFAULT_STARTS = 64  # perfmodel._fitting.problem.DEFAULTS.n_starts
NEXT_QUANTITIES = ("auto", "optimum", "knee", "time")  # perfmodel._questions.QUANTITIES
MAX_GPUS = 1_000_000  # perfmodel._questions.MAX_GPUS: the counts the questions evaluate
OPS = (  # perfmodel._terms.OPS
    "all_reduce",
    "all_gather",
    "reduce_scatter",
    "all_to_all",
    "broadcast",
    "reduce",
    "send_recv",
)
COLLECTIVE_FACTORS = ("nominal", "fitted")  # perfmodel._collective.FACTORS
# perfmodel._terms.GPUS
GPU_NAMES = ("A100-80GB", "A100-40GB", "H100-80GB", "H200-141GB", "B200-180GB")
LAYOUT_FIELDS = (  # perfmodel._config.LAYOUT_FIELDS
    "tp",
    "pp",
    "microbatches",
    "microbatch_size",
    "interleave",
    "recompute",
    "seq_parallel",
    "zero",
)
LOG_FORMATS = ("mllog", "megatron", "lightning", "csv")  # perfmodel._readers.FORMATS
WORK_UNITS = ("samples", "epochs")  # perfmodel._readers.WORK_UNITS
SWEEP_OBJECTIVES = ("time", "cost", "time_to_train", "cost_to_train")  # perfmodel._sweep
PRECISIONS = ("float32", "float64")  # perfmodel._sweep.PRECISIONS
DEFAULT_MAX_CONFIGS = 1e9  # perfmodel._sweep.DEFAULT_MAX_CONFIGS

LOG_QUANTITIES = ("step_time", "time_to_train", "epoch_time")  # perfmodel._readers.QUANTITIES

# The command line's own names.
TRAIN_OBJECTIVES = ("time-to-train", "cost-to-train")  # `optimal` of time-to-train fits
DEMO_DATASET = "tf_dgx1_p100_vgg16_real"  # `perfmodel demo`'s series
# `predict` options for layout fields, in the order they are shown.
LAYOUT_OPTIONS: dict[str, str] = {f: "--" + f.replace("_", "-") for f in LAYOUT_FIELDS}
SET_HELP = (
    "change a parameter or config value first: NAME=VALUE, or NAME=xFACTOR for a "
    "factor on the fitted value (repeatable), e.g. allreduce.bandwidth_inter=50e9, "
    "gpus_per_node=16, serial.time=x0.5"
)
