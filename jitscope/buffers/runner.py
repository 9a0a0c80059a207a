"""load -> trace with abstract inputs -> lower -> compile with XLA's dump -> analyse -> MemoryReport.

Nothing runs and nothing is allocated on the device: the program is compiled once, for XLA's buffer
assignment. The compile is a fresh one (``jaxcompat/xla_dump.py``), so its time is a compile's.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from jitscope.buffers.analyse import analyse
from jitscope.errors import CompileError, SpecError, UserCodeError
from jitscope.jaxcompat import xla_dump
from jitscope.jaxcompat.stages import compile_would_crash
from jitscope.jaxcompat.jit import JitOptions, make_jit
from jitscope.load.abstract import to_abstract, warn_if_x64_disabled
from jitscope.load.specs import ArgSet
from jitscope.load.target import TargetHandle, jit_options_for
from jitscope.model.bench import BenchFailure
from jitscope.model.common import Location
from jitscope.model.memory import MemoryReport, MemoryRow, MemorySettings, RematTrial

Progress = Callable[[float, int, str], None]
#: The policies ``--try-remat`` compiles with, in order.
REMAT_POLICIES = ("nothing_saveable", "dots_saveable")


@dataclass(frozen=True, slots=True)
class MemoryOptions:
    fail_over: int | None = None  # bytes
    try_remat: bool = False


def _memory_analysis(compiled: Any) -> dict[str, int | None]:
    from jitscope.jaxcompat.stages import memory_record

    record = memory_record(compiled)
    if record is None:
        return {}
    return {"arguments": record.argument_bytes, "outputs": record.output_bytes, "aliased": record.alias_bytes,
            "temporaries": record.temp_bytes, "generated_code": record.generated_code_bytes}


def compile_for_memory(fn: Callable[..., Any], options: JitOptions, argset: ArgSet, name: str) -> tuple[Any, Any]:
    """(compiled, dump texts) of ``fn`` traced with ``argset``'s abstract values."""
    from jitscope.timing.cold import user_code_failed

    jitted = make_jit(fn, options)
    args, kwargs = to_abstract(argset)
    try:
        traced = jitted.trace(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - the user's function failed while tracing
        raise user_code_failed(name, argset.describe(), exc, options, "while tracing", fn=fn, argset=argset) from None
    try:
        lowered = traced.lower()
    except Exception as exc:  # noqa: BLE001
        message = " ".join(str(exc).split())
        raise CompileError(f"{name}({argset.describe()}): lowering failed: {type(exc).__name__}: {message}") from None
    crash = compile_would_crash(traced)
    if crash is not None:
        raise SpecError(f"{name}({argset.describe()}): {crash.split('; the jaxpr')[0]}",
                        hint="jitscope trace shows its jaxpr and StableHLO")
    return xla_dump.compile_with_dump(lowered)


def _devices(header: str) -> int:
    found = {k: int(v) for k, v in re.findall(r"\b(num_partitions|replica_count)=(\d+)", header)}
    return max(1, found.get("num_partitions", 1)) * max(1, found.get("replica_count", 1))


def _remat(target: TargetHandle, options: JitOptions, argset: ArgSet) -> tuple[RematTrial, ...]:
    """The program compiled again under each policy of ``REMAT_POLICIES`` (``jaxcompat/remat.py``)."""
    from jitscope.buffers.liveness import peak_live
    from jitscope.jaxcompat.buffer_assignment import parse_allocations, parse_live_ranges
    from jitscope.jaxcompat.remat import checkpointed_gradients

    trials = []
    for policy in REMAT_POLICIES:
        try:
            with checkpointed_gradients(policy) as seen:
                compiled, texts = compile_for_memory(target.fn, options, argset, target.name)
            if not seen:
                return (RematTrial(policy, 0, 0, "no jax.grad, jax.value_and_grad or jax.vjp call was traced"),)
        except (UserCodeError, CompileError) as err:
            trials.append(RematTrial(policy, 0, 0, err.message))
            continue
        allocations = parse_allocations(texts.buffer_assignment)
        live = peak_live(allocations, parse_live_ranges(texts.live_range))
        record = _memory_analysis(compiled)
        reserved = sum(v or 0 for k, v in record.items() if k in ("arguments", "outputs", "temporaries")) - (
            record.get("aliased") or 0)
        trials.append(RematTrial(policy, live.bytes, reserved))
    return tuple(trials)


def memory_row(target: TargetHandle, argset: ArgSet, options: MemoryOptions) -> MemoryRow:
    from jitscope.jaxcompat.profiler import device_description
    from jitscope.profiling.callsites import call_chains
    from jitscope.profiling.runner import function_span
    from jitscope.userframes import is_user_file

    jit_options, _ = jit_options_for(target, argset)
    compiled, texts = compile_for_memory(target.fn, jit_options, argset, target.name)
    start = time.perf_counter()
    span = function_span(target.fn)
    result = analyse(texts.module, texts.buffer_assignment, texts.live_range, _memory_analysis(compiled), span,
                     is_user_file, call_chains(target.fn, is_user_file))
    seconds = time.perf_counter() - start
    backend, kind = device_description()
    notes = [n for n in (warn_if_x64_disabled(argset),) if n]
    notes += [*result.totals.differences, *result.notes]
    remat = _remat(target, jit_options, argset) if options.try_remat and result.residuals else ()
    return MemoryRow(
        target=target.name, call=argset.describe(), label=argset.label,
        statics={k: repr(argset.kwargs[k]) for k in argset.static_names if k in argset.kwargs},
        function=Location(span.file, span.first, span.name), last_line=span.last, module=result.module,
        backend=backend, devices=_devices(result.header), totals=result.totals, peak=result.peak, lines=result.lines,
        residuals=result.residuals, donations=result.donations, remat=remat, warnings=tuple(notes),
        compile_seconds=texts.compile_seconds, analysis_seconds=seconds, device_kind=kind)


def over_limit(row: MemoryRow, limit: int | None) -> str | None:
    """The --fail-over line for a row that needs more than ``limit`` bytes, else None."""
    from jitscope.units import fmt_bytes

    if limit is None or row.totals.reserved <= limit:
        return None
    return (f"{row.target}({row.call}) needs {fmt_bytes(row.totals.reserved)} of device memory "
            f"({row.totals.reserved:,} bytes), over --fail-over {fmt_bytes(limit)}")


def memory_calls(calls: Sequence[tuple[TargetHandle, ArgSet]], options: MemoryOptions | None = None,
                 progress: Progress | None = None) -> MemoryReport:
    """Analyse every call; a call whose code fails is recorded as a failure and the rest go on."""
    from jitscope.jaxcompat.stages import environment
    from jitscope.timing.runner import device_errors

    options = options or MemoryOptions()
    xla_dump.check_supported()
    rows: list[MemoryRow] = []
    failures: list[BenchFailure] = []
    for i, (target, argset) in enumerate(calls):
        if progress is not None:
            progress(float(i), len(calls), f"{target.name}: compiling")
        try:
            with device_errors(f"compiling {target.name}({argset.describe()})"):
                rows.append(memory_row(target, argset, options))
        except UserCodeError as err:
            failures.append(BenchFailure(target=target.name, call=argset.describe(), label=argset.label,
                                         error=err.message, hint=err.hint, detail=err.detail))
    over = tuple(line for row in rows if (line := over_limit(row, options.fail_over)) is not None)
    return MemoryReport(rows=tuple(rows), settings=MemorySettings(options.fail_over, options.try_remat),
                        environment=environment(), failures=tuple(failures), over=over)
