"""CSV text before parsing: line endings, header names and parser errors, as one line
that names the file and the line (every CSV reader of the package uses these)."""

import csv
import re

from ._errors import InputError


def not_utf8(content: bytes, source: str) -> str:
    """The line and byte where `content` stops being UTF-8 (pandas decodes in chunks, so
    its own error's position is not the file's)."""
    try:
        content.decode("utf-8")
    except UnicodeDecodeError as error:
        line = content[: error.start].count(b"\n") + 1
        byte = content[error.start : error.start + 1].hex()
        return (
            f"{source}: line {line}: byte 0x{byte} is not UTF-8 text; save the file as UTF-8 "
            "(or plain ASCII)"
        )
    return f"{source}: not readable as UTF-8 text"


def unique_columns(names, source: str) -> list[str]:
    """The header's column names, stripped, with a name given twice refused: pandas would
    read the second as ``tp.1`` (then ignored or unknown) and `csv.DictReader` keep the
    last, so one of the two would be used silently. Every CSV reader checks its header
    here (benchmarks and runs, time to train, per-step tracker logs, layouts).

    Raises:
        InputError: ``"<source>: column 'tp' appears twice in the header (columns 2 and
            4)…"``.
    """
    names = [str(name).strip() for name in names]
    seen: dict[str, int] = {}
    for position, name in enumerate(names, start=1):
        if name and name in seen:
            raise InputError(
                f"{source}: column {name!r} appears twice in the header (columns "
                f"{seen[name]} and {position}); which one is meant? rename or drop one"
            )
        seen[name] = position
    return names


def unix_newlines(text):
    """`text` (str or bytes) with Windows (CRLF) and old Mac (lone CR) line endings as
    LF, so that every CSV reader counts the lines an editor shows."""
    lf, cr = ("\n", "\r") if isinstance(text, str) else (b"\n", b"\r")
    return text.replace(cr + lf, lf).replace(cr, lf)


def _open_quote_line(text: str) -> int | None:
    """The line (from 1) where a quote that is never closed opens, or None."""
    line, opened = 1, None
    for part in re.finditer(r'["\n]', text):
        if part.group() == "\n":
            line += 1
        else:
            opened = line if opened is None else None
    return opened


def csv_error(error: Exception, text, source: str, columns: int | None = None) -> InputError:
    """A csv or pandas parser error on CSV `text` (str or bytes, LF line endings) as one
    line naming `source` and the line of the file (pandas numbers rows its own way):
    a quote never closed, a row with more cells than the header's `columns`, or the
    parser's first words."""
    message = str(error).strip()
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    line = _open_quote_line(text) if "EOF inside string" in message else None
    if line is not None:
        return InputError(
            f'{source} line {line}: a quote (") opens here and is never closed; close it, '
            "or remove it if the cell is not quoted"
        )
    match = re.search(r"in line (\d+), saw (\d+)", message)
    if match is not None and columns is not None:
        line, cells = match.groups()
        return InputError(
            f"{source} line {line}: {cells} cells, but the header has {columns} columns"
        )
    first = message.splitlines()[0] if message else type(error).__name__
    return InputError(f"{source}: not readable as CSV text ({first})")


def header_columns(line: str, source: str) -> list[str]:
    """`unique_columns` of one header line of CSV text."""
    try:
        cells = next(csv.reader([line], skipinitialspace=True), [])
    except csv.Error as error:
        raise InputError(f"{source} line 1: the header is not readable as CSV ({error})")
    return unique_columns(cells, source)
