"""Plausible models around a fit (Laplace and bootstrap ensembles) and the intervals
drawn from them."""

from .draws import Ensemble as Ensemble
from .draws import ensemble as ensemble
from .intervals import get_ensemble as get_ensemble
from .intervals import KINDS as KINDS
from .intervals import log_time_draws as log_time_draws
from .intervals import parameter_intervals as parameter_intervals
from .intervals import predict_interval as predict_interval
from .problem import check_level as check_level
from .problem import METHODS as METHODS
