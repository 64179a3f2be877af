"""Collectives measured by nccl-tests: the log parser, per-group α-β fits, their files,
link parameters for training models, and joint fits with step times."""

from .fit import CollectiveFit as CollectiveFit
from .fit import CollectiveGroupFit as CollectiveGroupFit
from .fit import FACTORS as FACTORS
from .fit import fit_collective as fit_collective
from .io import collective_fit_to_dict as collective_fit_to_dict
from .io import load_collective_fit as load_collective_fit
from .io import save_collective_fit as save_collective_fit
from .joint import fit_joint as fit_joint
from .joint import gpus_per_node_of as gpus_per_node_of
from .joint import JointFit as JointFit
from .links import link_parameters as link_parameters
from .nccl import parse_nccl_tests as parse_nccl_tests
