"""Link parameters of a model's collective term, from nccl-tests fits.

A collective term (`Collective`, `HierarchicalAllReduce`) costs
``Σ_k A_k(n)·α_k + S·Σ_k B_k(n)/β_k`` seconds for S bytes over n ranks. A collective fit
gives, per measured rank count, the zero-size time and the slope in seconds per byte;
matching them fixes the term's latencies α_k and bandwidths β_k.
"""

import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._config import Config
from .._errors import InputError
from .._model import ScalingModel
from .._terms import Collective, HierarchicalAllReduce


def collective_term(model: ScalingModel, term: str | None = None) -> tuple[int, object]:
    """Index and term of the model's collective (``Collective``/``HierarchicalAllReduce``)."""
    found = [
        (i, t)
        for i, t in enumerate(model.terms)
        if isinstance(t, (Collective, HierarchicalAllReduce)) and term in (None, t.name)
    ]
    if not found:
        names = ", ".join(t.name for t in model.terms)
        what = f"named {term!r}" if term else "(Collective or HierarchicalAllReduce)"
        raise InputError(
            f"model {model.family!r} has no collective term {what} to share link parameters "
            f"with nccl-tests measurements; its terms: {names}. Use data_parallel"
        )
    if len(found) > 1:
        names = ", ".join(t.name for _, t in found)
        raise InputError(f"model has several collective terms ({names}); choose one with term=")
    return found[0]


def term_collective(term) -> str:
    """The nccl-tests collective a term's measurements come from."""
    return term.op if isinstance(term, Collective) else "all_reduce"


def _with_values(term, values: dict[str, float]):
    for name, value in values.items():
        field = term.params[name].field
        term = eqx.tree_at(lambda t: getattr(t, field), term, jnp.log(jnp.float64(value)))
    return term


def term_coefficients(term, n_ranks, gpus_per_node) -> dict[str, np.ndarray]:
    """Seconds of `term` per unit latency (s/s) and per byte over each bandwidth (s·B/s/B).

    Every collective term is ``Σ_k A_k·α_k + S·Σ_k B_k/β_k``; returns A_k (for latency
    parameters) and B_k (for bandwidth parameters) at each of `n_ranks`, found by
    evaluating the term with one parameter at 1 and the others at 0 or ∞.
    """
    lat = [k for k, s in term.params.items() if s.kind == "time"]
    bws = [k for k, s in term.params.items() if s.kind == "bandwidth"]
    out = {}
    with jax.enable_x64(True):
        n = jnp.asarray(n_ranks, dtype=jnp.float64)
        for name in lat + bws:
            values = {k: 0.0 for k in lat} | {k: math.inf for k in bws} | {name: 1.0}
            size = 0.0 if name in lat else 1.0
            config = Config(gpus=n, gpus_per_node=gpus_per_node, message_bytes=size)
            out[name] = np.asarray(_with_values(term, values)(config), dtype=np.float64)
    return out


def _solve(matrix, target, names, what):
    """Positive solution of ``matrix @ x = target`` (relative least squares) where defined."""
    scaled = matrix / target[:, None]
    x, *_ = np.linalg.lstsq(scaled, np.ones_like(target), rcond=None)
    _, singular, vt = np.linalg.svd(scaled)
    rank = int(np.sum(singular > 1e-9 * singular.max())) if singular.size else 0
    null = vt[rank:]
    out = {}
    for k, name in enumerate(names):
        if null.size and np.abs(null[:, k]).max() > 1e-9:
            continue  # the measurements do not determine it
        if not x[k] > 0:
            raise InputError(
                f"the collective fit gives {name} ≤ 0: the {what} cannot be reproduced by "
                "this term with positive parameters (e.g. a multi-node run faster than its "
                "intra-node part alone)"
            )
        out[name] = float(x[k])
    return out


def link_parameters(
    collective_fit, model: ScalingModel, *, gpus_per_node: float = 8.0, term: str | None = None
) -> dict[str, float]:
    """Values of the model's link parameters implied by a collective fit, for ``fix=``.

    Each fitted (collective, n_ranks) gives its zero-size time A(n)·α and its slope f/β
    (seconds per byte); the term's latencies and inverse bandwidths are solved so that the
    term reproduces them at each n_ranks, by relative least squares. So a flat ring
    `Collective` takes α and β (the bus bandwidth) of its collective's fit; a tree takes
    the values that give the same times; `HierarchicalAllReduce` takes ``_intra`` from
    all-reduce runs with n_ranks ≤ gpus_per_node and ``_inter`` from runs across nodes
    (given the intra-node ones). Parameters no fit determines are left out.

    Raises:
        InputError: no collective term, no fit of its collective, or nothing determined.
    """
    _, t = collective_term(model, term)
    op = term_collective(t)
    groups = [g for g in collective_fit.groups if g.collective == op]
    have = ", ".join(f"{g.collective} at {g.n_ranks} ranks" for g in collective_fit.groups)
    if not groups:
        raise InputError(
            f"the collective fit has no {op} measurements for term {t.name!r}; it has {have}"
        )
    coefficients = term_coefficients(t, [g.n_ranks for g in groups], gpus_per_node)
    lat = [k for k, s in t.params.items() if s.kind == "time"]
    bws = [k for k, s in t.params.items() if s.kind == "bandwidth"]
    latency = _solve(
        np.stack([coefficients[k] for k in lat], axis=1),
        np.array([g.base_latency_s for g in groups]),
        lat,
        "latency",
    )
    inverse = _solve(
        np.stack([coefficients[k] for k in bws], axis=1),
        np.array([g.seconds_per_byte for g in groups]),
        bws,
        "bandwidth",
    )
    values = latency | {k: 1.0 / v for k, v in inverse.items()}
    if not values:
        raise InputError(
            f"the collective fit ({have}) determines none of {t.name}'s parameters "
            f"({', '.join(t.params)}) at gpus_per_node={gpus_per_node:g}: a hierarchical "
            "all-reduce needs a run inside one node"
        )
    return {f"{t.name}.{k}": values[k] for k in t.params if k in values}
