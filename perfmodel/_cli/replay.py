"""A repeated `perfmodel fit` or `demo` answers from what the same call gave before.

A fit is deterministic (fixed seeds, fixed starts): the same command, run again by the
same perfmodel on the same bytes, prints the same lines and writes the same fit file. So
the first run records what it printed (stdout and stderr, in order) and the fit file it
wrote (``-o``); a repeat prints those lines and writes that file again, without
importing JAX (~0.1 s instead of 2–3 s). Only the fit file's ``"created"`` time is the
repeat's own.

A record is filed under a hash of everything the answer depends on (`call_key`): the
arguments as typed, the working folder, the ``PERFMODEL_``, ``JAX_`` and ``XLA_``
environment, this machine, every file of the perfmodel package and of the shipped
datasets, and the installed JAX, jaxlib, NumPy, Equinox, Optax, jaxtyping and pandas. It
also names the bytes (SHA-256) of every input file among the arguments, and is used only
while each still matches: an edited CSV is fitted again. No record is kept of a call that
failed, wrote a report (``--report``), read standard input, named a folder, a pipe or a
device, or printed more than `MAX_RECORD` characters. A repeat refuses, as the full run
would, an ``-o`` that has become an input (and then runs in full, which says so).
Records live in ``answers/`` of the command line's cache (`perfmodel._cli.cache`);
``PERFMODEL_NO_CACHE=1`` turns them off with the rest.
"""

import contextlib
import datetime
import hashlib
import importlib.util
import json
import os
from pathlib import Path
import platform
import re
import sys

from .._files import shipped_csv
from .cache import cache_dir, cache_off, mark_checked

COMMANDS = ("fit", "demo")
MAX_RECORD = 4_000_000  # characters printed plus the fit file's: larger calls refit
_FORMAT = 1
_DEPENDENCIES = ("jax", "jaxlib", "numpy", "equinox", "optax", "jaxtyping", "pandas")
_ENVIRONMENT = ("PERFMODEL_", "JAX_", "XLA_")
_CREATED = re.compile(r'"created": "[0-9T:+-]+"')


def _tree_digest(digest, folder: Path, contents: bool) -> None:
    """Feed every file under `folder` (its bytes, or its size and modification time)."""
    for path in sorted(folder.rglob("*")):
        if path.suffix == ".pyc" or not path.is_file():
            continue
        digest.update(str(path.relative_to(folder)).encode() + b"\0")
        if contents:
            digest.update(path.read_bytes())
        else:
            stat = path.stat()
            digest.update(f"{stat.st_size} {stat.st_mtime_ns}".encode())


def _code_digest(digest) -> None:
    """This perfmodel (its files), its shipped datasets and the installed dependencies
    (the size and time of each one's ``__init__.py`` and ``version.py``)."""
    from .._files import datasets_dir

    package = Path(__file__).resolve().parent.parent
    _tree_digest(digest, package, contents=True)
    shipped = datasets_dir()
    if shipped.is_dir():
        _tree_digest(digest, shipped, contents=False)
    for name in _DEPENDENCIES:
        spec = importlib.util.find_spec(name)
        folders = [] if spec is None else list(spec.submodule_search_locations or [])
        for folder in folders[:1]:
            for file in ("__init__.py", "version.py"):
                with contextlib.suppress(OSError):
                    stat = os.stat(os.path.join(folder, file))
                    digest.update(f"{name}/{file} {stat.st_size} {stat.st_mtime_ns}".encode())
    digest.update(f"{sys.version} {platform.machine()} {platform.node()}".encode())


def call_key(argv: list[str]) -> str | None:
    """The hash a record of this call is filed under, or None when none is kept (the
    cache is off, another command, ``--help``, standard input, an argument that names a
    folder, a pipe or a device)."""
    if cache_off() or not argv or argv[0] not in COMMANDS:
        return None
    if any(a in ("-", "-h", "--help") or a.startswith("--report") for a in argv):
        return None
    # A folder, a pipe (``/dev/stdin``, ``<(...)``), a device: bytes a record cannot hash.
    if any(os.path.exists(t) and not os.path.isfile(t) for t in _path_tokens(argv)):
        return None
    digest = hashlib.sha256(f"perfmodel answers {_FORMAT}\0".encode())
    described = {
        "argv": list(argv),
        "cwd": os.getcwd(),
        "environment": {k: v for k, v in sorted(os.environ.items()) if k.startswith(_ENVIRONMENT)},
    }
    digest.update(json.dumps(described, sort_keys=True).encode())
    try:
        _code_digest(digest)
    except OSError:
        return None
    return digest.hexdigest()


def _path_tokens(argv: list[str]) -> list[str]:
    """Every argument, and the value of every ``--flag=value``, that could name a file."""
    tokens = []
    for token in argv[1:]:
        tokens.append(token)
        if token.startswith("-") and "=" in token:
            tokens.append(token.partition("=")[2])
    return tokens


def _input_file(token: str) -> str | None:
    """The file an argument reads: itself, or the shipped dataset it names (``fit``
    accepts a dataset's name); None when it names neither."""
    if os.path.isfile(token):
        return token
    if token.startswith("-") or os.sep in token:
        return None
    shipped = shipped_csv(token)
    return None if shipped is None else str(shipped)


def _file_hash(path: str) -> str | None:
    """The SHA-256 of the file's bytes, or None when it cannot be read."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as stream:
            while block := stream.read(1 << 20):
                digest.update(block)
    except OSError:
        return None
    return digest.hexdigest()


def _record_path(key: str) -> Path:
    return cache_dir() / "answers" / f"{key}.json"


def answer(key: str) -> int | None:
    """Print and write what the recorded run of the call `key` (`call_key`) did, and
    return its exit status; None when there is no valid record (it then runs in full)."""
    try:
        record = json.loads(_record_path(key).read_text(encoding="utf-8"))
        if record.get("format") != _FORMAT:
            return None
        inputs, chunks = record["inputs"], record["chunks"]
        output, document = record["output"], record["document"]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    if any(_file_hash(path) != digest for path, digest in inputs.items()):
        return None
    now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    restamped = f'"created": "{now}"'
    if output is not None:
        from .._files import atomic_write, check_output

        try:
            check_output(output, inputs=list(inputs), what="-o")  # as the full run would
            with atomic_write(output) as stream:
                stream.write(_CREATED.sub(restamped, document, count=1))
        except Exception:  # the full run reports why it cannot write
            return None
        mark_checked(output)  # the recorded bytes passed the schema; only "created" moved
    for stream, text in chunks:
        target = sys.stdout if stream == 1 else sys.stderr
        target.write(_CREATED.sub(restamped, text, count=1) if stream == 1 else text)
        target.flush()
    return 0


class _Tee:
    """A text stream that writes through to `stream` and keeps what was written in
    `record` (up to `MAX_RECORD` characters)."""

    def __init__(self, stream, number: int, record: "Recording"):
        self._stream, self._number, self._record = stream, number, record

    def write(self, text: str) -> int:
        self._record.size += len(text)
        if self._record.size <= MAX_RECORD:
            self._record.chunks.append((self._number, text))
        return self._stream.write(text)

    def __getattr__(self, name):
        return getattr(self._stream, name)


class Recording:
    """What a run printed; `keep` files it as the call's record."""

    def __init__(self, argv: list[str], key: str):
        self.argv, self.key, self.chunks, self.size = argv, key, [], 0
        # The inputs' bytes before the run (the output, existing from an earlier run, is
        # left out in `keep`).
        self.inputs = {
            path: _file_hash(path) for path in map(_input_file, _path_tokens(argv)) if path
        }

    def keep(self, args, status: int) -> None:
        """File the record of a run that ended with `status` and `args` (best effort)."""
        output = getattr(args, "output", None)
        if status != 0 or getattr(args, "report", None) is not None or self.size > MAX_RECORD:
            return
        inputs = {p: h for p, h in self.inputs.items() if p != output and h is not None}
        # The text this run wrote (not the file read back: another run may have replaced it).
        document = getattr(args, "written_fit", None)
        if output is not None and (document is None or len(document) + self.size > MAX_RECORD):
            return
        chunks = _merged(self.chunks)
        record = {
            "format": _FORMAT,
            "argv": self.argv,
            "inputs": inputs,
            "output": output,
            "document": document,
            "chunks": chunks,
        }
        path = _record_path(self.key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            temporary = path.with_suffix(f".{os.getpid()}.tmp")
            temporary.write_text(json.dumps(record), encoding="utf-8")
            os.replace(temporary, path)
        except OSError:
            pass


def _merged(chunks: list[tuple[int, str]]) -> list[list]:
    """Consecutive writes to the same stream as one ``[stream, text]``."""
    merged: list[list] = []
    for number, text in chunks:
        if merged and merged[-1][0] == number:
            merged[-1][1].append(text)
        else:
            merged.append([number, [text]])
    return [[number, "".join(texts)] for number, texts in merged]


@contextlib.contextmanager
def recording(argv: list[str], key: str):
    """Keep what the block prints: a `Recording` of the call `key` (`call_key`)."""
    record = Recording(argv, key)
    saved = sys.stdout, sys.stderr
    sys.stdout = _Tee(sys.stdout, 1, record)
    sys.stderr = _Tee(sys.stderr, 2, record)
    try:
        yield record
    finally:
        sys.stdout, sys.stderr = saved
