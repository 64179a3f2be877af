"""The streaming engine behind `sweep`: grid chunks decoded, evaluated and reduced in jit.

The grid is split into *outer* axes, enumerated by a row index, and *inner* axes, whose
product P (up to a few thousand configurations) is the width of every row. A chunk is
a box of the grid (`Plan`): one value of each leading outer axis, `span` consecutive
values of the next one and every value of the others, so R = span × (their product)
consecutive rows. Inside `jit` the leading axes' values are decoded from the chunk's index by
integer div/mod, and every other axis gets a dimension of its own, so XLA computes each
quantity on the sub-grid of the axes it depends on and only the few that depend on all
of them on the whole chunk; on a CPU the dimensions are ordered for the loops XLA emits
(`arrange`). The chunk's keys are then reduced to the best key of each row, so no more
than one chunk ever exists. A `jax.lax.fori_loop` runs many chunks per call, and
`jax.shard_map` runs one such loop on every device, device d taking chunks
``d, d + D, d + 2D, …``; the per-device results are gathered and merged inside the call.

Each configuration gets one integer *key* whose order is the ranking: a feasible one
maps its score's IEEE bits to a negative integer (so the bits order, which is the
float order, survives exactly), a valid layout that does not fit memory maps to the
bits of its memory (≥ 0), an invalid one to the largest integer. Every reduction is
then a lexicographic minimum of (key, row): exact, deterministic and the same on any
number of devices or chunk sizes.

Rows are reduced two ways: the best row of every *group* (groups are runs of rows with
the same values of the outermost axes) and the `k` best rows overall, which contain the
`k` best configurations (a row outside the k best rows has k rows ahead of it, each with
a configuration better than all of its own).
"""

from collections.abc import Callable
import dataclasses
import functools
import math
import sys
import time

import jax
import jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec
from jaxtyping import ArrayLike
import numpy as np

_AXIS = "devices"
_CPU_OPTIONS = {"xla_cpu_prefer_vector_width": 512}
_ROW_LIMIT = 2**31 - 1
# The innermost loop over a chunk (the one XLA vectorises) runs over at least this many
# configurations: its dimensions are merged until they reach it. Merging more puts more
# axes in that loop, and every operation that varies along one of them runs once per
# configuration: GPT-3 175B under `hybrid` (benchmarks/sweep.py, 2 CPU cores) sweeps
# 1.8× faster with 8 (the NIC bandwidth × GPU memory, 12 wide, inside the loop over the
# peak FLOP/s) than with 64 (all three merged, 96 wide), `hybrid_basic` within noise.
_VECTOR = 8


@dataclasses.dataclass(frozen=True)
class Plan:
    """How a grid is walked: sizes only, no values (all static under `jit`).

    The outer axes split in three: the trailing `block_axes` are spanned whole by every
    chunk, the one before them (the *split* axis) `span` values at a time, and the
    leading ones are fixed within a chunk. A chunk is thus a box of the grid and each of
    its axes gets a dimension of its own (`dims`), in the order `order`.

    Attributes:
        outer_sizes: sizes of the outer axes, slowest first.
        inner_sizes: sizes of the inner axes; their product P is the width of a row.
        group_axes: how many of the leading outer axes form a group.
        block_axes: how many trailing outer axes each chunk spans whole.
        span: values of the split axis per chunk (1 when there is no split axis).
        top_k: how many best rows to keep.
        key_dtype: ``"int32"`` (float32 sweeps) or ``"int64"`` (float64 sweeps).
        counts: also count valid and feasible configurations (costs a pass).
        pipelined: materialise each chunk's keys and reduce them in the next iteration
            (CPUs, where a chunk sits in cache); otherwise reduce them where they are
            computed (GPUs, where writing them out would cost memory bandwidth).
        order: the chunk's `dims`, outermost first, in the block of keys evaluated
            (None: as in `dims`).
        merged: how many of the last dimensions in `order` are merged into one.
    """

    outer_sizes: tuple[int, ...]
    inner_sizes: tuple[int, ...]
    group_axes: int
    block_axes: int
    span: int
    top_k: int
    key_dtype: str
    counts: bool
    pipelined: bool = True
    order: tuple[int, ...] | None = None
    merged: int = 0

    @property
    def inner_width(self) -> int:
        return math.prod(self.inner_sizes)

    @property
    def rows(self) -> int:
        return math.prod(self.outer_sizes)

    @property
    def groups(self) -> int:
        return math.prod(self.outer_sizes[: self.group_axes])

    @property
    def rows_per_group(self) -> int:
        return math.prod(self.outer_sizes[self.group_axes :])

    @property
    def strides(self) -> tuple[int, ...]:
        return tuple(math.prod(self.outer_sizes[i + 1 :]) for i in range(len(self.outer_sizes)))

    @property
    def key_max(self) -> int:
        return int(np.iinfo(self.key_dtype).max)

    @property
    def split_axis(self) -> int:
        """Index of the split axis among the outer axes; −1 when there is none."""
        return len(self.outer_sizes) - self.block_axes - 1

    @property
    def block(self) -> int:
        """Rows per value of the split axis: the product of the block axes."""
        return math.prod(self.outer_sizes[self.split_axis + 1 :])

    @property
    def spans(self) -> int:
        """Chunks per run of the split axis."""
        return -(-self.outer_sizes[self.split_axis] // self.span) if self.split_axis >= 0 else 1

    @property
    def chunks(self) -> int:
        return math.prod(self.outer_sizes[: max(self.split_axis, 0)]) * self.spans

    @property
    def rows_per_chunk(self) -> int:
        """R, rows of a chunk (those past the end of the split axis included)."""
        return self.span * self.block

    @property
    def dims(self) -> tuple[int, ...]:
        """A chunk's dimensions: the split axis's span, the block axes, the inner axes."""
        return (self.span, *self.outer_sizes[self.split_axis + 1 :], *self.inner_sizes)

    @property
    def layout(self) -> tuple[int, ...]:
        """`order`, defaulted."""
        return tuple(range(len(self.dims))) if self.order is None else self.order

    @property
    def tallies(self) -> int:
        """Length of the count accumulators: the smallest product of trailing `shape`
        entries that is at least R, so that each counts at most P keys of a chunk."""
        width = 1
        for n in reversed(self.shape):
            if width >= self.rows_per_chunk:
                break
            width *= n
        return width

    @property
    def shape(self) -> tuple[int, ...]:
        """Shape of a chunk's block of keys: `dims` in `order`, the last `merged` as one."""
        sizes = [self.dims[d] for d in self.layout]
        kept = len(sizes) - self.merged
        return (*sizes[:kept], math.prod(sizes[kept:])) if self.merged else tuple(sizes)


def walk_shape(outer_sizes: tuple[int, ...], inner_width: int, limit: int) -> tuple[int, int]:
    """``(block_axes, span)`` for chunks of at most `limit` ≥ P configurations.

    As many trailing outer axes as fit whole, then as many values of the axis before
    them as fit, evened out so that each run of it splits into chunks of one span.
    """
    block_axes, block = 0, 1
    for n in reversed(outer_sizes):
        if block * n * inner_width > limit:
            break
        block_axes, block = block_axes + 1, block * n
    if block_axes == len(outer_sizes):
        return block_axes, 1
    size = outer_sizes[-block_axes - 1]
    most = max(1, min(size, limit // (block * inner_width)))
    return block_axes, -(-size // -(-size // most))


def arrange(plan: Plan, operations: dict[tuple[bool, ...], int]) -> Plan:
    """`plan` with its chunk dimensions ordered for the loops XLA emits on a CPU.

    XLA evaluates a chunk in one loop nest over its dimensions, in `order`, and
    recomputes an operation in every loop it varies along (the others hoist it out): one
    that varies along dimensions up to the k-th costs the product of the first k sizes.
    So the dimensions many operations vary along go outermost, and the innermost,
    vectorised loop runs over those that few do, merged until it covers `_VECTOR`
    configurations. The columns of a row stay together (all outermost or all innermost,
    whichever costs fewer operations) so that reducing rows reads the keys in order.

    `operations` counts the evaluation's operations by the `dims` they vary along.
    """
    dims = plan.dims
    varying = [sum(n for mask, n in operations.items() if mask[d]) for d in range(len(dims))]

    def by_use(group):
        return sorted(group, key=lambda d: (-varying[d], d))

    outer = by_use(range(1 + plan.block_axes))
    inner = by_use(range(1 + plan.block_axes, len(dims)))

    def merge(order):
        merged, width = 0, 1
        while merged < len(order) and width < _VECTOR:
            merged += 1
            width *= dims[order[-merged]]
        return merged

    def cost(order):
        kept = len(order) - merge(order)
        total = 0
        for mask, n in operations.items():
            deepest = max((i for i, d in enumerate(order) if mask[d]), default=-1)
            total += n * math.prod(
                dims[d] for d in order[: len(order) if deepest >= kept else deepest + 1]
            )
        return total

    order = min((tuple(inner + outer), tuple(outer + inner)), key=cost)
    return dataclasses.replace(plan, order=order, merged=merge(order))


def outer_digits(plan: Plan, rows: jax.Array) -> list[jax.Array]:
    """Index of each outer axis for int32 row indices (div/mod by constants)."""
    return [(rows // s) % n for s, n in zip(plan.strides, plan.outer_sizes)]


def dim_index(plan: Plan, dim: int) -> jax.Array:
    """Position along `dims[dim]` of each entry of a chunk's block (broadcasts to it)."""
    layout, shape = plan.layout, plan.shape
    at = layout.index(dim)
    if at < len(shape) - (plan.merged > 0):
        return jnp.arange(shape[at], dtype=jnp.int32).reshape(
            tuple(-1 if i == at else 1 for i in range(len(shape)))
        )
    stride = math.prod(plan.dims[d] for d in layout[at + 1 :])
    flat = jnp.arange(shape[-1], dtype=jnp.int32)
    return ((flat // stride) % plan.dims[dim]).reshape((1,) * (len(shape) - 1) + (-1,))


def chunk_indices(plan: Plan, chunk: jax.Array) -> tuple[list[jax.Array], jax.Array, jax.Array]:
    """Index of every axis (outer, then inner) in chunk `chunk`, its rows, and a mask.

    The indices broadcast to `Plan.shape`: the leading outer axes' are scalars, the
    others vary along their own dimension only. Rows are in C order of the chunk's outer
    dimensions (the split axis's span, then the block axes), increasing; rows past the
    end of a run of the split axis, or of the grid, are `_ROW_LIMIT` (their split-axis
    index is clipped) and False in the mask, which also broadcasts to `Plan.shape`.
    """
    sizes, split = plan.outer_sizes, plan.split_axis
    prefix, first = chunk // plan.spans, chunk % plan.spans * plan.span
    leading = sizes[: max(split, 0)]
    indices = [(prefix // math.prod(leading[i + 1 :])) % n for i, n in enumerate(leading)]
    size = sizes[split] if split >= 0 else 1
    spanned = first + dim_index(plan, 0)
    if split >= 0:
        indices.append(jnp.minimum(spanned, size - 1))
    indices += [dim_index(plan, d) for d in range(1, len(plan.dims))]
    along = first + jnp.arange(plan.span, dtype=jnp.int32)
    rows = (prefix * size + along)[:, None] * plan.block
    rows = rows + jnp.arange(plan.block, dtype=jnp.int32)[None, :]
    inside = (along < size) & (chunk < plan.chunks)
    mask = (spanned < size) & (chunk < plan.chunks)
    return indices, jnp.where(inside[:, None], rows, _ROW_LIMIT).reshape(-1), mask


def _fold(x: ArrayLike, op: Callable, axis: int, leaf: Callable = lambda x: x) -> jax.Array:
    """`op` (`jnp.minimum` or `jnp.add`) over `axis` of ``leaf(x)``, by halves.

    A tree of element-wise operations, which XLA vectorises on a CPU better than its
    reductions (2–3× faster on the sweep's keys); `leaf` is applied to the halves of the
    first level, so ``leaf(x)`` is never materialised.
    """
    extra = None
    for level in range(max(1, math.ceil(math.log2(x.shape[axis])))):
        change = leaf if level == 0 else (lambda x: x)
        n = x.shape[axis]
        if n % 2:
            middle = change(jax.lax.index_in_dim(x, n // 2, axis, keepdims=False))
            extra = middle if extra is None else op(extra, middle)
            if n == 1:
                return extra
        low = change(jax.lax.slice_in_dim(x, 0, n // 2, axis=axis))
        x = op(low, change(jax.lax.slice_in_dim(x, n - n // 2, n, axis=axis)))
    x = jax.lax.index_in_dim(x, 0, axis, keepdims=False)
    return x if extra is None else op(x, extra)


def _reduce(plan: Plan, x: jax.Array, op: Callable, axis: int, leaf=lambda x: x) -> jax.Array:
    """`_fold` on a CPU; on other devices XLA's own reduction, which they do well."""
    if plan.pipelined:
        return _fold(x, op, axis, leaf)
    x = leaf(x)
    return x.min(axis=axis) if op is jnp.minimum else x.sum(axis=axis, dtype=x.dtype)


def _per_row(plan: Plan, block: jax.Array, op: Callable) -> jax.Array:
    """`op` over the columns of each row of a chunk's block, in row order.

    The columns, the inner axes' dimensions, lead or end the block (`arrange`).
    """
    layout, width = plan.layout, plan.inner_width
    first = bool(layout) and layout[0] > plan.block_axes
    per_row = _reduce(
        plan, block.reshape((width, -1) if first else (-1, width)), op, int(not first)
    )
    outer = [d for d in layout if d <= plan.block_axes]
    per_row = per_row.reshape([plan.dims[d] for d in outer])
    return jnp.transpose(per_row, np.argsort(outer)).reshape(-1)


@dataclasses.dataclass(frozen=True)
class Reduced:
    """What a stream leaves behind (NumPy arrays; keys as described in the module).

    Attributes:
        top_keys, top_rows: the `top_k` best rows, best first.
        group_keys, group_rows: the best row of every group.
        valid, feasible: configurations counted, or None when not counted.
        first_call_s: seconds of the first call (compilation and one chunk per device).
        stream_s: seconds of the whole stream.
        steady_rate: configurations per second after the first call (None if there
            was only one).
    """

    top_keys: np.ndarray
    top_rows: np.ndarray
    group_keys: np.ndarray
    group_rows: np.ndarray
    valid: int | None
    feasible: int | None
    first_call_s: float = 0.0
    stream_s: float = 0.0
    steady_rate: float | None = None


def _merge_top(keys, rows, k: int, xp=jnp):
    if xp is np:
        order = np.lexsort((rows, keys))[:k]
        return keys[order], rows[order]
    keys, rows = jax.lax.sort((keys, rows), num_keys=2)
    return keys[:k], rows[:k]


def _merge_groups(keys, rows, xp=jnp):
    # keys, rows: (lanes, groups) → lexicographic minimum over lanes.
    best = keys.min(axis=0)
    big = xp.iinfo(rows.dtype).max
    return best, xp.where(keys == best[None], rows, big).min(axis=0)


def _reduce_chunk(plan: Plan, state, keys, rows):
    """Fold one evaluated chunk (keys of `Plan.shape`, rows (R,)) into the reductions."""
    top_keys, top_rows, group_keys, group_rows, valid, feasible = state
    big = jnp.array(plan.key_max, keys.dtype)
    no_row = jnp.int32(_ROW_LIMIT)
    inside = rows < plan.rows
    if plan.counts:
        # Both counts in one pass: valid in the low 16 bits, feasible above (P < 2**15).
        one = jnp.int32(1)

        def pack(keys):
            return jnp.where(keys < 0, 65537 * one, jnp.where(keys < big, one, 0 * one))

        packed = _reduce(plan, keys.reshape(-1, plan.tallies), jnp.add, 0, pack)
        valid = valid + (packed & 0xFFFF)
        feasible = feasible + (packed >> 16)
    row_keys = _per_row(plan, keys, jnp.minimum)
    # The chunk's k best rows (top_k puts the lower index, the older row, first on ties),
    # then merged with the k kept so far.
    negated, best = jax.lax.top_k(-row_keys, min(plan.top_k, rows.shape[0]))
    top_keys, top_rows = _merge_top(
        jnp.concatenate([top_keys, -negated]),
        jnp.concatenate([top_rows, jnp.where(inside, rows, no_row)[best]]),
        plan.top_k,
    )
    # Every update below touches only the R groups of this chunk's rows (scatters with
    # out-of-range indices dropped), never the whole table.
    group = rows // plan.rows_per_group
    at = jnp.minimum(group, plan.groups - 1)
    before = group_keys[at]
    group_keys = group_keys.at[group].min(row_keys, mode="drop")
    best = group_keys[at]
    nowhere = jnp.int32(plan.groups)
    # A better key replaces the group's row; on a tie the older (smaller) row stays,
    # since each device takes its chunks in increasing row order.
    group_rows = group_rows.at[jnp.where(inside & (best < before), group, nowhere)].set(
        no_row, mode="drop"
    )
    won = inside & (row_keys == best)
    group_rows = group_rows.at[jnp.where(won, group, nowhere)].min(rows, mode="drop")
    return top_keys, top_rows, group_keys, group_rows, valid, feasible


def _lane_loop(plan: Plan, evaluate: Callable, args, start, steps, lanes: int):
    key_dtype = jnp.dtype(plan.key_dtype)
    big = jnp.array(plan.key_max, key_dtype)
    no_row = jnp.int32(_ROW_LIMIT)
    r = plan.rows_per_chunk
    lane = jax.lax.axis_index(_AXIS)

    def chunk(i):
        indices, rows, inside = chunk_indices(plan, (start + i) * lanes + lane)
        return jnp.where(inside, evaluate(args, indices, plan.shape), big), rows

    def body(i, carry):
        # Software pipelining: reduce the chunk evaluated in the previous iteration, then
        # evaluate this one. The evaluation then has a single consumer (the loop carry),
        # so XLA fuses all of it into one loop instead of splitting it between reductions.
        state, pending, pending_rows = carry
        state = _reduce_chunk(plan, state, pending, pending_rows)
        return (state, *chunk(i))

    def direct(i, state):
        return _reduce_chunk(plan, state, *chunk(i))

    state = (
        jnp.full((plan.top_k,), big),
        jnp.full((plan.top_k,), no_row),
        jnp.full((plan.groups,), big),
        jnp.full((plan.groups,), no_row),
        jnp.zeros((plan.tallies,), jnp.int32),
        jnp.zeros((plan.tallies,), jnp.int32),
    )
    if plan.pipelined:
        empty = (jnp.full(plan.shape, big), jnp.full((r,), no_row))
        state, pending, pending_rows = jax.lax.fori_loop(0, steps, body, (state, *empty))
        state = _reduce_chunk(plan, state, pending, pending_rows)
    else:
        state = jax.lax.fori_loop(0, steps, direct, state)
    top_keys, top_rows, group_keys, group_rows, valid, feasible = state
    gather = jax.lax.all_gather
    top_keys, top_rows = _merge_top(
        gather(top_keys, _AXIS).reshape(-1), gather(top_rows, _AXIS).reshape(-1), plan.top_k
    )
    group_keys, group_rows = _merge_groups(gather(group_keys, _AXIS), gather(group_rows, _AXIS))
    valid = jax.lax.psum(valid, _AXIS)
    feasible = jax.lax.psum(feasible, _AXIS)
    return top_keys, top_rows, group_keys, group_rows, valid, feasible


@functools.lru_cache(maxsize=16)
def compile_stream(plan: Plan, evaluate: Callable, devices: tuple) -> Callable:
    """A jitted ``(args, start, steps) → partial reductions`` over `devices`.

    Chunks ``start·D + j`` for ``j < steps·D`` are evaluated, D = len(devices).
    """
    mesh = Mesh(np.asarray(devices), (_AXIS,))
    lanes = len(devices)
    replicated = PartitionSpec()

    def run(args, start, steps):
        return _lane_loop(plan, evaluate, args, start, steps, lanes)

    # Every device ends with the same merged result (all_gather, then the same merge).
    sharded = jax.shard_map(
        run,
        mesh=mesh,
        in_specs=(replicated, replicated, replicated),
        out_specs=replicated,
        check_vma=False,
    )
    if devices[0].platform == "cpu":
        # Wider vectors where the CPU has them (AVX-512): about 15% faster on Zen 4.
        return _with_fallback(jax.jit(sharded, compiler_options=_CPU_OPTIONS), jax.jit(sharded))
    return jax.jit(sharded)


def _with_fallback(first: Callable, second: Callable) -> Callable:
    """`first`, or `second` for good if this XLA rejects `first`'s compiler options."""
    chosen = [first]

    def call(*args):
        try:
            return chosen[0](*args)
        except Exception as error:  # an XLA without the option: compile without it
            if chosen[0] is second or "compile option" not in str(error):
                raise
            chosen[0] = second
            return second(*args)

    return call


def _local(x) -> np.ndarray:
    # Outputs are replicated; on a multi-host cluster only the local copy is addressable.
    return np.asarray(x.addressable_data(0))


def _agreed_steps(devices: tuple, steps: int) -> int:
    """The fewest of every process's `steps`: the same next call size on all of them.

    Call sizes follow each process's own clock, but on a multi-host cluster every
    process must make the same calls (each one a collective), or the walk diverges.
    """
    if len({d.process_index for d in devices}) == 1:
        return steps
    sharding = NamedSharding(Mesh(np.asarray(devices), (_AXIS,)), PartitionSpec(_AXIS))
    local = jax.make_array_from_callback(
        (len(devices),), sharding, lambda index: np.full((1,), steps, np.int32)
    )
    return int(_local(_fewest(sharding)(local)))


@functools.lru_cache(maxsize=4)
def _fewest(sharding: NamedSharding) -> Callable:
    replicated = NamedSharding(sharding.mesh, PartitionSpec())
    return jax.jit(jnp.min, out_shardings=replicated)


def stream(
    plan: Plan,
    evaluate: Callable,
    args,
    devices,
    *,
    progress: bool | None = None,
    seconds_per_call: float = 0.5,
) -> Reduced:
    """Run `evaluate` over every row of `plan` on `devices` and reduce as it goes.

    Args:
        plan: the walk.
        evaluate: ``(args, indices, shape) → keys``: the keys, of shape `shape`, of
            the configurations at `indices` (`chunk_indices`).
        args: the arrays `evaluate` reads (replicated on every device).
        devices: the devices to shard chunks over.
        progress: print a progress line on stderr; None: only on a terminal and when
            the sweep takes more than a couple of seconds.
        seconds_per_call: aim of each call's duration (progress granularity).
    """
    lanes = len(devices)
    chunks = plan.chunks
    per_lane = -(-chunks // lanes)
    if (per_lane * lanes + 1) * plan.rows_per_chunk >= _ROW_LIMIT:
        raise ValueError(
            f"{plan.rows} rows of {plan.inner_width} configurations (with padding) exceed "
            f"the {_ROW_LIMIT} rows int32 indices reach; split the space (part of its "
            "first axis per sweep)"
            + (
                ", or give the last axes more values and the first ones fewer, so that more "
                "configurations share a row"
                if plan.inner_width < 1024
                else ""
            )
        )
    run = compile_stream(plan, evaluate, tuple(devices))
    show = sys.stderr.isatty() if progress is None else progress
    width = plan.rows * plan.inner_width / chunks  # configurations per chunk, on average
    # Counters stay below 2**31 within one call, summed over every device too.
    most_steps = max(1, (2**31 - 1) // (plan.inner_width * 2 * lanes))
    done, steps, began, first = 0, 1, time.perf_counter(), 0.0
    merged = None
    valid = feasible = 0
    while done < per_lane:
        steps = min(steps, per_lane - done, most_steps)
        tick = time.perf_counter()
        out = [_local(x) for x in run(args, np.int32(done), np.int32(steps))]
        elapsed = time.perf_counter() - tick
        first = elapsed if done == 0 else first
        done += steps
        valid += int(out[4].astype(np.int64).sum())
        feasible += int(out[5].astype(np.int64).sum())
        merged = out[:4] if merged is None else _merge_host(merged, out[:4], plan.top_k)
        if done > 1:  # the first call includes compilation
            steps = max(1, int(steps * seconds_per_call / max(elapsed, 1e-3)))
        else:
            steps = 4
        steps = _agreed_steps(tuple(devices), steps)
        total_elapsed = time.perf_counter() - began
        if show is True or (show and total_elapsed > 2.0):
            _report(done / per_lane, done * lanes * width, plan, total_elapsed)
    if show is True or (show and time.perf_counter() - began > 2.0):
        sys.stderr.write("\n")
    top_keys, top_rows, group_keys, group_rows = merged
    total = time.perf_counter() - began
    steady = (done - 1) * lanes * width / (total - first) if done > 1 else None
    return Reduced(
        top_keys=top_keys,
        top_rows=top_rows,
        group_keys=group_keys,
        group_rows=group_rows,
        valid=valid if plan.counts else None,
        feasible=feasible if plan.counts else None,
        first_call_s=first,
        stream_s=total,
        steady_rate=steady,
    )


def _merge_host(old, new, k):
    top_keys, top_rows = _merge_top(
        np.concatenate([old[0], new[0]]), np.concatenate([old[1], new[1]]), k, xp=np
    )
    group_keys, group_rows = _merge_groups(
        np.stack([old[2], new[2]]), np.stack([old[3], new[3]]), xp=np
    )
    return top_keys, top_rows, group_keys, group_rows


def _report(fraction: float, evaluated: float, plan: Plan, elapsed: float) -> None:
    total = plan.rows * plan.inner_width
    evaluated = min(evaluated, total)
    rate = evaluated / max(elapsed, 1e-9)
    eta = (total - evaluated) / max(rate, 1e-9)
    sys.stderr.write(
        f"\rsweep: {fraction:6.1%}  {evaluated:.3g}/{total:.3g} configurations  "
        f"{rate:.3g}/s  ETA {eta:.0f} s   "
    )
    sys.stderr.flush()
