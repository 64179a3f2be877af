"""`perfmodel predict` and `optimal` without JAX, for the fits NumPy can evaluate.

`quick_args(argv)` parses the common forms of the two commands (the options they share
with the full parser, `perfmodel._cli.answers`) and reads the fit file with
`perfmodel._saved.read_saved`. It returns None for anything else: another command,
``--help``, ``--set``, layout or time-to-train options, an abbreviated or unknown
option, a value the full parser refuses, a fit file this perfmodel has not yet checked
in full (`perfmodel._cli.cache.was_checked`: a new or edited file), a family or interval
NumPy does not evaluate, Laplace draws not yet in the cache. `perfmodel._cli.app.main`
then takes the JAX path, which answers (or refuses) in full; what both paths print is the
same code (`answers.print_predictions`, `answers.answer_optimal`).
"""

import argparse
from collections.abc import Sequence

from .._levels import KINDS
from .._saved import read_saved
from .answers import (
    answer_optimal,
    print_predictions,
    refuse_global_batch,
)
from .cache import cache_dir, cache_off, was_checked
from .grammar.shared import add_interval_options, add_optimal_options
from .options import repeated_option


class _Refused(Exception):
    """The quick parser does not take these arguments: the full one decides."""


class _Parser(argparse.ArgumentParser):
    def parse_known_args(self, args=None, namespace=None):
        if args is not None and repeated_option(self, list(args)) is not None:
            raise _Refused("repeated")  # the full parser says which
        return super().parse_known_args(args, namespace)

    def error(self, message):
        raise _Refused(message)

    def exit(self, status=0, message=None):
        raise _Refused(message)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="perfmodel", add_help=False, allow_abbrev=False)
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    p = commands.add_parser("predict", add_help=False, allow_abbrev=False)
    p.add_argument("fit")
    p.add_argument("--gpus")
    add_interval_options(p, "")
    p.add_argument("--kind", default="prediction", choices=KINDS)
    p.add_argument("--json", action="store_true")
    p.add_argument("--wide", action="store_true")
    p.set_defaults(run=_run_predict)
    p = commands.add_parser("optimal", add_help=False, allow_abbrev=False)
    p.add_argument("fit")
    add_optimal_options(p)
    add_interval_options(p, "")
    p.add_argument("--json", action="store_true")
    p.add_argument("--wide", action="store_true")
    p.set_defaults(run=_run_optimal)
    return parser


def ensembles() -> str | None:
    """The folder of the cached draws (`perfmodel._cli.draws`), None when it is off."""
    if cache_off():
        return None
    return str(cache_dir() / "ensembles")


def quick_args(argv: Sequence[str]) -> argparse.Namespace | None:
    """The parsed arguments with the fit read without JAX (``args.saved``), or None
    when the JAX path must answer (module docstring)."""
    if not argv or argv[0] not in ("predict", "optimal"):
        return None
    try:
        args = _parser().parse_args(list(argv))
    except _Refused:
        return None
    if not was_checked(args.fit):  # a new or edited file: the schema's full check first
        return None
    saved = read_saved(args.fit, ensembles())
    if saved is None:
        return None
    method = args.method or saved.intervals
    if method != saved.intervals:
        return None
    if args.command == "predict" and not args.gpus:
        return None
    if args.command == "optimal" and args.objective is None:
        if "time_to_train" in saved.document:  # its default is time to train (`fit`)
            return None
        args.objective = "time"
    if args.command == "optimal" and args.objective not in ("time", "cost"):
        return None
    needs_draws = args.command == "optimal" or args.interval is not None
    if needs_draws and method != "conformal":
        try:
            saved.get_ensemble(method, None)  # the draws `perfmodel fit` cached
        except KeyError:
            return None
    if args.command == "predict" and args.interval is not None:
        squared = saved.document["loss"]["kind"] == "squared"
        if (method == "conformal" and args.kind != "prediction") or squared:
            return None
    args.saved = saved
    return args


def _run_predict(args) -> int:
    refuse_global_batch(args, args.saved)
    return print_predictions(args, args.saved)


def _run_optimal(args) -> int:
    return answer_optimal(args, args.saved)
