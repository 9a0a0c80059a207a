"""Trace-time failures -> a Diagnostic that points at the user's line and names the fix."""

from __future__ import annotations

import linecache

from jitscope.jaxcompat.jit import JitOptions
from jitscope.jaxcompat.values import concretization_arguments, trace_error_kind
from jitscope.model.common import Location
from jitscope.model.trace import Diagnostic
from jitscope.userframes import count_user_frames, display_path, format_user_traceback, last_user_frame


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    head = text.splitlines()[0] if text else type(exc).__name__
    return f"{type(exc).__name__}: {head}"


def _fix_for(kind: str | None, exc: BaseException, options: JitOptions) -> str:
    names = [n for n in concretization_arguments(exc) if n not in options.static_argnames]
    if kind in ("bool_conversion", "concretization", "integer_conversion"):
        subject = " or ".join(f"`{n}`" for n in names) or "the value"
        static = " ".join(f"--static {n}=VALUE" for n in names) or "--static NAME=VALUE"
        branch = (
            "use jax.lax.cond / jax.lax.select or jnp.where instead of a Python `if`"
            if kind == "bool_conversion"
            else "use jax.lax.fori_loop / jax.lax.dynamic_slice instead of Python ints"
            if kind == "integer_conversion"
            else "use jnp / jax.lax operations instead of Python ones"
        )
        return (
            f"Python needs a concrete value here but {subject} is traced: if it is a setting, mark it "
            f"static ({static}, or static_argnames in jax.jit); if it is data, {branch}"
        )
    if kind == "array_conversion":
        return "a NumPy function received a tracer: use the jax.numpy (jnp) equivalent inside traced code"
    if kind == "tracer_leak":
        return "a tracer escaped the function (stored in a global, self or a cache): return it instead"
    if kind == "unhashable_static":
        return "static arguments must be hashable: pass a tuple instead of a list, or a frozen dataclass"
    if kind == "shape":
        return "the shapes do not fit this operation: check --shapes against what the function expects"
    return "this error is raised by your code while JAX traced it; see the traceback below"


def diagnose(exc: BaseException, options: JitOptions) -> Diagnostic:
    """Explain a trace-time exception from the user's function."""
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
        fix=_fix_for(kind, exc, options),
        source_line=source_line or "",
        # One user frame is already shown as the location and code line; a deeper stack is worth showing.
        traceback=format_user_traceback(exc) if count_user_frames(exc) > 1 or kind is None else "",
    )
