"""The compile-time section's record for ``trace`` and ``bench --compile-profile`` (``model/compile.py``): the
compile by line of the user's code from the jaxpr and the optimised HLO, and, with a capture, by XLA phase."""

from __future__ import annotations

import dataclasses
from typing import Any

from jitscope.errors import CompileError
from jitscope.jaxcompat.caches import forget_other_functions_lines
from jitscope.jaxcompat.compile_profile import CompileCapture
from jitscope.load.specs import ArgSet
from jitscope.load.target import TargetHandle
from jitscope.model.compile import CompileTimeRecord
from jitscope.model.trace import SourceLineRecord, TraceRecord
from jitscope.profiling.line_costs import line_costs
from jitscope.tracing.compile import CompileSkipped, lower_and_compile
from jitscope.tracing.lines import source_lines
from jitscope.tracing.session import TraceHandle, trace_target


def profile_compile(target: TargetHandle, argset: ArgSet, cold: CompileCapture | None = None) -> CompileTimeRecord | None:
    """One more cold trace, lowering and compile of the call with JAX's in-memory caches cleared, profiled
    (``bench --compile-profile``: its measured cold calls stay untouched); None when it did not trace. With
    ``cold`` (the capture of the measured first cold call, on a GPU) XLA's phases are that compile's, and the
    extra compile only gives the by-line counts and tracing times."""
    from jitscope.jaxcompat.caches import clear_in_memory_caches

    clear_in_memory_caches()
    forget_other_functions_lines(target.name)
    handle = trace_target(target, argset, watch_effects=False, sample_lines=True)
    if handle.traced is None:
        return None
    compiled: list[Any] = []
    capture, failure, record = (CompileCapture() if cold is None else None), "", handle.record
    try:
        record = dataclasses.replace(record, stages=lower_and_compile(
            handle.traced, ("jaxpr", "hlo"), lambda lowered, executable: compiled.append(executable), capture))
    except CompileSkipped:
        return None
    except CompileError as err:
        failure = err.message
    text = module_text(compiled[0]) if compiled else None
    record = dataclasses.replace(record, source_lines=source_lines_of(handle, record, compiled, text))
    return compile_time_of(handle, record, text, cold if cold is not None and not failure else capture, failure)


def compile_time_of(handle: TraceHandle, record: TraceRecord, text: str | None, capture: CompileCapture | None,
                    failure: str) -> CompileTimeRecord | None:
    """The compile by line and (``capture``) by XLA phase; None when nothing was compiled."""
    if (text is None and not failure) or handle.project is None:
        return None
    from jitscope.profiling.compile_time import compile_time_record

    st = record.stages
    return compile_time_record(
        source=record.source_lines, hlo_text=text, jaxpr=record.jaxpr, is_user_file=handle.project.is_user_file,
        trace_seconds=record.trace_seconds, lower_seconds=st.lower_seconds if st is not None else None,
        compile_seconds=st.compile_seconds if st is not None else None, capture=capture,
        trace_by_line=handle.trace_by_line, failure=failure)


def static_variants_noted(items: list[tuple[str, bool, CompileTimeRecord | None]]) -> list[CompileTimeRecord | None]:
    """(function, whether the call has static arguments, its compile time) of each compiled call: where one
    function compiled once per static variant, each of its compile-time records gets a note saying so."""
    from collections import Counter

    compiled = Counter(name for name, static, record in items if static and record is not None)
    out = []
    for name, static, record in items:
        n = compiled.get(name, 0)
        if static and n > 1 and record is not None:
            note = (f"{n} compiles of this function in this run, one per static variant: each pays the whole "
                    "compile again; fewer static variants (pass the value as an array, or round it to a few "
                    "buckets) compile fewer times (rule of thumb)")
            record = dataclasses.replace(record, notes=(*record.notes, note))
        out.append(record)
    return out


def source_lines_of(handle: TraceHandle, record: TraceRecord, compiled: list[Any],
                    text: str | None) -> tuple[SourceLineRecord, ...]:
    """The jaxpr by line of the user's code, with XLA's FLOPs and bytes split over the lines when compiled;
    ``text``: the optimised HLO with its stack-frame tables."""
    if record.jaxpr is None:
        return ()
    costs = None
    if compiled and handle.project is not None:
        from jitscope.jaxcompat.stages import cost_record

        cost = record.stages.cost if record.stages is not None and record.stages.cost else cost_record(compiled[0])
        if text:
            costs = line_costs(text, record.jaxpr, handle.project.is_user_file, cost.flops if cost else None,
                               cost.bytes_accessed if cost else None)
    return source_lines(record.jaxpr, costs)


def module_text(compiled: Any) -> str | None:
    """The optimised HLO with its source stacks (the stack-frame tables ``StagesRecord.hlo`` leaves out)."""
    try:
        text = compiled.as_text()
    except Exception:  # noqa: BLE001 - a backend without HLO text: no costs per line
        return None
    return str(text) if text else None
