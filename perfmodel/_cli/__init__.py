"""The `perfmodel` command line: one module per command group, argparse stays here."""

from .main import main as main
