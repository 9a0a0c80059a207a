"""JAX's profiler for ``jitscope profile``: capture a trace, read its XSpace, and the compiled HLO text.

Everything version-dependent about profiles is here. The trace is captured with the public
``jax.profiler.trace`` and read with the public ``jax.profiler.ProfileData`` where this JAX has it
(0.10, 0.12); on 0.4.38-0.5.x the name is missing and on some 0.6.x builds it is None, and there
the ``.xplane.pb`` file is read by ``jaxcompat/xspace.py``, a protobuf wire-format reader that
yields the same planes, lines, events and stats. The events are copied out into plain ``XEvent``
values so that nothing outside this module touches either reader's objects.

What the captures hold (seen on jax 0.4.38, 0.5.3, 0.6.2, 0.10.2 and 0.12.0.1, CPU): plane ``/host:CPU``, one
line per thread; the XLA CPU client's threads (``tf_XLAPjRtCpuClient/...`` on 0.6 and 0.10,
``tf_XLAExecute/...`` on 0.12, ``tf_XLATfrtCpuClient/...`` and ``tf_XLAEigen/...`` on 0.4.38
and 0.5.3) carry one event per executed thunk, named after the HLO instruction, with stats
``hlo_op`` (the instruction), ``hlo_module`` (``jit_f``), ``program_id`` and, from 0.10 on,
``run_id`` (one per execution) and ``device_ordinal``. On GPU the device planes
(``/device:GPU:0``) carry one event per kernel on ``Stream #N`` lines with ``hlo_op``,
``hlo_module``, ``program_id`` and ``correlation_id`` stats, and memcpy events.
"""

from __future__ import annotations

import contextlib
import functools
import glob
import inspect
import os
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from jitscope.errors import EXIT_FINDINGS, JitscopeError
from jitscope.jaxcompat.features import UnsupportedJaxError, jax_version
from jitscope.jaxcompat.xspace import XSpaceError, read_xspace

#: Stats copied from an event: what attribution needs, and the GPU's memcpy and kernel details.
KEPT_STATS = frozenset({"hlo_op", "hlo_module", "program_id", "run_id", "device_ordinal", "correlation_id",
                        "memcpy_details", "kernel_details", "scope_range_id"})
#: Lines of a device plane that a profiler's post-processing derives from the kernels (not new work).
DERIVED_LINES = ("XLA Modules", "XLA Ops", "XLA TraceMe", "Steps", "Framework Name Scope", "Framework Ops",
                 "Source code", "TensorFlow Name Scope", "TensorFlow Ops", "SparseCore")


class CaptureReadError(JitscopeError):
    """The profiler's capture file could not be read (truncated or malformed)."""

    exit_code = EXIT_FINDINGS


@dataclass(frozen=True, slots=True)
class XEvent:
    """One profiler event, copied out of the XSpace: where it ran, when, and its stats (as text)."""

    plane: str
    line: str
    name: str
    start_ns: float
    duration_ns: float
    stats: dict[str, str] = field(default_factory=dict)

    @property
    def end_ns(self) -> float:
        return self.start_ns + self.duration_ns

    @property
    def on_device(self) -> bool:
        """True for an accelerator plane (``/device:GPU:0``, ``/device:TPU:0``); False for the host."""
        return self.plane.startswith("/device:")


@functools.cache
def profile_data_class() -> Any | None:
    """``jax.profiler.ProfileData``, or None for a JAX without it (then ``xspace.py`` reads the capture)."""
    try:
        import jax.profiler

        cls = getattr(jax.profiler, "ProfileData", None)
    except ImportError:
        return None
    return cls if cls is not None and hasattr(cls, "from_file") else None


def check_supported() -> None:
    """The one-line error for a JAX that cannot capture a profile (``jax.profiler.trace`` missing)."""
    import jax.profiler

    if not callable(getattr(jax.profiler, "trace", None)):
        raise UnsupportedJaxError(
            f"unsupported JAX version {jax_version()}: jax.profiler.trace (capturing a profile) is missing; "
            "jitscope profile needs it (the other commands work on this JAX)", hint="pip install -U jax")


#: TraceMe level at which XLA's CPU runtime records each executed thunk (with its ``hlo_op``).
THUNK_TRACE_LEVEL = 2


def _options() -> dict[str, Any]:
    """``profiler_options`` asking for the thunk events where JAX takes options whose default is below
    that level (0.6.x defaults ``host_tracer_level`` to 1: its captures then hold no thunk at all)."""
    import jax

    options_class = getattr(jax.profiler, "ProfileOptions", None)
    if options_class is None or "profiler_options" not in inspect.signature(jax.profiler.trace).parameters:
        return {}  # 0.4.38, 0.5.x: no options, and the thunks are recorded
    options = options_class()
    if getattr(options, "host_tracer_level", THUNK_TRACE_LEVEL) >= THUNK_TRACE_LEVEL:
        return {}
    options.host_tracer_level = THUNK_TRACE_LEVEL
    return {"profiler_options": options}


@contextlib.contextmanager
def capture(directory: str, perfetto: bool = False) -> Iterator[None]:
    """Profile what runs inside: ``jax.profiler.trace`` into ``directory`` (an ``.xplane.pb`` file, and
    with ``perfetto`` a ``.trace.json.gz`` that ui.perfetto.dev opens)."""
    import jax

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with jax.profiler.trace(directory, create_perfetto_trace=perfetto, **_options()):
            yield


def xspace_files(directory: str) -> list[str]:
    """The ``.xplane.pb`` files a capture left in ``directory``, newest last."""
    files = glob.glob(os.path.join(directory, "**", "*.xplane.pb"), recursive=True)
    return sorted(files, key=os.path.getmtime)


def _text(value: Any) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def _keep(plane: str, line: str, stats: dict[str, str], name: str) -> bool:
    if "hlo_op" in stats:
        return True
    # A device's copies carry no hlo_op: they are what the program's inputs and outputs cost.
    return plane.startswith("/device:") and ("memcpy" in name.lower() or "memcpy_details" in stats)


def _read(path: str) -> Any:
    """The capture, read by ProfileData where JAX has it, else by ``xspace.py`` (the same planes)."""
    cls = profile_data_class()
    if cls is not None:
        return cls.from_file(path)
    try:
        return read_xspace(path)
    except (OSError, XSpaceError) as exc:
        raise CaptureReadError(f"could not read the captured profile {path}: {exc}",
                               hint="run again; if it persists, report it with the file") from None


def _events(path: str, kept_stats: frozenset[str], keep: Any) -> list[XEvent]:
    """The events of a captured XSpace that ``keep(plane, line, stats, name)`` wants, with ``kept_stats``."""
    data = _read(path)  # kept alive while its planes are walked
    events: list[XEvent] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # jax 0.12: "builtin type ... has no __module__"
        for plane in data.planes:
            plane_name = _text(plane.name)
            for line in plane.lines:
                line_name = _text(line.name)
                if plane_name.startswith("/device:") and line_name.startswith(DERIVED_LINES):
                    continue
                for event in line.events:
                    stats = {_text(k): _text(v) for k, v in event.stats if _text(k) in kept_stats}
                    name = _text(event.name)
                    if keep(plane_name, line_name, stats, name):
                        events.append(XEvent(plane_name, line_name, name, float(event.start_ns),
                                             float(event.duration_ns), stats))
    return events


def read_events(path: str) -> list[XEvent]:
    """The XLA events of a captured XSpace: every event with an ``hlo_op`` stat, and device copies."""
    return _events(path, KEPT_STATS, _keep)


#: Stats kept from a compile's events: the kernel module a fusion's compile names (``module``), and the CUDA
#: activity's ``correlation_id`` (on a GPU, the autotuner's copies and timed runs of candidate kernels).
COMPILE_STATS = frozenset({"module", "correlation_id"})
#: Host lines and events of a capture that are not the compiler's work: the Python tracer's line, and the
#: thread pool's zero-length bookkeeping events.
_NOT_COMPILER_LINES = ("python",)
_NOT_COMPILER_EVENTS = ("ThreadpoolListener::",)


def _compiler_event(plane: str, line: str, stats: dict[str, str], name: str) -> bool:
    return line not in _NOT_COMPILER_LINES and not name.startswith(_NOT_COMPILER_EVENTS)


def read_compile_events(path: str) -> list[XEvent]:
    """Every event of a capture around a compile on the compiler's threads (HLO passes, codegen, MLIR
    passes, per-fusion kernel compiles with their ``module`` stat); seen on jax 0.10.2 CPU and 0.11.2 on an
    NVIDIA H100 (where the device's plane holds the autotuner's timed candidate kernels)."""
    return _events(path, COMPILE_STATS, _compiler_event)


def compiled_module_text(compiled: Any) -> str:
    """The optimised HLO module with its metadata and, on newer XLA, its stack-frame tables."""
    text = compiled.as_text()
    if not text:
        raise UnsupportedJaxError(f"unsupported JAX version {jax_version()}: Compiled.as_text() returned nothing")
    return str(text)


def device_description() -> tuple[str, str]:
    """(backend, device kind) of the default device: ("cpu", "cpu"), ("gpu", "NVIDIA H100 80GB HBM3")."""
    import jax

    devices = jax.devices()
    return jax.default_backend(), devices[0].device_kind if devices else "?"
