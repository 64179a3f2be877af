"""The `perfmodel` command: the parser, and how errors reach the terminal.

Each group of subcommands has its arguments in a module of `grammar` (no JAX, so that
``--help`` and argument errors answer at once) and its code in a module here. User
errors (`InputError`, and argparse's own) exit with status 2 and one line
``perfmodel: error: ...``, keyword arguments named in them shown as their flags; solver
failures (`FitError`) exit with status 1. A reader that closes the pipe early
(``perfmodel datasets | head``) ends the command quietly with status 141 (128 +
SIGPIPE), as other command-line tools do.
"""

import argparse
from collections.abc import Sequence
import contextlib
import difflib
import os
import sys
import warnings

from .._errors import FitError, InputError
from .._files import forget_streams
from .._text import shorten_words
from .options import repeated_option


class _Parser(argparse.ArgumentParser):
    def parse_known_args(self, args=None, namespace=None):
        repeated = None if args is None else repeated_option(self, list(args))
        if repeated is not None:
            self.error(repeated)
        return super().parse_known_args(args, namespace)

    def parse_args(self, args=None, namespace=None):
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            self.error(_unrecognized(self, getattr(parsed, "command", None), extras))
        return parsed

    def error(self, message):
        # argparse's own message and exit status 2, without the usage dump of every option,
        # and with the one prefix every refusal has (the subcommand after it).
        command = self.prog.partition(" ")[2]
        where = f"{command}: " if command else ""
        self.exit(2, f"perfmodel: error: {where}{message}\n")


def _unrecognized(parser, command: str | None, extras: list[str]) -> str:
    """argparse's "unrecognized arguments" with the subcommand that refused them and, for
    an option within a typo of one of its own, that option ("--intervall 0.9" was
    refused without either, review of 2026-12-06)."""
    message = f"unrecognized arguments: {' '.join(extras)}"
    sub = None
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and command in action.choices:
            sub = action.choices[command]
    if sub is None:
        return message
    known = [o for action in sub._actions for o in action.option_strings if o.startswith("--")]
    guesses = []
    for extra in extras:
        option = extra.partition("=")[0]
        close = difflib.get_close_matches(option, known, n=1, cutoff=0.75)
        if option.startswith("--") and close:
            guesses.append(f"{option}: did you mean {close[0]}?")
    hint = f" ({'; '.join(guesses)})" if guesses else ""
    return f"{command}: {message}{hint}"


# Keyword arguments of the library whose flag is not ``--`` and the name with dashes.
FLAGS = {
    "weak": "--weak-scaling",
    "gpus": "--gpus",
    "bounds": "--bound",
    "fix": "--fix",
    "deadline_s": "--deadline",
    "budget_per_hour": "--budget",
    "n_starts": "--starts",
    "top_k": "--top",
    "batches": "--global-batch",
    "samples_per_unit": "--samples-per-epoch",
}
SIGPIPE_STATUS = 141
REPLAYED = ("fit", "demo")  # the commands `replay` answers again (its COMMANDS)


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


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command; it imports no JAX (`grammar`): a command's module is
    imported when the command runs."""
    parser = _Parser(
        prog="perfmodel",
        description="Fit multi-GPU scaling models to benchmarks and ask how many GPUs pay.",
    )
    parser.add_argument("--version", action=_Version)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    from . import grammar  # not for a replayed `fit` or a NumPy `predict` (~0.1 s)

    grammar.register_all(subparsers)
    for sub in subparsers.choices.values():
        if sub.add_help:
            sub.add_argument(
                "--wide", action="store_true", help="print tables at full width (default: 100)"
            )
    return parser


def _printable_streams() -> None:
    """Print what cannot be encoded (a file name that is not UTF-8, read as lone
    surrogates; a string so edited into a fit file) as backslash escapes rather than
    fail half-way with a UnicodeEncodeError."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):
                reconfigure(errors="backslashreplace")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `perfmodel` console script; returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    _printable_streams()
    forget_streams()  # `-` is this call's standard input, not an earlier call's
    # A repeated `fit` or `demo` prints and writes what its recorded run did (`replay`).
    key = replay = None
    if argv and argv[0] in REPLAYED:
        from . import replay

        key = replay.call_key(argv)
    try:
        status = None if key is None else replay.answer(key)
        if status is not None:
            return status
    except BrokenPipeError:
        _silence_stdout()
        return SIGPIPE_STATUS
    # `predict` and `optimal` of the fits NumPy evaluates answer without JAX (`quick`).
    args = _quick_args(argv)
    if args is None:
        parser = build_parser()
        args = parser.parse_args(argv)
        _start_jax()
    from . import common

    common.TABLE_WIDTH = None if args.wide else common.WIDTH
    # NumPy's overflow warnings name perfmodel's source lines, not the input: an extreme
    # --set printed three of them over a table; what the answer lost is said in it.
    warnings.filterwarnings(
        "ignore", category=RuntimeWarning, module=r"(perfmodel|numpy|matplotlib)"
    )
    try:
        if key is None:
            status = int(args.run(args) or 0)
            sys.stdout.flush()  # a closed pipe shows here, not at exit
            return status
        with replay.recording(argv, key) as record:
            status = int(args.run(args) or 0)
            sys.stdout.flush()
        record.keep(args, status)
        return status
    except BrokenPipeError:
        _silence_stdout()
        return SIGPIPE_STATUS
    except InputError as error:
        print(f"perfmodel: error: {shorten_words(error.render(flag))}", file=sys.stderr)
        return 2
    except FitError as error:
        print(f"perfmodel: fit failed: {shorten_words(str(error))}", file=sys.stderr)
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


def _quick_args(argv: Sequence[str]):
    """`quick.quick_args`, or None (the full parser and JAX), also for any error in
    reading the fit there: the JAX path then reports it."""
    if not argv or argv[0] not in ("predict", "optimal"):
        return None
    from .quick import quick_args

    try:
        return quick_args(argv)
    except Exception:
        return None


def _start_jax() -> None:
    """The command line is an application: it owns the process and fits in float64, and
    keeps what it compiles for the next call (PERFMODEL_NO_CACHE=1 turns that off)."""
    import jax

    from .cache import enable_compilation_cache

    jax.config.update("jax_enable_x64", True)
    enable_compilation_cache()


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
