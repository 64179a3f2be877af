"""perfmodel: a differentiable scaling model of multi-GPU training, fitted to benchmarks.

The public names load on first use (PEP 562 module ``__getattr__``), so ``import
perfmodel`` and ``perfmodel --help`` do not import JAX; ``from perfmodel import fit``
and ``pm.fit`` load what they need then, with a check that lists the valid keyword
arguments when one is misspelt. The block under ``TYPE_CHECKING`` is the same list for
type checkers and editors (a test checks the two agree).
"""

import importlib as _importlib
import inspect as _inspect
from typing import TYPE_CHECKING as _TYPE_CHECKING

if _TYPE_CHECKING:
    from ._blend import Blend as Blend
    from ._collective.fit import CollectiveFit as CollectiveFit
    from ._collective.fit import CollectiveGroupFit as CollectiveGroupFit
    from ._collective.fit import fit_collective as fit_collective
    from ._collective.io import load_collective_fit as load_collective_fit
    from ._collective.io import save_collective_fit as save_collective_fit
    from ._collective.joint import fit_joint as fit_joint
    from ._collective.joint import JointFit as JointFit
    from ._collective.links import link_parameters as link_parameters
    from ._collective.nccl import parse_nccl_tests as parse_nccl_tests
    from ._config import Config as Config
    from ._config import RECOMPUTE as RECOMPUTE
    from ._convergence import CriticalBatchFit as CriticalBatchFit
    from ._convergence import fit_time_to_train as fit_time_to_train
    from ._convergence import load_time_to_train as load_time_to_train
    from ._convergence import plan_training as plan_training
    from ._convergence import save_time_to_train as save_time_to_train
    from ._convergence import TimeToTrainFit as TimeToTrainFit
    from ._convergence import TrainingPlan as TrainingPlan
    from ._data import Benchmarks as Benchmarks
    from ._data import from_arrays as from_arrays
    from ._data import load_benchmarks as load_benchmarks
    from ._datasets import list_datasets as list_datasets
    from ._datasets import list_nccl_logs as list_nccl_logs
    from ._datasets import load_dataset as load_dataset
    from ._datasets import load_nccl_log as load_nccl_log
    from ._errors import FitError as FitError
    from ._errors import InputError as InputError
    from ._files import package_version as package_version
    from ._fitting.hybrid_runs import fit_hybrid as fit_hybrid
    from ._fitting.loss import log_squared_error as log_squared_error
    from ._fitting.result import FitResult as FitResult
    from ._fitting.select import fit_auto as fit_auto
    from ._fitting.select import Selection as Selection
    from ._fitting.single import fit as fit
    from ._io import load_fit as load_fit
    from ._io import save_fit as save_fit
    from ._model import AbstractScalingModel as AbstractScalingModel
    from ._model import ScalingModel as ScalingModel
    from ._presets import amdahl as amdahl
    from ._presets import batch_linear as batch_linear
    from ._presets import data_parallel as data_parallel
    from ._presets import hybrid as hybrid
    from ._presets import hybrid_basic as hybrid_basic
    from ._presets import pipeline_bubble as pipeline_bubble
    from ._presets import pmnf as pmnf
    from ._presets import straddles_nodes as straddles_nodes
    from ._presets import usl as usl
    from ._presets import usl_coefficients as usl_coefficients
    from ._presets import weak_data_parallel as weak_data_parallel
    from ._presets import weak_hierarchical as weak_hierarchical
    from ._questions.elasticity import ParameterSensitivity as ParameterSensitivity
    from ._questions.elasticity import Sensitivity as Sensitivity
    from ._questions.elasticity import sensitivity as sensitivity
    from ._questions.inverse import require as require
    from ._questions.inverse import Requirement as Requirement
    from ._questions.next import MeasurementValue as MeasurementValue
    from ._questions.next import next_measurements as next_measurements
    from ._questions.next import NextMeasurements as NextMeasurements
    from ._questions.query import amdahl_bound as amdahl_bound
    from ._questions.query import diminishing_returns as diminishing_returns
    from ._questions.query import DiminishingReturns as DiminishingReturns
    from ._questions.query import optimal_gpus as optimal_gpus
    from ._questions.query import Optimum as Optimum
    from ._questions.recommend import recommend as recommend
    from ._questions.recommend import speedup_interval as speedup_interval
    from ._questions.recommendation import Alternative as Alternative
    from ._questions.recommendation import Recommendation as Recommendation
    from ._questions.whatif import compare_fits as compare_fits
    from ._questions.whatif import Comparison as Comparison
    from ._questions.whatif import what_if as what_if
    from ._readers import detect_format as detect_format
    from ._readers import read_log as read_log
    from ._readers import read_runs as read_runs
    from ._readers import read_training_runs as read_training_runs
    from ._readers import RunSummary as RunSummary
    from ._readers import TrainingRuns as TrainingRuns
    from ._show.plot import plot_breakdown as plot_breakdown
    from ._show.plot import plot_efficiency as plot_efficiency
    from ._show.plot import plot_fit as plot_fit
    from ._show.plot import plot_measurements as plot_measurements
    from ._show.plot import plot_speedup as plot_speedup
    from ._show.plot import save_figure as save_figure
    from ._show.report import report_html as report_html
    from ._show.report import write_report as write_report
    from ._show.training_figure import plot_time_to_train as plot_time_to_train
    from ._sweep.alternatives import layout_alternatives as layout_alternatives
    from ._sweep.run import sweep as sweep
    from ._sweep.run import SweepResult as SweepResult
    from ._terms.base import AbstractCostTerm as AbstractCostTerm
    from ._terms.base import CoherencyTerm as CoherencyTerm
    from ._terms.base import ComputeTerm as ComputeTerm
    from ._terms.base import HostToDeviceTerm as HostToDeviceTerm
    from ._terms.base import ParamSpec as ParamSpec
    from ._terms.base import SerialTerm as SerialTerm
    from ._terms.batch import BatchComputeTerm as BatchComputeTerm
    from ._terms.collectives import bus_bandwidth_factor as bus_bandwidth_factor
    from ._terms.collectives import Collective as Collective
    from ._terms.collectives import collective_time as collective_time
    from ._terms.collectives import HierarchicalAllReduce as HierarchicalAllReduce
    from ._terms.empirical import PowerLogTerm as PowerLogTerm
    from ._terms.hybrid import basic_memory_per_gpu as basic_memory_per_gpu
    from ._terms.hybrid import bubble_fraction as bubble_fraction
    from ._terms.hybrid import DataParallelAllReduce as DataParallelAllReduce
    from ._terms.hybrid import DataParallelInput as DataParallelInput
    from ._terms.hybrid import DataParallelTerm as DataParallelTerm
    from ._terms.hybrid import gpu_named as gpu_named
    from ._terms.hybrid import GPUS as GPUS
    from ._terms.hybrid import iteration_flops as iteration_flops
    from ._terms.hybrid import LayerGemmTerm as LayerGemmTerm
    from ._terms.hybrid import layout_status as layout_status
    from ._terms.hybrid import memory_per_gpu as memory_per_gpu
    from ._terms.hybrid import MemoryBoundTerm as MemoryBoundTerm
    from ._terms.hybrid import model_parameters as model_parameters
    from ._terms.hybrid import PipelinedComputeTerm as PipelinedComputeTerm
    from ._terms.hybrid import PipelineTransferTerm as PipelineTransferTerm
    from ._terms.hybrid import REASONS as REASONS
    from ._terms.hybrid import STACKS as STACKS
    from ._terms.hybrid import step_rates as step_rates
    from ._terms.hybrid import StepRates as StepRates
    from ._terms.hybrid import TensorCollectiveTerm as TensorCollectiveTerm
    from ._terms.hybrid import TensorParallelTerm as TensorParallelTerm
    from ._terms.hybrid import USABLE_MEMORY as USABLE_MEMORY
    from ._terms.weak import WeakAllReduceTerm as WeakAllReduceTerm
    from ._terms.weak import WeakHierarchicalAllReduceTerm as WeakHierarchicalAllReduceTerm
    from ._uncertainty.draws import Ensemble as Ensemble
    from ._uncertainty.draws import ensemble as ensemble
    from ._uncertainty.intervals import parameter_intervals as parameter_intervals
    from ._uncertainty.intervals import predict_interval as predict_interval

# Public name → the module that defines it.
_EXPORTS = {
    "Blend": "._blend",
    "CollectiveFit": "._collective.fit",
    "CollectiveGroupFit": "._collective.fit",
    "fit_collective": "._collective.fit",
    "load_collective_fit": "._collective.io",
    "save_collective_fit": "._collective.io",
    "fit_joint": "._collective.joint",
    "JointFit": "._collective.joint",
    "link_parameters": "._collective.links",
    "parse_nccl_tests": "._collective.nccl",
    "Config": "._config",
    "Benchmarks": "._data",
    "from_arrays": "._data",
    "load_benchmarks": "._data",
    "list_datasets": "._datasets",
    "list_nccl_logs": "._datasets",
    "load_dataset": "._datasets",
    "load_nccl_log": "._datasets",
    "FitError": "._errors",
    "InputError": "._errors",
    "package_version": "._files",
    "log_squared_error": "._fitting.loss",
    "FitResult": "._fitting.result",
    "fit_auto": "._fitting.select",
    "fit_hybrid": "._fitting.hybrid_runs",
    "Selection": "._fitting.select",
    "fit": "._fitting.single",
    "load_fit": "._io",
    "save_fit": "._io",
    "AbstractScalingModel": "._model",
    "ScalingModel": "._model",
    "amdahl": "._presets",
    "data_parallel": "._presets",
    "hybrid": "._presets",
    "pipeline_bubble": "._presets",
    "pmnf": "._presets",
    "straddles_nodes": "._presets",
    "usl": "._presets",
    "usl_coefficients": "._presets",
    "weak_data_parallel": "._presets",
    "weak_hierarchical": "._presets",
    "ParameterSensitivity": "._questions.elasticity",
    "Sensitivity": "._questions.elasticity",
    "sensitivity": "._questions.elasticity",
    "require": "._questions.inverse",
    "Requirement": "._questions.inverse",
    "MeasurementValue": "._questions.next",
    "next_measurements": "._questions.next",
    "NextMeasurements": "._questions.next",
    "amdahl_bound": "._questions.query",
    "diminishing_returns": "._questions.query",
    "DiminishingReturns": "._questions.query",
    "optimal_gpus": "._questions.query",
    "Optimum": "._questions.query",
    "Alternative": "._questions.recommendation",
    "recommend": "._questions.recommend",
    "speedup_interval": "._questions.recommend",
    "Recommendation": "._questions.recommendation",
    "compare_fits": "._questions.whatif",
    "Comparison": "._questions.whatif",
    "what_if": "._questions.whatif",
    "plot_breakdown": "._show.plot",
    "plot_efficiency": "._show.plot",
    "plot_fit": "._show.plot",
    "plot_measurements": "._show.plot",
    "plot_speedup": "._show.plot",
    "save_figure": "._show.plot",
    "plot_time_to_train": "._show.training_figure",
    "report_html": "._show.report",
    "write_report": "._show.report",
    "sweep": "._sweep.run",
    "SweepResult": "._sweep.run",
    "AbstractCostTerm": "._terms.base",
    "CoherencyTerm": "._terms.base",
    "ComputeTerm": "._terms.base",
    "HostToDeviceTerm": "._terms.base",
    "ParamSpec": "._terms.base",
    "SerialTerm": "._terms.base",
    "bus_bandwidth_factor": "._terms.collectives",
    "Collective": "._terms.collectives",
    "collective_time": "._terms.collectives",
    "HierarchicalAllReduce": "._terms.collectives",
    "PowerLogTerm": "._terms.empirical",
    "bubble_fraction": "._terms.hybrid",
    "DataParallelAllReduce": "._terms.hybrid",
    "DataParallelInput": "._terms.hybrid",
    "layout_status": "._terms.hybrid",
    "memory_per_gpu": "._terms.hybrid",
    "PipelinedComputeTerm": "._terms.hybrid",
    "REASONS": "._terms.hybrid",
    "TensorParallelTerm": "._terms.hybrid",
    "WeakAllReduceTerm": "._terms.weak",
    "WeakHierarchicalAllReduceTerm": "._terms.weak",
    "Ensemble": "._uncertainty.draws",
    "ensemble": "._uncertainty.draws",
    "parameter_intervals": "._uncertainty.intervals",
    "predict_interval": "._uncertainty.intervals",
    "CriticalBatchFit": "._convergence",
    "fit_time_to_train": "._convergence",
    "load_time_to_train": "._convergence",
    "plan_training": "._convergence",
    "save_time_to_train": "._convergence",
    "TimeToTrainFit": "._convergence",
    "TrainingPlan": "._convergence",
    "batch_linear": "._presets",
    "detect_format": "._readers",
    "read_log": "._readers",
    "read_runs": "._readers",
    "read_training_runs": "._readers",
    "RunSummary": "._readers",
    "TrainingRuns": "._readers",
    "BatchComputeTerm": "._terms.batch",
    "RECOMPUTE": "._config",
    "hybrid_basic": "._presets",
    "layout_alternatives": "._sweep.alternatives",
    "basic_memory_per_gpu": "._terms.hybrid",
    "DataParallelTerm": "._terms.hybrid",
    "GPUS": "._terms.hybrid",
    "gpu_named": "._terms.hybrid",
    "iteration_flops": "._terms.hybrid",
    "LayerGemmTerm": "._terms.hybrid",
    "MemoryBoundTerm": "._terms.hybrid",
    "model_parameters": "._terms.hybrid",
    "PipelineTransferTerm": "._terms.hybrid",
    "STACKS": "._terms.hybrid",
    "step_rates": "._terms.hybrid",
    "StepRates": "._terms.hybrid",
    "USABLE_MEMORY": "._terms.hybrid",
    "TensorCollectiveTerm": "._terms.hybrid",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name == "__version__":  # importlib.metadata alone takes ~70 ms
        from ._files import package_version

        value = globals()["__version__"] = package_version()
        return value
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'perfmodel' has no attribute {name!r}")
    value = getattr(_importlib.import_module(module, __name__), name)
    if _inspect.isfunction(value):
        from ._checked import checked

        value = checked(value)  # a misspelt keyword names the valid ones
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS, "__version__"})
