"""Which JAX is installed and where it keeps what jitscope needs: the one place that knows JAX versions.

Every other jaxcompat module asks this one for JAX's classes, private hooks and printer
habits instead of importing ``jax._src`` or testing version numbers itself. Each lookup
tries the public spelling first and private ones only as fallbacks, catching what a moved
or renamed attribute raises (ImportError, AttributeError); where nothing works it raises
``UnsupportedJaxError``, one line with exit code 2. Nothing here compares version numbers:
the version is only reported, so an untested JAX that still has what we need just works.

Lookups are resolved on first use and cached, so importing this module does not import jax.
"""

from __future__ import annotations

import functools
import importlib
import re
import sys
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from jitscope.errors import EXIT_USAGE, JitscopeError

#: The oldest JAX the whole test suite passes on, and the newest it was run on.
MIN_JAX = "0.4.38"  # 0.4.35-0.4.37: jit with static_argnames fails with StopIteration in bench (a JAX bug)
TESTED_UP_TO = "0.12.0.1"


class UnsupportedJaxError(JitscopeError):
    """The installed JAX lacks something jitscope needs (too old, or moved in a newer release)."""

    exit_code = EXIT_USAGE


def jax_version() -> str:
    import jax

    return str(jax.__version__)


def unsupported(missing: str) -> UnsupportedJaxError:
    """The one-line error for a JAX that lacks ``missing``."""
    return UnsupportedJaxError(
        f"unsupported JAX version {jax_version()}: {missing}; "
        f"jitscope supports jax >= {MIN_JAX} (tested up to {TESTED_UP_TO})"
    )


def _module(name: str) -> Any:
    return importlib.import_module(name)


def _lookup(what: str, candidates: Iterable[Callable[[], Any]]) -> Any:
    """The first candidate that resolves; ``UnsupportedJaxError`` naming ``what`` if none does."""
    with warnings.catch_warnings():
        # jax.core names are on their way out; a lookup must not warn inside the user's trace.
        warnings.simplefilter("ignore", DeprecationWarning)
        for get in candidates:
            try:
                return get()
            except (ImportError, AttributeError):
                continue
    raise unsupported(what)


def _attr(module: str, name: str) -> Callable[[], Any]:
    return lambda: getattr(_module(module), name)


# ---------------------------------------------------------------- jaxpr classes


def _core_modules() -> tuple[str, ...]:
    # jax.extend.core is the public home of the jaxpr classes, but importing jax.extend also
    # imports Pallas: measured +20-40 ms after `import jax` on jax 0.10.2 and 0.12 on a busy
    # machine (65 ms in an earlier quiet measurement), a large share of `jitscope trace`'s own
    # start-up. The classes are the very same objects in jax._src.core (tests/jaxcompat/
    # test_features.py checks identity on the installed JAX), so the public module is used
    # when it costs nothing (already imported, e.g. by a Pallas user) and the private one
    # otherwise; jax.extend.core remains the fallback for a JAX that moves its core module.
    if "jax.extend.core" in sys.modules:
        return ("jax.extend.core", "jax._src.core", "jax.core")
    return ("jax._src.core", "jax.extend.core", "jax.core")


@dataclass(frozen=True, slots=True)
class JaxprTypes:
    """JAX's jaxpr classes. ``closed_jaxpr`` is ``jaxpr`` itself on JAX 0.12+, which merged them."""

    # Any, not type: isinstance() against them must not narrow a jaxpr to `object` for mypy.
    closed_jaxpr: Any
    jaxpr: Any
    literal: Any
    drop_var: Any


@functools.cache
def jaxpr_types() -> JaxprTypes:
    modules = _core_modules()

    def find(name: str) -> Any:
        return _lookup(f"no {name} class", (_attr(m, name) for m in modules))

    jaxpr = find("Jaxpr")
    try:
        closed = find("ClosedJaxpr")
    except UnsupportedJaxError:  # JAX 0.12 merged ClosedJaxpr into Jaxpr
        closed = jaxpr
    return JaxprTypes(closed, jaxpr, find("Literal"), find("DropVar"))


@functools.cache
def tracer_type() -> Any:
    """The base class of JAX's tracers: public ``jax.core.Tracer`` first."""
    return _lookup("no Tracer class", (_attr("jax.core", "Tracer"), _attr("jax._src.core", "Tracer")))


# ---------------------------------------------------------------- source locations


@dataclass(frozen=True, slots=True)
class SourceInfoHooks:
    """JAX's user-frame heuristic; the public jax.extend.source_info_util does not export it."""

    is_user_filename: Callable[[str], bool]
    #: (code, lasti) -> an object with file_name, start_line, function_name, start_column
    raw_frame_to_frame: Callable[[Any, int], Any]


#: (file name, function) of the frames where JAX traces a jit's body: a user frame found
#: *outside* one of these called the jit the first time, and the jaxpr may be a cached one
#: made for another caller (JAX < 0.6 keeps whole tracebacks, so such a frame is found).
JIT_TRACE_FRAMES = frozenset({("pjit.py", "_create_pjit_jaxpr"), ("pjit.py", "_trace_for_jit")})


@functools.cache
def source_info_hooks() -> SourceInfoHooks:
    return SourceInfoHooks(
        _lookup("no source_info_util.is_user_filename", (_attr("jax._src.source_info_util", "is_user_filename"),)),
        _lookup("no source_info_util.raw_frame_to_frame",
                (_attr("jax._src.source_info_util", "raw_frame_to_frame"),)),
    )


# ---------------------------------------------------------------- the printer


@dataclass(frozen=True, slots=True)
class PrinterStyle:
    """How this JAX's ``str(jaxpr)`` writes things that changed between releases."""

    #: ``1.0:f32[]`` (JAX >= 0.6-ish) rather than ``1.0``.
    typed_literals: bool
    #: A jit's inner jaxpr reuses the caller's variable names (``pjit._pjit_pp_rule``, JAX >= 0.5).
    jit_names_inside: bool
    #: Primitives that have a custom printing rule in ``core.pp_eqn_rules`` (others print every parameter).
    pp_rules: frozenset[str]


_PROBE_INNER = re.compile(r"jaxpr=\{ lambda ; (\w+):")


@functools.cache
def printer_style() -> PrinterStyle:
    """Found by printing a tiny jaxpr with this JAX, not by comparing version numbers."""
    import jax
    import numpy as np

    def probe(x: Any) -> Any:
        return jax.jit(lambda y: y * 2.0)(x)

    text = str(jax.make_jaxpr(probe)(np.float32(1)))
    inner = _PROBE_INNER.search(text)
    rules = _lookup("no core.pp_eqn_rules", (_attr("jax._src.core", "pp_eqn_rules"),))
    return PrinterStyle(
        typed_literals="2.0:" in text,
        jit_names_inside=inner is not None and inner.group(1) == "a",
        pp_rules=frozenset(getattr(p, "name", str(p)) for p in list(rules)),
    )


# ---------------------------------------------------------------- jit wrappers


def jit_info(obj: Any) -> Any | None:
    """The ``PjitInfo`` (normalised static/donate arguments) of a jit wrapper, or None.

    JAX >= 0.5.x sets ``wrapper._jit_info``; older ones keep it only in the closure of
    ``wrapper.trace`` (``pjit._make_jit_wrapper``). There is no public spelling.
    """
    info = getattr(obj, "_jit_info", None)
    if info is not None:
        return info
    trace = getattr(getattr(obj, "trace", None), "__wrapped__", None)
    code, cells = getattr(trace, "__code__", None), getattr(trace, "__closure__", None)
    if code is None or not cells:
        return None
    for name, cell in zip(code.co_freevars, cells, strict=False):
        if name == "jit_info":
            try:
                return cell.cell_contents
            except ValueError:  # empty cell
                return None
    return None


def jit_function(obj: Any) -> Any | None:
    """The Python function inside a jit wrapper: ``__wrapped__`` (functools.wraps) first, ``_fun`` after."""
    return getattr(obj, "__wrapped__", None) or getattr(obj, "_fun", None)


def jit_cache_size(obj: Any) -> int | None:
    """Compiled entries in a jit wrapper's C++ cache (private ``_cache_size``); None where absent."""
    size = getattr(obj, "_cache_size", None)
    try:
        return int(size()) if callable(size) else None
    except Exception:  # noqa: BLE001 - private API; absence is not an error
        return None


# ---------------------------------------------------------------- caches and monitoring


def reset_compilation_cache() -> None:
    """Forget whether the persistent cache is in use (``compilation_cache.reset_cache``, internal)."""
    try:
        _lookup("no compilation_cache.reset_cache", (_attr("jax._src.compilation_cache", "reset_cache"),))()
    except UnsupportedJaxError:  # pragma: no cover - changing the config alone may do
        pass


def dispatch_event_names() -> dict[str, str]:
    """JAX's own names of its compile-phase duration events (``jax/_src/dispatch.py``); {} where absent."""
    try:
        dispatch = _module("jax._src.dispatch")
    except ImportError:  # pragma: no cover
        return {}
    names = {"trace": "JAXPR_TRACE_EVENT", "lower": "JAXPR_TO_MLIR_MODULE_EVENT", "compile": "BACKEND_COMPILE_EVENT"}
    return {phase: getattr(dispatch, attr) for phase, attr in names.items() if hasattr(dispatch, attr)}


def unregister_listener(kind: str, callback: Any) -> None:
    """Remove a ``jax.monitoring`` listener: public ``unregister_*`` (JAX >= 0.4.36), else JAX's private lists."""
    import jax.monitoring as mon

    public = getattr(mon, f"unregister_{kind}", None)
    try:
        if public is not None:
            public(callback)
            return
        private = {"event_duration_listener": "_event_duration_secs_listeners",
                   "event_listener": "_event_listeners"}[kind]
        listeners = _lookup(f"no jax.monitoring.unregister_{kind}", (_attr("jax._src.monitoring", private),))
        if callback in listeners:
            listeners.remove(callback)
    except (AssertionError, ValueError, KeyError, UnsupportedJaxError):  # already gone, or nothing to remove
        pass


def check_supported() -> None:
    """Raise ``UnsupportedJaxError`` now if this JAX lacks something jitscope always needs."""
    import jax

    jaxpr_types()
    tracer_type()
    source_info_hooks()
    if not callable(getattr(jax.jit(lambda x: x), "trace", None)):
        raise unsupported("jax.jit(f).trace is missing (the stages API)")
