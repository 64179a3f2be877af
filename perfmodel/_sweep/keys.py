"""Configurations of a walk turned into integer ranking keys, inside `jax.jit`.

A key orders configurations exactly as they rank: a feasible configuration maps the
IEEE bits of its score (seconds or cost per sample, ≥ 0) to a negative integer, so the
float order survives bit for bit; a valid layout that does not fit in memory maps to the
bits of its memory in bytes (≥ 0); an invalid layout, or a non-finite score, to the
largest integer. float32 sweeps use int32 keys, float64 sweeps int64.
"""

from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
import dataclasses
import functools
import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._config import Config
from .._model import AbstractScalingModel
from .._terms import hybrid_memory, layout_checks
from .fold import folded
from .stream import chunk_indices, dim_index, outer_digits, Plan

INT_DTYPE = {"float32": "int32", "float64": "int64"}
# Subtracted from a score's bits: 0 maps to −OFFSET, +inf to −1.
OFFSET = {"float32": 0x7F800001, "float64": 0x7FF0000000000001}
_COMPILER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="perfmodel-compile")
# Primitives that move or repeat values without computing (XLA fuses them away).
_MOVES = frozenset({"broadcast_in_dim", "reshape", "squeeze", "expand_dims", "copy", "copy_p"})


@dataclasses.dataclass(frozen=True)
class Walk:
    """Everything the jitted evaluation depends on apart from array values.

    Attributes:
        plan: the shape of the walk (`_stream.Plan`).
        treedef: the model's tree structure (its leaves are passed as arrays).
        outer, inner: axis names enumerated by rows, and spanning each row.
        fixed: the `Config` fields given one value, ``(name, value)`` pairs: they enter
            the compiled evaluation as constants, so XLA folds what they decide (the
            software-stack flags' selects, products of fixed sizes) out of the loop.
        params: names of the axes that are model parameters (values stored raw).
        objective: ``"time"``, ``"cost"``, ``"time_to_train"`` or ``"cost_to_train"``.
        per_step: the model gives seconds per step (divided by the global batch);
            False for fits of throughput, already per unit of work.
        kind: the layout and memory checks (`layout_checks`): ``"hybrid"``,
            ``"hybrid_basic"``, or ``""`` for the parallel layout only.
        precision: ``"float32"`` or ``"float64"``.
        samples_to_target: for the time-to-train objectives, ``(E_min·D, B_noise)``:
            the samples to the target at global batch B are ``E_min·D·(1 + B/B_noise)``
            (McCandlish et al. 2018), samples.
        known: ``(name, values)`` of the `Config` axes a chunk spans whole (the inner
            and block axes), whose values a chunk's evaluation knows when traced: the
            conditions on them alone are folded (`fold.folded`).
    """

    plan: Plan
    treedef: object
    outer: tuple[str, ...]
    inner: tuple[str, ...]
    fixed: tuple[tuple[str, float], ...]
    params: frozenset[str]
    objective: str
    per_step: bool
    kind: str
    precision: str
    samples_to_target: tuple[float, float] | None = None
    known: tuple[tuple[str, tuple[float, ...]], ...] = ()


def set_raw(model: AbstractScalingModel, raw: Mapping[str, jax.Array]) -> AbstractScalingModel:
    """`model` with the named parameters' stored (log/logit) leaves replaced."""
    for name, value in raw.items():
        model = eqx.tree_at(model.leaf_getter(name), model, value)
    return model


def score(walk: Walk, time_s, config: Config):
    """Seconds per sample, or with the cost objective currency per sample; with
    `samples_to_target`, times the samples to the target: time (cost) to train."""
    per_sample = time_s / config.global_batch if walk.per_step else time_s
    if walk.samples_to_target is not None:
        samples_min, noise_batch = walk.samples_to_target
        per_sample = per_sample * samples_min * (1.0 + config.global_batch / noise_batch)
    if walk.objective in ("cost", "cost_to_train"):
        return per_sample * config.gpus * config.price_per_gpu_hour / 3600.0
    return per_sample


def keys(walk: Walk, leaves, fixed, values):
    """Ranking keys of the configurations broadcast from `values` (see the module).

    `fixed` is unused: the fixed values are `walk.fixed`'s constants.
    """
    del fixed
    fixed = {n: jnp.asarray(v, dtype=walk.precision) for n, v in walk.fixed}
    model = jax.tree_util.tree_unflatten(walk.treedef, leaves)
    model = set_raw(model, {n: v for n, v in values.items() if n in walk.params})
    config = Config(**fixed, **{n: v for n, v in values.items() if n not in walk.params})
    scores = score(walk, model(config), config)
    scores = jnp.where(scores == 0.0, 0.0, scores)  # −0.0 would rank as the worst bits
    checks = layout_checks(config, walk.kind)
    valid = functools.reduce(jnp.logical_and, checks[:-1])
    finite = (scores >= 0.0) & (scores < jnp.inf)
    int_dtype = jnp.dtype(INT_DTYPE[walk.precision])
    big = jnp.iinfo(int_dtype).max
    ranked = jax.lax.bitcast_convert_type(scores, int_dtype) - OFFSET[walk.precision]
    if not walk.kind:
        return jnp.where(valid & finite, ranked, big)
    memory = jax.lax.bitcast_convert_type(hybrid_memory(config, walk.kind), int_dtype)
    fits = checks[-1]
    return jnp.where(valid & fits & finite, ranked, jnp.where(valid & ~fits, memory, big))


@functools.lru_cache(maxsize=32)
def evaluator(walk: Walk):
    """``(args, indices, shape) → keys``: the configurations at `indices`, evaluated.

    `args` is ``(model leaves, fixed values, outer axis values, inner axis values)``;
    `indices` holds the index of each outer, then inner, axis: integer arrays that
    broadcast to `shape`, the shape of the keys returned. A chunk gives each axis a
    dimension of its own (`_stream.chunk_indices`), so every quantity is computed on the
    sub-grid of the axes it depends on, and only the few that depend on all of them on
    the whole block.
    """

    def evaluate(args, indices, shape):
        leaves, fixed, outer_values, inner_values = args
        tables = (*outer_values, *inner_values)
        values = {n: t[i] for n, t, i in zip((*walk.outer, *walk.inner), tables, indices)}
        known = known_values(walk, shape)
        if known:
            found = folded(lambda v: keys(walk, leaves, fixed, v), values, known)
        else:
            found = keys(walk, leaves, fixed, values)
        return jnp.broadcast_to(found, shape)

    return evaluate


def known_values(walk: Walk, shape) -> dict[str, np.ndarray]:
    """The values the `walk.known` axes take in a chunk of `shape` (`Plan.shape`), as
    broadcast by `chunk_indices`; none for other shapes."""
    plan = walk.plan
    if tuple(shape) != plan.shape or not walk.known:
        return {}
    spanned = (*walk.outer[plan.split_axis + 1 :], *walk.inner)
    found = {}
    with jax.ensure_compile_time_eval():
        for name, values in walk.known:
            index = np.asarray(dim_index(plan, 1 + spanned.index(name)))
            found[name] = np.asarray(values, dtype=walk.precision)[index]
    return found


def operations(walk: Walk, args) -> dict[tuple[bool, ...], int]:
    """The operations of a chunk's evaluation, counted by the `Plan.dims` they vary along.

    Read from the traced evaluation (`jax.make_jaxpr`, no compilation) with every
    dimension of the chunk in its own place, where an operation's shape says which
    dimensions it varies along.
    """
    plan = dataclasses.replace(walk.plan, order=None, merged=0)
    evaluate = evaluator(walk)
    traced = jax.make_jaxpr(lambda a: evaluate(a, chunk_indices(plan, jnp.int32(0))[0], plan.shape))
    counts: dict[tuple[bool, ...], int] = {}

    def visit(jaxpr):
        for equation in jaxpr.eqns:
            calls = [  # the jaxprs of nested calls (jit, custom derivatives, …)
                p
                for value in equation.params.values()
                for p in (value if isinstance(value, (tuple, list)) else (value,))
                if hasattr(p, "eqns") or hasattr(getattr(p, "jaxpr", None), "eqns")
            ]
            for sub in calls:
                visit(sub if hasattr(sub, "eqns") else sub.jaxpr)
            moves = equation.primitive.name in _MOVES
            for var in equation.outvars if not calls and not moves else ():
                shape = getattr(var.aval, "shape", ())
                if len(shape) == len(plan.dims):
                    mask = tuple(n > 1 for n in shape)
                    counts[mask] = counts.get(mask, 0) + 1

    visit(traced(args).jaxpr)
    return counts


def score_of(keys_: np.ndarray, precision: str) -> np.ndarray:
    """Scores of feasible (negative) keys, exactly as evaluated."""
    bits = (keys_.astype(np.int64) + OFFSET[precision]).astype(INT_DTYPE[precision])
    return bits.view(precision).astype(np.float64)


def memory_of(key: int, precision: str) -> float:
    """Bytes per GPU of an out-of-memory (non-negative, not largest) key."""
    return float(np.array([key], dtype=INT_DTYPE[precision]).view(precision)[0])


# Re-evaluating whole rows after the stream ----------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Signature:
    """Shapes and dtypes of a call's arguments, hashable."""

    treedef: object
    leaves: tuple

    def __iter__(self):
        return iter(jax.tree_util.tree_unflatten(self.treedef, self.leaves))


@functools.lru_cache(maxsize=32)
def _compile_ranker(walk: Walk, signature: _Signature) -> Future:
    plan, evaluate = walk.plan, evaluator(walk)
    k = min(plan.top_k, plan.inner_width)
    columns = np.arange(plan.inner_width, dtype=np.int32)
    strides = [math.prod(plan.inner_sizes[i + 1 :]) for i in range(len(plan.inner_sizes))]
    inner = [(columns // s % n)[None, :] for s, n in zip(strides, plan.inner_sizes)]

    def rank(args, rows):
        outer = [d[:, None] for d in outer_digits(plan, rows)]
        found = evaluate(args, [*outer, *inner], (rows.shape[0], plan.inner_width))
        negated, cols = jax.lax.top_k(-found, k)
        return -negated, cols

    def compile_():
        with jax.enable_x64(walk.precision == "float64"):
            return jax.jit(rank).lower(*signature).compile()

    return _COMPILER.submit(compile_)


def ranker(walk: Walk, args) -> Future:
    """The compiled ``(args, rows) → k best (key, column) of each row``, as a future.

    Compiled in a thread, so a sweep compiles it while its stream compiles and runs.
    """
    shapes = jax.tree_util.tree_map(lambda x: jax.ShapeDtypeStruct(np.shape(x), x.dtype), args)
    rows = jax.ShapeDtypeStruct((walk.plan.rows_per_chunk,), np.dtype("int32"))
    leaves, treedef = jax.tree_util.tree_flatten((shapes, rows))
    return _compile_ranker(walk, _Signature(treedef, tuple(leaves)))


def best_in_rows(walk: Walk, args, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The k best (key, column) of whole rows, best first, in batches of a chunk's shape."""
    rank = ranker(walk, args).result()
    r = walk.plan.rows_per_chunk
    found, cols = [], []
    for start in range(0, len(rows), r):
        batch = rows[start : start + r]
        padded = np.concatenate([batch, np.full(r - len(batch), batch[-1])]).astype(np.int32)
        k, c = rank(args, padded)
        found.append(np.asarray(k)[: len(batch)])
        cols.append(np.asarray(c)[: len(batch)])
    return np.concatenate(found), np.concatenate(cols)


def flops_per_config(walk: Walk, args) -> float | None:
    """XLA's count of element-wise operations per configuration evaluating a chunk.

    From the cost analysis of one chunk's evaluation, lowered (not compiled): each
    operation counts the entries of the sub-grid it is computed on.
    """
    plan, evaluate = walk.plan, evaluator(walk)

    def chunk(args, index):
        return evaluate(args, chunk_indices(plan, index)[0], plan.shape)

    try:
        cost = jax.jit(chunk).lower(args, np.int32(0)).cost_analysis()
        cost = cost[0] if isinstance(cost, (list, tuple)) else cost
        return float(cost["flops"]) / (plan.rows_per_chunk * plan.inner_width)
    except Exception:  # backend dependent: not every backend reports costs
        return None
