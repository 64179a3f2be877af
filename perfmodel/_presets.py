"""Every named model family users pick from, and the helpers that read a family's shape:
`amdahl`, `usl`, `data_parallel`, `weak_data_parallel`, `weak_hierarchical`, `hybrid`,
`hybrid_basic`, `pmnf`, `batch_linear`; `build` makes one by name."""

from collections.abc import Callable
import math

import jax
from jaxtyping import Array, Float
import numpy as np

from ._blend import anchor_names, Blend, FAR, member_names, NEAR, REGIMES, STRADDLING_ANCHORS
from ._config import Config
from ._errors import InputError
from ._model import AbstractScalingModel, OVERLAP, ScalingModel
from ._terms import (
    AbstractCostTerm,
    AbstractDataParallelTerm,
    BatchComputeTerm,
    bubble_fraction,
    CoherencyTerm,
    Collective,
    ComputeTerm,
    DataParallelAllReduce,
    DataParallelInput,
    DataParallelTerm,
    gpu_named,
    GPUS,
    HierarchicalAllReduce,
    HostToDeviceTerm,
    LayerGemmTerm,
    LOG_EXPONENTS,
    MemoryBoundTerm,
    PipelinedComputeTerm,
    PipelineTransferTerm,
    PowerLogTerm,
    schedule_slots,
    SerialTerm,
    stage_seconds,
    TensorCollectiveTerm,
    TensorParallelTerm,
    WeakAllReduceTerm,
    WeakHierarchicalAllReduceTerm,
)


def amdahl(*, weak: bool = False) -> ScalingModel:
    """Amdahl's law: ``T(N) = t_serial + t_compute / N``; speedup ≤ 1 + t_compute/t_serial.

    With ``weak=True`` the compute stays ``t_compute`` (Gustafson's setting).
    """
    return ScalingModel(
        terms=(SerialTerm(), ComputeTerm(weak=weak)),
        family="amdahl",
        options=(("weak", weak),),
    )


def usl(*, weak: bool = False) -> ScalingModel:
    """Universal Scalability Law as time per unit of work.

    Gunther's throughput ``X(N) = γN / (1 + σ(N−1) + κN(N−1))`` is, per unit of work,
    ``1/X = t_serial + t_compute/N + t_coherency·(N−1)`` with ``γ = 1/(t_s + t_c)``,
    ``σ = t_s·γ`` and ``κ = t_coh·γ``; see `usl_coefficients`.
    """
    return ScalingModel(
        terms=(SerialTerm(), ComputeTerm(weak=weak), CoherencyTerm()),
        family="usl",
        options=(("weak", weak),),
    )


def data_parallel(
    *,
    weak: bool = False,
    hierarchical: bool = False,
    algorithm: str = "ring",
    input_transfer: bool = False,
    overlap: bool = False,
) -> ScalingModel:
    """Data-parallel training: serial + compute + gradient all-reduce (α-β).

    Args:
        weak: compute per GPU stays constant as N grows (fixed per-GPU batch).
        hierarchical: all-reduce inside nodes then across them (needs `gpus_per_node`).
        algorithm: ``"ring"`` or ``"tree"`` for the flat all-reduce.
        input_transfer: add the host→device input term (needs `input_bytes` or
            `gpus_per_link` to be told apart from compute).
        overlap: add the communication/compute overlap fraction.
    """
    allreduce = HierarchicalAllReduce() if hierarchical else Collective(algorithm=algorithm)
    terms = [SerialTerm(), ComputeTerm(weak=weak), allreduce]
    if input_transfer:
        terms.append(HostToDeviceTerm(weak=weak))
    return ScalingModel(
        terms=tuple(terms),
        logit_overlap=OVERLAP.to_raw(0.5) if overlap else None,
        family="data_parallel",
        options=(
            ("weak", weak),
            ("hierarchical", hierarchical),
            ("algorithm", algorithm),
            ("input_transfer", input_transfer),
            ("overlap", overlap),
        ),
    )


def weak_data_parallel(*, algorithm: str = "ring", weak: bool = True) -> ScalingModel:
    """Data-parallel training with a fixed per-GPU batch, fitted to throughput.

    ``T(N) = t_c/N + t_lat·(N−1)/N + t_bw·(N−1)/N²`` seconds per unit of work (ring);
    see the module docstring. Parameters ``compute.time``, ``allreduce.latency`` and
    ``allreduce.transfer`` (seconds per unit of work).

    Args:
        algorithm: ``"ring"`` (default) or ``"tree"`` for the all-reduce latency.
        weak: accepted for a uniform interface; the family is weak scaling by
            construction, whatever the value.

    Example:
        >>> model = weak_data_parallel()
        >>> sorted(model.parameter_specs())
        ['allreduce.latency', 'allreduce.transfer', 'compute.time']
    """
    del weak
    if algorithm not in ("ring", "tree"):
        raise InputError(f"algorithm must be 'ring' or 'tree', got {algorithm!r}")
    return ScalingModel(
        terms=(ComputeTerm(), WeakAllReduceTerm(algorithm=algorithm)),
        family="weak_data_parallel",
        options=(("algorithm", algorithm),),
    )


def weak_hierarchical(*, weak: bool = True) -> ScalingModel:
    """Data-parallel training with a fixed per-GPU batch across nodes, fitted to throughput.

    ``T(N) = t_c/N + t_intra·(l−1)/(l·N) + t_inter·(m−1)/(m·l·N)`` seconds per unit of
    work, with l = min(N, G) GPUs per node and m = max(N/G, 1) nodes for G =
    ``gpus_per_node`` (required in the data): a step of compute plus a two-level
    all-reduce (`WeakHierarchicalAllReduceTerm`). Parameters ``compute.time``,
    ``allreduce.transfer_intra`` and ``allreduce.transfer_inter`` (seconds per unit of
    work).

    Use it when the measurements lie on both sides of the node boundary
    (`straddles_nodes`): inside one node ``transfer_inter`` has no effect, and when
    every count fills whole nodes ``transfer_intra`` cannot be told apart from
    ``compute.time``. Its per-GPU throughput levels off and never falls again, so
    `fit_auto` does not offer it: choose it when you know that scaling across nodes
    stays flat, as it does where the inter-node all-reduce is bandwidth-bound.

    Args:
        weak: accepted for a uniform interface; the family is weak scaling by
            construction, whatever the value.

    Example:
        >>> sorted(weak_hierarchical().parameter_specs())
        ['allreduce.transfer_inter', 'allreduce.transfer_intra', 'compute.time']
    """
    del weak
    return ScalingModel(
        terms=(ComputeTerm(), WeakHierarchicalAllReduceTerm()), family="weak_hierarchical"
    )


def straddles_nodes(data) -> bool:
    """Whether `data` (`Benchmarks`) give ``gpus_per_node`` and GPU counts both inside one
    node and across nodes, which `weak_hierarchical` needs to tell its times apart."""
    per_node = data.config.get("gpus_per_node")
    if per_node is None:
        return False
    return bool(np.any(data.gpus < per_node) and np.any(data.gpus > per_node))


# What one GPU's numbers can be (`hybrid`'s options; e_max is a fraction below 1): from
# far below any accelerator to far above, so that a unit slip (GB/s as B/s) or a typo
# stops with its name.
HYBRID_RANGES: dict[str, tuple[float, float, str]] = {
    "peak_flops": (1e9, 1e18, "FLOP/s"),
    "d0": (1e-3, 1e9, "elements"),
    "hbm_bandwidth": (1e8, 1e15, "B/s"),
    "nvlink_bandwidth": (1e6, 1e14, "B/s"),
    "nvlink_latency": (1e-9, 1.0, "s"),
    "network_bandwidth": (1e6, 1e14, "B/s"),
    "network_latency": (1e-9, 1.0, "s"),
}


def hybrid(
    *,
    gpu: str = "A100-80GB",
    peak_flops: float | None = None,
    e_max: float | None = None,
    d0: float | None = None,
    hbm_bandwidth: float | None = None,
    nvlink_bandwidth: float | None = None,
    nvlink_latency: float | None = None,
    network_bandwidth: float | None = None,
    network_latency: float | None = None,
) -> ScalingModel:
    """One Megatron-LM training iteration: tensor × pipeline × data parallelism on GPUs.

    Terms ``compute`` (GEMMs under a saturating efficiency and the HBM roofline),
    ``kernels`` (memory-bound kernels, gradient accumulation, optimizer), ``tensor``
    (exposed tensor-parallel collectives on NVLink), ``p2p`` (pipeline sends) and
    ``allreduce`` (exposed data-parallel reduction or ZeRO-2/3 shards, tied embedding);
    see `perfmodel._terms.hybrid.terms` and docs/layouts.md. The model reads the shape
    (layers, hidden, heads, seq_len, vocab, global_batch), the layout (gpus, tp, pp,
    microbatch_size or microbatches, interleave, zero), the recipe (recompute,
    seq_parallel) and the software stack flags of `Config`.

    Parameters: ``compute.{peak_flops, e_max, d0, hbm_bandwidth}``,
    ``tensor.{latency, bandwidth}`` (NVLink) and ``allreduce.{latency_inter,
    bandwidth_inter}`` (network per GPU). Their defaults are the published numbers of
    `gpu` (`GPUS`: spec sheet and nccl-tests); e_max and d0 are the ones runs determine
    (`perfmodel fit --model hybrid` fits them and fixes the rest).

    Args:
        gpu: a key of `GPUS` (``"A100-80GB"``, ``"H100-80GB"``), or a spelling of one
            (``"A100"``, ``"NVIDIA H100-SXM5-80GB"``: `gpu_named`).
        peak_flops: peak dense FLOP/s of one GPU.
        e_max, d0: GEMM efficiency ``e_max / (1 + d0·(1/M + 1/N + 1/K))``, d0 in elements.
        hbm_bandwidth: B/s.
        nvlink_bandwidth, nvlink_latency: intra-node all-reduce bus bandwidth (B/s) and
            latency per ring step (s).
        network_bandwidth, network_latency: inter-node bandwidth per GPU (B/s), latency (s).

    Example:
        >>> model = hybrid()
        >>> sorted(model.parameter_specs())[:4]
        ['allreduce.bandwidth_inter', 'allreduce.latency_inter', 'compute.d0', 'compute.e_max']
    """
    named = gpu_named(gpu) if isinstance(gpu, str) else None
    if named is None:
        raise InputError(
            f"unknown gpu {gpu!r}; valid: {', '.join(GPUS)}; another GPU: one of them with "
            "its own peak_flops, hbm_bandwidth, nvlink_bandwidth, network_bandwidth (and "
            "gpu_memory_bytes in the configuration)"
        )
    gpu = named
    given = dict(
        peak_flops=peak_flops,
        e_max=e_max,
        d0=d0,
        hbm_bandwidth=hbm_bandwidth,
        nvlink_bandwidth=nvlink_bandwidth,
        nvlink_latency=nvlink_latency,
        network_bandwidth=network_bandwidth,
        network_latency=network_latency,
    )
    given = {k: v for k, v in given.items() if v is not None}
    for name, value in given.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise InputError(f"hybrid {name}: expected a positive number, got {value!r}")
        low, high, unit = HYBRID_RANGES.get(name, (0.0, math.inf, ""))
        if not low <= value <= high:  # peak_flops = 1e-300 read as "out of memory"
            raise InputError(f"hybrid {name}: expected {low:g} to {high:g} {unit}, got {value!r}")
    if "e_max" in given and not given["e_max"] < 1.0:
        raise InputError(f"hybrid e_max: expected a fraction below 1, got {given['e_max']!r}")
    v = {**GPUS[gpu], **given}
    terms: tuple[AbstractCostTerm, ...] = (
        LayerGemmTerm(v["peak_flops"], v["e_max"], v["d0"], v["hbm_bandwidth"]),
        MemoryBoundTerm(),
        TensorCollectiveTerm(v["nvlink_latency"], v["nvlink_bandwidth"]),
        PipelineTransferTerm(),
        DataParallelTerm(v["network_latency"], v["network_bandwidth"]),
    )
    return ScalingModel(
        terms=terms, family="hybrid", options=(("gpu", gpu), *sorted(given.items()))
    )


def hybrid_basic(
    *,
    serial_time: float = 5e-3,
    flops: float = 4e14,
    nvlink_bandwidth: float = 3.6e11,
    nvlink_latency: float = 5e-6,
    network_bandwidth: float = 4.5e10,
    network_latency: float = 1e-5,
    host_bandwidth: float = 5e10,
    input_transfer: bool = True,
    overlap: bool = False,
) -> ScalingModel:
    """The basic hybrid model: one sustained FLOP/s, no shape (the `hybrid` family before
    the Megatron-LM model; see `perfmodel._terms.hybrid.legacy`).

    Defaults describe a DGX H100-like node: 400 TFLOP/s sustained per GPU (about 40% of
    the dense bf16 peak), NVSwitch at 360 GB/s bus bandwidth, one 400 Gb/s NIC per GPU
    (45 GB/s), PCIe Gen5 for input. Parameters: ``serial.time``, ``compute.flops``,
    ``tensor.latency``, ``tensor.bandwidth``, ``allreduce.{latency,bandwidth}_{intra,inter}``
    and ``input.bandwidth``; the data-parallel intra-node link defaults to the
    tensor-parallel one. It reads ``parameters``, ``flops_per_sample`` and
    ``activation_factor`` instead of the shape.

    Args:
        serial_time: seconds per step no GPU count shortens.
        flops: sustained FLOP/s of one GPU.
        nvlink_bandwidth, nvlink_latency: intra-node link, B/s and seconds.
        network_bandwidth, network_latency: inter-node link per GPU, B/s and seconds.
        host_bandwidth: host→device link, B/s.
        input_transfer: include the host→device input term.
        overlap: add the communication/compute overlap fraction (starts at 0.5).
    """
    terms: list[AbstractCostTerm] = [
        SerialTerm(serial_time),
        PipelinedComputeTerm(flops),
        TensorParallelTerm(nvlink_latency, nvlink_bandwidth),
        DataParallelAllReduce(
            HierarchicalAllReduce(
                nvlink_latency, nvlink_bandwidth, network_latency, network_bandwidth
            )
        ),
    ]
    if input_transfer:
        terms.append(DataParallelInput(HostToDeviceTerm(host_bandwidth)))
    options = dict(
        serial_time=serial_time,
        flops=flops,
        nvlink_bandwidth=nvlink_bandwidth,
        nvlink_latency=nvlink_latency,
        network_bandwidth=network_bandwidth,
        network_latency=network_latency,
        host_bandwidth=host_bandwidth,
        input_transfer=input_transfer,
        overlap=overlap,
    )
    return ScalingModel(
        terms=tuple(terms),
        logit_overlap=OVERLAP.to_raw(0.5) if overlap else None,
        family="hybrid_basic",
        options=tuple(options.items()),
    )


# Options only the basic model has: `build("hybrid", ...)` with any of them (fit files and
# spaces written before the Megatron-LM model) builds `hybrid_basic`.
BASIC_ONLY_OPTIONS = frozenset(
    {"serial_time", "flops", "host_bandwidth", "input_transfer", "overlap"}
)


def hybrid_kind(model: AbstractScalingModel) -> str:
    """``"hybrid"`` (Megatron-LM terms), ``"hybrid_basic"`` or ``""``: which layout and
    memory checks a model's configurations get (`layout_status`)."""
    terms = getattr(model, "terms", ())  # a `Blend` has members, not terms: ""
    if any(isinstance(term, LayerGemmTerm) for term in terms):
        return "hybrid"
    kinds = (PipelinedComputeTerm, TensorParallelTerm, AbstractDataParallelTerm)
    if any(isinstance(term, kinds) for term in terms):
        return "hybrid_basic"
    return ""


def is_hybrid(model: AbstractScalingModel) -> bool:
    """True when the model reads the hybrid layout (batch, layers, micro-batches)."""
    return bool(hybrid_kind(model))


def pipeline_bubble(model: ScalingModel, config: Config) -> Float[Array, "..."]:
    """Seconds per step the pipeline bubble adds to `model` at `config`.

    ``((p−1)/v)`` slots of the busiest device's per-micro-batch time (`bubble_fraction`
    of the pipelined time); it is included in the `ScalingModel.breakdown` entries of the
    terms that run per slot (``compute``, ``kernels``, ``tensor`` of `hybrid`;
    ``compute`` and ``tensor`` of `hybrid_basic`).
    """
    if hybrid_kind(model) == "hybrid":
        compute = model.sibling(LayerGemmTerm)
        per_slot = stage_seconds(config, compute, model.sibling(TensorCollectiveTerm))
        return (schedule_slots(config) - config.num_microbatches) * per_slot
    staged = sum(
        model.term_time(term, config)
        for term in model.terms
        if isinstance(term, (PipelinedComputeTerm, TensorParallelTerm))
    )
    return bubble_fraction(config) * staged


def pmnf(
    exponent: float | None = None, log_exponent: int | None = None, *, weak: bool = False
) -> ScalingModel:
    """The PMNF family ``T(N) = c0 + c · N^i · log2(N)^j``.

    Parameters ``constant.time`` (c0, seconds) and ``scaling.time`` (c, seconds).

    Args:
        exponent: i, or None to search `EXPONENTS` when fitted.
        log_exponent: j ∈ {0, 1, 2}, or None to search `LOG_EXPONENTS` when fitted.
        weak: accepted for a uniform interface; the exponent search covers weak and
            strong scaling alike, so only False is valid.

    An unsearched model evaluates as ``i = −1, j = 0`` (Amdahl's shape) until fitted.

    Example:
        >>> model = pmnf(-0.5, 1)
        >>> sorted(model.parameter_specs())
        ['constant.time', 'scaling.time']
    """
    if weak:
        raise InputError(
            "the pmnf family has no weak-scaling variant: its exponent search covers "
            "weak and strong scaling (drop {arg:weak})"
        )
    if log_exponent is not None and log_exponent not in LOG_EXPONENTS:
        raise InputError(f"pmnf log_exponent must be 0, 1 or 2, got {log_exponent!r}")
    if exponent is not None and not (isinstance(exponent, int | float) and math.isfinite(exponent)):
        raise InputError(f"pmnf exponent must be a finite number, got {exponent!r}")
    if exponent == 0 and log_exponent == 0:
        raise InputError("pmnf exponents (0, 0) give a constant, not a scaling term")
    term = PowerLogTerm(
        exponent=-1.0 if exponent is None else exponent,
        log_exponent=0 if log_exponent is None else log_exponent,
        searched=(exponent is None, log_exponent is None),
    )
    return ScalingModel(
        terms=(SerialTerm(name="constant"), term),
        family="pmnf",
        options=(("exponent", exponent), ("log_exponent", log_exponent)),
    )


def power_law(exponent: float = -1.0, *, weak: bool = False) -> ScalingModel:
    """A power law ``T(N) = c · N^exponent`` seconds (a `PowerLogTerm` with no log factor).

    The default (`blend`) fits its exponent in closed form (least squares in log-log); as
    a preset the exponent is an option, so a fit file can rebuild it. Parameter ``power.time``.

    Args:
        exponent: the power of N (−1: perfect scaling; 0: none).
        weak: accepted for a uniform interface; only False is valid.
    """
    if weak:
        raise InputError("the power_law family has no weak-scaling variant (drop {arg:weak})")
    exponent = _finite_option(exponent, "power_law exponent")
    return ScalingModel(
        terms=(PowerLogTerm(exponent=exponent, log_exponent=0, name="power"),),
        family="power_law",
        options=(("exponent", exponent),),
    )


def blend(
    regime: str = "weak",
    largest: float = 1.0,
    power_exponent: float = -1.0,
    flat_exponent: float = -1.0,
    anchor: str = "",
    node: float = 0.0,
    slowdown: bool = False,
) -> Blend:
    """The default's curve (`Blend`): a weighted geometric mean of `amdahl`,
    `weak_data_parallel`, two power laws and `usl` (and `weak_hierarchical` when the
    measured counts straddle the node), in seconds per unit of work,

    ``log T(N) = Σ_f w_f(N)·log T_f(N)``

    with the weights of `regime` moving from NEAR to FAR between one and two doublings
    past `largest` (`perfmodel._blend`). Parameters ``"<member>.<term>.<param>"``
    (seconds per unit of work); `fit_auto` fits them.

    Args:
        regime: ``"weak"``, ``"strong"`` (a fixed global batch, stated) or
            ``"straddling"`` (counts on both sides of the node size).
        largest: the largest measured GPU count.
        power_exponent: the power law's exponent (fitted with weights (N/N_max)²).
        flat_exponent: the exponent of the power law fitted with equal weights.
        anchor: the family fitted with equal weights that the measured range is handed
            over to (`perfmodel._blend`: ``"usl_flat"``, …), or ``""`` for none.
        node: G, a node size no measured count exceeds: past it the weights move on to
            the power law fitted in log-log (`perfmodel._blend`); 0 for none.
        slowdown: the measurements slow down over their last two steps
            (`_closed.sustained_slowdown`): past `largest` the curve is not faster than
            there.
    """
    if regime not in REGIMES:
        raise InputError(f"blend regime must be one of {', '.join(REGIMES)}, got {regime!r}")
    if anchor and anchor not in anchor_names(regime):
        raise InputError(
            f"blend anchor must be one of {', '.join(anchor_names(regime))} in the {regime} "
            f"regime, got {anchor!r}"
        )
    largest = _finite_option(largest, "blend largest")
    if largest < 1:
        raise InputError(f"blend largest must be a GPU count ≥ 1, got {largest!r}")
    node = _finite_option(node, "blend node")
    if node and not (node >= 2 and largest <= node) or node < 0:
        raise InputError(
            f"blend node must be 0 or a node size ≥ 2 GPUs that no measured count exceeds "
            f"(largest {largest:g}), got {node!r}"
        )
    builders = {
        "amdahl": amdahl,
        "weak_data_parallel": weak_data_parallel,
        "power_law": lambda: _power_member(power_exponent),
        "power_law_flat": lambda: _power_member(flat_exponent),
        "usl": usl,
        "weak_hierarchical": weak_hierarchical,
    }
    builders.update(
        {n: builders[n[: -len("_flat")]] for n in STRADDLING_ANCHORS if n not in builders}
    )
    names = member_names(regime, anchor)
    return Blend(
        members=tuple(builders[n]() for n in names),
        names=names,
        near=tuple(NEAR[regime].get(n, 0.0) for n in names),
        far=tuple(FAR[regime].get(n, 0.0) for n in names),
        largest=largest,
        regime=regime,
        anchor=anchor,
        node=node,
        slowdown=slowdown,
    )


def _power_member(exponent: float) -> ScalingModel:
    """`power_law` with its exponent in the array leaf only, not in the static options:
    fits of other series then share compiled code (the `Blend` keeps the exponents)."""
    exponent = _finite_option(exponent, "blend exponent")
    return ScalingModel(
        terms=(PowerLogTerm(exponent=exponent, log_exponent=0, name="power"),),
        family="power_law",
    )


def _finite_option(value, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InputError(f"{what} must be a finite number, got {value!r}")
    return float(value)


def batch_linear(*, weak: bool = False) -> ScalingModel:
    """Step time of data-parallel training whose global batch is split over the GPUs:
    ``T(N, B) = a + c·B/N`` seconds per step.

    a (``serial.time``, seconds per step) is what neither more GPUs nor a smaller batch
    shortens (all-reduce, optimizer, launch); c (``batch.sample_time``, seconds) is the
    compute of one sample on one GPU. It needs ``global_batch`` in the data, and is the
    step family of `fit_time_to_train`: on MLPerf Training runs, whose batch grows with
    N, it extrapolates the step time where families of N alone cannot
    (`benchmarks/time_to_train.py`). With a constant batch it is Amdahl's law.

    Args:
        weak: accepted for a uniform interface; only False is valid (the per-GPU batch
            B/N already says how the work is shared).

    Example:
        >>> sorted(batch_linear().parameter_specs())
        ['batch.sample_time', 'serial.time']
    """
    if weak:
        raise InputError(
            "the batch_linear family has no weak-scaling variant: its per-GPU batch "
            "global_batch/gpus already says how the work is shared (drop {arg:weak})"
        )
    return ScalingModel(terms=(SerialTerm(), BatchComputeTerm()), family="batch_linear")


FAMILIES: dict[str, Callable[..., ScalingModel | Blend]] = {
    "amdahl": amdahl,
    "usl": usl,
    "data_parallel": data_parallel,
    "hybrid": hybrid,
    "hybrid_basic": hybrid_basic,
    "pmnf": pmnf,
    "weak_data_parallel": weak_data_parallel,
    "weak_hierarchical": weak_hierarchical,
    "power_law": power_law,
    "blend": blend,
    "batch_linear": batch_linear,
}


def build(family: str, **options) -> ScalingModel | Blend:
    """The preset `family` built with `options`; a clear error for unknown names."""
    if family not in FAMILIES:
        valid = ", ".join(FAMILIES)
        raise InputError(f"unknown model {family!r}; valid: {valid}")
    if family == "hybrid" and BASIC_ONLY_OPTIONS & set(options):
        family = "hybrid_basic"
    return FAMILIES[family](**options)


def usl_coefficients(model: ScalingModel) -> dict[str, float]:
    """Gunther's (σ, κ, γ) of a `usl` model, γ in units of work per second per GPU.

    Also the peak: ``N* = sqrt((1 − σ)/κ)``.
    """
    with jax.enable_x64(True):
        p = {k: float(v) for k, v in model.parameters().items()}
    t_s, t_c, t_k = p["serial.time"], p["compute.time"], p["coherency.time"]
    gamma = 1.0 / (t_s + t_c)
    sigma, kappa = t_s * gamma, t_k * gamma
    return {
        "sigma": sigma,
        "kappa": kappa,
        "gamma": gamma,
        "peak_n": math.sqrt((1.0 - sigma) / kappa),
    }
