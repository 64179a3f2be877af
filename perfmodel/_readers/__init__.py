"""Readers of the logs users already have, into `Benchmarks`: MLPerf MLLOG result files,
Megatron-LM training logs, PyTorch Lightning CSVLogger and experiment-tracker CSVs."""

from .lightning import STEP_COLUMNS as STEP_COLUMNS
from .read import detect_format as detect_format
from .read import FORMATS as FORMATS
from .read import header_columns as header_columns
from .read import log_files as log_files
from .read import LOG_SUFFIXES as LOG_SUFFIXES
from .read import read_log as read_log
from .read import read_log_runs as read_log_runs
from .read import read_runs as read_runs
from .read import run_table as run_table
from .read import same_runs as same_runs
from .runs import read_training_runs as read_training_runs
from .runs import TrainingRuns as TrainingRuns
from .runs import WORK_UNITS as WORK_UNITS
from .summary import AUTO_MIN_INTERVALS as AUTO_MIN_INTERVALS
from .summary import AUTO_RULE as AUTO_RULE
from .summary import RunSummary as RunSummary
from .summary import steady_median as steady_median
