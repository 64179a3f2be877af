"""Questions asked of a fit: the recommendation, the optimum and the knee, sensitivity,
inverse design, what-if and which measurement to take next.

The recommendation, the optimum and the knee import no JAX (they run on the curves of
`query.evaluator`, NumPy's for a fit file read without JAX); the other questions load
on first use (PEP 562), so that ``perfmodel predict`` and ``optimal`` need no JAX.
"""

import importlib

from .measured import CHECKED_AHEAD as CHECKED_AHEAD
from .measured import measured_peak as measured_peak
from .measured import past_checked as past_checked
from .measured import peak_note as peak_note
from .query import amdahl_bound as amdahl_bound
from .query import check_count as check_count
from .query import check_finite_times as check_finite_times
from .query import count_interval_text as count_interval_text
from .query import count_interval_words as count_interval_words
from .query import diminishing_returns as diminishing_returns
from .query import DiminishingReturns as DiminishingReturns
from .query import evaluator as evaluator
from .query import GPU_BATCH as GPU_BATCH
from .query import MAX_GPUS as MAX_GPUS
from .query import optimal_gpus as optimal_gpus
from .query import Optimum as Optimum
from .query import refuse_layout_fit as refuse_layout_fit
from .recommend import one_gpu_gap as one_gpu_gap
from .recommend import recommend as recommend
from .recommend import speedup_cap as speedup_cap
from .recommend import speedup_interval as speedup_interval
from .recommendation import Alternative as Alternative
from .recommendation import one_gpu_words as one_gpu_words
from .recommendation import Recommendation as Recommendation
from .recommendation import step_seconds as step_seconds
from .recommendation import term_phrase as term_phrase

_LAZY = {
    "idle_change": ".elasticity",
    "ParameterSensitivity": ".elasticity",
    "Sensitivity": ".elasticity",
    "sensitivity": ".elasticity",
    "describe_quantity": ".inverse",
    "require": ".inverse",
    "Requirement": ".inverse",
    "TARGETS": ".inverse",
    "MeasurementValue": ".next",
    "next_measurements": ".next",
    "NextMeasurements": ".next",
    "QUANTITIES": ".next",
    "compare_fits": ".whatif",
    "Comparison": ".whatif",
    "shown_value": ".whatif",
    "what_if": ".whatif",
}


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name], __name__), name)
    globals()[name] = value
    return value
