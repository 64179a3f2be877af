"""Why a layout space holds no valid layout: the checks its configurations fail, from a
sample of them (`layout_status`), so that "0 valid layouts" comes with a reason."""

import numpy as np

from .._config import Config, CONFIG_FIELDS, with_defaults
from .._fitting import FitResult
from .._presets import hybrid_kind
from .._terms import layout_checks, OUT_OF_MEMORY, REASONS


def invalid_reasons(model_or_fit, axes: dict, fixed: dict, samples: int = 4096) -> list[str]:
    """The checks (`REASONS`) that sampled configurations of a space fail, most often
    failed first, each with the share failing it (``"heads do not divide hidden
    (all)"``: a check every one fails is the one to fix, and only those are listed, else
    the three most failed); [] without layout checks.

    `samples` configurations are drawn uniformly (seeded) from the axes, with the fixed
    values and, for a fit, its run's defaults.
    """
    fit = model_or_fit if isinstance(model_or_fit, FitResult) else None
    kind = hybrid_kind(fit.model if fit is not None else model_or_fit)
    if not kind:
        return []
    rng = np.random.default_rng(0)
    given = {k: v for k, v in fixed.items() if k in CONFIG_FIELDS}
    for name, values in axes.items():
        if name in CONFIG_FIELDS:
            values = np.asarray(values, dtype=np.float64)
            given[name] = values[rng.integers(0, len(values), samples)]
    values = with_defaults(fit.config_defaults if fit is not None else {}, given)
    shape = (samples,)
    config = Config(**{k: np.broadcast_to(np.asarray(v, float), shape) for k, v in values.items()})
    checks = layout_checks(config, kind)[: OUT_OF_MEMORY - 1]  # the layout's, not memory
    failing = [
        (float(np.mean(~np.broadcast_to(np.asarray(ok), shape))), REASONS[i + 1])
        for i, ok in enumerate(checks)
    ]
    failing = sorted((share, reason) for share, reason in failing if share > 0)[::-1]
    always = [item for item in failing if item[0] == 1.0]
    return [f"{reason} ({_share(share)})" for share, reason in always or failing[:3]]


def _share(share: float) -> str:
    return "all" if share == 1.0 else "<1%" if share < 0.01 else f"{share:.0%}"
