"""Files on disk: the package version written into them, reading with one-line errors,
and atomic writes that leave either the old file or the complete new one.

Every write goes to a temporary ``.perfmodel-<pid>-XXXX.tmp`` beside the output and is
renamed over it once complete. Inside `all_or_nothing`, the renames wait until the whole
block has succeeded, so a command that fails writes none of its outputs. A temporary
left by a process that was killed (its pid is no longer alive) is removed by the next
write into that folder; live writers' temporaries are left alone, so concurrent writers
never remove each other's.
"""

import contextlib
import contextvars
import os
from pathlib import Path
import re
import stat
import sys
import tempfile

from ._errors import InputError
from ._keywords import did_you_mean

_PREFIX = ".perfmodel-"
_SUFFIX = ".tmp"
_TEMPORARY = re.compile(r"\.perfmodel-(\d+)-.*\.tmp")
# The (temporary, path) renames an `all_or_nothing` block is holding back; None outside.
_PENDING: contextvars.ContextVar[list | None] = contextvars.ContextVar("pending", default=None)
# What ``-`` (standard input) and pipes gave: they can be read once, and a command reads
# its input file more than once (a fit file: its cache mark, its sections, the file).
_STREAMS: dict[str, bytes] = {}


def package_version() -> str:
    """The installed perfmodel version, or ``"0+unknown"`` from a source tree."""
    from importlib import metadata  # ~50 ms: only when asked

    try:
        return metadata.version("perfmodel")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def datasets_dir() -> Path:
    """The folder of shipped CSVs: inside the installed wheel, else the source tree's."""
    from importlib import resources

    packaged = Path(str(resources.files("perfmodel"))) / "datasets"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent / "datasets"


def shipped_csv(name: str) -> Path | None:
    """The shipped CSV called `name` (with or without ``.csv``), or None when there is
    none (no path search: `name` is a dataset's name, not a path)."""
    path = datasets_dir() / f"{name.removesuffix('.csv')}.csv"
    # os.path, not Path: a name past the file system's limit is no dataset, where
    # Path.is_file raised "File name too long" for a path the user never gave.
    return path if os.path.isfile(path) else None


def shipped_file(text: str) -> Path | None:
    """The shipped file a repository-relative path names (``datasets/usl_specsdm91.csv``,
    ``datasets/logs/mllog_ssd``, as the docs write them) when run outside a checkout;
    None for any other path."""
    parts = Path(text).parts
    if len(parts) < 2 or parts[0] != "datasets" or ".." in parts:
        return None
    path = datasets_dir().joinpath(*parts[1:])
    return path if os.path.exists(path) else None


def reason(error: OSError) -> str:
    """The operating system's words for `error` (``Permission denied``)."""
    return error.strerror or str(error)


# Reading ------------------------------------------------------------------------------


def _shipped_hint(source: str, what: str) -> str:
    """What a missing `source` may have meant among the shipped datasets: the fit file of
    one (``predict usl_specsdm91``), or one spelt otherwise (``fit usl_specsdm9``)."""
    name = Path(source).name.removesuffix(".csv")
    try:
        names = sorted(p.stem for p in datasets_dir().glob("*.csv"))
    except OSError:
        return ""
    if name in names and what == "fit file":
        return (
            f" ({name!r} is a shipped dataset: perfmodel fit {name} -o fit.json makes a fit file)"
        )
    if name in names or what == "fit file":
        return ""
    close = did_you_mean(name, names, cutoff=0.8)
    return close.replace("did you mean ", "did you mean the shipped dataset ")


def read_bytes(path: str | os.PathLike, what: str = "file") -> bytes:
    """The content of `path` (``-``: standard input; a pipe's content is kept, so it reads
    the same every time); an InputError naming it when it is missing, a directory or
    cannot be read (permissions, I/O errors)."""
    source = os.fspath(path)
    if not source:
        raise InputError(f"expected a {what} name, got an empty string")
    if source in _STREAMS:
        return _STREAMS[source]
    if source == "-":  # standard input, as `cat fit.json | perfmodel predict - --gpus 64`
        _STREAMS[source] = sys.stdin.buffer.read()
        return _STREAMS[source]
    if not os.path.exists(source):
        raise InputError(f"{source}: no such file{_shipped_hint(source, what)}")
    if os.path.isdir(source):
        raise InputError(f"{source}: is a directory, expected a {what}")
    try:
        with open(source, "rb") as stream:
            content = stream.read()
            if not stat.S_ISREG(os.fstat(stream.fileno()).st_mode):  # /dev/stdin, a FIFO
                _STREAMS[source] = content
            return content
    except OSError as error:
        raise InputError(f"{source}: cannot read ({reason(error)})") from None


def forget_streams() -> None:
    """Drop what standard input and pipes gave (`read_bytes`): a new command reads anew."""
    _STREAMS.clear()


def read_text(path: str | os.PathLike, what: str = "file") -> str:
    """`read_bytes` decoded as UTF-8; an InputError for other bytes."""
    data = read_bytes(path, what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"{os.fspath(path)}: not a UTF-8 text {what} ({error})") from None


# Output paths -------------------------------------------------------------------------


def _same_file(a: str, b: str) -> bool:
    try:
        if os.path.exists(a) and os.path.exists(b):
            return os.path.samefile(a, b)
    except OSError:
        pass
    return os.path.realpath(a) == os.path.realpath(b)


def _check_target(path: str, what: str) -> tuple[str, str]:
    """The file to write and its folder, after refusing an empty name, ``-`` (standard
    output is not written to), a directory, something that is not a regular file (a
    FIFO or a device: the rename would replace it), a missing folder and a name longer
    than the file system allows. A symbolic link is written through: its target is
    replaced, the link kept."""
    if not path.strip():
        raise InputError(f"{what}: expected a file name, got an empty string")
    if path == "-":
        raise InputError(f"{what}: expected a file name, got '-' (perfmodel writes files)")
    if os.path.isdir(path):
        raise InputError(f"{path}: is a directory; give {what} a file name")
    if os.path.islink(path):
        path = os.path.realpath(path)
    if os.path.exists(path) and not os.path.isfile(path):
        raise InputError(
            f"{path}: is not a regular file (a FIFO, device or socket), which writing would "
            f"replace; give {what} a file name"
        )
    directory = os.path.dirname(os.path.abspath(path))
    if os.path.isfile(directory):  # "directory data.csv does not exist" named a file
        raise InputError(f"{path}: {directory} is a file, not a directory")
    if not os.path.isdir(directory):
        raise InputError(f"{path}: directory {directory} does not exist")
    try:
        limit = os.pathconf(directory, "PC_NAME_MAX")
    except (OSError, ValueError):
        limit = 255
    # The temporary beside it is longer than the name itself.
    if len(os.fsencode(os.path.basename(path))) > limit:
        raise InputError(f"{path}: cannot write (file name longer than {limit} bytes)")
    return path, directory


def check_output(path: str | os.PathLike, inputs=(), what: str = "-o") -> None:
    """Refuse an output path before any work: empty, a directory, in a missing or
    read-only folder, a read-only file, a name too long, or the same file as one of
    `inputs` (writing it would destroy the input).

    Raises:
        InputError: one line naming the path and the reason.
    """
    path = os.fspath(path)
    _, directory = _check_target(path, what)
    for other in inputs:
        if other is not None and _same_file(path, os.fspath(other)):
            raise InputError(
                f"{path}: {what} names an input of this command ({os.fspath(other)}); "
                "writing it would replace the input: choose another name"
            )
    if os.path.exists(path) and not os.access(path, os.W_OK):
        raise InputError(f"{path}: cannot write (the file is read-only)")
    try:  # the only sure test that a file can be created there (read-only mounts, root)
        handle, probe = tempfile.mkstemp(dir=directory, prefix=_temporary_prefix(), suffix=_SUFFIX)
    except OSError as error:
        raise InputError(f"{path}: cannot write ({reason(error)})") from None
    os.close(handle)
    with contextlib.suppress(OSError):
        os.unlink(probe)


# Writing ------------------------------------------------------------------------------


def _temporary_prefix() -> str:
    return f"{_PREFIX}{os.getpid()}-"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # another user's process (or a pid we cannot ask about)
    return True


def remove_stale_temporaries(directory: str | os.PathLike) -> list[str]:
    """Remove the ``.perfmodel-<pid>-*.tmp`` files in `directory` whose writer is no
    longer running (killed between writing and renaming); returns their names."""
    removed = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for entry in entries:
        match = _TEMPORARY.fullmatch(entry.name)
        if match is None or int(match.group(1)) == os.getpid() or _alive(int(match.group(1))):
            continue
        with contextlib.suppress(OSError):
            os.unlink(entry.path)
            removed.append(entry.name)
    return removed


def _commit(temporary: str, path: str) -> None:
    try:
        # mkstemp makes the file private (0600); give it the permissions open() would.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, path)
    except OSError as error:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise InputError(f"{path}: cannot write ({reason(error)})") from None


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "w"):
    """Open a temporary file beside `path`; it replaces `path` only if the block succeeds.

    So an error half-way leaves no half-written file behind, and a kill leaves at most a
    hidden temporary that the next write into the folder removes. Text is UTF-8.

    Raises:
        InputError: naming `path`, for an empty name, a directory, a missing folder and
            every operating-system error on writing (read-only, full disk, ...).
    """
    path, directory = _check_target(os.fspath(path), "the output")
    remove_stale_temporaries(directory)
    try:
        handle, temporary = tempfile.mkstemp(
            dir=directory, prefix=_temporary_prefix(), suffix=_SUFFIX
        )
    except OSError as error:
        raise InputError(f"{path}: cannot write ({reason(error)})") from None
    try:
        text = "b" not in mode  # UTF-8; a lone surrogate (a non-UTF-8 file name) escaped
        encoding, errors = ("utf-8", "backslashreplace") if text else (None, None)
        try:
            with os.fdopen(handle, mode, encoding=encoding, errors=errors) as stream:
                yield stream
        except OSError as error:
            raise InputError(f"{path}: cannot write ({reason(error)})") from None
        pending = _PENDING.get()
        if pending is not None:
            pending.append((temporary, path))
        else:
            _commit(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


@contextlib.contextmanager
def all_or_nothing():
    """Hold back the renames of every `atomic_write` inside the block until it succeeds.

    A command with several outputs (a fit and its report, a Markdown report and its
    figure) writes them all inside one block: if any step fails, none is written.
    Nested blocks join the outermost one.
    """
    if _PENDING.get() is not None:
        yield
        return
    pending: list[tuple[str, str]] = []
    token = _PENDING.set(pending)
    try:
        yield
    except BaseException:
        for temporary, _ in pending:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
        raise
    finally:
        _PENDING.reset(token)
    for i, (temporary, path) in enumerate(pending):
        try:
            _commit(temporary, path)
        except InputError:
            for later, _ in pending[i + 1 :]:
                with contextlib.suppress(OSError):
                    os.unlink(later)
            raise
