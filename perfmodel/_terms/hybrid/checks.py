"""Which layouts are valid, and which fit in memory (`layout_status`)."""

import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Bool, Float, Int
import numpy as np

from ..._config import Config
from .legacy import basic_memory_per_gpu
from .memory import memory_per_gpu

# Why a layout is marked; code 0 is a valid, feasible layout.
REASONS: tuple[str, ...] = (
    "",
    "tp·pp does not divide gpus",
    "tp does not divide gpus_per_node",
    "pp does not divide layers",
    "global_batch does not split into whole micro-batches per replica",
    "tp does not divide heads (or query groups)",
    "heads do not divide hidden, or query groups do not divide heads",
    "pp·interleave does not divide layers",
    "interleaving needs pp > 2 and micro-batches a multiple of pp",
    "ZeRO-2/3 with pp > 1 (DeepSpeed refuses it)",
    "out of memory",
)
OUT_OF_MEMORY = REASONS.index("out of memory")
KINDS = ("hybrid", "hybrid_basic", "")


def _whole(x: Float[ArrayLike, "..."]) -> Bool[Array, "..."]:
    # floor, not remainder: XLA's float remainder is a scalar libm call on the CPU.
    return (x == jnp.floor(x)) & (x >= 1.0)


def hybrid_memory(config: Config, kind: str = "hybrid") -> Float[Array, "..."]:
    """Bytes per GPU of the `kind` family: `memory_per_gpu` (``"hybrid"``) or
    `basic_memory_per_gpu` (``"hybrid_basic"``)."""
    if kind == "hybrid_basic":
        return basic_memory_per_gpu(config)["total"]
    return memory_per_gpu(config)["total"]


def layout_checks(config: Config, kind: str = "hybrid") -> tuple[Bool[ArrayLike, "..."], ...]:
    """One boolean per entry of `REASONS[1:]`, True where that check passes.

    `kind` is the family whose memory is checked (``"hybrid"``, ``"hybrid_basic"``); with
    ``""`` only the parallel layout is checked (the batch, layer, head and memory checks
    pass), for models that do not read them.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; valid: {KINDS}")
    layout = (_whole(config.dp), _whole(config.gpus_per_node / config.tp))
    if not kind:
        return (*layout, True, True, True, True, True, True, True, True)
    m, p, v = config.num_microbatches, config.pp, config.interleave
    interleaved = (v <= 1.0) | ((p > 2.0) & _whole(m / p))
    return (
        *layout,
        _whole(config.layers / p),
        _whole(config.samples_per_microbatch) & _whole(m),
        ((config.heads <= 0.0) | _whole(config.heads / config.tp))
        & ((config.query_groups <= 0.0) | _whole(config.query_groups / config.tp)),
        ((config.heads <= 0.0) | _whole(config.hidden / jnp.maximum(config.heads, 1.0)))
        & (
            (config.query_groups <= 0.0)
            | _whole(config.head_count / jnp.maximum(config.query_groups, 1.0))
        ),
        _whole(config.layers / (p * v)),
        interleaved,
        (config.zero < 2.0) | (p <= 1.0),
        hybrid_memory(config, kind) <= config.gpu_memory_bytes,
    )


def layout_status(config: Config, kind: str = "hybrid") -> Int[Array, "..."]:
    """Index into `REASONS` of the first failed check; 0 when valid and feasible.

    Codes below `OUT_OF_MEMORY` are invalid layouts; `OUT_OF_MEMORY` is a valid layout
    that does not fit ``gpu_memory_bytes``. `kind` as in `layout_checks`.

    Example:
        >>> import perfmodel as pm
        >>> REASONS[int(layout_status(pm.Config(gpus=8.0, tp=3.0)))]
        'tp·pp does not divide gpus'
    """
    checks = layout_checks(config, kind)
    code = jnp.zeros(jnp.shape(config.gpus), dtype=jnp.int32)
    for index in reversed(range(len(checks))):
        code = jnp.where(checks[index], code, index + 1)
    return code


def first_invalid_layout(config: Config, kind: str = "hybrid") -> tuple[int, str] | None:
    """The first run of `config` whose layout cannot run at all (a code of
    `layout_status` below `OUT_OF_MEMORY`), as (its index, the reason from `REASONS`);
    None when every layout can run. Running out of memory is not counted: a measured
    run's memory model may be off, its layout may not.

    Example:
        >>> import perfmodel as pm
        >>> first_invalid_layout(pm.Config(gpus=8.0, tp=3.0))
        (0, 'tp·pp does not divide gpus')
    """
    codes = np.ravel(np.asarray(layout_status(config, kind)))
    bad = np.flatnonzero((codes > 0) & (codes < OUT_OF_MEMORY))
    if not len(bad):
        return None
    return int(bad[0]), REASONS[int(codes[bad[0]])]
