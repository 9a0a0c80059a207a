"""``jitscope doctor PROGRAM.py``: run the program under ``run``'s watch, then diagnose the record."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from jitscope.doctor.findings import diagnose, noise_floor
from jitscope.model.common import Location
from jitscope.model.doctor import DoctorReport, Finding, rank_key
from jitscope.model.run import USER, RunRecord
from jitscope.run.program import Program
from jitscope.units import plural

if TYPE_CHECKING:
    from jitscope.doctor.measure import Recorder


def doctor_program(program: Program, *, effects: bool = True) -> tuple[DoctorReport, RunRecord]:
    """Run ``program`` as ``jitscope run`` does and diagnose it; the report and the run it comes from."""
    from jitscope.doctor.measure import Recorder
    from jitscope.run.session import run_observed

    recorder = Recorder()
    donated: dict[tuple[str, Location | None], tuple[int, ...]] = {}

    def on_compile(event: Any, call: Any) -> None:
        recorder(event, call)
        donated[(event.function, event.defined_at)] = tuple(getattr(call, "donate_argnums", ()))

    # side effects are watched on each function's first trace only: the monitor slows tracing, and doctor
    # ranks recompiles by their seconds (a later trace runs the same Python)
    record = run_observed(program, effects=effects, effects_once=True, on_compile=on_compile)
    return diagnose_record(record, recorder, donated), record


def diagnose_record(record: RunRecord, recorder: Recorder | None = None,
                    donated: dict[tuple[str, Location | None], tuple[int, ...]] | None = None, *,
                    lint: bool = True, profile: bool = True) -> DoctorReport:
    """A run's record (this run's, or a saved ``run --out`` report read back) -> the doctor's report; with the
    run's calls (``recorder``), the changes that can be tried are tried and their gains measured, and the
    costliest functions' memory is analysed (``memory.py``) and (``profile``) their device time by line
    (``device.py``); with ``lint``, the program's files are linted and the hazards the run hit kept."""
    findings, below = diagnose(record)
    memory: list[Finding] = []
    device: list[Finding] = []
    more_notes: list[str] = []
    if recorder is not None and recorder.calls:
        from jitscope.doctor.compile import open_slow_compiles
        from jitscope.doctor.device import hot_lines
        from jitscope.doctor.measure import measure
        from jitscope.doctor.memory import calls_from_run, memory_findings

        costliest = calls_from_run(record, recorder, donated or {})
        memory, memory_notes = memory_findings(costliest)
        device, device_notes = hot_lines(costliest) if profile else ([], [])
        more_notes = memory_notes + device_notes
        findings = open_slow_compiles(measure(findings, recorder), recorder)
    if lint:
        from jitscope.doctor.lint import lint_hits

        findings = lint_hits(record, findings)
    findings.sort(key=rank_key)
    compiles = sum(e.compiled for e in record.events if e.kind == USER)
    notes = [*_notes(record, compiles), *more_notes]
    return DoctorReport(
        program=record.program, argv=record.argv, exit_code=record.exit_code, outcome=record.outcome,
        wall_s=record.wall_s, compile_s=round(record.compile_s, 6), compiles=compiles,
        findings=tuple(findings), below_floor=below, noise_floor_s=round(noise_floor(record.wall_s), 6),
        notes=tuple(notes), jax_version=record.jax_version, memory=tuple(memory), device=tuple(device))


def _notes(record: RunRecord, compiles: int) -> Iterator[str]:
    if record.exit_code != 0:
        yield (f"the program {record.outcome} (exit {record.exit_code}): the findings are those up to the failure; "
               f"its traceback is above")
    if not compiles:
        eager = sum(e.compiled for e in record.events if e.kind != USER)
        yield (f"no jitted function ran: the program ran op by op ({plural(eager, 'operation')} compiled outside "
               f"jit); wrap its step in jax.jit" if eager else "the program compiled nothing with JAX")
