"""Every command's arguments, parsed without JAX: one module per command group, each
exposing ``register(subparsers)``; the commands themselves run through `Handler`.

Importing this package imports none of those modules (a repeated `fit` replays its
record and `predict` of a saved fit answers without a parser of every command)."""

import importlib

from .handler import Handler as Handler

# Command groups in the order `perfmodel --help` lists them.
GROUPS = ("fit", "plot", "analysis", "collective", "sweep")


def register_all(subparsers) -> None:
    """Add every command's parser to `subparsers`."""
    for group in GROUPS:
        importlib.import_module(f"{__name__}.{group}").register(subparsers)
