"""Files on disk: the package version written into them, and atomic writes."""

import contextlib
from importlib import metadata
import os
import tempfile

from ._errors import InputError


def package_version() -> str:
    """The installed perfmodel version, or ``"0+unknown"`` from a source tree."""
    try:
        return metadata.version("perfmodel")
    except metadata.PackageNotFoundError:
        return "0+unknown"


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "w"):
    """Open a temporary file beside `path`; it replaces `path` only if the block succeeds.

    So an error half-way leaves no half-written file behind.
    """
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise InputError(f"{path}: directory {directory} does not exist")
    handle, temporary = tempfile.mkstemp(dir=directory, prefix=".perfmodel-", suffix=".tmp")
    try:
        with os.fdopen(handle, mode) as stream:
            yield stream
        # mkstemp makes the file private (0600); give it the permissions open() would.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
