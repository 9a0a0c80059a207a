"""What a traced function sees: tracers and static values, described without JAX objects."""

from __future__ import annotations

import re
from typing import Any

from jitscope.dtypes import dtype_name, short_name
from jitscope.model.trace import SeenArg


def short_dtype(dtype: Any) -> str:
    """``f32`` for float32, ``key<fry>`` for a typed key, ``float0``: a dtype object's spec-language name."""
    return short_name(dtype_name(dtype))


def describe_seen(path: str, value: Any) -> SeenArg:
    """Describe one argument leaf as the function body received it."""
    from jitscope.jaxcompat.features import tracer_type

    aval = getattr(value, "aval", None)
    if isinstance(value, tracer_type()) and aval is not None and hasattr(aval, "shape"):
        return SeenArg(
            path=path,
            kind="traced",
            type_name=type(value).__name__,
            shape=tuple(int(d) for d in aval.shape),
            dtype=short_dtype(aval.dtype),
            weak_type=bool(getattr(aval, "weak_type", False)),
            value_repr=str(value),
        )
    text = repr(value)
    return SeenArg(
        path=path,
        kind="static",
        type_name=type(value).__name__,
        value_repr=text if len(text) <= 80 else text[:77] + "...",
    )


def describe_call(names: list[str], args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[SeenArg, ...]:
    """Every leaf of every argument, with a pytree path such as ``params['w']``."""
    import jax

    seen: list[SeenArg] = []
    items = list(zip(names, args, strict=False)) + list(kwargs.items())
    for name, value in items:
        leaves, _ = jax.tree_util.tree_flatten_with_path(value, is_leaf=lambda x: x is None)
        for key_path, leaf in leaves:
            seen.append(describe_seen(name + jax.tree_util.keystr(key_path), leaf))
    return tuple(seen)


_ARG_NAMES = re.compile(r"depends on the values? of the arguments? ([^.]+)\.")


def concretization_arguments(exc: BaseException) -> list[str]:
    """Names of the arguments a ConcretizationTypeError says the value depended on."""
    m = _ARG_NAMES.search(str(exc))
    if not m:
        return []
    return [p.strip().strip("'`") for p in re.split(r",| and ", m.group(1)) if p.strip()]


_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


def traced_names_at_failure(exc: BaseException) -> list[str]:
    """Names on the failing line of the user's code that hold tracers, read from that frame's locals.

    The fallback for JAX versions (before 0.5) whose concretization errors do not name the
    arguments: ``if x > threshold:`` with ``x`` traced and ``threshold`` static gives ``["x"]``.
    """
    import linecache

    from jitscope.jaxcompat.features import tracer_type
    from jitscope.userframes import is_user_file

    tb, found = exc.__traceback__, None
    while tb is not None:
        if is_user_file(tb.tb_frame.f_code.co_filename):
            found = tb
        tb = tb.tb_next
    if found is None:
        return []
    frame = found.tb_frame
    line = linecache.getline(frame.f_code.co_filename, found.tb_lineno)
    tracer = tracer_type()
    names = dict.fromkeys(_IDENTIFIER.findall(line))
    return [n for n in names if isinstance(frame.f_locals.get(n), tracer)]


def trace_error_kind(exc: BaseException) -> str | None:
    """Classify a trace-time failure: concretization, unhashable_static, shape, or None."""
    import jax

    if isinstance(exc, jax.errors.TracerBoolConversionError):
        return "bool_conversion"
    if isinstance(exc, jax.errors.TracerIntegerConversionError):
        return "integer_conversion"
    if isinstance(exc, jax.errors.TracerArrayConversionError):
        return "array_conversion"
    if isinstance(exc, jax.errors.ConcretizationTypeError):
        return "concretization"
    if isinstance(exc, jax.errors.UnexpectedTracerError):
        return "tracer_leak"
    if isinstance(exc, ValueError) and "Non-hashable static arguments" in str(exc):
        return "unhashable_static"
    if isinstance(exc, TypeError) and any(
        s in str(exc) for s in ("shape", "Incompatible shapes", "must have", "dimension")
    ):
        return "shape"
    return None


def detached(value: Any) -> Any:
    """A deep copy of the Python objects in ``value`` that shares its JAX arrays (they are immutable).

    A library's jit (flax ``nnx.jit``) writes a model's and an optimizer's new state into their
    Python objects; traced or timed by jitscope, it must write into a copy, never into the caller's
    model (older flax even leaves tracers there). Arrays are not copied: tracing allocates nothing,
    and a copy of a model costs only its Python objects. ``copy`` has no public hook for "copy
    everything but these types", so the copier table ``copy._deepcopy_dispatch`` is extended for the
    duration (present and unchanged in CPython 3.11-3.13); without it, the value is returned as is.
    """
    import copy

    dispatch = getattr(copy, "_deepcopy_dispatch", None)
    if not isinstance(dispatch, dict):
        return value
    added = [t for t in _array_types() if t not in dispatch]
    for t in added:
        dispatch[t] = lambda x, memo: x
    try:
        return copy.deepcopy(value)
    except Exception:  # noqa: BLE001 - an object that cannot be copied: use it as it is
        return value
    finally:
        for t in added:
            dispatch.pop(t, None)


def _array_types() -> list[type]:
    """The concrete JAX array class (``jax.Array`` is abstract; deepcopy looks up the exact type)."""
    try:
        from jax._src.array import ArrayImpl
    except ImportError:  # moved: find it from an array (a 4-byte scalar)
        import jax.numpy as jnp

        return [type(jnp.zeros((), jnp.float32))]
    return [ArrayImpl]
