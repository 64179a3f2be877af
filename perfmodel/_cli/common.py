"""Helpers every command shares: option types with their ranges, parsing option values,
checking output paths, printing tables and JSON."""

import argparse
from collections.abc import Sequence
import math
import os
import sys

from .._errors import InputError
from .._files import check_output
from .._jsontext import to_json
from .._levels import HIGHEST_LEVEL, LOWEST_LEVEL
from .._text import format_table as _format_table
from .._text import WIDTH

# Multi-start points a fit may ask for: each start is a row of the vmapped optimiser.
MAX_STARTS = 10_000
MAX_SEED = 2**32 - 1


def _number_text(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def whole(minimum: int = 1, maximum: int | None = None, why: str = ""):
    """An argparse type: a whole number in ``[minimum, maximum]``; ``1e6`` is accepted as
    a million, ``2.5``, ``nan`` and ``inf`` are refused with the range in the message."""
    span = f"≥ {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"
    note = f" ({why})" if why else ""

    def parse(text: str) -> int:
        value = _number_text(text)
        if not math.isfinite(value) or value != round(value):
            raise argparse.ArgumentTypeError(f"expected a whole number {span}, got {text!r}")
        value = int(value)
        if value < minimum or (maximum is not None and value > maximum):
            raise argparse.ArgumentTypeError(f"expected a whole number {span}{note}, got {text!r}")
        return value

    parse.__name__ = "whole number"
    return parse


def number(*, above: float | None = None, at_least: float | None = None, below=None, at_most=None):
    """An argparse type: a finite number in the given range (`above`/`below` exclusive,
    `at_least`/`at_most` inclusive)."""
    parts = []
    if above is not None:
        parts.append(f"> {above:g}")
    if at_least is not None:
        parts.append(f"≥ {at_least:g}")
    if below is not None:
        parts.append(f"< {below:g}")
    if at_most is not None:
        parts.append(f"≤ {at_most:g}")
    span = " and ".join(parts)
    expected = "a finite number" + (f" {span}" if span else "")

    def parse(text: str) -> float:
        value = _number_text(text)
        ok = math.isfinite(value)
        ok = ok and (above is None or value > above) and (at_least is None or value >= at_least)
        ok = ok and (below is None or value < below) and (at_most is None or value <= at_most)
        if not ok:
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
        return value

    parse.__name__ = "number"
    return parse


POSITIVE = number(above=0)
PROBABILITY = number(above=0, below=1)
LEVEL = number(at_least=LOWEST_LEVEL, at_most=HIGHEST_LEVEL)  # an interval's probability


def parse_list(text: str, what: str, cast=float) -> list:
    """Parse ``"1,2,4"`` into numbers; an InputError names the bad item."""
    items = [item.strip() for item in text.split(",")]
    if not any(items) or not all(items):  # "8,,16": a number lost between the commas?
        raise InputError(f"{what}: expected a comma-separated list of numbers, got {text!r}")
    values = []
    for item in items:
        try:
            value = float(item)
        except ValueError:
            raise InputError(f"{what}: expected a number, got {item!r}")
        if cast is int:
            if not math.isfinite(value) or value != round(value) or value < 1:
                raise InputError(f"{what}: expected whole numbers ≥ 1, got {item!r}")
            value = int(value)
        values.append(value)
    return values


def parse_assignments(items: Sequence[str] | None, what: str) -> dict[str, str]:
    """Parse repeated ``name=value`` options into a dict of strings; the same name twice
    with different values is refused (which one was meant?)."""
    out = {}
    for item in items or ():
        name, sep, value = item.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not name or not value:
            raise InputError(f"{what}: expected name=value, got {item!r}")
        if name in out and out[name] != value:
            raise InputError(
                f"{what} {name}: given twice, as {out[name]} and {value}; give it once"
            )
        out[name] = value
    return out


def to_float(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"{what}: expected a number, got {text!r}")
    if not math.isfinite(value):
        raise InputError(f"{what}: expected a finite number, got {text!r}")
    return value


# Columns a table fits (`perfmodel._text.WIDTH`); ``--wide`` sets None: every column.
TABLE_WIDTH: int | None = WIDTH


def format_table(rows: list[dict], columns: Sequence[str] | None = None) -> str:
    """A plain, right-aligned text table of `rows` (dicts with the same keys), fitting
    `TABLE_WIDTH` columns (`perfmodel._text.format_table`)."""
    return _format_table(rows, columns, width=TABLE_WIDTH)


def message(text: str) -> None:
    """A note about what was done (``wrote fit.json``): stderr, so stdout stays results."""
    print(text, file=sys.stderr)


def warn_not_converged(converged: bool, message: str, options: str = "") -> None:
    """One line on stderr for a fit that stopped short of a minimum (`message` opens with
    why): `fit` and `fit-collective` print and write it all the same, but not silently.
    `options` names the command's constraints that can hold a fit off its data."""
    if converged:
        return
    why = message.split("; ")[0].removeprefix("not converged: ")
    held = f", or a {options} that holds the fit away from the data" if options else ""
    print(
        f"warning: the fit did not converge ({why}): the parameters may not minimise the "
        "loss. More --starts or another --seed may help; so may removing a measurement far "
        f"off the others{held}",
        file=sys.stderr,
    )


def print_json(document) -> None:
    """Print `document` as strict JSON (non-finite numbers as null), serialised in full
    before the first character is printed, so an error never leaves half a document."""
    sys.stdout.write(to_json(document))


def check_outputs(outputs: dict[str, str | None], inputs: Sequence[str | None]) -> None:
    """Refuse, before any work, every output path (flag → path; None: not asked for) that
    cannot be written or that names an input or another output of the same command."""
    given = {flag: path for flag, path in outputs.items() if path is not None}
    seen: dict[str, str] = {}
    for flag, path in given.items():
        for other_flag, other in seen.items():  # named as an output, not as an input
            if os.path.abspath(path) == os.path.abspath(other):
                raise InputError(
                    f"{path}: {other_flag} and {flag} name the same file; give each its own"
                )
        check_output(path, inputs=[*inputs, *seen.values()], what=flag)
        seen[flag] = path


def input_paths(*paths) -> list[str]:
    """The file names among `paths` (lists flattened, None and dataset names dropped)."""
    out = []
    for path in paths:
        if isinstance(path, (list, tuple)):
            out += input_paths(*path)
        elif path is not None and os.path.exists(os.fspath(path)):
            out.append(os.fspath(path))
    return out


def finite_or_none(value) -> float | None:
    """`value` as a float, or None where it is not finite: JSON has no inf, and an
    unbounded end of an interval (parameters the data leave open) is null."""
    return float(value) if math.isfinite(value) else None


def percent_text(fraction: float | None) -> str | None:
    """An efficiency (a fraction) as the tables print it, ``98.0%``, as every answer's
    sentence does; None stays None (no reference to compare with). ``--json`` keeps the
    fraction."""
    return None if fraction is None else f"{100.0 * fraction:.1f}%"
