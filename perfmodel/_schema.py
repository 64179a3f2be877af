"""The fit file's schema (format ``perfmodel.fit``, version 3), checked field by field.

Version 3 (round 2 of the default, `Blend`) changed only the ``blend`` family: its
options (regime, largest count, the power laws' exponents) and parameters
(``"<member>.<term>.<param>"``), and its components' ``far`` weights; an anchored blend
adds the option ``anchor`` (the member its measured range is handed over to), that
member's parameters and ``anchor: true`` on its component. Version-2 files of
every other family read as before; a version-2 blend (round 1's sum of three families)
is refused in one line: refit it. A joint fit of step times and nccl-tests logs marks
``model.covariance_from`` (`JOINT`): its Laplace draws take ``raw_covariance`` as it is;
absent, the covariance is the measurements' alone (every other fit, and older files).

A fit file drives every later answer, so nothing in it is trusted: `check_document`
checks types, finiteness and physical ranges, the model's family and options, that every
parameter of the model is given (no silent defaults), the names in ``free`` and
``bounds``, the covariance's shape and the data's lengths, and names the offending field
in one line: ``fit.json: parameters.compute.time.value: expected a positive number of s
between 1e-307 and 1e+307, got -0.08``.

Non-finite numbers are never written (strict JSON); ``null`` stands for them:

- ``raw_covariance``: an entry of ``null`` is an infinite (co)variance: the data do not
  determine that parameter (the direction of the stored parameters it has weight on).
  Files written before this rule hold ``Infinity`` there, which is read the same way.
- ``parameters.*.log_stderr``: ``null`` is an unknown or infinite standard error.
- ``quality.r2``, ``quality.mape_percent``, ``loss.value``: ``null`` is undefined (R² of
  measurements that do not vary) or not finite.
- ``bounds``: ``null`` leaves that side of the bound open.
"""

import hashlib
import inspect
import json
import math
import types
import typing

import numpy as np

from . import _closed
from ._config import (
    CODED_FIELDS,
    CONFIG_FIELDS,
    COUNT_FIELDS,
    LARGEST_VALUE,
    NONNEGATIVE_FIELDS,
)
from ._data import MAX_DECADES
from ._errors import InputError
from ._keywords import did_you_mean
from ._levels import LARGEST_COUNT
from ._presets import BASIC_ONLY_OPTIONS, build, FAMILIES

FORMAT = "perfmodel.fit"
SCHEMA_VERSION = 3
READABLE_VERSIONS = (2, 3)  # 2: every family but the round-1 blend
# Times (s) and bandwidths (B/s) lie in [SMALLEST, MAGNITUDE]: normal float64 numbers
# whose reciprocals, sums and ratios stay finite.
MAGNITUDE = 1e307
SMALLEST = 1e-307
"""The smallest such value: 1/MAGNITUDE rounds to 1.0000000000000001e-307, so a fit
file's 1e-307 was refused as out of "1e-307 to 1e+307"."""
# Counts a fit file must hold whole, as a CSV must (`perfmodel._config.COUNT_FIELDS`), but
# ``microbatches``: the Megatron log reader derives it as batch / (dp · micro-batch).
FIT_FILE_WHOLE = tuple(name for name in COUNT_FIELDS if name != "microbatches")
TARGETS = ("time", "throughput")
PRECISIONS = ("float32", "float64")
LOSS_KINDS = ("log", "squared", "huber", "relative")
INTERVALS = ("laplace", "bootstrap", "conformal")
# The keys of the objects inside a fit file, as `perfmodel._io.fit_to_dict` writes them;
# any other is refused (`_Checker.known`). The top level may hold more (`save_fit`'s
# `extra`: the candidates, a time-to-train section).
# `model.covariance_from` of a fit to step times and nccl-tests logs together
# (`FitResult.covariance_from`); absent: the measurements alone.
JOINT = "measurements and nccl-tests logs"
MODEL_FIELDS = ("family", "options", "components", "intervals", "assumed", "covariance_from")
COMPONENT_FIELDS = ("family", "name", "weight", "far", "anchor", "options", "parameters")
ENTRY = ("value", "unit", "description", "fixed", "log_stderr")  # one parameter's
QUALITY = ("r2", "mape_percent", "converged", "message", "num_steps", "warnings")
DATA_FIELDS = ("source", "gpus", "time_s", "lines", "unit", "scaling", "per_gpu", "config")
REQUIRED = (
    "model",
    "target",
    "parameters",
    "free",
    "bounds",
    "loss",
    "quality",
    "raw_covariance",
    "config_defaults",
    "data",
    "precision",
)


# The parts of ``data`` the parameters were fitted to (not its file name or line numbers).
MEASUREMENTS = ("gpus", "time_s", "config", "unit", "scaling", "per_gpu")


def data_digest(data: dict) -> str:
    """SHA-256 of the measurements of a fit file's ``data`` (`MEASUREMENTS`, keys sorted):
    written beside it as ``data_sha256`` so that an edit of what the parameters were
    fitted to is seen (answers read it: the one-GPU time, the measured peak, the node)."""
    measured = _as_floats({key: data.get(key) for key in MEASUREMENTS})
    text = json.dumps(measured, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


def _as_floats(value):
    """`value` with every number a float: the digest is of values, not of how a tool
    wrote them (``8`` and ``8.0``; jq and JavaScript drop the ``.0``)."""
    if isinstance(value, dict):
        return {k: _as_floats(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_floats(v) for v in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return value


def _check_data_digest(c: "_Checker", document: dict) -> None:
    """``data`` as it was written, where the file has a ``data_sha256`` (files of
    perfmodel 2026-12-05 and later)."""
    if "data_sha256" not in document:
        return
    stored = c.string(document["data_sha256"], "data_sha256")
    found = data_digest(document["data"])  # the data checks above passed: plain JSON
    if found != stored:
        raise InputError(
            f"{c.source}: data: edited after the fit (data_sha256 no longer matches), so the "
            "parameters were fitted to other measurements; refit with `perfmodel fit`, or "
            "delete data_sha256 to read the file as it is"
        )


def show(value) -> str:
    """`value` as JSON would spell it, short (containers summarised, never recursed)."""
    if isinstance(value, dict):
        return f"an object with {len(value)} keys"
    if isinstance(value, list):
        return f"a list of {len(value)} items"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return {math.inf: "Infinity", -math.inf: "-Infinity"}.get(value, repr(value))
    if isinstance(value, str):
        text = repr(value)
        return text if len(text) <= 60 else text[:57] + "…'"
    return repr(value)[:60]


def _finite(value: int | float) -> bool:
    """Whether a JSON number is a finite float64 (an integer beyond 1.8e308 is not)."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


class _Checker:
    """Checks of one document; every failure is an InputError naming `source` and the
    field."""

    def __init__(self, source: str):
        self.source = source

    def fail(self, where: str, expected: str, got) -> typing.NoReturn:
        raise InputError(f"{self.source}: {where}: expected {expected}, got {show(got)}")

    def mapping(self, value, where: str, what: str = "an object") -> dict:
        if not isinstance(value, dict):
            self.fail(where, what, value)
        return value

    def known(self, value: dict, where: str, fields: tuple[str, ...]) -> dict:
        """`value` when every key is one of `fields`: a key this perfmodel does not read
        (``model.interval`` for ``model.intervals``) would be an edit silently ignored."""
        for key in value:
            if key not in fields:
                raise InputError(
                    f"{self.source}: {where}.{key}: not a field of {where} (an edit this "
                    f"perfmodel would ignore); valid: {', '.join(fields)}"
                )
        return value

    def sequence(self, value, where: str, what: str = "a list") -> list:
        if not isinstance(value, list):
            self.fail(where, what, value)
        return value

    def string(self, value, where: str, choices=None) -> str:
        if not isinstance(value, str) or (choices is not None and value not in choices):
            expected = "a string" if choices is None else "one of " + ", ".join(choices)
            self.fail(where, expected, value)
        return value

    def boolean(self, value, where: str) -> bool:
        if not isinstance(value, bool):
            self.fail(where, "true or false", value)
        return value

    def integer(self, value, where: str, minimum: int = 0) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            self.fail(where, f"a whole number ≥ {minimum}", value)
        return value

    def number(self, value, where: str, *, nullable=False, low=None, high=None, what=None):
        """A finite int or float (not a bool) in ``[low, high]``, or None if `nullable`."""
        if value is None and nullable:
            return None
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        ok = ok and _finite(value)
        ok = ok and (low is None or value >= low) and (high is None or value <= high)
        if not ok:
            self.fail(where, what or _range_text(low, high, nullable), value)
        return float(value)

    def numbers(self, value, where: str, length: int | None, *, low, each: str) -> list:
        """A list of finite numbers ≥ `low` (of `length` items when given), `each` saying
        what one item should be."""
        items = self.sequence(value, where, f"a list, each item {each}")
        if length is not None and len(items) != length:
            raise InputError(
                f"{self.source}: {where}: expected {length} values (one per measurement, "
                f"as data.gpus), got {len(items)}"
            )
        if set(map(type, items)) <= {int, float}:  # 10⁶ measurements: checked at once
            try:
                values = np.asarray(items, dtype=np.float64)
            except OverflowError:  # an integer beyond float64: named item by item below
                values = None
            if values is not None:
                bad = np.flatnonzero(~(np.isfinite(values) & (values >= low)))
                if bad.size == 0:
                    return items
                self.fail(f"{where}[{bad[0]}]", each, items[bad[0]])
        for i, item in enumerate(items):
            ok = isinstance(item, (int, float)) and not isinstance(item, bool)
            if not (ok and _finite(item) and item >= low):
                self.fail(f"{where}[{i}]", each, item)
        return items


def _range_text(low, high, nullable) -> str:
    text = "a finite number"
    if low is not None and high is not None:
        text += f" in [{low:g}, {high:g}]"
    elif low is not None:
        text += f" ≥ {low:g}"
    return text + (" or null" if nullable else "")


def _parameter_text(spec) -> str:
    if spec.kind == "fraction":
        return "a fraction strictly between 0 and 1"
    return f"a positive number of {spec.unit} between {SMALLEST:g} and {MAGNITUDE:g}"


def parameter_ok(spec, value) -> bool:
    """Whether `value` is a valid physical value for a parameter of `spec`."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if spec.kind == "fraction":
        return 0.0 < value < 1.0
    return SMALLEST <= value <= MAGNITUDE


# Model options --------------------------------------------------------------------------


def _kinds(annotation) -> tuple:
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        return typing.get_args(annotation)
    return (annotation,)


def _option_ok(kinds: tuple, value, positive: bool) -> bool:
    if value is None:
        return type(None) in kinds
    if isinstance(value, bool):
        return bool in kinds
    if isinstance(value, str):
        return str in kinds
    if isinstance(value, int) and int in kinds:
        return True
    if isinstance(value, (int, float)) and float in kinds:
        return math.isfinite(value) and (value > 0 or not positive)
    return False


def _kind_text(kinds: tuple, positive: bool) -> str:
    words = {
        bool: "true or false",
        str: "a string",
        int: "a whole number",
        float: "a positive finite number" if positive else "a finite number",
        type(None): "null",
    }
    return " or ".join(words.get(k, getattr(k, "__name__", str(k))) for k in kinds)


def check_options(family: str, options, model: str = "model"):
    """The model of `family` built with `options`, after checking each option's name and
    type against the family's signature (a string ``"no"`` is not a bool; options that
    are physical quantities must be positive).

    Raises:
        InputError: naming ``{model}.family`` or ``{model}.options.{option}`` (no file
            name: callers add it).
    """
    if family not in FAMILIES:
        hint = did_you_mean(str(family).lower(), FAMILIES)
        raise InputError(f"{model}.family: unknown {family!r}{hint}; valid: {', '.join(FAMILIES)}")
    where = f"{model}.options"
    if not isinstance(options, dict):
        raise InputError(f"{where}: expected a table of options, got {show(options)}")
    if family == "hybrid" and BASIC_ONLY_OPTIONS & set(options):
        family = "hybrid_basic"  # written before the Megatron-LM model took the name
    function = FAMILIES[family]
    signature = inspect.signature(function).parameters
    hints = typing.get_type_hints(function)
    for name, value in options.items():
        if name not in signature:
            valid = ", ".join(signature) or "none"
            hint = did_you_mean(name, signature)
            raise InputError(f"{where}.{name}: not an option of {family}{hint}; valid: {valid}")
        kinds = _kinds(hints.get(name, object))
        default = signature[name].default
        positive = isinstance(default, float) and default > 0
        if not _option_ok(kinds, value, positive):
            raise InputError(
                f"{where}.{name}: expected {_kind_text(kinds, positive)}, got {show(value)}"
            )
    try:
        return build(family, **options)
    except (TypeError, ValueError) as error:  # the family's own checks (InputError too)
        field = f"{where}.anchor" if str(error).startswith("blend anchor") else where
        raise InputError(f"{field}: {error}") from None


# The document ---------------------------------------------------------------------------


def check_document(document, source: str):
    """Check a parsed fit file; returns the model (family and options, default values).

    Raises:
        InputError: ``{source}: {field}: expected ..., got ...``.
    """
    c = _Checker(source)
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise InputError(f"{source}: not a perfmodel fit file (format is not {FORMAT!r})")
    if "schema_version" not in document:
        raise InputError(f"{source}: not a perfmodel fit file (missing key 'schema_version')")
    version = document["schema_version"]
    if isinstance(version, bool) or not isinstance(version, int):
        c.fail("schema_version", f"the whole number {SCHEMA_VERSION}", version)
    if version not in READABLE_VERSIONS:
        raise InputError(
            f"{source}: schema_version: fit file schema version {version}, but this "
            f"perfmodel reads version {SCHEMA_VERSION}; refit with `perfmodel fit` to update it"
        )
    model_spec = document.get("model")
    if version == 2 and isinstance(model_spec, dict) and model_spec.get("family") == "blend":
        raise InputError(
            f"{source}: model.family: a version-2 fit of the round-1 default blend, which "
            "this perfmodel replaced (docs/families.md); refit with `perfmodel fit` to update it"
        )
    for key in REQUIRED:
        if key not in document:
            raise InputError(f"{source}: not a perfmodel fit file (missing key {key!r})")
    for key in ("perfmodel_version", "created"):
        if key in document:
            c.string(document[key], key)
    spec = c.known(c.mapping(document["model"], "model"), "model", MODEL_FIELDS)
    family = c.string(spec.get("family"), "model.family", tuple(FAMILIES))
    if family == "blend":  # no default stands in for what the fit found
        options = c.mapping(spec.get("options"), "model.options")
        for key in BLEND_OPTIONS:
            if key not in options:
                raise InputError(f"{source}: model.options.{key}: missing")
    options = spec.get("options", {})
    carried = {}
    if family == "blend" and isinstance(options, dict) and "carried" in options:
        options = dict(options)  # a what-if's fitted values, not an option of the preset
        carried = c.mapping(options.pop("carried"), "model.options.carried")
    try:
        model = check_options(family, options)
    except InputError as error:
        raise InputError(f"{source}: {error}") from None
    specs = model.parameter_specs()
    for name, value in carried.items():
        if name not in specs:
            c.fail(f"model.options.carried.{name}", "a parameter of the blend", name)
        what = f"a positive value between {SMALLEST:g} and {MAGNITUDE:g} (as --set takes)"
        c.number(value, f"model.options.carried.{name}", low=SMALLEST, high=MAGNITUDE, what=what)
    intervals = c.string(spec.get("intervals", "laplace"), "model.intervals", INTERVALS)
    if intervals == "conformal" and family != "blend":
        others = " or ".join(i for i in INTERVALS if i != "conformal")
        c.fail(
            "model.intervals",
            f"{others} for the {family} family (conformal intervals are the default blend's)",
            intervals,
        )
    c.string(spec.get("assumed", ""), "model.assumed")
    c.string(
        spec.get("covariance_from", "measurements"),
        "model.covariance_from",
        ("measurements", JOINT),
    )
    components = c.sequence(spec.get("components", []), "model.components", "a list")
    members = tuple(getattr(model, "names", ()))  # a blend's; no other family has any
    if len(components) > len(members):  # checked before each one: 10⁶ would take minutes
        what = f"one per member ({', '.join(members)})" if members else "none: not a blend"
        c.fail("model.components", f"at most {len(members)} components, {what}", components)
    for i, component in enumerate(components):
        _check_component(c, component, f"model.components[{i}]")
    c.string(document["target"], "target", TARGETS)
    c.string(document["precision"], "precision", PRECISIONS)
    specs = model.parameter_specs()
    fixed = _check_parameters(c, document["parameters"], specs, family)
    _check_component_copies(c, components, document["parameters"])
    _check_anchor_flags(c, components, spec.get("options", {}).get("anchor", ""))
    if family == "blend":
        _check_blend_copies(c, components, spec.get("options", {}))
    free = _check_free(c, document["free"], specs, fixed, family)
    _check_bounds(c, document["bounds"], specs)
    _check_within_bounds(c, document["parameters"], document["bounds"])
    _check_covariance(c, document["raw_covariance"], len(free))
    loss = c.known(c.mapping(document["loss"], "loss"), "loss", ("kind", "value"))
    c.string(loss.get("kind"), "loss.kind", LOSS_KINDS)
    if "value" not in loss:  # null is a loss that was not finite; absent is an edit
        raise InputError(f"{source}: loss.value: missing")
    c.number(loss.get("value"), "loss.value", nullable=True, low=0.0)
    _check_quality(c, c.known(c.mapping(document["quality"], "quality"), "quality", QUALITY))
    defaults = c.mapping(document["config_defaults"], "config_defaults")
    for name, value in defaults.items():
        if name not in CONFIG_FIELDS:
            raise InputError(f"{source}: config_defaults.{name}: not a Config field")
        floor = name in NONNEGATIVE_FIELDS  # codes and "not given" may be 0
        what = "a finite number ≥ 0" if floor else "a positive finite number"
        c.number(value, f"config_defaults.{name}", what=what)
        if value < 0 or (value == 0 and not floor):
            c.fail(f"config_defaults.{name}", what, value)
        _check_field(c, name, [value], f"config_defaults.{name}")
    gpus = _check_data(c, c.known(c.mapping(document["data"], "data"), "data", DATA_FIELDS))
    unit = document["data"].get("unit", "")
    if document["target"] == "throughput" and unit and not unit.endswith("/s"):
        # `target` edited to throughput on a time fit: "time_s in s per , throughput in s".
        c.fail("data.unit", "work per second (e.g. images/s) for a throughput fit", unit)
    if document["target"] == "time" and unit not in ("", "s"):
        c.fail("data.unit", "s (or empty) for a time fit", unit)
    if family == "blend" and float(spec["options"]["largest"]) != max(gpus):
        c.fail(
            "model.options.largest",
            f"the largest measured count, {max(gpus):g} (data.gpus)",
            spec["options"]["largest"],
        )
    _check_data_digest(c, document)  # last: an edit the checks above name, they name
    return model


def _check_component_copies(c: _Checker, components, parameters) -> None:
    """A blend's members repeat their parameters (``model.components[i].parameters``);
    the answers are computed from the top-level ``parameters.<member>.<name>.value``, so
    a copy that disagrees with it (a hand edit of the wrong one) is refused, naming both."""
    for i, component in enumerate(components):
        member = component.get("name", component["family"])
        for name, value in component["parameters"].items():
            top = parameters.get(f"{member}.{name}")
            if not isinstance(top, dict) or not isinstance(top.get("value"), (int, float)):
                continue
            if not math.isclose(float(value), float(top["value"]), rel_tol=1e-9, abs_tol=0.0):
                raise InputError(
                    f"{c.source}: the two copies of {member}.{name} disagree: "
                    f"parameters.{member}.{name}.value is {top['value']!r} (the one the "
                    f"answers use) and model.components[{i}].parameters.{name} is "
                    f"{value!r}; give both the value you want"
                )


# What a blend's fit found, never defaulted: the regime, the largest measured count and
# the power laws' exponents.
BLEND_OPTIONS = ("regime", "largest", "power_exponent", "flat_exponent")


def _check_blend_copies(c: _Checker, components, options: dict) -> None:
    """A blend's members repeat its weights (``weight``: NEAR, ``far``: FAR of its regime)
    and its power laws' exponents (``options.exponent``), which the answers take from the
    regime and ``model.options``: a copy edited alone is refused, naming both."""
    regime = options.get("regime")
    exponents = {
        "power_law": options.get("power_exponent"),
        "power_law_flat": options.get("flat_exponent"),
    }
    for i, component in enumerate(components):
        name = component.get("name", component["family"])
        where = f"model.components[{i}]"
        for key, table in (("weight", _closed.NEAR), ("far", _closed.FAR)):
            expected = table.get(regime, {}).get(name, 0.0)
            if key in component and not math.isclose(float(component[key]), expected):
                raise InputError(
                    f"{c.source}: {where}.{key}: {component[key]!r} is not the {regime} "
                    f"regime's weight of {name} ({expected!r}), which the answers use; the "
                    "weights are the regime's, not a field to edit"
                )
        given = (component.get("options") or {}).get("exponent")
        expected = exponents.get(name)
        if given is not None and expected is not None and given != expected:
            raise InputError(
                f"{c.source}: the two copies of {name}'s exponent disagree: "
                f"model.options gives {expected!r} (the one the answers use) and "
                f"{where}.options.exponent {given!r}; give both the value you want"
            )


def _check_anchor_flags(c: _Checker, components, anchor: str) -> None:
    """A blend's ``components[i].anchor`` flag is true on its anchor (``options.anchor``)
    and on no other member: a hand edit of one without the other is refused."""
    for i, component in enumerate(components):
        name = component.get("name", component["family"])
        expected = bool(anchor) and name == anchor
        if bool(component.get("anchor", False)) != expected:
            c.fail(
                f"model.components[{i}].anchor",
                f"{str(expected).lower()} (model.options.anchor is {anchor or 'not set'!r})",
                component.get("anchor", False),
            )


def _check_component(c: _Checker, component, where: str) -> None:
    """One member of a blend: a family, its options, NEAR and FAR weights in [0, 1] (FAR
    and the member's name are optional), its parameters."""
    component = c.mapping(component, where, "an object {family, weight, options, parameters}")
    c.known(component, where, COMPONENT_FIELDS)
    family = c.string(component.get("family"), f"{where}.family", tuple(FAMILIES))
    try:
        model = check_options(family, component.get("options", {}), f"{where}.options")
    except InputError as error:
        raise InputError(f"{c.source}: {error}") from None
    for key in ("weight", "far"):
        if key == "far" and key not in component:
            continue
        weight = c.number(component.get(key), f"{where}.{key}")
        if not 0.0 <= weight <= 1.0:
            c.fail(f"{where}.{key}", "a weight between 0 and 1", weight)
    if "name" in component:
        c.string(component["name"], f"{where}.name")
    if "anchor" in component and not isinstance(component["anchor"], bool):
        c.fail(f"{where}.anchor", "true or false", component["anchor"])
    parameters = c.mapping(component.get("parameters"), f"{where}.parameters")
    specs = model.parameter_specs()
    for name in specs:
        if name not in parameters:
            raise InputError(f"{c.source}: {where}.parameters.{name}: missing")
        if not parameter_ok(specs[name], parameters[name]):
            c.fail(f"{where}.parameters.{name}", _parameter_text(specs[name]), parameters[name])
    for name in parameters:
        if name not in specs:
            raise InputError(
                f"{c.source}: {where}.parameters.{name}: not a parameter of {family}; "
                f"valid: {', '.join(specs)}"
            )


def _check_parameters(c: _Checker, parameters, specs, family: str) -> set[str]:
    parameters = c.mapping(parameters, "parameters", "an object {name: {value, fixed, ...}}")
    for name in specs:
        if name not in parameters:
            raise InputError(
                f"{c.source}: parameters.{name}: missing; every parameter of the {family} "
                f"family ({', '.join(specs)}) must be given, none is filled in by default"
            )
    fixed = set()
    for name, entry in parameters.items():
        where = f"parameters.{name}"
        if name not in specs:
            raise InputError(
                f"{c.source}: {where}: not a parameter of {family}; valid: {', '.join(specs)}"
            )
        entry = c.known(c.mapping(entry, where, "an object {value, fixed, ...}"), where, ENTRY)
        if "value" not in entry:
            raise InputError(f"{c.source}: {where}.value: missing")
        if not parameter_ok(specs[name], entry["value"]):
            c.fail(f"{where}.value", _parameter_text(specs[name]), entry["value"])
        if "unit" in entry and entry["unit"] != specs[name].unit:
            # A value edited with its unit to "ms" was read in seconds, 1000× off.
            c.fail(
                f"{where}.unit",
                f"{specs[name].unit!r}, the unit {family} reads it in (convert the value)",
                entry["unit"],
            )
        if c.boolean(entry.get("fixed", False), f"{where}.fixed"):
            fixed.add(name)
        c.number(entry.get("log_stderr"), f"{where}.log_stderr", nullable=True, low=0.0)
    return fixed


def _check_free(c: _Checker, free, specs, fixed: set[str], family: str) -> list:
    free = c.sequence(free, "free", "a list of parameter names")
    for i, name in enumerate(free):
        if not isinstance(name, str) or name not in specs:
            raise InputError(
                f"{c.source}: free[{i}]: {show(name)} is not a parameter of {family}; "
                f"valid: {', '.join(specs)}"
            )
    for i, name in enumerate(free):
        if name in fixed or name in free[:i]:
            why = "is marked fixed" if name in fixed else "is listed twice"
            raise InputError(
                f"{c.source}: free[{i}]: {name!r} {why}; a fitted parameter is free once"
            )
    return free


def _check_bounds(c: _Checker, bounds, specs) -> None:
    bounds = c.mapping(bounds, "bounds", "an object {name: [lo, hi]}")
    for name, pair in bounds.items():
        where = f"bounds.{name}"
        if name not in specs:
            raise InputError(f"{c.source}: {where}: not a parameter; valid: {', '.join(specs)}")
        if not isinstance(pair, list) or len(pair) != 2:
            c.fail(where, "[lo, hi] (null for an open side)", pair)
        for side, value in zip(("lo", "hi"), pair):
            if value is not None and not parameter_ok(specs[name], value):
                c.fail(f"{where}.{side}", _parameter_text(specs[name]) + " or null", value)
        lo, hi = pair
        if lo is not None and hi is not None and not lo < hi:
            c.fail(where, "lo < hi", pair)


def _check_within_bounds(c: _Checker, parameters: dict, bounds: dict) -> None:
    """Each parameter inside its own bounds: one outside them was answered with an
    interval that excluded the answer ("speedup 10.2× (90% confidence interval 4–4.02×)")."""
    for name, (lo, hi) in bounds.items():
        value = parameters[name]["value"]
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            side = "[" + ", ".join("open" if v is None else f"{v:g}" for v in (lo, hi)) + "]"
            c.fail(f"parameters.{name}.value", f"a value within bounds.{name} {side}", value)


# Of a stored (log or logit) parameter: a standard deviation of 1000 in log is already a
# factor e^1000; larger entries only overflow the draws.
LARGEST_VARIANCE = 1e6


def _check_covariance(c: _Checker, covariance, k: int) -> None:
    if covariance is None:
        return
    shape = f"null or a {k}×{k} matrix (a row and a column per free parameter)"
    rows = c.sequence(covariance, "raw_covariance", shape)
    if len(rows) != k or not all(isinstance(r, list) and len(r) == k for r in rows):
        lengths = [len(r) if isinstance(r, list) else show(r) for r in rows[:4]]
        raise InputError(
            f"{c.source}: raw_covariance: expected {shape}, got {len(rows)} row(s) of "
            f"length {', '.join(map(str, lengths))}"
        )
    for i, row in enumerate(rows):
        for j, value in enumerate(row):
            if value is None or value == math.inf:
                continue  # infinite variance: the data do not determine this direction
            c.number(value, f"raw_covariance[{i}][{j}]", what="a finite number or null")
            if abs(value) > LARGEST_VARIANCE:
                c.fail(
                    f"raw_covariance[{i}][{j}]",
                    f"at most {LARGEST_VARIANCE:g} in size (null for an unbounded one)",
                    value,
                )
            if i == j and value < 0:
                c.fail(f"raw_covariance[{i}][{i}]", "a variance ≥ 0", value)
    _check_covariance_shape(c, rows)


def _check_covariance_shape(c: _Checker, rows: list) -> None:
    """Symmetric, and each covariance within its variances' product (a matrix that is
    not one made `next` divide by zero or take the root of a negative number)."""
    variance = [math.inf if row[i] is None else float(row[i]) for i, row in enumerate(rows)]
    for i, row in enumerate(rows):
        for j in range(i + 1, len(row)):
            a, b = row[j], rows[j][i]
            if (a is None) != (b is None) or (
                a is not None and not math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-300)
            ):
                c.fail(f"raw_covariance[{i}][{j}]", f"raw_covariance[{j}][{i}] (symmetric)", a)
            if a is None or not math.isfinite(variance[i] * variance[j]):
                continue
            bound = math.sqrt(variance[i] * variance[j])
            if abs(a) > bound * (1.0 + 1e-6) + 1e-300:
                c.fail(
                    f"raw_covariance[{i}][{j}]",
                    f"at most √(variance {i} × variance {j}) = {bound:.6g} in size",
                    a,
                )


def _check_quality(c: _Checker, quality: dict) -> None:
    for key in QUALITY:
        if key not in quality:
            raise InputError(f"{c.source}: quality.{key}: missing")
    c.number(quality["r2"], "quality.r2", nullable=True, high=1.0)
    c.number(quality["mape_percent"], "quality.mape_percent", nullable=True, low=0.0)
    c.boolean(quality["converged"], "quality.converged")
    c.string(quality["message"], "quality.message")
    c.integer(quality["num_steps"], "quality.num_steps")
    for i, warning in enumerate(c.sequence(quality["warnings"], "quality.warnings")):
        c.string(warning, f"quality.warnings[{i}]")


def _check_data(c: _Checker, data: dict) -> list:
    """Check the measurements; returns their GPU counts."""
    for key in ("source", "gpus", "time_s", "config"):
        if key not in data:
            raise InputError(f"{c.source}: data.{key}: missing")
    c.string(data["source"], "data.source")
    gpus = c.numbers(data["gpus"], "data.gpus", None, low=1.0, each="a GPU count ≥ 1")
    if len(gpus) < 2:  # no fit is made from one (a cut file answered "0–inf×")
        c.fail("data.gpus", "at least two measurements", gpus)
    n = len(gpus)
    times = c.numbers(data["time_s"], "data.time_s", n, low=0.0, each="a positive time")
    seconds = np.asarray(times, dtype=np.float64)
    for i in np.flatnonzero(seconds <= 0)[:1]:
        c.fail(f"data.time_s[{i}]", "a positive time", times[i])
    low, high = int(np.argmin(seconds)), int(np.argmax(seconds))
    if np.log10(seconds[high]) - np.log10(seconds[low]) > MAX_DECADES:  # as a CSV's column
        c.fail(
            f"data.time_s[{low}]",
            f"times within {MAX_DECADES:g} orders of magnitude of data.time_s[{high}] "
            f"({times[high]!r})",
            times[low],
        )
    lines = data.get("lines")
    if lines is not None:
        lines = c.sequence(lines, "data.lines", "null or a list of line numbers")
        if len(lines) != n:
            c.fail("data.lines", f"{n} line numbers (one per measurement)", lines)
        whole = set(map(type, lines)) <= {int} and (not lines or min(lines) >= 1)
        for i, line in enumerate([] if whole else lines):
            c.integer(line, f"data.lines[{i}]", minimum=1)
    c.string(data.get("unit", ""), "data.unit")
    scaling = data.get("scaling")
    if scaling is not None:
        c.string(scaling, "data.scaling", ("weak", "strong"))
    c.boolean(data.get("per_gpu", False), "data.per_gpu")
    config = c.mapping(data["config"], "data.config")
    for name, values in config.items():
        if name not in CONFIG_FIELDS or name == "gpus":
            raise InputError(f"{c.source}: data.config.{name}: not a Config field")
        floor = name in NONNEGATIVE_FIELDS  # codes and "not given" may be 0
        each = "a number ≥ 0" if floor else "a positive number"
        column = c.numbers(values, f"data.config.{name}", n, low=0.0, each=each)
        zeros = [] if floor else np.flatnonzero(np.asarray(column, dtype=np.float64) == 0)
        for i in zeros[:1]:
            c.fail(f"data.config.{name}[{i}]", each, column[i])
        _check_field(c, name, column, f"data.config.{name}", indexed=True)
    counts = np.asarray(gpus, dtype=np.float64)
    for i in np.flatnonzero((counts != np.round(counts)) | (counts > LARGEST_COUNT))[:1]:
        c.fail(f"data.gpus[{i}]", f"a whole GPU count from 1 to {LARGEST_COUNT:,}", gpus[i])
    return gpus


def _check_field(c: _Checker, name: str, values: list, where: str, indexed=False) -> None:
    """A code of `CODED_FIELDS` among its codes (recompute = 7 was read and answered),
    a count of `FIT_FILE_WHOLE` whole, and no value past `LARGEST_VALUE` (layers = 1e308
    hung the layout search)."""
    array = np.asarray(values, dtype=np.float64)
    bad = array > LARGEST_VALUE
    what = f"a value of at most {LARGEST_VALUE:g} (no field of a training run is larger)"
    if name in FIT_FILE_WHOLE:  # interleave = 0.5 was answered with a time
        bad |= array != np.floor(array)
        what = f"a whole number of at most {LARGEST_VALUE:g}"
    if name in CODED_FIELDS:
        bad |= ~np.isin(array, CODED_FIELDS[name])
        what = "one of " + ", ".join(f"{code:g}" for code in CODED_FIELDS[name])
    for i in np.flatnonzero(bad)[:1]:
        c.fail(f"{where}[{i}]" if indexed else where, what, values[i])
