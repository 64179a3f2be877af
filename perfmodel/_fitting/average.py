"""Averaging a weak-scaling data-parallel fit with the Amdahl's law nested in it.

With three or four GPU counts, `weak_data_parallel` (three parameters) follows the
measurements closely and Amdahl's law (two) cannot, yet neither extrapolates reliably:
the first says per-GPU throughput levels off once the all-reduce has appeared, the
second that it keeps falling. Their average hedges between the two shapes. Both are
fitted by least squares on throughput, which weighs the largest GPU counts, where the
extrapolation starts, the most. On the shipped series this removes nearly every series
where the default extrapolates far worse than a least-squares Amdahl fit
(`benchmarks/accuracy.py`).

The average of the two step times is itself a `weak_data_parallel` model: per unit of
work Amdahl's ``s + p/N`` is ``s·(N−1)/N + (s + p)/N``, the ring family's
``t_c/N + t_lat·(N−1)/N + t_bw·(N−1)/N²`` with ``t_c = s + p``, ``t_lat = s`` and
``t_bw = 0``, and the family is linear in its three times.
"""

import dataclasses

from .._data import Benchmarks
from .._model import ScalingModel
from .._presets import amdahl, weak_data_parallel
from .._terms import ComputeTerm, WeakAllReduceTerm
from .result import FitResult
from .single import fit, fit_at

AVERAGED_LOSS = "squared"
AVERAGED_FAMILY = "weak_data_parallel+amdahl"  # its name among fit_auto's candidates
DESCRIPTION = (
    "mean step time of weak_data_parallel and amdahl, each fitted by least squares on throughput"
)


def can_average(model: ScalingModel, data: Benchmarks) -> bool:
    """Whether `model` has the terms of the ring `weak_data_parallel` family (a
    `ComputeTerm` and a ring `WeakAllReduceTerm`, no overlap) and `data` are throughput."""
    terms = model.terms
    return (
        data.target == "throughput"
        and model.logit_overlap is None
        and len(terms) == 2
        and isinstance(terms[0], ComputeTerm)
        and isinstance(terms[1], WeakAllReduceTerm)
        and terms[1].algorithm == "ring"
    )


def averaged_parameters(full: dict, nested: dict) -> dict:
    """`weak_data_parallel` parameters (seconds per unit of work) of the mean step time
    of a `weak_data_parallel` fit `full` and an `amdahl` fit `nested`."""
    serial, compute = nested["serial.time"], nested["compute.time"]
    return {
        "compute.time": (full["compute.time"] + serial + compute) / 2.0,
        "allreduce.latency": (full["allreduce.latency"] + serial) / 2.0,
        "allreduce.transfer": full["allreduce.transfer"] / 2.0,
    }


def nested_fit(fit: FitResult) -> FitResult:
    """The Amdahl's law fit averaged into `fit` (refitted to its data)."""
    return _fit_nested(fit.data, n_starts=16)  # a start for refits: few starts do


def _fit_nested(data: Benchmarks, **options) -> FitResult:
    return fit(amdahl(), data, loss=AVERAGED_LOSS, **options)


def average_with_amdahl(data: Benchmarks, **fit_options) -> FitResult:
    """The averaged fit described in the module, as one `weak_data_parallel` result.

    Its residuals, R² and covariance are those of the averaged model; it counts as
    converged when both fits did, and its message names both.

    Args:
        data: throughput benchmarks.
        fit_options: passed to both fits (n_starts, adam_steps, lbfgs_steps, seed).
    """
    full = fit(weak_data_parallel(), data, loss=AVERAGED_LOSS, **fit_options)
    nested = _fit_nested(data, **fit_options)
    model = full.model.with_parameters(averaged_parameters(full.parameters(), nested.parameters()))
    result = fit_at(model, data, AVERAGED_LOSS)
    parts = [f"{r.family} {r.message.split(';')[0]}" for r in (full, nested)]
    message = f"{DESCRIPTION} ({', '.join(parts)})"
    if result.warnings:
        message += "; " + "; ".join(result.warnings)
    return dataclasses.replace(
        result,
        averaged_with=nested.family,
        converged=full.converged and nested.converged,
        message=message,
        num_steps=full.num_steps + nested.num_steps,
    )
