"""``jitscope doctor PROGRAM.py``: run the program under ``run``'s watch, then diagnose the record."""

from __future__ import annotations

from collections.abc import Iterator

from jitscope.doctor.findings import diagnose, noise_floor
from jitscope.model.doctor import DoctorReport
from jitscope.model.run import USER, RunRecord
from jitscope.run.program import Program
from jitscope.units import plural


def doctor_program(program: Program, *, effects: bool = True) -> tuple[DoctorReport, RunRecord]:
    """Run ``program`` as ``jitscope run`` does and diagnose it; the report and the run it comes from."""
    from jitscope.run.session import run_observed

    record = run_observed(program, effects=effects)
    return diagnose_record(record), record


def diagnose_record(record: RunRecord) -> DoctorReport:
    """A run's record (this run's, or a saved ``run --out`` report read back) -> the doctor's report."""
    findings, below = diagnose(record)
    compiles = sum(e.compiled for e in record.events if e.kind == USER)
    notes = list(_notes(record, compiles))
    return DoctorReport(
        program=record.program, argv=record.argv, exit_code=record.exit_code, outcome=record.outcome,
        wall_s=record.wall_s, compile_s=round(record.compile_s, 6), compiles=compiles,
        findings=tuple(findings), below_floor=below, noise_floor_s=round(noise_floor(record.wall_s), 6),
        notes=tuple(notes), jax_version=record.jax_version)


def _notes(record: RunRecord, compiles: int) -> Iterator[str]:
    if record.exit_code != 0:
        yield (f"the program {record.outcome} (exit {record.exit_code}): the findings are those up to the failure; "
               f"its traceback is above")
    if not compiles:
        eager = sum(e.compiled for e in record.events if e.kind != USER)
        yield (f"no jitted function ran: the program ran op by op ({plural(eager, 'operation')} compiled outside "
               f"jit); wrap its step in jax.jit" if eager else "the program compiled nothing with JAX")
