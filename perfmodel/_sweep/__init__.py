"""Design-space sweeps: chunked, sharded evaluation of a model over a grid, reduced as it
streams (best per GPU count, top-k, Pareto front)."""

from .._config import LAYOUT_FIELDS as LAYOUT_FIELDS
from .alternatives import ALTERNATIVE_COLUMNS as ALTERNATIVE_COLUMNS
from .alternatives import layout_alternatives as layout_alternatives
from .invalid import invalid_reasons as invalid_reasons
from .robustness import pick_robustness as pick_robustness
from .run import inherited_recipe as inherited_recipe
from .run import OBJECTIVES as OBJECTIVES
from .run import PRECISIONS as PRECISIONS
from .run import sweep as sweep
from .run import SweepResult as SweepResult
from .run import WHOLE_FIELDS as WHOLE_FIELDS
from .space import DEFAULT_MAX_CONFIGS as DEFAULT_MAX_CONFIGS
from .space import load_space as load_space
from .space import MAX_AXIS_VALUES as MAX_AXIS_VALUES
from .space import read_space_document as read_space_document
from .space import Space as Space
