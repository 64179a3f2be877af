"""The factorised walk of `sweep`'s stream: chunk boxes, ragged ends, layouts, folds.

Synthetic keys (a random table over the grid, so every configuration is known) are
streamed through `_stream.stream` with walks chosen for their edge cases and with
several layouts of the chunk, and the reductions are compared with brute force.
"""

import dataclasses
import functools
import itertools
import math
import os
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from test_sweep import FIXED, OPTIONS

import perfmodel as pm
from perfmodel._sweep import keys as _keys
from perfmodel._sweep import run as _sweep
from perfmodel._sweep import stream as _stream

BIG = np.iinfo(np.int32).max


def _table(outer, inner, seed: int = 0) -> np.ndarray:
    """Distinct keys (feasible < 0 ≤ out of memory), a fifth invalid, C order."""
    total = math.prod((*outer, *inner))
    rng = np.random.default_rng(seed)
    keys = rng.permutation(np.arange(total, dtype=np.int64) - total // 3).astype(np.int32)
    keys[rng.random(total) < 0.2] = BIG
    return keys


@functools.cache
def _evaluator(sizes: tuple[int, ...]):
    strides = [math.prod(sizes[i + 1 :]) for i in range(len(sizes))]

    def evaluate(args, indices, shape):
        (table,) = args
        flat = sum(jnp.asarray(i, jnp.int32) * s for i, s in zip(indices, strides))
        return jnp.broadcast_to(table[flat], shape)

    return evaluate


def _plan(outer, inner, limit, group_axes=1, top_k=4, **layout) -> _stream.Plan:
    block_axes, span = _stream.walk_shape(outer, math.prod(inner), limit)
    plan = _stream.Plan(
        outer_sizes=outer,
        inner_sizes=inner,
        group_axes=group_axes,
        block_axes=block_axes,
        span=span,
        top_k=top_k,
        key_dtype="int32",
        counts=True,
    )
    return dataclasses.replace(plan, **layout)


def check_stream(plan: _stream.Plan, devices, seed: int = 0) -> None:
    """The stream's reductions of a random key table equal brute force."""
    table = _table(plan.outer_sizes, plan.inner_sizes, seed)
    evaluate = _evaluator((*plan.outer_sizes, *plan.inner_sizes))
    found = _stream.stream(plan, evaluate, (table,), devices, progress=False)
    keys = table.reshape(plan.rows, plan.inner_width)
    assert found.valid == (keys < BIG).sum() and found.feasible == (keys < 0).sum()
    row_keys, rows = keys.min(axis=1), np.arange(plan.rows)
    best = np.lexsort((rows, row_keys))[: plan.top_k]
    np.testing.assert_array_equal(found.top_keys[: len(best)], row_keys[best])
    np.testing.assert_array_equal(found.top_rows[: len(best)], rows[best])
    assert (found.top_keys[len(best) :] == BIG).all()  # fewer rows than k
    per_group = row_keys.reshape(plan.groups, -1)
    np.testing.assert_array_equal(found.group_keys, per_group.min(axis=1))
    first = np.argmax(per_group == per_group.min(axis=1, keepdims=True), axis=1)
    starts = np.arange(plan.groups) * plan.rows_per_group
    np.testing.assert_array_equal(found.group_rows, starts + first)


# (outer sizes, inner sizes, configurations per chunk, group axes): the walks' edge cases.
WALKS = {
    # 7 values of the split axis in spans of 3: the last span of each run is ragged.
    "ragged span": ((5, 7, 3), (2, 3), 60, 1),
    # One outer axis, T·P above the chunk: no block axis, the axis itself split.
    "single outer axis": ((11,), (4,), 12, 1),
    "no outer axes": ((), (3, 4), 64, 0),
    "all outer axes in one chunk": ((2, 3), (2,), 100, 2),
    # One row per chunk (span 1, no block axes), groups over two axes.
    "one row per chunk": ((3, 5), (7,), 10, 2),
    "no inner axes": ((6, 5), (), 8, 1),
}


def test_walk_shape_cases():
    assert _stream.walk_shape((5, 7, 3), 6, 60) == (1, 3)  # 7 = 3 + 3 + 1
    assert _stream.walk_shape((11,), 4, 12) == (0, 3)  # 11 = 3 + 3 + 3 + 2
    assert _stream.walk_shape((), 12, 64) == (0, 1)
    assert _stream.walk_shape((2, 3), 2, 100) == (2, 1)
    assert _stream.walk_shape((3, 5), 7, 10) == (0, 1)
    assert _stream.walk_shape((7,), 1, 6) == (0, 4)  # 7 = 4 + 3 rather than 6 + 1
    plan = _plan((5, 7, 3), (2, 3), 60)
    assert (plan.span, plan.spans, plan.chunks, plan.rows_per_chunk) == (3, 3, 15, 9)
    assert plan.dims == (3, 3, 2, 3) and plan.shape == plan.dims


def _layouts(plan: _stream.Plan):
    """Natural, columns first, columns last with merged dimensions, and XLA's reduce."""
    dims = range(len(plan.dims))
    outer = [d for d in dims if d <= plan.block_axes][::-1]  # reversed: rows transposed
    inner = [d for d in dims if d > plan.block_axes]
    yield plan
    yield dataclasses.replace(plan, order=(*inner, *outer), merged=min(2, len(dims)))
    yield dataclasses.replace(plan, order=(*outer, *inner[::-1]), merged=min(3, len(dims)))
    yield dataclasses.replace(plan, pipelined=False)


# 2–3 s each (a walk of their own to compile): all but ragged spans run in the slow phase,
# so that the default run stays under 4 minutes.
SLOW_WALKS = (
    "single outer axis",
    "all outer axes in one chunk",
    "one row per chunk",
    "no outer axes",
    "no inner axes",
)


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_WALKS else n for n in WALKS]
)
def test_stream_equals_brute_force(name):
    outer, inner, limit, groups = WALKS[name]
    for plan in _layouts(_plan(outer, inner, limit, groups)):
        check_stream(plan, jax.devices()[:1], seed=len(name))


@pytest.mark.slow  # a joint fit or a subprocess: seconds each, run with -m slow
def test_stream_over_three_devices_equals_brute_force():
    # Chunks not a multiple of the lanes: some lanes walk past the last chunk.
    script = textwrap.dedent(
        f"""
        import sys, jax
        sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})
        import test_sweep_walk as t
        assert len(jax.devices()) == 3
        for name in ("ragged span", "single outer axis", "one row per chunk"):
            outer, inner, limit, groups = t.WALKS[name]
            for plan in list(t._layouts(t._plan(outer, inner, limit, groups)))[:2]:
                t.check_stream(plan, jax.devices())
        print("three lanes ok")
        """
    )
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=3"}
    env["JAX_PLATFORMS"] = "cpu"
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "three lanes ok" in done.stdout


@pytest.mark.parametrize("n", [1, 2, 3, 5, 6, 7, 8, 13])
def test_fold_equals_reductions(n):
    x = np.random.default_rng(n).integers(-50, 50, (n, 3)).astype(np.int32)
    double = lambda v: 2 * v  # noqa: E731
    for axis, data in ((0, x), (1, x.T)):
        np.testing.assert_array_equal(_stream._fold(data, jnp.minimum, axis), data.min(axis))
        np.testing.assert_array_equal(
            _stream._fold(data, jnp.add, axis, double), 2 * data.sum(axis)
        )


def test_arrange_keeps_columns_together_and_vectorises():
    # The benchmark's shape: hardware axes outer, the layout's inner but for tp.
    plan = _plan((10, 3, 4, 4), (2, 8, 8, 5), 2**16)
    assert plan.dims == (2, 3, 4, 4, 2, 8, 8, 5)
    # Most operations vary along the layout axes (tp, pp, micro-batches, batch), few
    # along the hardware ones: the layout goes outermost, the hardware innermost.
    layout = {3, 5, 6, 7}
    operations = {}
    for d in range(8):
        mask = tuple(i == d or (d in layout and i in layout) for i in range(8))
        operations[mask] = 20 if d in layout else 2
    arranged = _stream.arrange(plan, operations)
    assert sorted(arranged.order) == list(range(8))
    columns = [d > plan.block_axes for d in arranged.order]
    assert columns == sorted(columns, reverse=True) or columns == sorted(columns)
    assert arranged.order[-1] not in layout and arranged.shape[-1] >= _stream._VECTOR
    assert math.prod(arranged.shape) == math.prod(plan.dims)
    assert arranged.tallies >= arranged.rows_per_chunk
    check_stream(arranged, jax.devices()[:1])


def test_operations_follow_the_axes_each_quantity_depends_on():
    # Amdahl's time does not depend on the price: only the price's own lookup (index
    # wrap-around and gather) varies along its dimension, the whole model along gpus'.
    model = pm.amdahl().with_parameters({"serial.time": 0.1})
    axes = {"gpus": np.arange(1.0, 9.0), "price_per_gpu_hour": np.array([1.0, 2.0, 3.0])}
    request = _sweep._request(
        model,
        axes,
        fixed={},
        objective="time",
        per=[],
        top_k=3,
        pareto=False,
        counts=True,
        chunk_size=None,
        max_configs=None,
        precision="float64",
        devices=None,
    )
    _, walk, args = _sweep._run(request, False)
    plan = dataclasses.replace(walk.plan, order=None, merged=0)
    operations = _keys.operations(dataclasses.replace(walk, plan=plan), args)
    assert walk.inner == tuple(axes) and plan.dims == (1, 8, 3)

    def along(dim):
        return sum(n for mask, n in operations.items() if mask[dim])

    assert 0 < along(2) <= 4 and along(1) > 5 * along(2)
    assert along(0) == 0  # the span of a grid without outer axes: one value


@pytest.mark.slow  # 11 s; test_stream_equals_brute_force[no outer axes] covers the walk
def test_sweep_without_outer_axes_equals_brute_force():
    # Nothing per axis and no Pareto front: every axis is inner, the grid one row.
    model = pm.hybrid_basic(**OPTIONS)
    axes = {"tp": [1, 2, 4, 8], "pp": [1, 2, 4], "microbatches": [1, 2, 4, 8]}
    fixed = {**FIXED, "gpus": 16.0, "global_batch": 128.0}
    found = pm.sweep(
        model,
        axes,
        fixed=fixed,
        per=[],
        pareto=False,
        top_k=5,
        precision="float64",
        progress=False,
    )
    grid = np.array(list(itertools.product(*axes.values())), dtype=float)
    config = pm.Config(**fixed, **{n: grid[:, i] for i, n in enumerate(axes)})
    code = np.asarray(pm.layout_status(config, "hybrid_basic"))
    score = np.where(code == 0, np.asarray(model(config)), np.inf)
    order = np.argsort(score, kind="stable")
    assert found.valid == ((code == 0) | (code == len(pm.REASONS) - 1)).sum()
    assert found.feasible == (code == 0).sum() >= 5
    top = [tuple(row) for row in found.top[list(axes)].to_numpy()]
    assert top == [tuple(grid[i]) for i in order[:5]]


@pytest.mark.slow  # 14 s: two compiled walks of a hybrid space
def test_conditions_on_whole_axes_fold_and_keys_stay_the_same():
    # zero is swept over 0 and 1: ZeRO-3's branch (`zero >= 3` for every value a chunk
    # holds) is folded away, and every key is that of the unfolded evaluation.
    with jax.enable_x64(False):  # as `sweep` runs a float32 sweep
        _check_folds()


def _check_folds():
    model = pm.hybrid(gpu="H100-80GB")
    axes = {
        "gpus": [8.0, 16.0, 64.0],
        "compute.peak_flops": [5e14, 1e15],
        "zero": [0.0, 1.0],
        "tp": [1.0, 2.0, 8.0],
        "pp": [1.0, 2.0, 4.0],
        "microbatches": [1.0, 4.0],
    }
    fixed = {**FIXED, "global_batch": 64.0, "heads": 32.0, "vocab": 51200.0}
    request = _sweep._request(
        model,
        axes,
        fixed=fixed,
        objective="time",
        per=None,
        top_k=3,
        pareto=False,
        counts=True,
        chunk_size=None,
        max_configs=None,
        precision="float32",
        devices=None,
    )
    _, walk, args = _sweep._run(request, False)
    assert dict(walk.known)["zero"] == (0.0, 1.0) and "compute.peak_flops" not in dict(walk.known)
    plain = dataclasses.replace(walk, known=())
    plan = walk.plan
    flops = []
    for w in (walk, plain):
        evaluate = _keys.evaluator(w)

        def chunk(a, index, evaluate=evaluate):
            return evaluate(a, _stream.chunk_indices(plan, index)[0], plan.shape)

        cost = jax.jit(chunk).lower(args, np.int32(0)).compile().cost_analysis()
        flops.append((cost[0] if isinstance(cost, (list, tuple)) else cost)["flops"])
        found = [np.asarray(jax.jit(chunk)(args, np.int32(c))) for c in range(plan.chunks)]
        if w is walk:
            folded = found
    for a, b in zip(folded, found):
        # The same classes (feasible, out of memory, invalid) and, XLA fusing the smaller
        # graph its own way, the same scores to a few float32 roundings.
        np.testing.assert_array_equal(a < 0, b < 0)
        np.testing.assert_array_equal(a == BIG, b == BIG)
        ranked = a < 0
        np.testing.assert_allclose(
            _keys.score_of(a[ranked], "float32"), _keys.score_of(b[ranked], "float32"), rtol=1e-6
        )
        np.testing.assert_array_equal(a[~ranked], b[~ranked])  # memory bits, BIG
    assert flops[0] < 0.9 * flops[1]  # the ZeRO-3 branch is gone


# Every NumPy twin of `fold` against the JAX primitive it stands for, on values chosen for
# their edges (±0, halves, NaN, ±inf, integers, booleans), in both precisions.
_EDGES = np.array([-2.5, -1.5, -0.5, -0.0, 0.0, 0.49999999999999994, 0.5, 1.5, 2.5, 3.0, 7.25])
_SPECIAL = np.array([np.nan, np.inf, -np.inf, 1e-30, -3.0])


def _folded_values(function, *arrays):
    """``function`` on `arrays` as `fold.folded` works it out, and as JAX runs it."""
    from perfmodel._sweep import fold

    closed = jax.make_jaxpr(function)(*arrays)
    known = [np.asarray(a) for a in arrays]
    # Every equation's inputs are known: `_run` keeps the NumPy values as it goes.
    _, values = fold._run(closed.jaxpr, closed.consts, list(arrays), known)
    return values[0], np.asarray(jax.jit(function)(*arrays))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "name, function",
    [
        ("arithmetic", lambda x, y: (x + y) * (x - y) / (y + 0.75) - jnp.maximum(x, -y)),
        ("min, neg, abs, sign", lambda x, y: jnp.minimum(-x, jnp.abs(y)) * jnp.sign(x)),
        ("floor, ceil", lambda x, y: jnp.floor(x) + 10.0 * jnp.ceil(y)),
        ("round half away", lambda x, y: jax.lax.round(x) + 10.0 * jax.lax.round(y)),
        ("round half even", lambda x, y: jax.lax.round(x, jax.lax.RoundingMethod.TO_NEAREST_EVEN)),
        ("comparisons", lambda x, y: ((x >= y) & (x != 1.5)) | ((x < y) ^ (y <= 0.0)) | ~(x > 2.0)),
        ("select", lambda x, y: jnp.where(x > y, x, y * 2.0)),
        ("integers", lambda x, y: jnp.floor(x).astype(jnp.int32) * 3 - (y > 0).astype(jnp.int32)),
        ("to float", lambda x, y: (x > 0).astype(x.dtype)[:, None] * y[None, :]),
        ("shapes", lambda x, y: jnp.reshape(x, (1, -1)).squeeze(0) + y[None, :][0]),
    ],
)
def test_fold_evaluates_known_values_as_jax_does(name, function, dtype, monkeypatch):
    from perfmodel._sweep import fold

    twin = fold._numpy_value

    def numpy_only(primitive, params, args):  # no equation here falls back to JAX
        value = twin(primitive, params, args)
        assert value is not None, primitive
        return value

    monkeypatch.setattr(fold, "_numpy_value", numpy_only)
    with jax.enable_x64(dtype == "float64"):
        x = np.concatenate([_EDGES, _SPECIAL]).astype(dtype)
        y = np.concatenate([_EDGES[::-1], _SPECIAL[::-1]]).astype(dtype)
        if name == "integers":  # a float → int conversion of NaN or inf is undefined
            x, y = x[np.isfinite(x)], y[np.isfinite(x)]
        ours, theirs = _folded_values(function, x, y)
        assert ours is not None and ours.dtype == theirs.dtype, name
        np.testing.assert_array_equal(ours, theirs)


def test_fold_leaves_integer_division_to_jax():
    # lax.div truncates toward zero (−7 / 2 = −3) where NumPy floors (−4): JAX evaluates it.
    from perfmodel._sweep import fold

    x = np.array([-7, 7, -1], dtype=np.int32)
    two = np.full(3, 2, dtype=np.int32)
    assert fold._numpy_value("div", {}, [x, two]) is None
    ours, theirs = _folded_values(lambda a, b: jax.lax.div(a, b), x, two)
    np.testing.assert_array_equal(ours, [-3, 3, 0])
    np.testing.assert_array_equal(ours, theirs)
