"""Layout settings that do nothing where they are set, so that a sweep's tables list
one layout once.

Sequence parallelism at tp 1 is off (Megatron-LM turns it off: there is no tensor-parallel
group to split LayerNorm and dropout over), and ZeRO at one data-parallel replica
(``gpus = tp·pp``) has nothing to shard over. Both evaluate to the step time of the
layout without them, so a sweep over those axes would rank the same layout two to
eight times.
"""

from collections.abc import Mapping

import numpy as np


def canonical_layouts(values: Mapping[str, object], fixed: Mapping[str, float]) -> list[tuple]:
    """Each configuration's values with its no-op settings undone.

    Args:
        values: ``{name: values}``, one array (or scalar) per field or parameter, the
            configurations side by side.
        fixed: the values every configuration shares (read for tp, pp and gpus where
            `values` lacks them).

    Returns:
        One tuple of `values`' fields per configuration, equal for two configurations
        exactly when they differ only in settings that do nothing.
    """
    at = {n: np.atleast_1d(np.asarray(v, float)) for n, v in values.items()}
    (size,) = np.broadcast_shapes(*(v.shape for v in at.values())) if at else (0,)
    at = {n: np.broadcast_to(v, (size,)).copy() for n, v in at.items()}

    def field(name):
        return at[name] if name in at else np.full(size, float(fixed.get(name, 1.0)))

    tp, pp = field("tp"), field("pp")
    if "seq_parallel" in at:
        at["seq_parallel"][tp == 1.0] = 0.0
    if "zero" in at and ("gpus" in at or "gpus" in fixed):
        at["zero"][field("gpus") == tp * pp] = 0.0
    return list(zip(*(at[n].tolist() for n in at)))


def copies_per_layout(axes: Mapping[str, object], fixed: Mapping[str, float]) -> int:
    """How many configurations of `axes` can be one layout under other names: the
    number of sequence-parallel values swept where tp = 1 can occur, times the number of
    ZeRO stages swept where one replica (gpus = tp·pp) can occur; 1 otherwise."""

    def values(name):
        return np.unique(np.atleast_1d(np.asarray(axes.get(name, fixed.get(name, 1.0)), float)))

    tp, pp, gpus = values("tp"), values("pp"), values("gpus")
    count = 1
    if "seq_parallel" in axes and 1.0 in tp:
        count *= len(np.atleast_1d(axes["seq_parallel"]))
    if "zero" in axes and "gpus" in {*axes, *fixed}:
        # tp·pp against the counts; a product too large to form is taken to occur.
        one_replica = tp.size * pp.size > 10**6 or bool(
            np.isin(np.multiply.outer(tp, pp), gpus).any()
        )
        count *= len(np.atleast_1d(axes["zero"])) if one_replica else 1
    return count
