"""Fit files evaluated without JAX: the NumPy path of ``perfmodel predict`` and
``optimal`` for the default blend and the common single-curve families (a test checks
that it imports no JAX and answers as the JAX path does). A fit evaluates the same
families here too (`perfmodel._fitting.twin`), with PMNF."""

from .dual import Dual as Dual
from .fit import from_document as from_document
from .fit import read_saved as read_saved
from .fit import SAVED_FAMILIES as SAVED_FAMILIES
from .fit import SavedFit as SavedFit
from .model import Blend as Blend
from .model import family as family
from .model import FIT_FAMILIES as FIT_FAMILIES
from .model import REQUIRES as REQUIRES
