"""Lowering, compiling and reading XLA's analyses, across JAX versions."""

from __future__ import annotations

from typing import Any

from jitscope.dtypes import MAX_ARRAY_BYTES, dtype_name, itemsize
from jitscope.model.trace import CostRecord, MemoryRecord


def stablehlo_text(lowered: Any) -> str:
    """The lowered module as StableHLO (MLIR) text, with debug locations stripped for readability."""
    try:
        return str(lowered.as_text(dialect="stablehlo"))
    except TypeError:  # very old JAX: as_text() takes no dialect
        return str(lowered.as_text())


_FRAME_TABLES = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")


def strip_stack_frame_tables(hlo: str) -> str:
    """Drop the stack-frame tables newer XLA prints after the module header.

    They list every Python frame of the process that lowered the module (typer, click,
    jitscope...) and say nothing about the program; op metadata keeps the user's lines.
    """
    out: list[str] = []
    skipping = False
    for line in hlo.splitlines():
        stripped = line.strip()
        if stripped in _FRAME_TABLES:
            skipping = True
            continue
        if skipping and (not stripped or stripped[0].isdigit()):
            continue
        skipping = False
        out.append(line)
    return "\n".join(out).rstrip() + "\n"


def compiled_text(compiled: Any) -> str | None:
    """The optimised HLO that XLA will run, or None when the backend does not expose it."""
    try:
        text = compiled.as_text()
    except Exception:  # noqa: BLE001 - some backends raise NotImplementedError or XlaRuntimeError
        return None
    return strip_stack_frame_tables(str(text)) if text else None


def _number(table: dict[str, Any], key: str) -> float | None:
    value = table.get(key)
    try:
        return float(value) if value is not None and float(value) >= 0 else None
    except (TypeError, ValueError):
        return None


def cost_record(compiled: Any) -> CostRecord | None:
    """XLA's cost analysis (flops, transcendentals, bytes accessed), or None if unavailable."""
    try:
        raw = compiled.cost_analysis()
    except Exception:  # noqa: BLE001 - backends without cost analysis raise
        return None
    if isinstance(raw, (list, tuple)):  # JAX < 0.4.30 returned one dict per device program
        raw = raw[0] if raw else None
    if not isinstance(raw, dict) or not raw:
        return None
    return CostRecord(
        flops=_number(raw, "flops"),
        transcendentals=_number(raw, "transcendentals"),
        bytes_accessed=_number(raw, "bytes accessed"),
    )


def memory_record(compiled: Any) -> MemoryRecord | None:
    """XLA's memory analysis of the compiled executable, or None if unavailable."""
    try:
        stats = compiled.memory_analysis()
    except Exception:  # noqa: BLE001
        return None
    if stats is None:
        return None

    def get(name: str) -> int | None:
        value = getattr(stats, name, None)
        return int(value) if isinstance(value, (int, float)) and value >= 0 else None

    return MemoryRecord(
        argument_bytes=get("argument_size_in_bytes"),
        output_bytes=get("output_size_in_bytes"),
        alias_bytes=get("alias_size_in_bytes"),
        temp_bytes=get("temp_size_in_bytes"),
        generated_code_bytes=get("generated_code_size_in_bytes"),
    )


def environment() -> dict[str, str | int | bool]:
    """jax/jaxlib versions, backend and devices, for every report (``device_count`` an int, ``x64`` a bool)."""
    import jax
    import jaxlib

    devices = jax.devices()
    return {
        "jax": jax.__version__,
        "jaxlib": getattr(jaxlib, "__version__", "?"),
        "backend": jax.default_backend(),
        "device_kind": devices[0].device_kind if devices else "?",
        "device_count": len(devices),
        "x64": bool(jax.config.read("jax_enable_x64")),
    }


#: jaxlib 0.11+ on CPU: XLA's compiler dies with SIGFPE (the whole process, no exception) on an array of
#: 2**36 elements or more (measured on jaxlib 0.12.0.1: 2**35 compiles, 2**36 crashes, whatever the dtype;
#: 0.10.2 compiles them). jitscope does not hand such a program to it.
CPU_COMPILE_MAX_ELEMENTS = 2**36


def compile_would_crash(traced: Any) -> str | None:
    """Why XLA must not be asked to compile ``traced`` here (it would kill the process), or None."""
    import jax
    import jaxlib

    version = tuple(int(p) for p in jaxlib.__version__.split(".")[:2] if p.isdigit())
    cpu_limit = jax.default_backend() == "cpu" and version >= (0, 11)
    jaxpr = getattr(traced, "jaxpr", None)
    inner = getattr(jaxpr, "jaxpr", jaxpr)
    if inner is None:
        return None
    variables = [*inner.invars, *inner.outvars, *(v for eqn in inner.eqns for v in eqn.outvars)]
    # Only values of 2**36 elements or more can reach either limit (no dtype is 2**26 bytes wide): the
    # check runs inside bench's timed first call, so the others cost one size lookup each.
    avals = [a for a in (getattr(v, "aval", None) for v in variables)
             if a is not None and getattr(a, "size", 0) >= CPU_COMPILE_MAX_ELEMENTS]
    for aval in avals:  # the limit of every backend first: it is the reason on all of them
        if aval.size * itemsize(dtype_name(getattr(aval, "dtype", ""))) >= MAX_ARRAY_BYTES:
            return (f"not compiled: a value of 2**62 bytes or more ({aval.str_short()}), past what XLA can size "
                    "(it aborts the process); the jaxpr and StableHLO are shown")
    for aval in avals if cpu_limit else ():
        if aval.size >= CPU_COMPILE_MAX_ELEMENTS:
            return (f"not compiled: XLA's CPU compiler in jaxlib {jaxlib.__version__} crashes the process on an "
                    f"array of 2**36 elements or more ({aval.str_short()}); the jaxpr and StableHLO are shown")
    return None


def lower(jitted: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``jitted`` lowered for ``args``/``kwargs`` (concrete or ``ShapeDtypeStruct``): through ``.trace`` where
    this JAX has it (the stages API of 0.4.31+), else ``.lower`` directly."""
    if hasattr(jitted, "trace"):
        return jitted.trace(*args, **kwargs).lower()
    return jitted.lower(*args, **kwargs)
