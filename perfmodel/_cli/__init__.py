"""The `perfmodel` command line: one module per command group, argparse stays here."""

from .app import main as main
