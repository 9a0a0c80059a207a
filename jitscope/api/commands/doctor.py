"""``jitscope.doctor("train.py")``: what to fix first in a program, ranked by what each problem cost.

The program runs as ``jitscope run`` runs it (its ``__main__``, ``sys.argv``, its folder first on
``sys.path``), in this process; its findings come from that run's record (``jitscope/doctor/``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jitscope.api.results import Result

if TYPE_CHECKING:
    from jitscope.api.targets import TargetFlags
    from jitscope.model.doctor import DoctorReport, Finding
    from jitscope.model.run import RunRecord
    from jitscope.report.views.document import Document


class DoctorResult(Result["DoctorReport"]):
    """``jitscope.doctor(...)`` / ``jitscope doctor``: the findings, worst first, and the run they come from."""

    command = "doctor"

    def __init__(self, record: DoctorReport, run: RunRecord | None = None, *, top: int | None = 5) -> None:
        super().__init__(record)
        self.run = run  #: the ``jitscope run`` record the findings were read from
        self.top = top  #: findings shown in full in text (None: all); the other formats hold them all

    @property
    def findings(self) -> tuple[Finding, ...]:
        return self.record.findings

    @property
    def memory(self) -> tuple[Finding, ...]:
        """Memory findings, most bytes at the peak first (a ranking of their own)."""
        return self.record.memory

    @property
    def device(self) -> tuple[Finding, ...]:
        """The costliest functions' hottest device lines, most device time per call first (a ranking of their
        own: the run does not count cached calls)."""
        return self.record.device

    @property
    def avoidable_s(self) -> float:
        return self.record.avoidable_s

    def document(self, fmt: str) -> Document:
        from jitscope.report.views.doctor import doctor_document

        return doctor_document(self.record, self.top if fmt == "text" else None)

    def text_document(self) -> Document:
        return self.document("text")

    def title(self) -> str:
        return f"jitscope doctor: {self.record.program}"


def doctor(program: str | Path | Callable[..., Any], *args: Any, module: bool = False, effects: bool = True,
           shapes: str | Sequence[str] | None = None, static_argnums: int | Sequence[int] | None = None,
           static_argnames: str | Sequence[str] | None = None, **kwargs: Any) -> DoctorResult:
    """Run ``program`` (a script path; with ``module=True`` a module name, as ``python -m``) with ``args`` as its
    ``sys.argv[1:]``, and say what to fix first. A function (``fn``, called with ``args``/``kwargs`` or
    ``shapes=``) or a target ``"module:fn"`` (its examples, or ``shapes=``) is doctored as
    ``jitscope doctor module:fn`` does: its times, compile by line, memory and static recompiles.

    >>> result = jitscope.doctor("train.py", "--steps", "100")
    >>> result.findings[0].title, result.findings[0].gain_s
    >>> jitscope.doctor(train_step, params, batch).memory[0].gain_bytes
    """
    from jitscope.api.checks import check_flag, check_path, check_text, type_error
    from jitscope.errors import UsageError
    from jitscope.load.target import looks_like_target
    from jitscope.run.program import Program, check_program

    check_flag("module", module)
    check_flag("effects", effects)
    if callable(program) or (isinstance(program, str) and not module and looks_like_target(program)):
        return _doctor_target(program, args, kwargs, shapes, static_argnums, static_argnames)
    if kwargs or shapes is not None or static_argnums is not None or static_argnames is not None:
        raise UsageError("shapes=, static_argnums=, static_argnames= and keyword arguments describe a function's "
                         "call: pass a function or a 'module:fn' target", hint="a program takes its arguments as "
                                                                                "strings: doctor('train.py', '--steps', '3')")
    if module:
        check_text("program", program, none_ok=False)
    else:
        check_path("program", program, none_ok=False)
    bad = next((a for a in args if not isinstance(a, str)), None)
    if bad is not None:
        raise type_error("the program's arguments (*args)", bad, "str, as sys.argv holds them")
    target = Program(None, str(program), tuple(args)) if module else Program(str(program), None, tuple(args))
    check_program(target)
    return run_doctor(target, effects=effects)


def _doctor_target(fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any], shapes: str | Sequence[str] | None,
                   static_argnums: int | Sequence[int] | None,
                   static_argnames: str | Sequence[str] | None) -> DoctorResult:
    from jitscope.api.targets import shape_list, target_of
    from jitscope.doctor.target import doctor_target
    from jitscope.errors import UsageError
    from jitscope.load.mesh import example_mesh_scope
    from jitscope.timing.plan import plan_calls

    if isinstance(fn, str):
        if args or kwargs or static_argnums is not None or static_argnames is not None:
            raise UsageError(f"{fn!r} is a target: its calls come from its examples or shapes=",
                             hint="pass the function itself to call it with arguments")
        planned = plan_calls([fn], shape_list(shapes))
    else:
        handle = target_of(fn, args, kwargs, static_argnums, static_argnames, abstract=False, shapes=shapes)
        planned = plan_calls([handle], shape_list(shapes))
    with example_mesh_scope(argset for _, argset in planned):
        return DoctorResult(doctor_target(planned))


def run_doctor(target: object, *, effects: bool = True, top: int | None = 5) -> DoctorResult:
    from jitscope.doctor.program import doctor_program

    report, run = doctor_program(target, effects=effects)  # type: ignore[arg-type]
    return DoctorResult(report, run, top=top)


def doctor_command(program: Sequence[str], module: str | None, fmt: str, out: Path | None, *,
                   fail_on: str | None, show_all: bool, effects: bool, flags: TargetFlags | None = None) -> int:
    """``jitscope doctor``: the report on stderr (stdout is the program's) or in ``out``; the exit code.
    A target (``module:fn``) instead: its report on stdout, as ``trace`` and ``memory`` write theirs."""
    import sys

    from jitscope.doctor.gate import gate_failure, parse_fail_on
    from jitscope.errors import UsageError
    from jitscope.faults import writable_stderr
    from jitscope.load.target import looks_like_target
    from jitscope.run.program import Program, check_program

    gate = parse_fail_on(fail_on) if fail_on is not None else None
    if flags is not None and (flags.from_run or (program and module is None and looks_like_target(program[0]))):
        if module is not None:
            raise UsageError("-m runs a program; a target is named alone", hint="drop -m, or name the program")
        return _target_command(flags, fmt, out, gate, show_all)
    if flags is not None:
        given = [name for name, value in (("--shapes", flags.shapes), ("--static", flags.static),
                                          ("--arg", flags.arg), ("--x64", flags.x64), ("--call", flags.call != 1),
                                          ("--continue", flags.keep_running)) if value]
        if given:
            raise UsageError(f"{given[0]} describes a target's call: name a target MODULE:FN",
                             hint="for example jitscope doctor train.py:step --shapes 'f32[8,128]'; a program "
                                  "runs with its own arguments")
    if module is not None:
        target = Program(None, module, tuple(program))
    elif program:
        target = Program(program[0], None, tuple(program[1:]))
    else:
        raise UsageError("nothing to run", hint="give a script path, or -m MODULE")
    if fmt == "html" and out is None:
        raise UsageError("--format html writes a file", hint="add --out FILE.html: stderr is the program's too")
    check_program(target)
    result = run_doctor(target, effects=effects, top=None if show_all else 5)
    writable_stderr()  # the program may have closed sys.stderr or fd 2
    from jitscope.report.writers.console import make_console

    stderr = make_console(stderr=True)
    if out is not None:
        path = result.save(out, fmt)
    if fmt == "text" or out is not None:
        from jitscope.report.writers.terminal import render_rich

        stderr.print(render_rich(result.text_document()))
    else:
        sys.stderr.write(result.render(fmt))
        sys.stderr.flush()
    if out is not None:
        stderr.print(f"jitscope doctor: {fmt} report written to {path}", style="jitscope.muted", markup=False)
    failure = gate_failure(result.record, gate) if gate is not None else None
    if failure is not None:
        stderr.print(f"error: jitscope doctor: {failure}", style="jitscope.bad", markup=False, highlight=False)
        return 1
    return result.record.exit_code


def _target_command(flags: TargetFlags, fmt: str, out: Path | None, gate: tuple[float, str] | None,
                    show_all: bool) -> int:
    from jitscope.api.targets import run_planned
    from jitscope.doctor.gate import gate_failure
    from jitscope.doctor.target import doctor_target
    from jitscope.errors import UsageError
    from jitscope.report.writers.console import make_console
    from jitscope.report.writers.destination import write_result
    from jitscope.stdout import document_owns_stdout

    option = next((t for t in flags.targets[1:] if t.startswith("-")), None)
    if option is not None and not flags.from_run:
        raise UsageError(f"{option} after the target: doctor's options go before it",
                         hint=f"jitscope doctor {option} ... {flags.targets[0]}")
    document_owns_stdout(fmt != "text" and out is None)
    report = run_planned(flags, "jitscope doctor", fmt, doctor_target)
    result = DoctorResult(report, None, top=None if show_all else 5)
    write_result(result, fmt, out)
    stderr = make_console(stderr=True)
    failure = gate_failure(report, gate) if gate is not None else None
    if failure is not None:
        stderr.print(f"error: jitscope doctor: {failure}", style="jitscope.bad", markup=False, highlight=False)
        return 1
    return report.exit_code
