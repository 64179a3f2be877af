"""Named model families users pick from: `amdahl`, `usl`, `data_parallel`, `hybrid`,
`pmnf`."""

from collections.abc import Callable
import math

import jax

from ._errors import InputError
from ._model import OVERLAP, ScalingModel
from ._terms.base import CoherencyTerm, ComputeTerm, HostToDeviceTerm, SerialTerm
from ._terms.collectives import Collective, HierarchicalAllReduce
from ._terms.empirical import pmnf
from ._terms.hybrid import hybrid
from ._terms.weak import weak_data_parallel, weak_hierarchical


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


FAMILIES: dict[str, Callable[..., ScalingModel]] = {
    "amdahl": amdahl,
    "usl": usl,
    "data_parallel": data_parallel,
    "hybrid": hybrid,
    "pmnf": pmnf,
    "weak_data_parallel": weak_data_parallel,
    "weak_hierarchical": weak_hierarchical,
}


def build(family: str, **options) -> ScalingModel:
    """The preset `family` built with `options`; a clear error for unknown names."""
    if family not in FAMILIES:
        valid = ", ".join(FAMILIES)
        raise InputError(f"unknown model {family!r}; valid: {valid}")
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
