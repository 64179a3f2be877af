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

# Each module's commands in the order it registers them, with their one-line help, so
# that `perfmodel --help` and every command but the one run import no command module
# (they import JAX). A module missing here is imported on every call (a test checks
# that this table matches what the modules register).
COMMANDS = {
    ".fit": {
        "fit": "fit a model to a benchmark CSV",
        "predict": "predict step time at GPU counts",
        "optimal": "the GPU count worth buying, the fastest and the cheapest",
        "demo": "the main job on a dataset shipped with perfmodel",
        "datasets": "list the datasets shipped with perfmodel",
    },
    ".plot": {
        "plot": "plot a fit: curve, speedup, efficiency, breakdown",
        "report": "one self-contained HTML (or Markdown) report",
    },
    ".analysis": {
        "explain": "time per term and what each parameter buys",
        "require": "the parameter value (or GPU count) a target needs",
        "whatif": "change parameters and compare before and after",
        "next": "which GPU count to benchmark next",
    },
    ".collective": {
        "fit-collective": "fit latency and bandwidth of collectives to nccl-tests logs",
    },
    ".sweep": {"sweep": "sweep a design space described in a TOML file"},
}


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        # argparse's own message and exit status 2, without the usage dump of every option.
        self.exit(2, f"{self.prog}: error: {message}\n")


# Keyword arguments of the library whose flag is not ``--`` and the name with dashes.
FLAGS = {"weak": "--weak-scaling", "gpus": "--gpus"}


def flag(name: str) -> str:
    """The command-line flag of the library's keyword argument `name`."""
    return FLAGS.get(name, "--" + name.replace("_", "-"))


class _Version(argparse.Action):
    """``--version``, reading the installed version only when asked (~70 ms)."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, help="show the version and exit")

    def __call__(self, parser, namespace, values, option_string=None):
        from .._files import package_version

        parser.exit(0, f"perfmodel {package_version()}\n")


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser; with `argv`, only the module of the command in it is imported (the
    others get placeholders that carry their name and help), without it every one."""
    parser = _Parser(
        prog="perfmodel",
        description="Fit multi-GPU scaling models to benchmarks and ask how many GPUs pay.",
    )
    parser.add_argument("--version", action=_Version)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    wanted = None if argv is None else next((a for a in argv if not a.startswith("-")), "")
    for name in COMMAND_MODULES:
        listed = COMMANDS.get(name)
        if listed is None or wanted is None or wanted in listed:
            importlib.import_module(name, __package__).register(subparsers)
        else:
            for command, text in listed.items():
                subparsers.add_parser(command, help=text, add_help=False)
    for sub in subparsers.choices.values():
        if sub.add_help:
            sub.add_argument(
                "--wide", action="store_true", help="print tables at full width (default: 100)"
            )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `perfmodel` console script; returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    from . import common
    from .cache import enable_compilation_cache

    common.TABLE_WIDTH = None if args.wide else common.WIDTH
    import jax

    # The command line is an application: it owns the process and fits in float64, and
    # keeps what it compiles for the next call (PERFMODEL_NO_CACHE=1 turns that off).
    jax.config.update("jax_enable_x64", True)
    enable_compilation_cache()
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
