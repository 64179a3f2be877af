"""Strict JSON text of answers and fits (non-finite numbers as null), without JAX."""

import json
import math

import numpy as np


def _finite_or_none(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def finite_or_null(document):
    """`document` with every non-finite float (NumPy ones too) as None: JSON has no
    NaN or Infinity, and strict readers refuse them."""
    if isinstance(document, _Numbers):
        return document
    if isinstance(document, dict):
        return {k: finite_or_null(v) for k, v in document.items()}
    if isinstance(document, np.ndarray) and document.dtype.kind in "fiu":
        return _numbers(document)
    if isinstance(document, (list, tuple)):
        if document and all(type(v) is float for v in document):  # a measured column
            return _numbers(np.asarray(document, dtype=np.float64))
        if all(type(v) is int for v in document):
            return list(document)
        return [finite_or_null(v) for v in document]
    if isinstance(document, np.ndarray):
        return finite_or_null(document.tolist())
    if isinstance(document, np.generic):
        document = document.item()
    if isinstance(document, float) and not math.isfinite(document):
        return None
    return document


class _Numbers(list):
    """A list of numbers (None for non-finite ones) from a 1-D array, known as such:
    `to_json` writes it without looking at each of its (perhaps 10⁶) values again."""


def _numbers(array: np.ndarray) -> list:
    """A numeric array as nested lists, non-finite values as None (vectorised: a column
    of 10⁶ measurements takes milliseconds, not seconds)."""
    if array.dtype.kind == "f" and not np.isfinite(array).all():
        values = np.where(np.isfinite(array), array, None).tolist()
    else:
        values = array.tolist()
    return _Numbers(values) if array.ndim == 1 else values


_INLINE = 64  # lists of more numbers than this are written on one line


def to_json(document) -> str:
    """`document` as strict JSON text (indent 2, non-finite numbers as null), serialised
    completely before anything is written or printed. Long lists of numbers (the
    measurements) go on one line each, through json's C encoder: an indented list of
    10⁶ numbers takes the pure-Python one seconds."""
    long_lists = []

    def hide(node):
        if isinstance(node, dict):
            return {k: hide(v) for k, v in node.items()}
        if isinstance(node, _Numbers) and len(node) > _INLINE:
            long_lists.append(node)
            return f"\0{len(long_lists) - 1}\0"
        if isinstance(node, list):
            if len(node) > _INLINE and all(v is None or type(v) in (int, float) for v in node):
                long_lists.append(node)
                return f"\0{len(long_lists) - 1}\0"
            return [hide(v) for v in node]
        return node

    text = json.dumps(hide(finite_or_null(document)), indent=2, allow_nan=False)
    for i, values in enumerate(long_lists):
        text = text.replace(f'"\\u0000{i}\\u0000"', json.dumps(values, allow_nan=False), 1)
    return text + "\n"


LONGEST_INTEGER = 4000  # digits: Python refuses to read past 4300 (a bare ValueError)


class StrictJSONError(ValueError):
    """What `strict_loads` refuses beyond JSON's grammar (its message says what)."""


def _integer(text: str) -> int:
    if len(text) > LONGEST_INTEGER:
        raise StrictJSONError(f"a number of {len(text)} digits")
    return int(text)


def _unique(pairs: list) -> dict:
    seen = set()
    for key, _ in pairs:
        if key in seen:
            raise StrictJSONError(f"the key {key!r} twice in one object")
        seen.add(key)
    return dict(pairs)


def strict_loads(text: str, parse_constant=None):
    """`json.loads` that also refuses a key twice in one object (the last one silently
    won) and integers of more than `LONGEST_INTEGER` digits (Python's own limit raised
    a bare ValueError): `StrictJSONError`."""
    return json.loads(
        text, parse_constant=parse_constant, parse_int=_integer, object_pairs_hook=_unique
    )
