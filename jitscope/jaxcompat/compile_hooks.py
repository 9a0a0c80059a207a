"""Hooks that see every ``jit`` cache miss of a running program, and nothing else.

A cached call of a jitted function runs in JAX's C++ dispatch and never reaches Python.
When the C++ cache misses, C++ calls back into ``jax._src.pjit``, which calls the
module-level function ``_infer_params(fun, jit_info, args, kwargs)`` (every JAX from
0.4.35 to 0.12 has it, by that name and signature), and that calls the tracer
(``_trace_for_jit`` from 0.7, ``_infer_params_impl`` before) only when its own tracing
cache misses too. Replacing those two module globals therefore costs nothing on cached
calls and gives, on every miss, the function object, the jit options and the live
arguments; the phase durations come from JAX's public monitoring events. ``pmap`` and
eager op-by-op execution go through the same ``jit`` path on the JAX versions we
support.

Where a JAX release lacks either function, ``install`` still registers the monitoring
listeners (compiles are counted and timed by the name JAX reports), and
``HookStatus.missing`` says what could not be hooked, so ``jitscope run`` can say why
causes are unavailable instead of failing.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from jitscope.dtypes import dtype_name
from jitscope.jaxcompat.monitoring import phase_events

#: The tracer that ``_infer_params`` calls on a tracing-cache miss, newest name first.
_TRACE_FUNCTIONS = ("_trace_for_jit", "_infer_params_impl")


class MissObserver(Protocol):
    """What ``install`` calls. Every method must be cheap and must never raise."""

    def enter(self, fun: Callable[..., Any], jit_info: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """A call left JAX's C++ fast path (nested calls, made while tracing, come here too).

        ``top_level()`` tells, during this call, whether it was made with no trace in progress.
        """

    def exit(self) -> None:
        """The matching ``enter`` (or ``resume``) returned (or raised)."""

    def resume(self) -> None:
        """The last miss goes on (old pmap: its trace and compile come after ``_prepare_pmap`` returned)."""

    def tracing(self, fun: Callable[..., Any]) -> contextlib.AbstractContextManager[object]:
        """Wraps a real trace of ``fun`` (a tracing-cache miss)."""

    def on_phase(self, phase: str, seconds: float, fun_name: str | None) -> None:
        """JAX finished a phase: "trace", "lower" or "compile"."""


@dataclass(frozen=True, slots=True)
class HookStatus:
    """What ``install`` could hook on this JAX."""

    call_hook: bool  # pjit._infer_params: arguments of every cache miss
    trace_hook: str | None  # the tracer function's name, or None
    missing: tuple[str, ...] = ()


def top_level() -> bool:
    """Whether no trace is in progress on this thread (a call made from plain Python, not while JAX traces).

    A jit call made while JAX traces something (the user's outer ``jit``, ``grad``, ``make_jaxpr``, or a
    lowering rule that traces a helper, as ``random_fold_in``'s does while a jit is being lowered) is
    staged into that trace: it belongs to whatever is being traced or lowered, and is never compiled
    on its own. Unknown on a JAX without the check: treated as top level.
    """
    check = _TRACE_STATE_CLEAN
    return True if check is None else bool(check())


def _find_trace_state_clean() -> Callable[[], bool] | None:
    try:
        from jax._src import core
    except ImportError:
        return None
    check = getattr(core, "trace_state_clean", None)
    return check if callable(check) else None


_TRACE_STATE_CLEAN: Callable[[], bool] | None = None


def _event_name_from_stack() -> str | None:
    """The name JAX logs with an event, on a JAX that does not pass it to listeners (before 0.5).

    Those releases record the event from ``dispatch.log_elapsed_time(fmt, fun_name, event)``,
    a few frames up: the same name ``jax_log_compiles`` prints.
    """
    import sys

    frame = sys._getframe(2)
    for _ in range(8):
        if frame is None:
            return None
        if frame.f_code.co_name == "log_elapsed_time":
            name = frame.f_locals.get("fun_name")
            return name if isinstance(name, str) else None
        frame = frame.f_back  # type: ignore[assignment]
    return None


def _pjit_module() -> Any:
    try:
        from jax._src import pjit
    except ImportError:
        return None
    return pjit


def _trace_function_name(pjit: Any) -> str | None:
    """The name of the jit tracer in ``pjit`` on this JAX (``_TRACE_FUNCTIONS``), or None."""
    return next((n for n in _TRACE_FUNCTIONS if pjit is not None and callable(getattr(pjit, n, None))), None)


@contextlib.contextmanager
def installed(observer: MissObserver) -> Iterator[HookStatus]:
    """Hook ``observer`` into JAX while the block runs; everything is put back afterwards."""
    uninstall, status = install(observer)
    try:
        yield status
    finally:
        uninstall()


def install(observer: MissObserver) -> tuple[Callable[[], None], HookStatus]:
    """Hook ``observer`` into JAX; returns a function that removes the hooks, and what was hooked."""
    import jax.monitoring as mon

    from jitscope.jaxcompat.features import unregister_listener

    by_event = {event: phase for phase, event in phase_events().items()}

    def on_duration(event: str, duration_secs: float, **kwargs: Any) -> None:
        phase = by_event.get(event)
        if phase is not None:
            name = kwargs.get("fun_name")
            if not isinstance(name, str):
                name = _event_name_from_stack()
            observer.on_phase(phase, float(duration_secs), name)

    global _TRACE_STATE_CLEAN
    _TRACE_STATE_CLEAN = _find_trace_state_clean()
    hide_from_jax_tracebacks()
    mon.register_event_duration_secs_listener(on_duration)
    restores: list[Callable[[], None]] = [lambda: unregister_listener("event_duration_listener", on_duration)]
    missing: list[str] = []
    pjit = _pjit_module()
    original_infer = getattr(pjit, "_infer_params", None) if pjit is not None else None
    if callable(original_infer):
        def _infer_params(fun: Any, ji: Any, args: Any, kwargs: Any, *rest: Any, **kw: Any) -> Any:
            observer.enter(fun, ji, args, kwargs)
            try:
                return original_infer(fun, ji, args, kwargs, *rest, **kw)
            finally:
                observer.exit()

        pjit._infer_params = _infer_params
        restores.append(lambda: setattr(pjit, "_infer_params", original_infer))
    else:
        missing.append("jax._src.pjit._infer_params (arguments of a cache miss)")
    trace_name = _trace_function_name(pjit)
    if trace_name is not None:
        original_trace = getattr(pjit, trace_name)

        def traced(fun: Any, *rest: Any, **kw: Any) -> Any:
            with observer.tracing(fun):
                return original_trace(fun, *rest, **kw)

        setattr(pjit, trace_name, traced)
        restores.append(lambda: setattr(pjit, trace_name, original_trace))
    else:
        missing.append("the jit tracer (side effects while tracing)")
    restores.extend(_install_old_pmap(observer))

    def uninstall() -> None:
        for restore in reversed(restores):
            restore()

    return uninstall, HookStatus(callable(original_infer), trace_name, tuple(missing))


@dataclass(frozen=True, slots=True)
class _PmapInfo:
    """What ``static_arg_options`` reads, for an old-style pmap miss."""

    static_argnums: tuple[int, ...]
    static_argnames: tuple[str, ...] = ()
    via: str = "jax.pmap"


def _install_old_pmap(observer: MissObserver) -> list[Callable[[], None]]:
    """JAX < 0.7: pmap's C++ cache misses call ``api._prepare_pmap``, then ``pxla.xla_pmap_impl_lazy``,
    which traces through ``pxla.stage_parallel_callable`` when pmap's own cache misses too.

    JAX 0.6 binds ``_prepare_pmap`` (``functools.partial``) into each pmap when the pmap is built,
    so a pmap built before ``install`` is not seen here (its compiles are still timed, under
    JAX's name ``pmap(f)``); ``jitscope run`` installs when the program imports jax, before any
    pmap exists. Its lowering and compile events are named ``pmap(f)`` (the observer's ``jax_name``).
    """
    try:
        from jax._src import api
        from jax._src.interpreters import pxla
    except ImportError:
        return []
    prepare = getattr(api, "_prepare_pmap", None)
    impl = getattr(pxla, "xla_pmap_impl_lazy", None)
    if not callable(prepare) or not callable(impl) or not _takes_ten_arguments(prepare):
        return []  # JAX 0.7+: pmap is a jit of an internal function (pmap_user_call)

    def _prepare_pmap(fun: Any, in_axes: Any, out_axes: Any, static_broadcasted_tuple: Any, *rest: Any) -> Any:
        *_, args, kwargs = rest
        observer.enter(fun, _PmapInfo(tuple(static_broadcasted_tuple)), tuple(args), dict(kwargs))
        try:
            return prepare(fun, in_axes, out_axes, static_broadcasted_tuple, *rest)
        finally:
            observer.exit()

    def xla_pmap_impl_lazy(*args: Any, **kwargs: Any) -> Any:
        observer.resume()
        try:
            return impl(*args, **kwargs)
        finally:
            observer.exit()

    setattr(api, "_prepare_pmap", _prepare_pmap)  # noqa: B010 - absent from the JAX mypy checks against
    setattr(pxla, "xla_pmap_impl_lazy", xla_pmap_impl_lazy)  # noqa: B010
    restores = [lambda: setattr(api, "_prepare_pmap", prepare), lambda: setattr(pxla, "xla_pmap_impl_lazy", impl)]
    stage = getattr(pxla, "stage_parallel_callable", None)
    if callable(stage):  # the trace itself, on a miss of pmap's own cache: watched for side effects as jit's
        def stage_parallel_callable(pci: Any, fun: Any, *rest: Any, **kw: Any) -> Any:
            with observer.tracing(getattr(fun, "f", fun)):  # the user's function inside lu.WrappedFun
                return stage(pci, fun, *rest, **kw)

        setattr(pxla, "stage_parallel_callable", stage_parallel_callable)  # noqa: B010
        restores.append(lambda: setattr(pxla, "stage_parallel_callable", stage))
    return restores


def _takes_ten_arguments(fun: Any) -> bool:
    code = getattr(fun, "__code__", None)
    return code is not None and code.co_argcount == 10


def pmap_user_call(fun: Any) -> tuple[Any, tuple[Any, ...], dict[str, Any], tuple[int, ...]] | None:
    """JAX 0.7+: the user's function, arguments and static argnums behind pmap's internal ``_fun``.

    ``jax._src.pmap`` runs every pmap call in Python (``wrapped(*args, **kwargs)``) and jits
    ``_fun``, which closes over the user's function as a ``WrappedFun``. The user's
    arguments are still in the ``wrapped`` frame on the stack, and ``infer_params``
    (a cell of that frame) holds ``static_broadcasted_tuple``. None when this is not
    pmap's ``_fun``.
    """
    inner = getattr(fun, "__wrapped__", fun)
    code = getattr(inner, "__code__", None)
    if code is None or code.co_name != "_fun" or not code.co_filename.replace("\\", "/").endswith("jax/_src/pmap.py"):
        return None
    import sys

    frame = sys._getframe(1)
    for _ in range(100):
        if frame is None:
            return None
        if frame.f_code.co_name == "wrapped" and frame.f_code.co_filename == code.co_filename:
            break
        frame = frame.f_back  # type: ignore[assignment]
    else:
        return None
    if frame is None:
        return None
    local = frame.f_locals
    infer = local.get("infer_params")
    cells = dict(zip(getattr(getattr(infer, "__code__", None), "co_freevars", ()),
                     getattr(infer, "__closure__", None) or (), strict=False))
    try:
        wrapped_fun = cells["wrapped_fun"].cell_contents
        statics = tuple(int(n) for n in cells["static_broadcasted_tuple"].cell_contents)
        user_fun = wrapped_fun.f
        args, kwargs = tuple(local["args"]), dict(local["kwargs"])
    except (KeyError, AttributeError, ValueError, TypeError):
        return None
    return user_fun, args, kwargs, statics


_HIDDEN: set[str] = set()


def hide_from_jax_tracebacks(file: str = __file__) -> None:
    """Keep a file of wrappers around JAX's own functions (this one; ``hook_gate.py``) out of the user's
    tracebacks, as JAX keeps its own frames out, and out of the source locations JAX gives equations (the
    innermost frame outside JAX): an equation would otherwise be put on the wrapper's line, in the jaxpr on
    0.4.38 and in the HLO's metadata on every version. Once per file and process."""
    if file in _HIDDEN:
        return
    _HIDDEN.add(file)
    with contextlib.suppress(Exception):
        from jax._src import traceback_util

        traceback_util.register_exclusion(file)
    with contextlib.suppress(Exception):
        from jax._src import source_info_util

        source_info_util.register_exclusion(file)


def static_arg_options(jit_info: Any) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """``static_argnums`` and ``static_argnames`` of a ``PjitInfo``."""
    nums = getattr(jit_info, "static_argnums", ()) or ()
    names = getattr(jit_info, "static_argnames", ()) or ()
    return tuple(int(n) for n in nums), tuple(str(n) for n in names)


def donated_argnums(jit_info: Any) -> tuple[int, ...]:
    """The positional arguments a ``PjitInfo`` donates (``donate_argnames`` resolved into them by jit)."""
    return tuple(int(n) for n in getattr(jit_info, "donate_argnums", ()) or ())


@dataclass(frozen=True, slots=True)
class LeafInfo:
    """What JAX keys on for one array leaf."""

    shape: tuple[int, ...]
    dtype: str  # numpy name, e.g. "float32"
    weak_type: bool
    sharding: str | None  # "uncommitted", "committed to cpu:0", a NamedSharding spec; None for tracers/NumPy


def describe_leaf(value: Any, x64: bool) -> LeafInfo | None:
    """The abstract value JAX sees for ``value``, or None when it is not an array-like leaf."""
    import numpy as np

    from jitscope.dtypes import python_scalar_dtype

    if isinstance(value, (bool, int, float, complex)):
        name = {"f32": "float32", "f64": "float64", "i32": "int32", "i64": "int64", "c64": "complex64",
                "c128": "complex128", "bool": "bool"}[python_scalar_dtype(value, x64)]
        return LeafInfo((), name, True, "uncommitted")
    aval: Any = getattr(value, "aval", None)
    shape = getattr(aval, "shape", None)
    if shape is not None:
        sharding = _sharding_text(value) if not _is_tracer(value) else None
        weak_type = bool(getattr(aval, "weak_type", False))
        return LeafInfo(tuple(shape), dtype_name(aval.dtype), weak_type, sharding)
    if isinstance(value, (np.ndarray, np.generic)):
        return LeafInfo(tuple(value.shape), dtype_name(value.dtype), False, "uncommitted")
    return None


def _is_tracer(value: Any) -> bool:
    import jax

    return isinstance(value, jax.core.Tracer)


def _sharding_text(value: Any) -> str | None:
    committed = getattr(value, "_committed", None)
    sharding = getattr(value, "sharding", None)
    if committed is None or sharding is None:
        return None
    if not committed:
        return "uncommitted"
    spec = getattr(sharding, "spec", None)
    if spec is not None:
        return f"committed, {type(sharding).__name__}({spec})"
    devices = getattr(sharding, "device_set", None)
    if devices is not None and len(devices) == 1:
        return f"committed to {next(iter(devices))}"
    return f"committed, {type(sharding).__name__}"


def context_components(x64: bool) -> dict[str, str]:
    """The trace context JAX keys on that users change: x64, the default device, the mesh in use."""
    import jax

    out = {"config: jax_enable_x64": str(x64)}
    default_device = _config_value("jax_default_device")
    out["context: default device"] = str(default_device) if default_device is not None else "(none)"
    mesh = _current_mesh()
    out["context: mesh"] = mesh
    del jax
    return out


def x64_enabled() -> bool:
    return bool(_config_value("jax_enable_x64"))


def _config_value(name: str) -> Any:
    import jax

    try:
        return getattr(jax.config, name)
    except AttributeError:
        try:
            return jax.config.read(name)
        except Exception:  # noqa: BLE001 - an option this JAX does not have
            return None


def _current_mesh() -> str:
    """The mesh set by ``with mesh:`` / ``jax.sharding.use_mesh``, as its axis sizes, or "(none)"."""
    candidates: list[Any] = []
    with contextlib.suppress(Exception):
        from jax._src import mesh as mesh_lib

        candidates.append(mesh_lib.thread_resources.env.physical_mesh)
        get_abstract = getattr(mesh_lib, "get_abstract_mesh", None)
        if get_abstract is not None:
            candidates.append(get_abstract())
    for mesh in candidates:
        if mesh is not None and not getattr(mesh, "empty", True):
            shape = getattr(mesh, "shape", None)
            return str(dict(shape)) if shape is not None else str(mesh)
    return "(none)"


class UncompilableProgram(Exception):
    """A jit trace made a program XLA would abort the process compiling (``stages.compile_would_crash``)."""


def _closed_jaxpr(result: Any) -> Any:
    """The traced program's ``ClosedJaxpr`` in what the tracer returned: ``PjitParams`` (0.7+, its
    ``params["jaxpr"]``) or a tuple holding one (``_infer_params_impl`` before)."""
    for item in (result, *(result if isinstance(result, tuple) else ())):
        params = getattr(item, "params", None)
        if isinstance(params, dict) and "jaxpr" in params:
            return params["jaxpr"]
    return None


@contextlib.contextmanager
def refusing_uncompilable() -> Iterator[None]:
    """While the block runs, a jit trace whose program XLA would abort on (a value of 2**62 bytes or more made
    inside the function, say) raises ``UncompilableProgram`` before anything is lowered or compiled. The
    user's own call is traced once, as always: ``bench``'s and ``profile``'s first calls run under it."""
    from types import SimpleNamespace

    from jitscope.jaxcompat.stages import compile_would_crash

    pjit = _pjit_module()
    name = _trace_function_name(pjit)
    if name is None:
        yield
        return
    original = getattr(pjit, name)

    def checked(*args: Any, **kwargs: Any) -> Any:
        result = original(*args, **kwargs)
        jaxpr = _closed_jaxpr(result)
        why = compile_would_crash(SimpleNamespace(jaxpr=jaxpr)) if jaxpr is not None else None
        if why is not None:
            raise UncompilableProgram(why.split("; the jaxpr")[0])
        return result

    hide_from_jax_tracebacks()
    setattr(pjit, name, checked)
    try:
        yield
    finally:
        if getattr(pjit, name) is checked:
            setattr(pjit, name, original)
