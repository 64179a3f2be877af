"""Helpers every command shares: parsing option values, printing tables and JSON."""

from collections.abc import Sequence
import json
import math
import sys

from .._errors import InputError


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


def format_table(rows: list[dict], columns: Sequence[str] | None = None) -> str:
    """A plain, right-aligned text table of `rows` (dicts with the same keys)."""
    if not rows:
        return "(no rows)"
    columns = list(columns or rows[0])

    def cell(value):
        if isinstance(value, float):
            return f"{value:.4g}"
        return "" if value is None else str(value)

    body = [[cell(row.get(c)) for c in columns] for row in rows]
    widths = [max(len(c), *(len(r[i]) for r in body)) for i, c in enumerate(columns)]
    lines = ["  ".join(c.rjust(w) for c, w in zip(columns, widths))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(v.rjust(w) for v, w in zip(r, widths)) for r in body]
    return "\n".join(lines)


def print_json(document) -> None:
    json.dump(document, sys.stdout, indent=2, allow_nan=False, default=_json_default)
    sys.stdout.write("\n")


def _json_default(value):
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")
