"""Public functions behind a check of their keyword arguments: their own parameters, and
for ``**overrides`` the `Config` fields they are passed to, or for ``**fit_options`` the
options of `fit` (`perfmodel._keywords` words the error)."""

import dataclasses
import functools
import inspect

from ._config import CONFIG_FIELDS
from ._fitting import FitOptions
from ._keywords import unknown_keywords

_KEYWORD_KINDS = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def _extra(name: str) -> tuple[tuple[str, ...], str]:
    """The names a ``**name`` parameter passes on, and to what."""
    if name == "overrides":
        return tuple(f for f in CONFIG_FIELDS if f != "gpus"), "Config fields"
    return tuple(f.name for f in dataclasses.fields(FitOptions)), "options of fit"


def checked(function):
    """`function` behind a check of its keyword arguments (see the module docstring);
    functions taking other ``**kwargs`` are returned as they are."""
    signature = inspect.signature(function)
    params = signature.parameters.values()
    own = tuple(p.name for p in params if p.kind in _KEYWORD_KINDS)
    var = [p.name for p in params if p.kind is inspect.Parameter.VAR_KEYWORD]
    if var and var[0] not in ("overrides", "fit_options"):
        return function
    passed = []

    @functools.wraps(function)
    def call(*args, **kwargs):
        unknown = [k for k in kwargs if k not in own]
        if unknown and var:
            if not passed:
                passed.extend(_extra(var[0]))
            unknown = [k for k in unknown if k not in passed[0]]
        if unknown:
            extra, to = passed or ((), "")
            raise unknown_keywords(f"{function.__name__}()", unknown, own, extra, to)
        return function(*args, **kwargs)

    return call
