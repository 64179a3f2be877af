"""Misspelt keyword arguments fail with the valid ones listed and the closest suggested.

Python's own message (``fit() got an unexpected keyword argument 'max_gpu'``) names
neither the right spelling nor the choices. The public functions (`perfmodel`'s names)
check their keywords first: their own parameters, and for ``**overrides`` the `Config`
fields they are passed to, or for ``**fit_options`` the options of `fit`.
"""

import difflib
import functools
import inspect

_KEYWORD_KINDS = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def unknown_keywords(where: str, unknown, valid, passed=(), to: str = "") -> TypeError:
    """The TypeError for keywords `unknown` of `where`, listing `valid` and then the
    names `passed` on `to` something else (e.g. the `Config` fields)."""
    unknown = sorted(unknown)
    passed = [p for p in passed if p not in valid]
    everything = [*valid, *passed]
    guesses = [difflib.get_close_matches(name, everything, n=1, cutoff=0.6) for name in unknown]
    hints = [
        f"{name!r} (did you mean {g[0]!r}?)" if g else repr(name)
        for name, g in zip(unknown, guesses)
    ]
    noun = "argument" if len(unknown) == 1 else "arguments"
    also = f"; and {to}: {', '.join(passed)}" if passed else ""
    return TypeError(
        f"{where} got an unexpected keyword {noun} {', '.join(hints)}; valid: "
        f"{', '.join(valid)}{also}"
    )


def _extra(name: str) -> tuple[tuple[str, ...], str]:
    """The names a ``**name`` parameter passes on, and to what."""
    if name == "overrides":
        from ._config import CONFIG_FIELDS

        return tuple(f for f in CONFIG_FIELDS if f != "gpus"), "Config fields"
    import dataclasses

    from ._fitting import FitOptions

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
