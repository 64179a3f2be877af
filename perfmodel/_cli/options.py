"""Checks of the command line that argparse does not make."""

import argparse


def repeated_option(parser: argparse.ArgumentParser, args: list) -> str | None:
    """The refusal of an option of one value given more than once in `args` (the last
    silently won: ``--gpus 8 --gpus 16`` answered 16 alone), else None. Options that
    gather (``--set``, ``--fix``, ``--bound``) and flags may repeat."""
    args = args[: args.index("--")] if "--" in args else args
    for action in parser._actions:
        if not isinstance(action, argparse._StoreAction) or not action.option_strings:
            continue
        names = action.option_strings
        given = [a for a in args if a in names or a.split("=", 1)[0] in names]
        if len(given) > 1:
            return f"{names[-1]} given {len(given)} times; give it once"
    return None
