"""The streaming engine behind `sweep`: grid rows decoded, evaluated and reduced in jit.

The grid is split into *outer* axes, enumerated by a row index, and *inner* axes, whose
product P (about a thousand configurations) is the width of every row. A chunk is `R`
consecutive rows, decoded inside `jit` from their index by integer div/mod, and
evaluated as one broadcast block of keys ``(P, R)`` — the evaluator gives every inner
axis its own dimension and the rows the last one, so XLA computes each quantity on the
sub-grid of the axes it depends on and vectorises along the rows — then reduced to the
best key of each row, so no more than one chunk ever exists. A `jax.lax.fori_loop` runs
many chunks per call, and `jax.shard_map` runs one such loop on every device, device d
taking chunks ``d, d + D, d + 2D, …``; the per-device results are gathered and merged
inside the call.

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
from jax.sharding import Mesh, PartitionSpec
import numpy as np

_AXIS = "devices"
_CPU_OPTIONS = {"xla_cpu_prefer_vector_width": 512}
_ROW_LIMIT = 2**31 - 1


@dataclasses.dataclass(frozen=True)
class Plan:
    """How a grid is walked: sizes only, no values (all static under `jit`).

    Attributes:
        outer_sizes: sizes of the outer axes, slowest first.
        inner_width: P, configurations per row (product of the inner axes).
        group_axes: how many of the leading outer axes form a group.
        rows_per_chunk: R, rows evaluated at once on one device.
        top_k: how many best rows to keep.
        key_dtype: ``"int32"`` (float32 sweeps) or ``"int64"`` (float64 sweeps).
        counts: also count valid and feasible configurations (costs a pass).
        pipelined: materialise each chunk's keys and reduce them in the next iteration
            (CPUs, where a chunk sits in cache); otherwise reduce them where they are
            computed (GPUs, where writing them out would cost memory bandwidth).
    """

    outer_sizes: tuple[int, ...]
    inner_width: int
    group_axes: int
    rows_per_chunk: int
    top_k: int
    key_dtype: str
    counts: bool
    pipelined: bool = True

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


def outer_digits(plan: Plan, rows: jax.Array) -> list[jax.Array]:
    """Index of each outer axis for int32 row indices (div/mod by constants)."""
    return [(rows // s) % n for s, n in zip(plan.strides, plan.outer_sizes)]


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
    """Fold one evaluated chunk (keys (P, R), rows (R,)) into the running reductions."""
    top_keys, top_rows, group_keys, group_rows, valid, feasible = state
    big = jnp.array(plan.key_max, keys.dtype)
    no_row = jnp.int32(_ROW_LIMIT)
    inside = rows < plan.rows
    if plan.counts:
        # Both counts in one pass: valid in the low 16 bits, feasible above (P < 2**15).
        one = jnp.int32(1)
        packed = jnp.where(keys < 0, 65537 * one, jnp.where(keys < big, one, 0 * one))
        packed = packed.sum(axis=0, dtype=jnp.int32)
        valid = valid + (packed & 0xFFFF)
        feasible = feasible + (packed >> 16)
    row_keys = keys.min(axis=0)
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
    local = jnp.arange(r, dtype=jnp.int32)

    def chunk(i):
        rows = ((start + i) * lanes + lane) * r + local
        return jnp.where((rows < plan.rows)[None, :], evaluate(args, rows), big), rows

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
        jnp.zeros((r,), jnp.int32),
        jnp.zeros((r,), jnp.int32),
    )
    if plan.pipelined:
        empty = (jnp.full((plan.inner_width, r), big), jnp.full((r,), no_row))
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
        evaluate: ``(args, rows) → keys``: int32 rows of shape (R,) to keys (P, R).
        args: the arrays `evaluate` reads (replicated on every device).
        devices: the devices to shard chunks over.
        progress: print a progress line on stderr; None: only on a terminal and when
            the sweep takes more than a couple of seconds.
        seconds_per_call: aim of each call's duration (progress granularity).
    """
    lanes = len(devices)
    chunks = -(-plan.rows // plan.rows_per_chunk)
    per_lane = -(-chunks // lanes)
    if (per_lane * lanes + 1) * plan.rows_per_chunk >= _ROW_LIMIT:
        raise ValueError("too many rows for int32 indices")
    run = compile_stream(plan, evaluate, tuple(devices))
    show = sys.stderr.isatty() if progress is None else progress
    width = plan.rows_per_chunk * plan.inner_width
    # Per-row counters stay below 2**31 within one call.
    most_steps = max(1, (2**31 - 1) // (plan.inner_width * 2))
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


def _report(fraction: float, evaluated: int, plan: Plan, elapsed: float) -> None:
    total = plan.rows * plan.inner_width
    evaluated = min(evaluated, total)
    rate = evaluated / max(elapsed, 1e-9)
    eta = (total - evaluated) / max(rate, 1e-9)
    sys.stderr.write(
        f"\rsweep: {fraction:6.1%}  {evaluated:.3g}/{total:.3g} configurations  "
        f"{rate:.3g}/s  ETA {eta:.0f} s   "
    )
    sys.stderr.flush()
