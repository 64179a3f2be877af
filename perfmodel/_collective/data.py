"""nccl-tests measurements for fitting: logs and parsed tables into NumPy columns.

In-place and out-of-place rows are both kept, as repeated measurements. Message sizes are
the bytes nccl-tests' algbw refers to, so fits follow its bus-bandwidth convention.
"""

import os
from pathlib import Path

import numpy as np

from .._errors import InputError
from .nccl import _BINARY_RE, parse_nccl_tests

_KEYS = ("collective", "n_ranks", "message_bytes", "placement", "time_s")
_BW_KEYS = ("algbw_bytes_per_s", "busbw_bytes_per_s")
_RELIABLE_ALGBW = 0.5e9  # printed with 2 decimals in GB/s: ≤ 1% rounding above this


def _names_binary(path) -> bool:
    try:
        text = Path(os.fspath(path)).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False  # the parser reports unreadable files
    return _BINARY_RE.search(text) is not None


def _frames(parsed_or_paths, collective, n_ranks):
    items = parsed_or_paths
    if isinstance(items, (str, os.PathLike)) or hasattr(items, "columns"):
        items = [items]
    for item in items:
        if hasattr(item, "columns"):
            yield item.attrs.get("source", "<DataFrame>"), item
        else:
            named = collective if collective and not _names_binary(item) else None
            yield os.fspath(item), parse_nccl_tests(item, collective=named, n_ranks=n_ranks)


def _algbw_bytes(size, time_s, algbw, n, source, op, notes):
    """Bytes algbw refers to: the size column, except in logs that print other sizes.

    Some nccl-tests versions print all ranks' bytes in the size column, so that
    algbw = size/n/t; the fit must use the bytes of algbw to follow its convention.
    """
    reliable = algbw >= _RELIABLE_ALGBW
    if not reliable.any():
        return size
    ratio = float(np.median(algbw[reliable] * time_s[reliable] / size[reliable]))
    if abs(ratio - 1.0) <= 0.02:
        return size
    if ratio > 1.0:  # nccl-tests' algbw is size/time, or size/n/time: never more
        raise InputError(
            f"{source}: {op} at {n} ranks prints algbw = {ratio:.4g} × size / time; "
            "nccl-tests prints size / time (or size / ranks / time): the time or algbw "
            "column is off"
        )
    snapped = 1.0 / round(1.0 / ratio)
    ratio = snapped if abs(ratio / snapped - 1.0) <= 0.02 else ratio
    notes.append(
        f"{source}: {op} at {n} ranks prints algbw = {ratio:.4g} × size / time; fitted "
        f"with message bytes = {ratio:.4g} × the size column (the bytes of algbw)"
    )
    return size * ratio


def measurements(
    parsed_or_paths, *, collective: str | None = None, n_ranks: int | None = None
) -> tuple[dict[str, np.ndarray], list[str]]:
    """nccl-tests rows as NumPy columns, from logs and/or `parse_nccl_tests` frames.

    Args:
        parsed_or_paths: a log path, a DataFrame from `parse_nccl_tests`, or a list.
        collective: keep only this collective (and name it for logs that do not).
        n_ranks: ranks for logs without ``#  Rank`` lines; keeps only rows with it.

    Returns:
        Columns collective, n_ranks, message_bytes (bytes the algbw refers to),
        placement, time_s (s), algbw/busbw_bytes_per_s, source and line, one entry per
        measurement (in-place and out-of-place rows both kept), and notes on reading.

    Raises:
        InputError: malformed logs (with the line), no rows for `collective` or
            `n_ranks`, rows with a single rank.
    """
    columns: dict[str, list] = {k: [] for k in (*_KEYS, *_BW_KEYS, "source", "line")}
    notes: list[str] = []
    for source, frame in _frames(parsed_or_paths, collective, n_ranks):
        missing = [k for k in (*_KEYS, *_BW_KEYS, "line") if k not in frame.columns]
        if missing:
            raise InputError(f"{source}: not a parse_nccl_tests table (missing {missing})")
        ops, ranks = frame["collective"].to_numpy(), frame["n_ranks"].to_numpy()
        keep = np.ones(len(frame), dtype=bool)
        if collective is not None:
            keep &= ops == collective
            if not keep.any():
                have = ", ".join(sorted(set(map(str, ops))))
                raise InputError(f"{source}: no rows for collective {collective!r}; it has {have}")
        if n_ranks is not None:
            keep &= ranks == n_ranks
            if not keep.any():
                have = ", ".join(map(str, sorted(set(ranks.tolist()))))
                raise InputError(f"{source}: no rows with n_ranks={n_ranks}; it has {have}")
        single = sorted(set(ops[keep & (ranks < 2)].tolist()))
        if single:
            raise InputError(
                f"{source}: {', '.join(single)} with n_ranks=1: one rank moves no data in "
                "the α-β model; fit runs with 2 or more ranks"
            )
        size = frame["message_bytes"].to_numpy(dtype=np.float64).copy()
        for op, n in sorted(set(zip(ops[keep].tolist(), ranks[keep].tolist()))):
            rows = keep & (ops == op) & (ranks == n)
            sizes = np.unique(size[rows])
            if sizes.size < 2:
                raise InputError(
                    f"{source}: {op} at {n} ranks has one message size ({sizes[0]:.0f} "
                    "bytes): the latency α and the bandwidth β cannot be told apart from "
                    "one size; measure a range of sizes (nccl-tests -b 8 -e 1G -f 2)"
                )
            size[rows] = _algbw_bytes(
                size[rows],
                frame["time_s"].to_numpy(dtype=np.float64)[rows],
                frame["algbw_bytes_per_s"].to_numpy(dtype=np.float64)[rows],
                n,
                source,
                op,
                notes,
            )
        for key in (*_KEYS, *_BW_KEYS, "line"):
            values = size if key == "message_bytes" else frame[key].to_numpy()
            columns[key] += values[keep].tolist()
        columns["source"] += [source] * int(keep.sum())
    if not columns["time_s"]:
        raise InputError("no nccl-tests logs given")
    rows = {k: np.asarray(v) for k, v in columns.items()}
    for key in ("message_bytes", "time_s", *_BW_KEYS):
        rows[key] = rows[key].astype(np.float64)
    rows["n_ranks"] = rows["n_ranks"].astype(np.int64)
    return rows, notes


def group_keys(rows: dict[str, np.ndarray]) -> tuple[list[tuple[str, int]], np.ndarray]:
    """The distinct (collective, n_ranks) in order, and each row's group index."""
    pairs = list(zip(rows["collective"].tolist(), rows["n_ranks"].tolist()))
    keys = sorted(set(pairs))
    index = {k: i for i, k in enumerate(keys)}
    return keys, np.array([index[p] for p in pairs], dtype=np.int32)
