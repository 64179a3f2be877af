"""Plain text for people: tables that fit a terminal, seconds and counts, short reprs.

Shared by the command line and the ``summary()``/``repr`` of the library's results, so
that both print the same thing. Imports nothing heavy (no NumPy, no JAX).
"""

from collections.abc import Sequence
import math
import numbers
import re
import shlex
import textwrap

# A number and its unit stay on one line when prose wraps.
_UNIT = re.compile(r"(\d) (s|ms|µs|ns|GPUs?|B/s)\b")
WIDTH = 100  # columns a table fits by default; None: no limit (``--wide``)
_MIN_TEXT = 14  # narrowest a wrapped text column gets


def printable(text: str) -> str:
    """`text` with what UTF-8 cannot encode (the lone surrogates of a file name that is
    not UTF-8) as backslash escapes, for figures and files that must encode it."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def cell(value) -> str:
    """One table cell: floats to 4 significant digits, None empty."""
    if isinstance(value, bool) or value is None:
        return "" if value is None else str(value)
    if isinstance(value, float):
        return f"{value:.4g}"
    if type(value).__module__ == "numpy" and hasattr(value, "item"):
        return cell(value.item())
    return str(value)


def _numeric(text: str) -> bool:
    try:
        float(text.rstrip("%x×"))
        return True
    except ValueError:
        return text in ("", "inf", "-inf", "nan", "—", "?")


def _header_lines(name: str, width: int) -> list[str]:
    # Headers wrap at spaces and underscores when their column is narrower than them.
    if len(name) <= width:
        return [name]
    marker = "\x00"  # a break after an underscore that is not a space of the name
    words = name.replace("_", "_" + marker).replace(" ", " " + marker).split(marker)
    lines = [""]
    for word in words:
        if lines[-1] and len((lines[-1] + word).rstrip()) > width:
            lines.append("")
        lines[-1] += word
    return [line.rstrip() for line in lines if line.strip()] or [""]


def format_table(
    rows: Sequence[dict],
    columns: Sequence[str] | None = None,
    *,
    width: int | None | str = "default",
) -> str:
    """A plain, right-aligned text table of `rows` (dicts with the same keys).

    The table fits `width` columns (default `WIDTH`, 100; None: no limit): long headers
    wrap onto two lines, long text cells (notes, meanings) wrap inside their column,
    and if it is still too wide the last columns are left out, named in a final line.
    """
    if not rows:
        return "(no rows)"
    limit = WIDTH if width == "default" else width
    columns = list(columns or rows[0])
    body = [[cell(row.get(c)) for c in columns] for row in rows]
    text = [not all(_numeric(r[i]) for r in body) for i in range(len(columns))]
    widest = [max((len(r[i]) for r in body), default=0) for i in range(len(columns))]
    # A text column wraps between words, never inside one (a name must stay copyable).
    narrowest = [
        max(_MIN_TEXT, *(len(word) for r in body for word in r[i].split())) if text[i] else 0
        for i in range(len(columns))
    ]
    # Each column is as wide as its widest cell or its longest header word.
    widths = [
        max(w, *(len(word) for word in _header_lines(c, 1)), 1) for c, w in zip(columns, widest)
    ]
    if limit is None:
        widths = [max(w, len(c)) for w, c in zip(widths, columns)]
    else:
        spare = limit - (sum(widths) + 2 * (len(widths) - 1))
        # Give headers back their full width where there is room.
        for i, c in enumerate(columns):
            grow = min(max(len(c) - widths[i], 0), max(spare, 0))
            widths[i] += grow
            spare -= grow
        # Then wrap the widest text columns until the table fits.
        while spare < 0:
            candidates = [i for i in range(len(columns)) if text[i] and widths[i] > narrowest[i]]
            if not candidates:
                break
            i = max(candidates, key=lambda j: widths[j])
            cut = min(-spare, widths[i] - narrowest[i])
            widths[i] -= cut
            spare += cut
    kept = len(columns)
    if limit is not None:
        while kept > 1 and sum(widths[:kept]) + 2 * (kept - 1) > limit:
            kept -= 1
    lines = _render(columns[:kept], widths[:kept], [r[:kept] for r in body], text[:kept])
    if kept < len(columns):
        hidden = len(columns) - kept
        plural = "s" if hidden != 1 else ""
        rest = f"({hidden} more column{plural}: {', '.join(columns[kept:])}; --wide)"
        lines += textwrap.wrap(rest, limit)
    return "\n".join(lines)


def _render(columns, widths, body, text) -> list[str]:
    headers = [_header_lines(c, w) for c, w in zip(columns, widths)]
    depth = max(len(h) for h in headers)
    lines = []
    for k in range(depth):
        parts = [(h[k - depth + len(h)] if k >= depth - len(h) else "") for h in headers]
        lines.append("  ".join(p.rjust(w) for p, w in zip(parts, widths)).rstrip())
    lines.append("  ".join("-" * w for w in widths))
    for row in body:
        wrapped = [
            textwrap.wrap(v, w, break_long_words=False) or [""] if is_text and len(v) > w else [v]
            for v, w, is_text in zip(row, widths, text)
        ]
        for k in range(max(len(c) for c in wrapped)):
            parts = [c[k] if k < len(c) else "" for c in wrapped]
            lines.append(
                "  ".join(
                    (p.ljust(w) if len(c) > 1 else p.rjust(w))
                    for p, w, c in zip(parts, widths, wrapped)
                ).rstrip()
            )
    return lines


def wrap(text: str, width: int | None = WIDTH) -> str:
    """Each line of `text` wrapped at `width` (None: as it is), continuation lines
    indented two spaces past the line's own indent."""
    if width is None:
        return text
    out = []
    for line in _UNIT.sub("\\1\0\\2", text).splitlines():
        indent = " " * (len(line) - len(line.lstrip()))
        out += textwrap.wrap(
            line, width, subsequent_indent=indent + "  ", break_on_hyphens=False
        ) or [""]
    return "\n".join(out).replace("\0", " ")


def seconds(value: float) -> str:
    """``0.42 s``, ``3.1 ms``, ``17 µs`` or ``5 ns`` (3 significant digits), as
    `perfmodel explain` writes them."""
    if not math.isfinite(value):
        return "unbounded" if value > 0 else f"{value} s"
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {unit}"
    if value != 0 and abs(value) < 1e-12:  # "1e-291 ns": a power of ten in seconds reads
        return f"{value:.3g} s"
    return f"{value / 1e-9:.3g} ns"


def counted(n, noun: str, fmt: str = "g") -> str:
    """``1 GPU``, ``8 GPUs``, ``1 GPU-hour``: `n` in `fmt` and `noun`, plural unless
    the number shows as 1."""
    whole = isinstance(n, numbers.Integral) or (float(n).is_integer() and abs(n) < 1e15)
    number = str(int(n)) if whole else format(n, fmt)  # 1234567 GPUs, not 1.23457e+06
    return f"{number} {noun}" if number == "1" else f"{number} {noun}s"


def span(lo: float | None, hi: float | None, fmt) -> str:
    """``"lo–hi"``, an end None or infinite written as unbounded."""

    def end(v, low):
        if v is None or not math.isfinite(v) or (low and v <= 0):
            return "0" if low else "unbounded"
        return fmt(v)

    return f"{end(lo, True)}–{end(hi, False)}"


def brief(kind: str, *parts: str) -> str:
    """A one-line repr: ``<Kind: part; part>``."""
    inside = "; ".join(p for p in parts if p)
    return f"<{kind}: {inside}>" if inside else f"<{kind}>"


def refit_command(source: str, family: str = "NAME") -> str:
    """``perfmodel fit big.csv --model amdahl``: the command that fits `family` to the
    measurements read from `source` (``CSV`` where they came from no file: ``<arrays>``)."""
    csv = "CSV" if source.startswith("<") else shlex.quote(source)
    return f"perfmodel fit {csv} --model {family}"


_LONG_WORD = re.compile(r"\S{201,}")


def shorten_words(text: str) -> str:
    """`text` with each run of over 200 non-space characters cut to its first 60 and last
    20 around ``…(N characters)…``: an error that echoed a 100 000-digit CSV cell was
    one line of 100 KB (review of 2026-12-07)."""
    return _LONG_WORD.sub(
        lambda m: f"{m.group()[:60]}…({len(m.group())} characters)…{m.group()[-20:]}", text
    )
