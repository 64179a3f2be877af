"""The error of a misspelt keyword argument (or field, option, table): the valid ones
listed, the closest suggested.

Python's own message (``fit() got an unexpected keyword argument 'max_gpu'``) names
neither the right spelling nor the choices. The public functions (`perfmodel`'s names)
check their keywords first (`perfmodel._checked`); `Config` checks its fields. This
module imports nothing of perfmodel, so that both can use it.
"""

from collections.abc import Iterable
import difflib


def did_you_mean(name: str, valid: Iterable[str], cutoff: float = 0.6) -> str:
    """`` (did you mean 'layers'?)`` for the valid name closest to `name`, else ``""``."""
    close = difflib.get_close_matches(name, list(valid), n=1, cutoff=cutoff)
    return f" (did you mean {close[0]!r}?)" if close else ""


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
