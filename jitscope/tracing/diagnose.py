"""Trace-time failures -> a Diagnostic that points at the user's line and names the fix."""

from __future__ import annotations

import linecache
import re
from collections.abc import Mapping, Sequence
from typing import Any

from jitscope.jaxcompat.jit import JitOptions
from jitscope.jaxcompat.values import concretization_arguments, trace_error_kind, traced_names_at_failure
from jitscope.model.common import Location
from jitscope.model.trace import Diagnostic
from jitscope.userframes import count_user_frames, display_path, format_user_traceback, last_user_frame

# JAX's message for an unhashable static value ends its first line at "The error was:"; the
# type and the hash error follow. Parsed from the text because JAX raises a plain ValueError.
_UNHASHABLE = re.compile(r"hash an object of type <class '([^']+)'>, (.*?)\. The error was:\s*(.*)", re.DOTALL)


def unhashable_type(exc: BaseException) -> str | None:
    """The type name of the unhashable static value JAX refused, e.g. ``list``."""
    m = _UNHASHABLE.search(str(exc))
    return m.group(1) if m else None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    m = _UNHASHABLE.search(text)
    if m:
        kind, value, why = m.group(1), m.group(2), m.group(3).strip().splitlines()
        value = value if len(value) <= 60 else value[:57] + "..."
        because = f" ({why[0]})" if why else ""
        return f"{type(exc).__name__}: a static argument is not hashable: got a {kind}, {value}{because}"
    head = text.splitlines()[0] if text else type(exc).__name__
    return f"{type(exc).__name__}: {head}"


#: Python values that look like settings when passed for a top-level parameter (not data).
_SETTING_TYPES = (bool, int, float, complex, str, bytes, type(None))
_TOP_NAME = re.compile(r"[^\[.]+")
# JAX refusing a non-array argument: "... of type <class 'str'> and was passed to the function at path mode."
_NOT_AN_ARRAY = re.compile(r"as an abstract array\. The problematic value is of type <class '([^']+)'> "
                           r"and was passed to the function at path (\S+?)\.?$", re.MULTILINE)


def settings_in_call(names: Sequence[str], args: Sequence[Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """Top-level parameters given a Python scalar, string or bool in the call: the ones that look like settings.

    Array specs, arrays and pytrees are data; their values are never worth making static.
    """
    pairs = [*zip(names, args, strict=False), *kwargs.items()]
    return {name: value for name, value in pairs if isinstance(value, _SETTING_TYPES)}


def _top_level(paths: Sequence[str]) -> list[str]:
    """``params[0]['ln']`` -> ``params``: JAX names pytree leaves, but only parameters can be static."""
    tops = [m.group(0) for p in paths if (m := _TOP_NAME.match(p.strip()))]
    return list(dict.fromkeys(tops))


def _names(names: Sequence[str]) -> str:
    return " and ".join(f"`{n}`" for n in names)


def _concrete_value_fix(kind: str | None, names: list[str], settings: Mapping[str, Any] | None) -> str:
    data_fix = (
        "use jnp.where / jax.lax.cond / jax.lax.select instead of a Python `if`"
        if kind == "bool_conversion"
        else "use jax.lax.fori_loop / jax.lax.dynamic_slice instead of Python ints"
        if kind == "integer_conversion"
        else "use jnp / jax.lax operations instead of Python ones"
    )
    if settings is None:  # the call's values are unknown: say both
        static = " ".join(f"--static {n}=VALUE" for n in names) or "--static NAME=VALUE"
        subject = " or ".join(f"`{n}`" for n in names) or "the value"
        return (
            f"Python needs a concrete value here but {subject} is traced: if it is data, {data_fix}; "
            f"if it is a setting, mark it static ({static}, or static_argnames in jax.jit)"
        )
    data = [n for n in names if n not in settings]
    knobs = [n for n in names if n in settings]
    parts = []
    if data or not knobs:
        subject = f"{_names(data)} {'is' if len(data) == 1 else 'are'} traced data" if data else "the value is traced"
        parts.append(f"Python needs a concrete value here but {subject}: {data_fix}")
    if knobs:
        static = " ".join(f"--static {n}={settings[n]!r}" for n in knobs)
        verb = "is a Python value" if len(knobs) == 1 else "are Python values"
        lead = "" if parts else "Python needs a concrete value here: "
        parts.append(
            f"{lead}{_names(knobs)} {verb} in the call; if {'it is a setting' if len(knobs) == 1 else 'they are settings'}, "
            f"mark {'it' if len(knobs) == 1 else 'them'} static ({static}, or static_argnames in jax.jit)"
        )
    return "; ".join(parts)


def _fix_for(kind: str | None, exc: BaseException, options: JitOptions, settings: Mapping[str, Any] | None) -> str:
    named = _top_level(concretization_arguments(exc))
    if not named and kind in ("bool_conversion", "concretization", "integer_conversion"):
        named = traced_names_at_failure(exc)  # older JAX does not name the arguments
    names = [n for n in named if n not in options.static_argnames]
    if kind in ("bool_conversion", "concretization", "integer_conversion") or (kind in ("shape", None) and names):
        # e.g. jnp.zeros(n) with a traced n raises a TypeError that still names the argument.
        return _concrete_value_fix(kind, names, settings)
    untraceable = _NOT_AN_ARRAY.search(str(exc))
    if untraceable:
        top = _top_level([untraceable.group(2)])
        name = top[0] if top else "NAME"
        value = f"{settings[name]!r}" if settings and name in settings else "VALUE"
        return (
            f"`{name}` is a {untraceable.group(1)}, which JAX cannot trace: mark it static "
            f"(--static {name}={value}, or static_argnames in jax.jit)"
        )
    if kind == "array_conversion":
        return "a NumPy function received a tracer: use the jax.numpy (jnp) equivalent inside traced code"
    if kind == "tracer_leak":
        return "a tracer escaped the function (stored in a global, self or a cache): return it instead"
    if kind == "unhashable_static":
        culprit = unhashable_type(exc)
        what = f" (this one is a {culprit})" if culprit else ""
        return (
            f"static arguments must be hashable{what}: pass a tuple instead of a list (or a frozen "
            "dataclass), or stop marking the argument static"
        )
    if "ShapeDtypeStruct" in str(exc) and "not a valid JAX type" in str(exc):
        return ("an abstract value (jax.ShapeDtypeStruct) reached the call: jitscope gives values to those in "
                "plain containers and registered pytrees (a TrainState, an equinox module); register the class "
                "holding it as a pytree, or pass real arrays")
    if kind == "shape":
        return "the shapes do not fit this operation: check --shapes against what the function expects"
    return "this error is raised by your code while JAX traced it; see the traceback below"


def diagnose(exc: BaseException, options: JitOptions, settings: Mapping[str, Any] | None = None) -> Diagnostic:
    """Explain a trace-time exception from the user's function.

    ``settings`` maps the top-level parameters given Python scalars in the call to their values
    (see :func:`settings_in_call`); only those are suggested as ``--static``. None: unknown.
    """
    kind = trace_error_kind(exc)
    frame = last_user_frame(exc)
    location = source_line = None
    if frame is not None and frame.lineno is not None:
        location = Location(display_path(frame.filename), frame.lineno, frame.name, (getattr(frame, "colno", 0) or 0) + 1)
        source_line = linecache.getline(frame.filename, frame.lineno).rstrip()
    return Diagnostic(
        kind=kind or "user_error",
        message=_first_line(exc),
        location=location,
        fix=_fix_for(kind, exc, options, settings),
        source_line=source_line or "",
        # One user frame is already shown as the location and code line; a deeper stack is worth showing.
        traceback=format_user_traceback(exc) if count_user_frames(exc) > 1 or kind is None else "",
    )
