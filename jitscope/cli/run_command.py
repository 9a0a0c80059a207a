"""``jitscope run`` without typer: parse its arguments, run the program, report, return the exit code.

``jitscope run train.py`` should cost a training loop nothing it can measure (the target
is <= 1.05x ``python train.py`` for a program of a few seconds). Importing typer, click and
rich and building the whole CLI takes about 0.1 s before the program starts, so
``cli.app.main`` sends a ``run`` command line here first: ``parse_run_args`` reads the
options ``cli/run.py`` declares, with the standard library only, and gives up (None) on
anything else (``--help``, a misspelt option, a bad value); typer then parses the same line
and reports the problem as for every other command. rich is imported only when the
summary is rendered, after the program has exited. ``tests/run/test_run_command.py`` checks
that this parser and the typer command agree.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass

from jitscope.cli import fast_args
from jitscope.errors import UsageError
from jitscope.report.formats import REPORT_FORMATS, format_of_suffix

LOG_MODES = ("compiles", "recompiles", "none")


@dataclass(frozen=True, slots=True)
class RunOptions:
    """Everything ``jitscope run`` was asked to do."""

    program: tuple[str, ...] = ()  # SCRIPT ARGS..., or the module's ARGS with -m
    module: str | None = None
    log: str = "recompiles"
    effects: bool = True
    max_compiles: int | None = None
    fail_on_recompile: bool = False
    max_compile_time: float | None = None
    fmt: str | None = None  # None: what the --out suffix says (see report_format)
    out: str | None = None
    capture: str | None = None  # a folder for every compile's signature (--capture)

    def report_format(self) -> str:
        """``--format``, else the ``--out`` suffix's format, else JSON for any other ``--out`` (what
        ``--out`` always wrote before there were other formats), else text."""
        from jitscope.api.checks import check_choice

        check_choice("--format", self.fmt, REPORT_FORMATS)
        fmt = self.fmt
        if fmt is None and self.out is not None:
            named = format_of_suffix(self.out)
            fmt = named if named in REPORT_FORMATS else "json"
        fmt = fmt or "text"
        if fmt == "html" and self.out is None:
            raise UsageError("--format html writes a file", hint="add --out FILE.html: stderr is the program's too")
        return fmt


#: ``jitscope run``'s options, by every spelling, to RunOptions' fields.
_OPTIONS = fast_args.Options(
    valued={"-m": ("module", fast_args.text), "--log": ("log", fast_args.choice(LOG_MODES)),
            "--max-compiles": ("max_compiles", fast_args.integer(1)),
            "--max-compile-time": ("max_compile_time", fast_args.number(0)),
            "--format": ("fmt", fast_args.choice(REPORT_FORMATS)), "-f": ("fmt", fast_args.choice(REPORT_FORMATS)),
            "--out": ("out", fast_args.text), "--capture": ("capture", fast_args.text)},
    flags={"--effects": ("effects", True), "--no-effects": ("effects", False),
           "--fail-on-recompile": ("fail_on_recompile", True), "--no-fail-on-recompile": ("fail_on_recompile", False)},
    last=frozenset({"-m"}),  # like python -m: everything after the module is the module's
    interspersed=False,  # the script's own options follow it
)


def parse_run_args(args: Sequence[str]) -> RunOptions | None:
    """``args`` after ``run``; None when typer should parse them (help, errors, anything unusual)."""
    parsed = fast_args.parse(args, _OPTIONS)
    if parsed is None:
        return None
    values, program = parsed
    if values.get("module") is None and not program:
        return None
    return RunOptions(program=tuple(program), **values)  # type: ignore[arg-type]


def run_command(options: RunOptions) -> int:
    """Run the program under the observer, print the log and summary on stderr; the exit code.

    jitscope's own work before and after the program runs with the garbage collector paused
    (see ``run/collector.py``).
    """
    from jitscope.run.collector import collector_paused

    with collector_paused():
        from jitscope.run.program import Program, check_program
        from jitscope.run.session import run_observed
        from jitscope.run.summary import Gates

        if options.module is not None:
            target = Program(None, options.module, options.program)
        elif options.program:
            target = Program(options.program[0], None, options.program[1:])
        else:
            raise UsageError("nothing to run", hint="give a script path, or -m MODULE")
        fmt = options.report_format()
        check_program(target)
        logger = _EventLogger(options.log)
        gates = Gates(options.max_compiles, options.fail_on_recompile, options.max_compile_time)
    capture = None
    if options.capture is not None:
        from pathlib import Path

        capture = Path(options.capture).resolve()  # before the program can change the working directory
    checkpoint_to = options.out if options.out is not None and fmt == "json" else None  # multi-process only
    record = run_observed(target, effects=options.effects, gates=gates, on_event=logger, capture=capture,
                          checkpoint_to=checkpoint_to)
    with collector_paused():
        from jitscope.faults import writable_stderr
        from jitscope.report.writers.run_report import report
        from jitscope.run.processes import report_path

        writable_stderr()  # the program may have closed sys.stderr or fd 2: the report is written all the same
        return report(record, fmt, report_path(options.out, record.process, fmt))


class _EventLogger:
    """The live line per compile; rich is imported at the first line actually printed."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.console: object | None = None

    def __call__(self, event: object) -> None:
        from jitscope.model.run import CompileEvent
        from jitscope.run.summary import should_log

        if not isinstance(event, CompileEvent) or not should_log(event, self.mode):
            return
        from jitscope.report.writers.console import make_console
        from jitscope.report.writers.run_live import render_event_line

        if self.console is None:
            self.console = make_console(stderr=True)
        self.console.print(render_event_line(event))  # type: ignore[attr-defined]


def main_fast(args: Sequence[str]) -> int | None:
    """``jitscope run ...`` from ``cli.app.main`` when the arguments parse here; None otherwise."""
    if not fast_args.enabled():
        return None
    options = parse_run_args(args)
    if options is None:
        return None
    sys.stdout.flush()
    return run_command(options)
