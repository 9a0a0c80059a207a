"""``jitscope.memory(fn, *args)``: what holds device memory at the compiled program's peak, from Python.

The function is traced with the arguments' shapes and dtypes and compiled once (nothing runs, nothing
is allocated on the device); the result renders as every other result does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jitscope.api.results import Result

if TYPE_CHECKING:
    from jitscope.api.targets import TargetFlags
    from jitscope.model.memory import BufferRecord, LineMemory, MemoryReport, MemoryRow
    from jitscope.report.views.document import Document


class MemoryResult(Result["MemoryReport"]):
    """``jitscope.memory(...)`` / ``jitscope memory``: the peak, what is live there, bytes by source line."""

    command = "memory"

    def __init__(self, record: MemoryReport, *, failures_inline: bool = True) -> None:
        super().__init__(record)
        #: failed calls as a section of the report (the CLI's terminal view lists them on stderr instead)
        self.failures_inline = failures_inline

    def _row(self) -> MemoryRow:
        row: MemoryRow = self._first_row("no memory analysis")
        return row

    @property
    def rows(self) -> tuple[MemoryRow, ...]:
        return self.record.rows

    @property
    def peak_bytes(self) -> int:
        """Bytes live at the (first) call's peak: arguments, constants and every value live there."""
        return self._row().peak.bytes

    @property
    def needed_bytes(self) -> int:
        """What the program needs on the device: arguments + outputs - donated + temporaries (per device)."""
        return self._row().totals.reserved

    @property
    def lines(self) -> tuple[LineMemory, ...]:
        """Bytes live at the peak by the source line that made them, most first."""
        return self._row().lines

    @property
    def buffers(self) -> tuple[BufferRecord, ...]:
        """Every buffer live at the peak, largest first."""
        return self._row().peak.buffers

    @property
    def over(self) -> bool:
        """True when a call needs more than ``fail_over`` bytes (what makes ``jitscope memory`` exit 1)."""
        return bool(self.record.over)

    def document(self, fmt: str) -> Document:
        from jitscope.report.views.memory import memory_document

        return memory_document(self.record, fmt, failures=self.failures_inline)

    def title(self) -> str:
        return f"jitscope memory: {self.record.rows[0].target}" if self.record.rows else "jitscope memory"

    def summary(self) -> str:
        if not self.record.rows:
            return "memory: nothing compiled"
        from jitscope.report.views.memory import summary_line

        return summary_line(self.record.rows[0])


def memory(
    fn: Callable[..., Any], /, *args: Any,
    fail_over: int | float | str | None = None,
    try_remat: bool = False,
    static_argnums: int | Sequence[int] | None = None,
    static_argnames: str | Sequence[str] | None = None,
    shapes: str | Sequence[str] | None = None,
    **kwargs: Any,
) -> MemoryResult:
    """What holds device memory at the peak of ``jax.jit(fn)(*args, **kwargs)``, by your source line, as
    ``jitscope memory``. Only the arguments' shapes and dtypes are used: nothing runs on the device.

    >>> result = jitscope.memory(train_step, params, batch)
    >>> result.peak_bytes, result.lines[0].location, result.buffers[0].shape
    """
    from jitscope.api.checks import check_bytes, check_flag
    from jitscope.api.targets import shape_list, target_of
    from jitscope.buffers.runner import MemoryOptions, memory_calls
    from jitscope.load.mesh import example_mesh_scope
    from jitscope.timing.plan import plan_calls

    limit = check_bytes("fail_over", fail_over)
    check_flag("try_remat", try_remat)
    handle = target_of(fn, args, kwargs, static_argnums, static_argnames, abstract=True, shapes=shapes)
    planned = plan_calls([handle], shape_list(shapes))
    with example_mesh_scope(argset for _, argset in planned):
        return MemoryResult(memory_calls(planned, MemoryOptions(fail_over=limit, try_remat=try_remat)))


def memory_command(flags: TargetFlags, fmt_name: str, out: Path | None, *, fail_over: str | None,
                   try_remat: bool) -> bool:
    """``jitscope memory``: the report on stdout or in ``out``, failed calls and calls over ``--fail-over`` on
    stderr; True when there were any."""
    from jitscope.api.commands.bench import report_failures
    from jitscope.api.targets import run_planned
    from jitscope.api.checks import check_bytes
    from jitscope.buffers.runner import MemoryOptions, memory_calls
    from jitscope.report.writers.console import make_console
    from jitscope.report.writers.destination import write_result

    limit = check_bytes("--fail-over", fail_over)
    options = MemoryOptions(fail_over=limit, try_remat=try_remat)
    report = run_planned(flags, "jitscope memory", fmt_name,
                         lambda planned, progress: memory_calls(planned, options, progress))
    stderr = make_console(stderr=True)
    terminal = fmt_name == "text" and out is None
    if report.rows or not terminal:
        write_result(MemoryResult(report, failures_inline=not terminal), fmt_name, out)
    for line in report.over:
        stderr.print(f"error: {line}", markup=False, highlight=False)
    if report.failures:
        report_failures(report, stderr)  # type: ignore[arg-type]  # the same failure records as bench's
    return bool(report.failures or report.over)
