"""Hybrid tensor × pipeline × data-parallel training: the Megatron-LM model (`terms`, the
`hybrid` family) and the basic one it replaced (`legacy`, `hybrid_basic`), with their
layout checks and memory."""

from .checks import first_invalid_layout as first_invalid_layout
from .checks import hybrid_memory as hybrid_memory
from .checks import KINDS as KINDS
from .checks import layout_checks as layout_checks
from .checks import layout_status as layout_status
from .checks import OUT_OF_MEMORY as OUT_OF_MEMORY
from .checks import REASONS as REASONS
from .collectives import Link as Link
from .efficiency import Device as Device
from .efficiency import gemm_efficiency as gemm_efficiency
from .efficiency import gemm_time as gemm_time
from .hardware import gpu_named as gpu_named
from .hardware import GPUS as GPUS
from .hardware import STACKS as STACKS
from .hardware import USABLE_MEMORY as USABLE_MEMORY
from .legacy import AbstractDataParallelTerm as AbstractDataParallelTerm
from .legacy import basic_memory_per_gpu as basic_memory_per_gpu
from .legacy import DataParallelAllReduce as DataParallelAllReduce
from .legacy import DataParallelInput as DataParallelInput
from .legacy import PipelinedComputeTerm as PipelinedComputeTerm
from .legacy import TensorParallelTerm as TensorParallelTerm
from .memory import activation_bytes_per_layer as activation_bytes_per_layer
from .memory import memory_per_gpu as memory_per_gpu
from .rates import step_rates as step_rates
from .rates import StepRates as StepRates
from .schedule import bubble_fraction as bubble_fraction
from .schedule import inflight_layers as inflight_layers
from .schedule import schedule_slots as schedule_slots
from .shape import iteration_flops as iteration_flops
from .shape import model_parameters as model_parameters
from .shape import stage_parameters as stage_parameters
from .terms import DataParallelTerm as DataParallelTerm
from .terms import LayerGemmTerm as LayerGemmTerm
from .terms import MemoryBoundTerm as MemoryBoundTerm
from .terms import PipelineTransferTerm as PipelineTransferTerm
from .terms import stage_seconds as stage_seconds
from .terms import TensorCollectiveTerm as TensorCollectiveTerm
