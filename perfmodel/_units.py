"""Units of measured columns: a time column's unit from its name (``Time_ms``), a
throughput's rate from its name (``images_per_min``) or from the user (``scripts/hour``),
and the seconds each counts in."""

import re

from ._errors import InputError

TIME_UNITS = {"s": "seconds", "ms": "milliseconds", "us": "microseconds"}
# The last word of a column's name that gives its unit (``Time_ms``, ``step time (s)``);
# units perfmodel does not read map to None, so that they are refused, not misread.
_UNIT_WORDS = {
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), "s"),
    **dict.fromkeys(("ms", "msec", "msecs", "millis", "millisecond", "milliseconds"), "ms"),
    **dict.fromkeys(
        ("us", "µs", "μs", "usec", "usecs", "micros", "microsecond", "microseconds"), "us"
    ),
    **dict.fromkeys(("ns", "nsec", "nanos", "nanosecond", "nanoseconds"), None),
    **dict.fromkeys(("min", "mins", "minute", "minutes"), None),
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), None),
}
NO_UNIT = object()  # a name that states no unit
# Seconds in the time a throughput counts its work per ("scripts/hour": 3600).
PER_TIME = {
    **dict.fromkeys(("s", "sec", "second"), 1.0),
    **dict.fromkeys(("min", "minute"), 60.0),
    **dict.fromkeys(("h", "hr", "hour"), 3600.0),
    "day": 86400.0,
    **dict.fromkeys(("ms", "msec", "millisecond"), 1e-3),
    **dict.fromkeys(("us", "µs", "usec", "microsecond"), 1e-6),
}
# A rate per GPU (per device, per rank) in a column's name: perfmodel fits the total.
_PER_DEVICE = re.compile(r"(?:per[_ ]?|/)(?:gpu|device|rank|accelerator)s?(?![a-z])", re.I)


def _words(name: str) -> list[str]:
    """The lower-case words of a column's name, split at separators and camel case
    (``timeMS`` → time, ms)."""
    camel = re.sub(r"(?<=[a-z])(?=[A-Z])", "_", name.strip())
    return [w for w in re.split(r"[\s_\-.()\[\]/]+", camel.lower()) if w]


def unit_of_column(name: str):
    """The time unit a column's name states: ``"ms"`` for ``Time_ms``, ``time (ms)``,
    ``timeMS``, ``ms_per_step`` or ``time_millis`` (the last word, else the one unit word
    elsewhere in it), None for a unit perfmodel does not read (``lat_ns``) or for two
    units at once, `NO_UNIT` when it names none."""
    words = _words(name)
    if not words:
        return NO_UNIT
    if words[-1] in _UNIT_WORDS:
        return _UNIT_WORDS[words[-1]]
    # Elsewhere in the name: "ms_per_step", "time_ms_avg" were read as seconds (1000×).
    found = {_UNIT_WORDS[w] for w in words if w in _UNIT_WORDS}
    if len(found) == 1:
        return found.pop()
    return None if found else NO_UNIT


_TIME_WORDS = {"time", "latency", "duration", "elapsed"}


def names_a_time(column: str) -> bool:
    """Whether a column's name says it holds a time in a unit (``time_s``,
    ``step_latency_ms``), not a rate: ``img_s`` and ``tokens_per_sec`` are rates."""
    return bool(_TIME_WORDS & set(_words(column))) and unit_of_column(column) not in (NO_UNIT, None)


def time_unit_of(column: str, time_unit: str | None, source: str) -> tuple[str, str]:
    """``(unit, read_as)`` of a named time column: `time_unit` when given, else the unit
    its name ends in, else seconds; a name and a `time_unit` that disagree are refused."""
    if time_unit is not None and time_unit not in TIME_UNITS:
        raise InputError(f"time unit must be s, ms or us, got {time_unit!r}")
    named = unit_of_column(column)
    if named is None:
        raise InputError(
            f"{source}: column {column!r} is in a unit perfmodel does not read, by its name; "
            "give times in seconds, milliseconds or microseconds (s, ms, us)"
        )
    if named is not NO_UNIT and time_unit is not None and named != time_unit:
        raise InputError(
            f"{source}: column {column!r} is in {TIME_UNITS[named]} by its name, but "
            f"{{arg:time_unit}} says {TIME_UNITS[time_unit]}; leave {{arg:time_unit}} out "
            "or name the column without a unit"
        )
    if time_unit is not None:
        return time_unit, f"read {column} as {TIME_UNITS[time_unit]}"
    if named is not NO_UNIT:
        return named, f"read {column} as {TIME_UNITS[named]}, from its name"
    return "s", f"read {column} as seconds: its name gives no unit, so seconds are assumed"


_RATE_IN_NAME = re.compile(
    r"^(?P<work>.*?[a-z].*?)\s*(?:_per_|\s+per\s+|/)\s*(?P<per>[a-z]+)\s*\)?\s*$",
    re.IGNORECASE,
)


def rate_of_column(column: str) -> str | None:
    """The rate a throughput column's name states, as work per time: ``images_per_min``
    → ``"images/min"``, ``throughput (tokens/s)`` → ``"tokens/s"``; None when the name
    states none (``throughput``, ``img_s``)."""
    match = _RATE_IN_NAME.match(column.strip())
    if match is None:
        return None
    work, per = match["work"], match["per"].lower()
    key = per[:-1] if per not in PER_TIME and per.endswith("s") else per
    if key not in PER_TIME:
        return None
    work = work.rpartition("(")[2].strip(" _") or work.strip(" _()")
    return f"{work}/{per}" if work else None


def throughput_unit_of(column: str | None, unit: str | None, source: str) -> tuple[str, bool]:
    """``(unit, from_name)``: `unit` when given, else the rate `column`'s name states,
    else work per second; a name and a `unit` whose times disagree are refused."""
    if column is not None and _PER_DEVICE.search(column):
        raise InputError(
            f"{source}: column {column!r} is a throughput per GPU by its name; perfmodel "
            "fits the total of all GPUs: add a column of it (the value × gpus) and name "
            "that one with {arg:throughput_column}"
        )
    named = None if column is None else rate_of_column(column)
    if unit is None:
        return (named, True) if named else ("work/s", False)
    if named and throughput_seconds(named, source)[0] != throughput_seconds(unit, source)[0]:
        raise InputError(
            f"{source}: column {column!r} is {named} by its name, but {{arg:throughput_unit}} "
            f"says {unit}; leave {{arg:throughput_unit}} out or name the column without a rate"
        )
    return unit, False


def throughput_seconds(unit: str, source: str) -> tuple[float, str]:
    """The seconds a throughput unit counts its work per, and the unit per second:
    ``"scripts/hour"`` → ``(3600.0, "scripts/s")``, ``"images/s"`` → ``(1.0, "images/s")``.

    Raises:
        InputError: a unit that is not work per ``us``, ``ms``, ``s``, ``min``, ``h`` or
            ``day``.
    """
    work, slash, per = unit.rpartition("/")
    key = per.strip().lower()
    if key not in PER_TIME and key.endswith("s"):
        key = key[:-1]  # "hours", "secs"
    if not slash or not work.strip() or key not in PER_TIME:
        raise InputError(
            f"{source}: throughput unit {unit!r}: expected work per time, e.g. images/s, "
            "tokens/min or scripts/hour"
        )
    return PER_TIME[key], f"{work.strip()}/s"


def work_name(unit: str | None) -> str:
    """One unit of the work a throughput counts: ``"image"`` for ``"images/s"``, ``"unit
    of work"`` for ``"work/s"`` or none."""
    name = (unit or "work/s").split("/")[0]
    if name == "work":
        return "unit of work"
    return name[:-1] if name.endswith("s") else name
