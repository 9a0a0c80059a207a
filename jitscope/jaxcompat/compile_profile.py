"""A ``jax.profiler`` capture around one XLA compile (``--compile-profile``), read into plain events.

What the capture holds (jax 0.10.2, CPU, checked by hand and in ``tests/profile/test_compile_time.py``):
the compile client's outermost event (``PjRtCpuClient::Compile``) on a ``tf_PjRtCompilerThreadPool`` line,
with XLA's HLO pass pipelines nested in it (``HLO passes through layout assignment (jit_f)``, passes such as
``layout-assignment``, ``fusion``, ``copy-insertion``) and the backend (``CpuCompiler::RunBackend`` >
``ThunkEmitter::EmitEntryComputation``, ``Codegen`` > ``JitCompiler::Compile``, LLVM); on
``tf_xla-cpu-codegen`` lines one ``FusionCompiler::Compile`` per fused kernel, its ``module`` stat naming
the kernel (``add_reduce_fusion_kernel_module``), with the MLIR passes (``CSEPass``, ``CanonicalizerPass``)
nested in it. A JAX or backend whose capture lacks these gets no phase split (``profiling/compile_phases``
says so in one line). Starting a capture fails while another ``jax.profiler`` session runs: then the
compile runs uncaptured and ``CompileCapture.problem`` says why.
"""

from __future__ import annotations

import contextlib
import inspect
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from jitscope.jaxcompat.profiler import XEvent, read_compile_events, xspace_files


@dataclass
class CompileCapture:
    """What one capture around a compile gave: its events, or why there are none. Lives in one compile."""

    events: list[XEvent] = field(default_factory=list)
    problem: str = ""
    #: Seconds the block inside took (the compile itself, capture start and stop excluded).
    seconds: float | None = None
    #: The persistent compilation cache: "hit", "miss", or "" when it was not consulted.
    persistent_cache: str = ""


def _options() -> dict[str, Any]:
    """No Python tracer (jitscope samples the Python itself, and the tracer slows every Python call down)."""
    import jax

    options_class = getattr(jax.profiler, "ProfileOptions", None)
    if options_class is None or "profiler_options" not in inspect.signature(jax.profiler.trace).parameters:
        return {}
    options = options_class()
    if hasattr(options, "python_tracer_level"):
        options.python_tracer_level = 0
    return {"profiler_options": options}


@contextlib.contextmanager
def capture_compile(result: CompileCapture | None = None) -> Iterator[CompileCapture]:
    """Capture what runs inside (one ``lowered.compile()``) into ``result``. An exception inside propagates
    after the events up to it are read: a compile that fails still shows its phases up to the failure."""
    import jax

    from jitscope.outputs import scratch_folder

    result = result if result is not None else CompileCapture()
    with scratch_folder("jitscope-compile-") as directory, contextlib.ExitStack() as stack:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            options = _options()
            try:
                with _quiet_stderr(not options):
                    stack.enter_context(jax.profiler.trace(str(directory), **options))
            except Exception as exc:  # noqa: BLE001 - RuntimeError "Profile has already been started"
                result.problem = (f"no compile profile: the profiler could not start ({_first_line(exc)}); "
                                  "another jax.profiler session may be running")
                stack.close()
        try:
            start = time.perf_counter()
            yield result
        finally:
            result.seconds = time.perf_counter() - start
            if not result.problem:
                try:
                    with _quiet_stderr(not options):
                        stack.close()  # stops the capture and writes the file
                    files = xspace_files(str(directory))
                    result.events = read_compile_events(files[-1]) if files else []
                    if not files:
                        result.problem = "no compile profile: the capture wrote no file"
                except Exception as exc:  # noqa: BLE001 - a capture that cannot be read loses its split only
                    result.problem = f"no compile profile: the capture could not be read ({_first_line(exc)})"


@contextlib.contextmanager
def _quiet_stderr(enabled: bool) -> Iterator[None]:
    """Starting and stopping a capture on a JAX that takes no profiler options (0.4.38-0.5.x) runs its Python
    tracer, whose C++ side logs "Can't import tensorflow.python.profiler.trace" to the process's stderr each
    time: harmless, and not the user's business. File descriptor 2 goes to /dev/null for those two steps."""
    if not enabled:
        yield
        return
    import os
    import sys

    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
