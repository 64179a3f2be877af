"""Every command's arguments, parsed without JAX: one module per command group, each
exposing ``register(subparsers)``; the commands themselves run through `Handler`."""

from . import analysis, collective, fit, plot, sweep
from .handler import Handler as Handler

# Command groups in the order `perfmodel --help` lists them.
GROUPS = (fit, plot, analysis, collective, sweep)


def register_all(subparsers) -> None:
    """Add every command's parser to `subparsers`."""
    for group in GROUPS:
        group.register(subparsers)
