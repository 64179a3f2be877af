"""Whether a layout search's pick rests on a parameter the fit did not determine.

A hybrid fit fixes what its runs leave open (link bandwidths, the GEMM size scale) at
published numbers. The pick of a layout search can hinge on one of them: 70B-model runs
at one layout fitted e_max alone, and halving the network bandwidth they were fixed at
made another layout of the list 18% faster than the pick. Each fixed parameter is
halved and doubled in turn, the pick and its next distinct layouts
(`layout_alternatives`) evaluated again, and every change of winner reported.
"""

from collections.abc import Mapping, Sequence

import jax
import numpy as np

from .._config import Config

# Parameters a hybrid fit may fix whose value moves layouts against each other. The
# spec-sheet peak (only its product with e_max matters) and the latencies (negligible at
# training message sizes) are left out.
VARIED = ("compute.d0", "tensor.bandwidth", "compute.hbm_bandwidth", "allreduce.bandwidth_inter")
FACTORS = (0.5, 2.0)
# A winner by less than this share is a tie, not a change of pick (the 2% of issue 10's
# layout agreement).
MARGIN = 0.02


def pick_robustness(
    model,
    assumed: Sequence[str],
    fixed: Mapping[str, float],
    layouts: Sequence[Mapping[str, float]],
) -> dict:
    """How the ranking of `layouts` (the pick first) moves with each assumed parameter.

    Args:
        model: the fitted hybrid model (`ScalingModel`).
        assumed: the parameters the fit held at published values because its runs did
            not determine them (not those the user fixed or set); those of `VARIED` are
            tried.
        fixed: the configuration fields the layouts share (the search's `fixed`).
        layouts: the pick, then its alternatives: layout fields and ``gpus``.

    Returns:
        ``{"tried": [names], "factors": FACTORS, "changes": [...]}``; a change per
        (parameter, factor) under which another layout is `MARGIN` or more faster than
        the pick:
        ``parameter``, ``factor``, ``value`` (the changed one), ``layout`` (the new
        winner's fields), ``time_s`` (its step time) and ``pick_time_s``.
    """
    present = model.parameters()
    tried = [n for n in VARIED if n in present and n in assumed]
    if len(layouts) < 2:  # nothing to rank: no claim either way
        tried = []
    if not tried:
        return {"tried": tried, "factors": list(FACTORS), "changes": []}
    names = sorted({n for layout in layouts for n in layout})
    columns = {n: np.asarray([float(layout[n]) for layout in layouts]) for n in names}
    changes = []
    with jax.enable_x64(True):
        base = {k: np.asarray(v, float) for k, v in fixed.items() if k not in columns}
        config = Config(**base, **columns)
        for name in tried:
            for factor in FACTORS:
                value = float(present[name]) * factor
                times = np.asarray(model.with_parameters({name: value})(config), float)
                winner = int(np.argmin(times))
                if winner != 0 and times[winner] < times[0] * (1.0 - MARGIN):
                    changes.append(
                        {
                            "parameter": name,
                            "factor": factor,
                            "value": value,
                            "unit": model.parameter_specs()[name].unit,
                            "layout": {n: float(columns[n][winner]) for n in names if n != "gpus"},
                            "time_s": float(times[winner]),
                            "pick_time_s": float(times[0]),
                        }
                    )
    return {"tried": tried, "factors": list(FACTORS), "changes": changes}
