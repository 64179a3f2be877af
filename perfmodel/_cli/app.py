"""The `perfmodel` command: the parser, and how errors reach the terminal.

Each group of subcommands lives in its own module exposing ``register(subparsers)``;
add new ones to `COMMAND_MODULES`. User errors (`InputError`) exit with status 2 and one
line, keyword arguments named in them shown as their flags; solver failures
(`FitError`) exit with status 1.
"""

import argparse
from collections.abc import Sequence
import importlib
import sys

from .._errors import FitError, InputError

COMMAND_MODULES = (
    ".fit",
    ".plot",
    ".analysis",
    ".collective",
    ".sweep",
)


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        # argparse's own message and exit status 2, without the usage dump of every option.
        self.exit(2, f"{self.prog}: error: {message}\n")


# Keyword arguments of the library whose flag is not ``--`` and the name with dashes.
FLAGS = {"weak": "--weak-scaling", "gpus": "--gpus"}


def flag(name: str) -> str:
    """The command-line flag of the library's keyword argument `name`."""
    return FLAGS.get(name, "--" + name.replace("_", "-"))


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="perfmodel",
        description="Fit multi-GPU scaling models to benchmarks and ask how many GPUs pay.",
    )
    parser.add_argument("--version", action="version", version=_version())
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(name, __package__).register(subparsers)
    return parser


def _version() -> str:
    from .._files import package_version

    return f"perfmodel {package_version()}"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `perfmodel` console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    import jax

    # The command line is an application: it owns the process and fits in float64.
    jax.config.update("jax_enable_x64", True)
    try:
        return int(args.run(args) or 0)
    except InputError as error:
        print(f"perfmodel: error: {error.render(flag)}", file=sys.stderr)
        return 2
    except FitError as error:
        print(f"perfmodel: fit failed: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("perfmodel: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
