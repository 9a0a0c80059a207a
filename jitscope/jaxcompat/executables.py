"""What XLA compiled: the loaded executable of every compile, its optimised HLO and fingerprint.

``jax._src.compiler.compile_or_get_cached(backend, module, devices, options, ...)`` is the one
function every ``jit`` and ``pmap`` compile goes through on JAX 0.4.38-0.12 (``pxla`` calls it
by module attribute), whether XLA compiles or the persistent cache answers; it returns the
``LoadedExecutable``. Wrapping it costs nothing on cached calls, which never reach it. The
backend-compile monitoring event that times the compile is recorded by ``pxla`` around this
call, after it returns, so a listener sees the executable first and then the event.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any


def install_executable_hook(on_executable: Callable[[Any], None]) -> Callable[[], None]:
    """Call ``on_executable(loaded_executable)`` after every compile; returns a function that removes the hook.

    ``on_executable`` must never raise (the hook swallows what it raises). A JAX without the function
    gets no hook (a no-op remover).
    """
    try:
        from jax._src import compiler
    except ImportError:
        return lambda: None
    original = getattr(compiler, "compile_or_get_cached", None)
    if not callable(original):
        return lambda: None

    def compile_or_get_cached(*args: Any, **kwargs: Any) -> Any:
        executable = original(*args, **kwargs)
        with contextlib.suppress(Exception):
            on_executable(executable)
        return executable

    compiler.compile_or_get_cached = compile_or_get_cached
    with contextlib.suppress(Exception):
        from jax._src import traceback_util

        traceback_util.register_exclusion(__file__)

    def remove() -> None:
        if getattr(compiler, "compile_or_get_cached", None) is compile_or_get_cached:
            compiler.compile_or_get_cached = original

    return remove


def optimized_hlo_text(executable: Any) -> str | None:
    """The optimised HLO of a loaded executable (every module, one after another), or None."""
    modules = getattr(executable, "hlo_modules", None)
    if not callable(modules):
        return None
    try:
        return "\n".join(module.to_string() for module in modules())
    except Exception:  # noqa: BLE001 - an executable that cannot print itself
        return None


def executable_fingerprint(executable: Any) -> str:
    """The backend's own fingerprint of the executable ("" where it gives none)."""
    try:
        value = getattr(executable, "fingerprint", None)
    except Exception:  # noqa: BLE001
        return ""
    if isinstance(value, bytes):
        return value.decode("ascii", "replace")
    return str(value) if value is not None else ""
