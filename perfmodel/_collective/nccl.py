"""Parser for the text output of NVIDIA nccl-tests (`all_reduce_perf` and friends).

nccl-tests prints sizes in bytes, times in microseconds and bandwidths in GB/s
(1 GB = 1e9 bytes). `parse_nccl_tests` returns bytes, seconds and bytes/s.
"""

import math
import os
from pathlib import Path
import re
import sys

import pandas as pd

from .._errors import InputError
from .._terms import BUS_FACTOR_COEFFICIENTS

# nccl-tests binary `<stem>_perf` -> collective name.
_BINARIES = {"alltoall": "all_to_all", "sendrecv": "send_recv"} | {
    s: s for s in ("all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce")
}
COLUMNS = (  # of the DataFrame returned by parse_nccl_tests
    "collective",
    "n_ranks",
    "message_bytes",
    "placement",
    "time_s",
    "algbw_bytes_per_s",
    "busbw_bytes_per_s",
    "line",
)
_PLACEMENTS = ("out_of_place", "in_place")
_WHAT = ("time (us)", "algbw (GB/s)", "busbw (GB/s)")
_SMALLEST_US = sys.float_info.min * 1e6  # less is 0 or subnormal in seconds: log(0) = -inf
_BINARY_RE = re.compile(r"\b([a-z][a-z0-9_]*?)_perf(?:_mpi)?\b")
_RANK_RE = re.compile(r"^#?\s*Rank\s+(\d+)\s+(?:Group|Pid)\b")
_NCCL_LOG_RE = re.compile(r"\bNCCL (?:INFO|WARN|TRACE|ABORT)\b")
_DATA_START_RE = re.compile(r"^[+-]?\d", re.ASCII)
# The data types and reductions nccl-tests prints (common.cu's test_typenames, test_opnames).
TYPES = (
    "int8",
    "uint8",
    "int32",
    "uint32",
    "int64",
    "uint64",
    "half",
    "float",
    "double",
    "bfloat16",
    "f8e4m3",
    "f8e5m2",
    "fp8_e4m3",
    "fp8_e5m2",
)
REDOPS = ("sum", "prod", "max", "min", "avg", "mulsum", "premulsum", "none")
_TIMESTAMP_RE = re.compile(r"\s+\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$")  # `-R` column
_GB = 1e9  # bytes per GB in nccl-tests output
_BUSBW_ATOL_GB = 0.02  # printed with 2 decimals: rounding of algbw and busbw
_BUSBW_RTOL = 0.02


def _coeffs(collective: str) -> tuple[float, float]:
    if collective not in BUS_FACTOR_COEFFICIENTS:
        raise InputError(
            f"unknown collective {collective!r}; expected one of "
            + ", ".join(BUS_FACTOR_COEFFICIENTS)
        )
    return BUS_FACTOR_COEFFICIENTS[collective]


def _read(path_or_text: str | os.PathLike) -> tuple[str, str]:
    """Return (name used in messages, text); a str with a newline is the text."""
    if isinstance(path_or_text, str) and "\n" in path_or_text:
        return "<text>", path_or_text
    name = os.fspath(path_or_text)
    try:
        return name, Path(name).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        raise InputError(f"{name}: file not found (expected an nccl-tests log)")
    except OSError as e:
        raise InputError(f"{name}: cannot read the file ({e.strerror})")


def _number(token: str, what: str, where: str) -> float:
    try:  # Python reads "1٠24" (an Arabic-Indic zero) as 1024: nccl-tests prints ASCII
        value = float(token) if token.isascii() else math.nan
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise InputError(f"{where}: expected a finite number for {what}, got {token!r}")
    return value


def _looks_like_a_row(line: str, widths: range) -> bool:
    """Whether a line that does not start with a number is a garbled data row: as many
    tokens as a row has (`widths`), all but a few (type, op, N/A and the garbled one)
    numbers."""
    tokens = _TIMESTAMP_RE.sub("", line).split()
    if not widths or len(tokens) not in widths:
        return False
    numbers = sum(bool(re.fullmatch(r"[+-]?[\d.]+(?:e[+-]?\d+)?", t, re.ASCII)) for t in tokens)
    return numbers >= len(tokens) - 4


def _row_widths(header: tuple[int, int, bool | None], last: int, seen_header: bool) -> range:
    """Token counts of a data row: the last row's, else what a column header read allows
    (`_parse_row`: size, count, type, [redop], [root], then the blocks); none before
    either."""
    if last:
        return range(last, last + 1)
    if not seen_header:
        return range(0)
    need = header[0] * header[1]
    return range(3 + need, 6 + need)


def _integer(token: str, what: str, where: str) -> int:
    if not re.fullmatch(r"[+-]?\d+", token, re.ASCII):
        raise InputError(f"{where}: expected an integer for {what}, got {token!r}")
    return int(token)


def _parse_row(tokens: list[str], header: tuple[int, int, bool | None], where: str):
    """Return (size in bytes, [(placement, time us, algbw GB/s, busbw GB/s)])."""
    block, n_blocks, has_root = header
    need = block * n_blocks
    fields = f"time algbw busbw #wrong for {n_blocks} placement(s)"
    if not 3 + need <= len(tokens) <= 5 + need:
        raise InputError(
            f"{where}: expected {3 + need} to {5 + need} fields in an nccl-tests data"
            f" row (size count type [redop] [root], then {fields}), got {len(tokens)}"
        )
    size = _integer(tokens[0], "size (bytes) in field 1", where)
    count = _integer(tokens[1], "count (elements) in field 2", where)
    if size < 0 or count < 0 or _DATA_START_RE.match(tokens[2]):
        raise InputError(
            f"{where}: expected size ≥ 0, count ≥ 0 and a data type name such as"
            f" 'float', got {' '.join(tokens[:3])!r}"
        )
    if tokens[2] not in TYPES:  # "flot" was read as a row
        raise InputError(
            f"{where}: data type {tokens[2]!r} is not one nccl-tests prints; expected one of "
            + ", ".join(TYPES)
        )
    rest = tokens[3:]
    # "nan" or "inf" where a time stands is a time, named as such below; it was read as
    # a reduction and refused as one (bad-input review of 2026-12-06)
    numeric_word = rest[0].lower().lstrip("+-") in ("nan", "inf", "infinity")
    if not _DATA_START_RE.match(rest[0]) and not numeric_word:
        if rest[0] not in REDOPS:
            raise InputError(
                f"{where}: reduction {rest[0]!r} is not one nccl-tests prints; expected one of "
                + ", ".join(REDOPS)
            )
        rest = rest[1:]  # redop (sum, none, ...); blank in some versions
    said = ", as the column header says" if has_root is not None else ""
    if has_root is None:  # no column header: infer
        has_root = len(rest) == need + 1
    if len(rest) != need + has_root:
        root = "root and " if has_root else ""
        raise InputError(
            f"{where}: expected size count type [redop] {root}{need} numeric fields"
            f" ({fields}){said}, got {len(tokens)} fields"
        )
    if has_root:
        _integer(rest[0], "root", where)
    blocks = []
    for k in range(n_blocks):
        t, alg, bus, wrong = rest[has_root + k * block :][:4]
        label = _PLACEMENTS[k]
        values = [_number(x, f"{label} {w}", where) for x, w in zip((t, alg, bus), _WHAT)]
        if wrong != "N/A":
            _number(wrong, f"{label} #wrong", where)
        # `#wrong` counts wrong elements (an integer); older versions print a column
        # `error`, the largest rounding error of a float type, in %e format (4e-07).
        if wrong != "N/A" and float(wrong) < 0:  # a count, or the largest rounding error
            raise InputError(f"{where}: {label} #wrong is {wrong}; expected a count ≥ 0")
        if re.fullmatch(r"\d+", wrong) and int(wrong) != 0:
            raise InputError(
                f"{where}: {label} #wrong is {wrong}: nccl-tests found wrong results in "
                "this row, so its times are not to be trusted; rerun the test (or delete "
                "the row) before fitting"
            )
        if values[0] <= 0.0 or min(values) < 0.0:
            raise InputError(
                f"{where}: expected {label} time > 0 us and bandwidths ≥ 0 GB/s,"
                f" got time {t}, algbw {alg}, busbw {bus}"
            )
        if values[0] < _SMALLEST_US:
            raise InputError(
                f"{where}: {label} time {t} us is below the smallest time float64 holds in "
                f"seconds ({_SMALLEST_US:.3g} us); check the row's columns and units"
            )
        _check_algbw(label, size, values[0], values[1], where)
        blocks.append((label, *values))
    return size, blocks


ALGBW_FACTOR = 4.0  # how far algbw may be from size/time (`_check_algbw`)


def _check_algbw(label: str, size: int, time_us: float, alg: float, where: str) -> None:
    """nccl-tests prints algbw ≈ size / time: a row where they disagree by far more than a
    version's convention was edited or cut (a time of 1e-300 us was fitted to "MAPE
    5.8e+296" and written with exit status 0). Versions differ by up to 2× (NCCL 2.6's
    two GPUs in one thread print half), and each is rounded: `ALGBW_FACTOR` allows both."""
    expected = size / (time_us * 1e3)  # bytes / us → GB/s
    if expected <= ALGBW_FACTOR * alg + 0.05 and alg <= ALGBW_FACTOR * expected + 0.05:
        return
    raise InputError(
        f"{where}: {label} algbw {alg:g} GB/s does not match size {size} B / time "
        f"{time_us:g} us = {expected:.4g} GB/s; expected the row as nccl-tests prints it "
        "(check the row's columns and units)"
    )


def _ranks_hint(a: float, b: float, alg: float, bus: float) -> str:
    """The rank counts that busbw/algbw = a·(n − b)/n allows, given that nccl-tests prints
    both to two decimals: a small message's row (0.34 and 0.18 GB/s) implied "n_ranks ≈
    18.0" for a 16-rank log (review round 10b)."""
    half = 0.005  # half the last printed digit, GB/s

    def ranks(ratio: float) -> float:
        return a * b / (a - ratio) if ratio < a else math.inf

    low = ranks(max(bus - half, 0.0) / (alg + half))
    high = ranks((bus + half) / (alg - half)) if alg > half else math.inf
    if math.isfinite(high) and round(low) == round(high):
        return f", which implies n_ranks ≈ {round(low)}"
    upper = f"{high:.0f}" if math.isfinite(high) else "any"
    return (
        f", which the printed (rounded) values allow for n_ranks from {max(low, 1.0):.0f} "
        f"to {upper}"
    )


def _check_busbw(label, alg, bus, collective, n, where):
    a, b = _coeffs(collective)
    factor = a * (n - b) / n
    expected = alg * factor
    if abs(bus - expected) <= max(_BUSBW_RTOL * max(bus, expected), _BUSBW_ATOL_GB):
        return
    hint = ""
    if b > 0 and alg > 0 and bus / alg < a:
        hint = _ranks_hint(a, b, alg, bus)
    raise InputError(
        f"{where}: {label} busbw {bus:g} GB/s does not match algbw {alg:g} GB/s ×"
        f" {factor:.4g} (the {collective} factor for {n} ranks); busbw/algbw ="
        f" {bus / alg if alg else math.inf:.3f}{hint}. Is the rank count ({{arg:n_ranks}}) or"
        " the collective wrong?"
    )


def parse_nccl_tests(
    path_or_text: str | os.PathLike,
    *,
    collective: str | None = None,
    n_ranks: int | None = None,
) -> pd.DataFrame:
    """Read nccl-tests output into one row per (size, placement) measurement.

    Handles the current layout (size count type redop root, then time algbw busbw
    #wrong for out-of-place and in-place) and older ones without redop/root,
    `#wrong` printed as `N/A`, `-R` timestamps, headers, `#  Rank` lines, footers
    and NCCL INFO/WARN lines. Several runs in one file are allowed: each run takes
    its collective from the last `<name>_perf` seen and its ranks from its own
    `#  Rank` lines. Every row is checked: busbw ≈ algbw · `bus_bandwidth_factor`
    within 2% or 0.02 GB/s.

    Args:
        path_or_text: a path, or the log text itself (a str containing a newline).
        collective: used when the log names no `*_perf` binary; must agree with
            it otherwise. One of all_reduce, all_gather, reduce_scatter,
            broadcast, reduce, all_to_all, send_recv.
        n_ranks: the number of ranks, required when the log has no `#  Rank`
            lines. Otherwise it may exceed their count (a pasted log that leaves
            some out) but not fall below it.

    Returns:
        DataFrame with columns collective, n_ranks, message_bytes (bytes, the
        printed size column), placement ("out_of_place"/"in_place"), time_s
        (seconds), algbw_bytes_per_s, busbw_bytes_per_s (bytes/s) and line (the
        1-based line number of the data row).

    Raises:
        InputError: naming the file and line, for any malformed data row, a missing
            file, no data rows, an unknown collective or rank count, or a busbw that
            contradicts the collective and rank count.
    """
    name, text = _read(path_or_text)
    if collective is not None:
        _coeffs(collective)
    if n_ranks is not None and (
        isinstance(n_ranks, bool) or not isinstance(n_ranks, int) or n_ranks < 1
    ):
        raise InputError(f"n_ranks must be an integer ≥ 1, got {n_ranks!r}")
    current, max_rank, rank_line, data_since_ranks = collective, -1, 0, False
    row_width, seen_header = 0, False  # tokens of the last data row; a column header read
    header: tuple[int, int, bool | None] = (4, 2, None)  # block, blocks, root?
    records = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        where = f"{name} line {lineno}"
        if not line:
            continue
        if _NCCL_LOG_RE.search(line):
            words = line.split()  # a row with NCCL's text in it, not a host "10-0-0-1:…"
            widths = _row_widths(header, row_width, seen_header)
            if widths and re.fullmatch(r"\d+", words[0], re.ASCII) and len(words) > widths[-1]:
                raise InputError(
                    f"{where}: a data row with NCCL log text in it; expected the row alone "
                    "(split the log text onto its own line)"
                )
            continue
        rank = _RANK_RE.match(line)
        # A `#  Rank` line names the host, which may hold "_perf" (node_perf-3): no binary.
        stems = set() if rank else {m.group(1) for m in _BINARY_RE.finditer(line)}
        if len(stems) == 1:  # a line naming several binaries is ambiguous: skip
            stem = stems.pop()
            found = _BINARIES.get(stem, f"{stem}_perf")
            if collective is not None and found != collective:
                raise InputError(
                    f"{where}: the log names {stem}_perf but collective={collective!r} was given"
                )
            current = found
        if line.startswith(("# nThread", "# Using devices")):
            max_rank = -1
        if rank:
            # Rank 0 again, or Rank lines after data rows: the next run of a pasted log
            # (with no "# nThread" header between), whose ranks are its own.
            if int(rank.group(1)) == 0 or data_since_ranks:
                max_rank = -1
            max_rank, rank_line = max(max_rank, int(rank.group(1))), lineno
            data_since_ranks = False
        if line.startswith("#") and "algbw" in line and "busbw" in line:
            words = line.split()  # column header
            n_blocks = min(words.count("busbw"), 2)
            header = (8 if "i_min" in words else 4, n_blocks, "root" in words)
            seen_header = True
        if line.startswith("#"):
            continue
        if not _DATA_START_RE.match(line):
            widths = _row_widths(header, row_width, seen_header)
            if _looks_like_a_row(line, widths):
                raise InputError(
                    f"{where}: expected a data row starting with its size in bytes, got "
                    f"{line.split()[0]!r} (a garbled row; a row left out would change the fit)"
                )
            continue
        data_since_ranks = True
        tokens = _TIMESTAMP_RE.sub("", line).split()
        row_width = len(tokens)
        size, blocks = _parse_row(tokens, header, where)
        if current is None:
            raise InputError(
                f"{where}: cannot tell the collective: no `<name>_perf` line before"
                " this row; pass collective="
            )
        if current not in BUS_FACTOR_COEFFICIENTS:
            raise InputError(
                f"{where}: rows of {current}, which is not supported; expected one"
                f" of {', '.join(f'{s}_perf' for s in _BINARIES)}"
            )
        n = n_ranks
        if max_rank >= 0:  # n_ranks may exceed it: pasted logs often cut Rank lines
            if n_ranks is not None and n_ranks <= max_rank:
                raise InputError(
                    f"{name} line {rank_line}: the `#  Rank` lines list"
                    f" {max_rank + 1} ranks but n_ranks={n_ranks} was given"
                )
            n = max(max_rank + 1, n_ranks or 0)
        if n is None:
            raise InputError(
                f"{where}: cannot tell the number of ranks: no `#  Rank` lines"
                " before this row; pass n_ranks="
            )
        for label, t, alg, bus in blocks:
            _check_busbw(label, alg, bus, current, n, where)
            records.append((current, n, size, label, t * 1e-6, alg * _GB, bus * _GB, lineno))
    if not records:
        raise InputError(
            f"{name}: no nccl-tests data rows found; expected lines such as"
            " '1048576  262144  float  sum  -1  121.8  8.61  16.14  0  126.6  8.28"
            "  15.53  0'"
        )
    return pd.DataFrame.from_records(records, columns=list(COLUMNS))
