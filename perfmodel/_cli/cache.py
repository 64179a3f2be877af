"""JAX's persistent compilation cache for the command line, in a user cache directory.

Every `perfmodel` call is a fresh process that would compile the same functions again
(a fit, a prediction, an optimum); with the cache, later calls read them from disk. It
lives in ``jax/`` under ``$PERFMODEL_CACHE_DIR``, else ``$XDG_CACHE_HOME/perfmodel``, else
``~/.cache/perfmodel`` (`perfmodel._cli.draws` keeps the fits' ensembles beside it, in
``ensembles/``); ``PERFMODEL_NO_CACHE=1`` turns both off. Only the command line
turns it on: the library never changes JAX's global configuration for Python users,
who can do the same with ``jax.config.update("jax_compilation_cache_dir", ...)``.
"""

import os
from pathlib import Path

ENV_OFF = "PERFMODEL_NO_CACHE"
ENV_DIR = "PERFMODEL_CACHE_DIR"


def cache_off() -> bool:
    """Whether ``PERFMODEL_NO_CACHE`` turns every cache of the command line off."""
    return os.environ.get(ENV_OFF, "").strip() not in ("", "0")


def cache_dir() -> Path:
    """The command line's cache folder (compiled functions in ``jax/``)."""
    given = os.environ.get(ENV_DIR)
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "perfmodel"


def enable_compilation_cache() -> Path | None:
    """Point JAX's persistent compilation cache at ``cache_dir()/jax`` (every compilation, however
    short); None when turned off or the folder cannot be made (then JAX just compiles)."""
    if cache_off():
        return None
    path = cache_dir() / "jax"
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    if not os.access(path, os.W_OK):
        return None
    import jax

    jax.config.update("jax_compilation_cache_dir", str(path))
    # A CLI call compiles many small functions; each is worth keeping.
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    return path


# Fit files the schema passed ------------------------------------------------------------
#
# `predict` and `optimal` read a fit file without JAX (`perfmodel._cli.quick`) only when
# this perfmodel's full check (`perfmodel._schema.check_document`, which builds the model
# with JAX) has already passed the same bytes: `perfmodel fit` marks the file it writes,
# and every JAX-path load marks the file it read. An edited file (a value, a deleted key)
# has other bytes, so it is checked in full again, and refused with the schema's error.


def _checked_mark(path: str | os.PathLike) -> Path | None:
    """Where the mark of the file at `path` lives (a hash of its bytes and of the
    perfmodel version), or None when the cache is off or the file cannot be read."""
    if cache_off():
        return None
    import hashlib

    from .._errors import InputError
    from .._files import package_version, read_bytes

    try:
        content = read_bytes(path)
    except InputError:
        return None
    digest = hashlib.sha256(package_version().encode() + b"\0" + content).hexdigest()
    return cache_dir() / "checked" / digest


def was_checked(path: str | os.PathLike) -> bool:
    """Whether the fit file at `path`, byte for byte, passed the full check before."""
    mark = _checked_mark(path)
    return mark is not None and mark.exists()


def mark_checked(path: str | os.PathLike) -> None:
    """Remember that the fit file at `path` passed the full check (best effort: a cache
    that cannot be written only means the JAX path next time)."""
    mark = _checked_mark(path)
    if mark is None:
        return
    try:
        mark.parent.mkdir(parents=True, exist_ok=True)
        mark.touch()
    except OSError:
        pass
