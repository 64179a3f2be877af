"""Public functions behind a check of their keyword arguments: their own parameters, and
for ``**overrides`` the `Config` fields they are passed to, for ``**fit_options`` the
options of `fit`, or for ``**config`` the columns `from_arrays` reads (`perfmodel._keywords`
words the error); and of the fit or benchmarks
they take, so that a `Selection`, a path or a list stops in one line naming what to pass
instead of an AttributeError deep inside."""

import dataclasses
import functools
import inspect
import os

from ._config import CONFIG_FIELDS
from ._data import BATCH_PER_GPU_COLUMN, Benchmarks
from ._errors import InputError
from ._fitting import FitOptions, FitResult
from ._keywords import unknown_keywords
from ._saved import SavedFit

_KEYWORD_KINDS = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
_EMPTY = inspect.Parameter.empty
# ``**name`` parameters whose names are checked (see `_extra`).
_PASSED_ON = ("overrides", "fit_options", "config")
_PATH = "read a saved fit with perfmodel.load_fit(path)"
_TABLE = "a CSV path: load_benchmarks(path); a shipped dataset: load_dataset(name)"
# What a parameter takes, by name and annotation (none: the questions, which take a fit
# file read without JAX too; `TimeToTrainFit`'s `fit` is not checked here): the types
# accepted, what to call them, and what to pass instead of the usual mix-ups.
_EXPECTED = {
    ("fit", _EMPTY): ((FitResult, SavedFit), "fit_auto(data).best, fit or load_fit"),
    ("fit", FitResult): ((FitResult, SavedFit), "fit_auto(data).best, fit or load_fit"),
    ("before", FitResult): ((FitResult,), "fit_auto(data).best, fit or load_fit"),
    ("after", FitResult): ((FitResult,), "fit_auto(data).best, fit or load_fit"),
    ("data", Benchmarks): ((Benchmarks,), "load_benchmarks, load_dataset or from_arrays"),
    ("benchmarks", Benchmarks): ((Benchmarks,), "load_benchmarks, load_dataset or from_arrays"),
    # Files and names: None or a number stopped in os.fspath or str.removesuffix.
    ("path", str | os.PathLike): ((str, os.PathLike), ""),
    ("path_or_text", str | os.PathLike): ((str, os.PathLike), ""),
    ("name", str): ((str,), ""),
}
_HINTS = {
    ("FitResult", "Selection"): "pass its .best",
    ("FitResult", "JointFit"): "pass its .fit",
    ("FitResult", "Benchmarks"): "fit them first: perfmodel.fit_auto(data).best",
    ("FitResult", "str"): _PATH,
    ("FitResult", "PosixPath"): _PATH,
    ("FitResult", "WindowsPath"): _PATH,
    ("Benchmarks", "str"): _TABLE,
    ("Benchmarks", "PosixPath"): _TABLE,
    ("Benchmarks", "WindowsPath"): _TABLE,
    ("Benchmarks", "DataFrame"): "pass from_arrays(df.gpus, df.time_s) (or throughput=)",
}


def _extra(name: str) -> tuple[tuple[str, ...], str]:
    """The names a ``**name`` parameter passes on, and to what."""
    if name == "overrides":
        return tuple(f for f in CONFIG_FIELDS if f != "gpus"), "Config fields"
    if name == "config":  # from_arrays: the columns a CSV may add
        return (*(f for f in CONFIG_FIELDS if f != "gpus"), BATCH_PER_GPU_COLUMN), "columns"
    return tuple(f.name for f in dataclasses.fields(FitOptions)), "options of fit"


def _typed(params) -> tuple[tuple[int, str, tuple, str], ...]:
    """``(position, name, types, made by)`` of the parameters `_EXPECTED` names."""
    found = []
    for position, p in enumerate(params):
        expected = _EXPECTED.get((p.name, p.annotation))
        if expected is not None:
            found.append((position, p.name, *expected))
    return tuple(found)


def expect(value, name: str, types: tuple, made_by: str, where: str) -> None:
    """An InputError unless `value`, argument `name` of `where`, is one of `types`
    (made by `made_by`), with a hint for the usual mix-ups."""
    if isinstance(value, types):
        return
    wanted, kind = types[0].__name__, type(value).__name__
    if os.PathLike in types:
        what = "a file path or the log's text" if name == "path_or_text" else "a file path"
        raise InputError(f"{where}: expected {what} (str or os.PathLike) for {name}, got {kind}")
    if not made_by:
        raise InputError(f"{where}: expected {wanted} for {name}, got {kind}")
    hint = _HINTS.get((wanted, kind))
    raise InputError(
        f"{where}: expected {wanted} for {name} (from perfmodel.{made_by}), got {kind}"
        + (f"; {hint}" if hint else "")
    )


def checked(function):
    """`function` behind a check of its keyword arguments and of the fit or benchmarks
    it takes (see the module docstring); the keywords of functions taking other
    ``**kwargs`` are left to them."""
    signature = inspect.signature(function)
    params = signature.parameters.values()
    own = tuple(p.name for p in params if p.kind in _KEYWORD_KINDS)
    var = [p.name for p in params if p.kind is inspect.Parameter.VAR_KEYWORD]
    keywords = not var or var[0] in _PASSED_ON
    typed = _typed(params)
    if not (keywords or typed):
        return function
    passed = []

    @functools.wraps(function)
    def call(*args, **kwargs):
        for position, name, types, made_by in typed:
            if position < len(args) or name in kwargs:
                value = args[position] if position < len(args) else kwargs[name]
                expect(value, name, types, made_by, f"{function.__name__}()")
        unknown = [k for k in kwargs if k not in own] if keywords else []
        if unknown and var:
            if not passed:
                passed.extend(_extra(var[0]))
            unknown = [k for k in unknown if k not in passed[0]]
        if unknown:
            extra, to = passed or ((), "")
            raise unknown_keywords(f"{function.__name__}()", unknown, own, extra, to)
        return function(*args, **kwargs)

    return call
