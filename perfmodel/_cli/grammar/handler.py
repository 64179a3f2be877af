"""A command's function, named by its module, imported only when the command runs."""

import dataclasses
import importlib


@dataclasses.dataclass(frozen=True)
class Handler:
    """``args.run`` of a subcommand: calls ``perfmodel._cli.<module>.<name>(args)``.

    The command modules import JAX (2–3 s); the parsers name their functions this way so
    that ``--help`` and argument errors answer without it."""

    module: str
    name: str

    def resolve(self):
        """The function itself (imports its module)."""
        return getattr(importlib.import_module(f"perfmodel._cli.{self.module}"), self.name)

    def __call__(self, args):
        return self.resolve()(args)
