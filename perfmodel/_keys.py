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

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ._config import Config
from ._hybrid import layout_checks, memory_per_gpu
from ._model import ScalingModel
from ._stream import outer_digits, Plan

INT_DTYPE = {"float32": "int32", "float64": "int64"}
# Subtracted from a score's bits: 0 maps to −OFFSET, +inf to −1.
OFFSET = {"float32": 0x7F800001, "float64": 0x7FF0000000000001}
_COMPILER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="perfmodel-compile")


@dataclasses.dataclass(frozen=True)
class Walk:
    """Everything the jitted evaluation depends on apart from array values.

    Attributes:
        plan: the shape of the walk (`_stream.Plan`).
        treedef: the model's tree structure (its leaves are passed as arrays).
        outer, inner: axis names enumerated by rows, and spanning each row.
        fixed: names of the `Config` fields given one value.
        params: names of the axes that are model parameters (values stored raw).
        objective: ``"time"`` or ``"cost"``.
        per_step: the model gives seconds per step (divided by the global batch);
            False for fits of throughput, already per unit of work.
        hybrid: check memory and the batch and layer layout (the `hybrid` family).
        precision: ``"float32"`` or ``"float64"``.
    """

    plan: Plan
    treedef: object
    outer: tuple[str, ...]
    inner: tuple[str, ...]
    fixed: tuple[str, ...]
    params: frozenset[str]
    objective: str
    per_step: bool
    hybrid: bool
    precision: str


def set_raw(model: ScalingModel, raw: Mapping[str, jax.Array]) -> ScalingModel:
    """`model` with the named parameters' stored (log/logit) leaves replaced."""
    for name, value in raw.items():
        model = eqx.tree_at(model._leaf_getter(name), model, value)
    return model


def score(walk: Walk, time_s, config: Config):
    """Seconds per sample, or with the cost objective currency per sample."""
    per_sample = time_s / config.global_batch if walk.per_step else time_s
    if walk.objective == "cost":
        return per_sample * config.gpus * config.price_per_gpu_hour / 3600.0
    return per_sample


def keys(walk: Walk, leaves, fixed, values):
    """Ranking keys of the configurations broadcast from `values` (see the module)."""
    model = jax.tree_util.tree_unflatten(walk.treedef, leaves)
    model = set_raw(model, {n: v for n, v in values.items() if n in walk.params})
    config = Config(**fixed, **{n: v for n, v in values.items() if n not in walk.params})
    scores = score(walk, model(config), config)
    checks = layout_checks(config, walk.hybrid)
    valid = checks[0] & checks[1] & checks[2] & checks[3]
    finite = (scores >= 0.0) & (scores < jnp.inf)
    int_dtype = jnp.dtype(INT_DTYPE[walk.precision])
    big = jnp.iinfo(int_dtype).max
    ranked = jax.lax.bitcast_convert_type(scores, int_dtype) - OFFSET[walk.precision]
    if not walk.hybrid:
        return jnp.where(valid & finite, ranked, big)
    memory = jax.lax.bitcast_convert_type(memory_per_gpu(config)["total"], int_dtype)
    fits = checks[4]
    return jnp.where(valid & fits & finite, ranked, jnp.where(valid & ~fits, memory, big))


@functools.lru_cache(maxsize=32)
def evaluator(walk: Walk):
    """``(args, rows) → keys (P, R)``: the rows decoded from their index, evaluated.

    `args` is ``(model leaves, fixed values, outer axis values, inner axis values)``.
    Each inner axis gets its own dimension and the rows the last one: outer values have
    shape (1, …, 1, R), the i-th inner axis (1, …, n_i, …, 1). A quantity is then
    computed on the sub-grid of the axes it depends on (XLA keeps those intermediates
    small), and the full-size work vectorises along the rows. Column j of a row is the
    C-order index over the inner axes.
    """
    plan = walk.plan

    def evaluate(args, rows):
        leaves, fixed, outer_values, inner_values = args
        k = len(walk.inner)
        digits = outer_digits(plan, rows)
        values = {
            n: t[d].reshape((1,) * k + (-1,)) for n, t, d in zip(walk.outer, outer_values, digits)
        }
        for i, (n, t) in enumerate(zip(walk.inner, inner_values)):
            values[n] = t.reshape((1,) * i + (-1,) + (1,) * (k - i))
        out = keys(walk, leaves, fixed, values)
        shape = tuple(len(t) for t in inner_values) + (rows.shape[0],)
        return jnp.broadcast_to(out, shape).reshape(plan.inner_width, rows.shape[0])

    return evaluate


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
    evaluate = evaluator(walk)
    k = min(walk.plan.top_k, walk.plan.inner_width)

    def rank(args, rows):
        negated, cols = jax.lax.top_k(-evaluate(args, rows).T, k)
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
    """XLA's count of element-wise operations per configuration (from the ranker)."""
    try:
        cost = ranker(walk, args).result().cost_analysis()
        cost = cost[0] if isinstance(cost, (list, tuple)) else cost
        return float(cost["flops"]) / (walk.plan.rows_per_chunk * walk.plan.inner_width)
    except Exception:  # backend dependent: not every backend reports costs
        return None
