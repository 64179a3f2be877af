"""Helpers every command shares: parsing option values, printing tables and JSON."""

from collections.abc import Sequence
import json
import math
import sys

from .._errors import InputError
from .._text import format_table as _format_table
from .._text import WIDTH


def parse_list(text: str, what: str, cast=float) -> list:
    """Parse ``"1,2,4"`` into numbers; an InputError names the bad item."""
    items = [item.strip() for item in text.split(",") if item.strip()]
    if not items:
        raise InputError(f"{what}: expected a comma-separated list, got {text!r}")
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
    """Parse repeated ``name=value`` options into a dict of strings."""
    out = {}
    for item in items or ():
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise InputError(f"{what}: expected name=value, got {item!r}")
        out[name.strip()] = value.strip()
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


def print_json(document) -> None:
    json.dump(document, sys.stdout, indent=2, allow_nan=False, default=_json_default)
    sys.stdout.write("\n")


def _json_default(value):
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")
