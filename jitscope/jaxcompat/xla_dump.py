"""XLA's dump of one compile, for ``jitscope memory``: the only module that sets XLA flags.

``Lowered.compile(compiler_options=...)`` takes XLA's ``DebugOptions`` by name for that one
compile (public API since JAX 0.4.3x); ``xla_dump_to`` makes XLA write, after optimisation,

- ``<module>.<backend>_after_optimizations.txt``: the optimised, scheduled module (with its stack-frame tables);
- ``...-buffer-assignment.txt``: every allocation and the values placed in it;
- ``...-live-range.txt`` (jax >= 0.5): the schedule and each value's live range; on 0.4.38 the same
  ``HloLiveRange`` section ends ``-buffer-assignment.txt`` instead.

Seen on jax 0.4.38, 0.10.2 and 0.12.0.1 (CPU). The folder is a scratch folder, always removed. The
dump path is new on every compile, so the compile options (part of JAX's cache keys) never match a
cached executable that was compiled without a dump. The texts' grammar is read by
``jaxcompat/buffer_assignment.py``.
"""

from __future__ import annotations

import inspect
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from jitscope.errors import EXIT_USAGE, CompileError, JitscopeError
from jitscope.jaxcompat.features import jax_version


class MemoryAnalysisUnavailable(JitscopeError):
    """This backend or XLA wrote no buffer assignment for the compile."""

    exit_code = EXIT_USAGE


@dataclass(frozen=True, slots=True)
class DumpTexts:
    """The texts XLA wrote for one compiled module (the folder itself is gone)."""

    module: str  # the optimised module, with stack-frame tables where this XLA writes them
    buffer_assignment: str
    live_range: str  # the HloLiveRange section (its own file, or the end of the buffer assignment)
    compile_seconds: float  # the compile that wrote them (dumping included)


#: The debug options asked for: the dump folder, and HLO as text.
def dump_options(folder: str) -> dict[str, Any]:
    return {"xla_dump_to": folder, "xla_dump_hlo_as_text": True}


def check_supported() -> None:
    """One line for a JAX whose ``Lowered.compile`` takes no ``compiler_options``."""
    from jax import stages

    try:
        parameters = inspect.signature(stages.Lowered.compile).parameters
    except (TypeError, ValueError, AttributeError):
        parameters = {}  # type: ignore[assignment]
    if "compiler_options" not in parameters:
        raise MemoryAnalysisUnavailable(
            f"memory analysis needs Lowered.compile(compiler_options=...) to ask XLA for its buffer assignment; "
            f"jax {jax_version()} does not take it", hint="pip install -U jax")


def compile_with_dump(lowered: Any) -> tuple[Any, DumpTexts]:
    """Compile ``lowered`` with XLA dumping into a scratch folder; the executable and the texts read back."""
    from jitscope.jaxcompat.runtime_errors import device_memory_error
    from jitscope.outputs import scratch_folder

    with scratch_folder("jitscope-memory-") as folder:
        start = time.perf_counter()
        try:
            compiled = lowered.compile(compiler_options=dump_options(str(folder)))
        except Exception as exc:  # noqa: BLE001 - XLA errors are user-facing, in one line
            message = " ".join(str(exc).split())
            raise device_memory_error(exc, "compiling") or CompileError(
                f"XLA compilation failed: {type(exc).__name__}: {message}") from None
        seconds = time.perf_counter() - start
        texts = read_dump(folder, seconds)
    # The executable's own text of the same module: the dump's is in XLA's short form on 0.4.38
    # (no %, no signatures), which the HLO reader does not take; the instruction names are the same.
    try:
        own = str(compiled.as_text() or "")
    except Exception:  # noqa: BLE001 - a backend without HLO text: the dump's
        own = ""
    return compiled, replace(texts, module=own) if own.strip() else texts


def _newest(folder: Path, suffix: str) -> Path | None:
    found = sorted(folder.glob(f"*_after_optimizations{suffix}"))
    return found[-1] if found else None


def read_dump(folder: Path, compile_seconds: float = 0.0) -> DumpTexts:
    """The module, buffer assignment and live ranges in ``folder``; one line when XLA wrote none."""
    module = _newest(folder, ".txt")
    assignment = _newest(folder, "-buffer-assignment.txt")
    if module is None or assignment is None:
        import jax

        raise MemoryAnalysisUnavailable(
            f"memory analysis needs XLA's buffer assignment, which the {jax.default_backend()} backend of "
            f"jax {jax_version()} did not write (no *_after_optimizations-buffer-assignment.txt in its dump)",
            hint="jitscope memory reads XLA's dump files; this backend does not write them")
    assignment_text = assignment.read_text(errors="replace")
    live = _newest(folder, "-live-range.txt")
    live_text = live.read_text(errors="replace") if live is not None else ""
    if "HloLiveRange" not in live_text:
        start = assignment_text.find("HloLiveRange")
        live_text = assignment_text[start:] if start >= 0 else ""
    if not live_text:
        raise MemoryAnalysisUnavailable(
            f"memory analysis needs XLA's buffer live ranges, which jax {jax_version()} did not write",
            hint="no HloLiveRange in the buffer assignment or a -live-range.txt file")
    return DumpTexts(module.read_text(errors="replace"), assignment_text, live_text, compile_seconds)
