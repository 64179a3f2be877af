"""The `perfmodel` command: the parser, and how errors reach the terminal.

Each group of subcommands lives in its own module exposing ``register(subparsers)``;
add new ones to `COMMAND_MODULES`. User errors (`InputError`, and argparse's own) exit
with status 2 and one line ``perfmodel: error: ...``, keyword arguments named in them
shown as their flags; solver failures (`FitError`) exit with status 1. A reader that
closes the pipe early (``perfmodel datasets | head``) ends the command quietly with
status 141 (128 + SIGPIPE), as other command-line tools do.
"""

import argparse
from collections.abc import Sequence
import importlib
import os
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
        # argparse's own message and exit status 2, without the usage dump of every option,
        # and with the one prefix every refusal has (the subcommand after it).
        command = self.prog.partition(" ")[2]
        where = f"{command}: " if command else ""
        self.exit(2, f"perfmodel: error: {where}{message}\n")


# Keyword arguments of the library whose flag is not ``--`` and the name with dashes.
FLAGS = {
    "weak": "--weak-scaling",
    "gpus": "--gpus",
    "bounds": "--bound",
    "fix": "--fix",
    "deadline_s": "--deadline",
    "n_starts": "--starts",
    "top_k": "--top",
}
SIGPIPE_STATUS = 141


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
        status = int(args.run(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, not at exit
        return status
    except BrokenPipeError:
        _silence_stdout()
        return SIGPIPE_STATUS
    except InputError as error:
        print(f"perfmodel: error: {error.render(flag)}", file=sys.stderr)
        return 2
    except FitError as error:
        print(f"perfmodel: fit failed: {error}", file=sys.stderr)
        return 1
    except OSError as error:  # the readers and writers name their paths; this is the net
        where = f"{error.filename}: " if error.filename else ""
        print(f"perfmodel: error: {where}{error.strerror or error}", file=sys.stderr)
        return 2
    except RecursionError:
        print("perfmodel: error: input nested too deeply", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("perfmodel: interrupted", file=sys.stderr)
        return 130


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush at exit finds no closed
    pipe (it would print "Exception ignored ... BrokenPipeError")."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # not a real file (tests capture it)
        pass


if __name__ == "__main__":
    sys.exit(main())
