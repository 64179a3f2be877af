"""Questions asked of a fit: the recommendation, the optimum and the knee, sensitivity,
inverse design, what-if and which measurement to take next."""

from .elasticity import ParameterSensitivity as ParameterSensitivity
from .elasticity import Sensitivity as Sensitivity
from .elasticity import sensitivity as sensitivity
from .inverse import describe_quantity as describe_quantity
from .inverse import require as require
from .inverse import Requirement as Requirement
from .inverse import TARGETS as TARGETS
from .next import MeasurementValue as MeasurementValue
from .next import next_measurements as next_measurements
from .next import NextMeasurements as NextMeasurements
from .next import QUANTITIES as QUANTITIES
from .query import amdahl_bound as amdahl_bound
from .query import check_count as check_count
from .query import count_interval_text as count_interval_text
from .query import diminishing_returns as diminishing_returns
from .query import DiminishingReturns as DiminishingReturns
from .query import MAX_GPUS as MAX_GPUS
from .query import optimal_gpus as optimal_gpus
from .query import Optimum as Optimum
from .recommend import recommend as recommend
from .recommendation import Alternative as Alternative
from .recommendation import Recommendation as Recommendation
from .recommendation import term_phrase as term_phrase
from .whatif import compare_fits as compare_fits
from .whatif import Comparison as Comparison
from .whatif import what_if as what_if
