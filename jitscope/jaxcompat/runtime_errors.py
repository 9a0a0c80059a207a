"""What kind of failure a JAX runtime error is, across JAX versions.

XLA reports runtime failures (out of device memory, a failed kernel launch, ...) as one
exception class whose message starts with an absl status code, e.g.
``RESOURCE_EXHAUSTED: Out of memory while trying to allocate 17179869184 bytes.``
The class moved: ``jax.errors.JaxRuntimeError`` in new JAX, ``XlaRuntimeError`` in
``jaxlib.xla_extension`` (re-exported as ``jax.lib.xla_client.XlaRuntimeError``) in
older releases. It is looked up, never assumed, and the status code is read from the
message. Out-of-memory is something the user can fix, so it becomes a one-line
``DeviceMemoryError`` (exit 2) instead of an internal error or a user-code failure.
"""

from __future__ import annotations

import functools
import importlib
import re
import warnings
from dataclasses import dataclass

from jitscope.errors import DeviceMemoryError
from jitscope.units import fmt_bytes

#: Where each JAX version keeps its runtime error class: (module, attribute), newest first.
_CLASS_LOCATIONS = (
    ("jax.errors", "JaxRuntimeError"),
    ("jaxlib.xla_extension", "XlaRuntimeError"),
    ("jax.lib.xla_client", "XlaRuntimeError"),
    ("jax._src.lib", "XlaRuntimeError"),
)
_STATUS = re.compile(r"^\s*([A-Z][A-Z_]+[A-Z]):")
#: Messages that mean the device ran out of memory, whatever the status code says.
_OOM = re.compile(r"RESOURCE_EXHAUSTED|out of memory|CUDA_ERROR_OUT_OF_MEMORY|ran out of memory|"
                  r"Failed to allocate|Attempting to allocate", re.IGNORECASE)
_BYTES = re.compile(r"\((\d+)\s*B\)|(\d+)\s*bytes\b", re.IGNORECASE)
_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([KMGT])i?B\b")
_UNIT = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}

PREALLOCATE_HINT = (
    "free the device, or let JAX share it: XLA_PYTHON_CLIENT_PREALLOCATE=false (allocate on demand) or "
    "XLA_PYTHON_CLIENT_MEM_FRACTION=0.5 (preallocate less than the default 75%); or use smaller --shapes"
)


@functools.cache
def runtime_error_types() -> tuple[type[BaseException], ...]:
    """The runtime error classes this JAX installation has (usually one; empty without jax)."""
    found: list[type[BaseException]] = []
    for module_name, attr in _CLASS_LOCATIONS:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        with warnings.catch_warnings():  # older spellings warn that they are deprecated: we only look
            warnings.simplefilter("ignore", DeprecationWarning)
            cls = getattr(module, attr, None)
        if isinstance(cls, type) and issubclass(cls, BaseException) and cls not in found:
            found.append(cls)
    return tuple(found)


def is_runtime_error(exc: BaseException) -> bool:
    """Whether ``exc`` is XLA's runtime error (by class, or by name when the class could not be found)."""
    types = runtime_error_types()
    if types and isinstance(exc, types):
        return True
    return any(cls.__name__ in ("JaxRuntimeError", "XlaRuntimeError") for cls in type(exc).__mro__)


def status_code(exc: BaseException) -> str | None:
    """The absl status code a runtime error's message starts with (``RESOURCE_EXHAUSTED``), or None."""
    if not is_runtime_error(exc):
        return None
    match = _STATUS.match(str(exc))
    return match.group(1) if match else None


@dataclass(frozen=True, slots=True)
class OutOfMemory:
    """A device allocation failed; ``requested`` is the size asked for, in bytes, when the message says it."""

    message: str
    requested: int | None


def _backend_init_failure(exc: BaseException) -> bool:
    return isinstance(exc, RuntimeError) and str(exc).startswith("Unable to initialize backend")


def out_of_memory(exc: BaseException) -> OutOfMemory | None:
    """The out-of-memory facts of ``exc`` if it is a JAX runtime error (or backend start) that ran out of memory."""
    if not (is_runtime_error(exc) or _backend_init_failure(exc)):
        return None
    text = str(exc)
    if status_code(exc) != "RESOURCE_EXHAUSTED" and not _OOM.search(text):
        return None
    return OutOfMemory(message=text.strip().splitlines()[0] if text.strip() else type(exc).__name__,
                       requested=requested_bytes(text))


def requested_bytes(text: str) -> int | None:
    """The allocation size an XLA/PJRT out-of-memory message names: ``1234 bytes``, ``(1234B)`` or ``16.00GiB``."""
    match = _BYTES.search(text)
    if match:
        return int(match.group(1) or match.group(2))
    match = _SIZE.search(text)
    if match:
        return int(float(match.group(1)) * _UNIT[match.group(2)])
    return None


def device_memory_error(exc: BaseException, during: str) -> DeviceMemoryError | None:
    """A one-line ``DeviceMemoryError`` when ``exc`` is a device out-of-memory error, else None.

    ``during`` says what jitscope was doing, e.g. ``"compiling"`` or ``"running f(f32[8])"``.
    """
    oom = out_of_memory(exc)
    if oom is None:
        return None
    asked = f" (asked for {fmt_bytes(oom.requested)})" if oom.requested is not None else ""
    return DeviceMemoryError(f"the device ran out of memory{asked} while {during}: {oom.message}",
                             hint=PREALLOCATE_HINT)
