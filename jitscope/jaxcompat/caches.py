"""JAX's caches: clearing the in-memory ones, and switching the persistent one on or off.

A "cold" measurement is only cold if nothing is reused: ``jax.clear_caches`` drops the
trace, lowering and executable caches, and a fresh jit wrapper has an empty C++ cache.
The persistent (on-disk) compilation cache survives both, so bench turns it off unless
the user asked for it, and reports hits when it is on. JAX memoises whether the cache is
in use, so changing its config needs ``compilation_cache.reset_cache`` (internal).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

_CONFIG_KEYS = (
    "jax_enable_compilation_cache",
    "jax_compilation_cache_dir",
    "jax_persistent_cache_min_compile_time_secs",
    "jax_persistent_cache_min_entry_size_bytes",
)


def clear_in_memory_caches() -> None:
    """Drop every in-memory trace, lowering and compilation cache (not the persistent one)."""
    import jax

    jax.clear_caches()


@dataclass(frozen=True, slots=True)
class PersistentCacheState:
    """Whether compiles may be served from disk during the measurement, and why."""

    enabled: bool
    directory: str | None
    source: str  # "default" (off), "flag" (--persistent-cache DIR/off) or "jax config" (env or config.update)
    min_compile_seconds: float | None = None  # JAX only writes entries that took at least this long

    @property
    def label(self) -> str:
        return self.directory if self.enabled and self.directory else "off"


def _read_config() -> dict[str, Any]:
    import jax

    return {key: getattr(jax.config, key, None) for key in _CONFIG_KEYS}


def _reset() -> None:
    from jitscope.jaxcompat.features import reset_compilation_cache

    reset_compilation_cache()


def _update(values: dict[str, Any]) -> None:
    import jax

    for key, value in values.items():
        if hasattr(jax.config, key):
            jax.config.update(key, value)
    _reset()


def _check_cache_dir(request: str) -> None:
    """A directory jitscope can write cache entries to (created if missing); else one error line (JAX would only
    warn on every compile and go on without the cache)."""
    import os

    from jitscope.errors import UsageError

    if os.path.exists(request) and not os.path.isdir(request):
        raise UsageError(f"--persistent-cache {request} is a file", hint="name a folder (it is created), or 'off'")
    try:
        os.makedirs(request, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--persistent-cache {request}: cannot create it ({exc.strerror})",
                         hint="name a folder you can write to, or 'off'") from None
    if not os.access(request, os.W_OK | os.X_OK):
        raise UsageError(f"--persistent-cache {request} is not writable", hint="name a folder you can write to, "
                         "or 'off'")


def resolve(request: str | None) -> tuple[dict[str, Any], PersistentCacheState]:
    """Config values to apply for ``request`` (None: respect JAX's config; "off"; or a directory)."""
    current = _read_config()
    if request is not None and request.lower() == "off":
        return {"jax_enable_compilation_cache": False}, PersistentCacheState(False, None, "flag")
    if request is not None:
        _check_cache_dir(request)
        # Entries are written whatever the compile time, so a second cold run can hit.
        values = {"jax_enable_compilation_cache": True, "jax_compilation_cache_dir": request,
                  "jax_persistent_cache_min_compile_time_secs": 0.0}
        return values, PersistentCacheState(True, request, "flag", 0.0)
    if current["jax_compilation_cache_dir"] and current["jax_enable_compilation_cache"]:
        threshold = current["jax_persistent_cache_min_compile_time_secs"]
        state = PersistentCacheState(True, str(current["jax_compilation_cache_dir"]), "jax config",
                                     float(threshold) if threshold is not None else None)
        return {}, state
    # Off by default: with no directory JAX would still hash every module for a lookup that cannot hit.
    return {"jax_enable_compilation_cache": False}, PersistentCacheState(False, None, "default")


@contextlib.contextmanager
def persistent_cache(request: str | None) -> Iterator[PersistentCacheState]:
    """Apply ``request`` for the duration of the block, then restore JAX's config exactly."""
    saved = _read_config()
    values, state = resolve(request)
    _update(values)
    try:
        yield state
    finally:
        _update({k: saved[k] for k in values})


def forget_other_functions_lines(name: str) -> None:
    """Before tracing ``name``: on JAX < 0.5 (measured on 0.4.38; 0.10 is not affected), an inner jit's
    cached jaxpr (``jax.nn.relu``, optax's updates) keeps the source lines of the call that first traced
    it, so a second function traced in the same process would show the first one's lines. The
    in-memory caches are cleared when the function traced changes, on those versions only."""
    global _last_traced
    import jax

    previous, _last_traced = _last_traced, name
    if previous is None or previous == name:
        return
    version = tuple(int(p) for p in jax.__version__.split(".")[:2] if p.isdigit())
    if version < (0, 5):
        jax.clear_caches()


_last_traced: str | None = None
