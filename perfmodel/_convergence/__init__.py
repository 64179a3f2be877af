"""Time to train: the critical-batch model of the work to a target (McCandlish et al.
2018), its fit to runs, the step time of GPU count and batch, and the answers (the GPU
count and global batch that train fastest or cheapest, and why more GPUs stop helping)."""

from .answers import batch_grid as batch_grid
from .answers import gpu_grid as gpu_grid
from .answers import plan_training as plan_training
from .closed import cost_to_train as cost_to_train
from .closed import CriticalBatch as CriticalBatch
from .closed import doubling_gain as doubling_gain
from .closed import hyperbola as hyperbola
from .closed import linear_step_time as linear_step_time
from .closed import minimum_time as minimum_time
from .closed import optimal_batch as optimal_batch
from .closed import statistical_efficiency as statistical_efficiency
from .closed import steps_min as steps_min
from .closed import steps_to_target as steps_to_target
from .closed import time_to_train as time_to_train
from .closed import work_to_target as work_to_target
from .family import fit_time_to_train as fit_time_to_train
from .family import step_data as step_data
from .family import STEP_FAMILY as STEP_FAMILY
from .family import TimeToTrainFit as TimeToTrainFit
from .io import has_time_to_train as has_time_to_train
from .io import load_time_to_train as load_time_to_train
from .io import save_time_to_train as save_time_to_train
from .io import SECTION as SECTION
from .io import time_to_train_document as time_to_train_document
from .linear import fit_linear_step_time as fit_linear_step_time
from .linear import LinearStepFit as LinearStepFit
from .linear import LinearStepTime as LinearStepTime
from .linear import STEP_NOISE_FLOOR as STEP_NOISE_FLOOR
from .plan import MIN_GAIN as MIN_GAIN
from .plan import OBJECTIVES as OBJECTIVES
from .plan import plan as plan
from .plan import TrainingPlan as TrainingPlan
from .profile import CriticalBatchFit as CriticalBatchFit
from .profile import DRIFT as DRIFT
from .profile import fit_critical_batch as fit_critical_batch
from .profile import NOISE_FLOOR as NOISE_FLOOR
from .profile import t_quantile as t_quantile
from .profile import time_to_train_interval as time_to_train_interval
