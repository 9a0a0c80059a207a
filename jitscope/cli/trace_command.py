"""``jitscope trace`` without typer: its options as one record, parsed with the standard library.

``cli/trace.py`` declares the options for typer (the documented interface and ``--help``);
``cli.app.main`` sends a ``trace`` command line here first (``main_fast``), where
``parse_trace_args`` reads the same options from a table and gives up (None) on anything unusual,
which typer then parses and explains. Both end in ``trace_main``. typer and click cost about
20 ms to import, build and parse with, a quarter of what jitscope adds to the JAX work of tracing a small
function. ``tests/cli/test_trace_fast_args.py`` checks that the two parsers agree.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jitscope.cli import fast_args
from jitscope.report.formats import REPORT_FORMATS

if TYPE_CHECKING:
    from jitscope.api.targets import TargetFlags

ALL_STAGES = ("jaxpr", "stablehlo", "hlo", "cost", "memory")
LOCATIONS = ("full", "user", "none")


@dataclass(frozen=True)
class TraceOptions:
    """Everything ``jitscope trace`` was asked to do: the options every target command shares (``flags``) and
    trace's own (the fields are ``cli/trace.py``'s parameters)."""

    flags: TargetFlags
    stages: str = ",".join(ALL_STAGES)
    depth: int | None = None
    locations: str = "full"
    no_locations: bool = False
    fold_libraries: bool | None = None
    effects: bool = True
    out: Path | None = None
    fmt: str | None = None
    profile: bool = False
    profile_html: Path | None = None
    compile_profile: bool = False
    processes: int | None = None
    save: Path | None = None
    distributed: bool = False

    @classmethod
    def of(cls, values: dict[str, Any]) -> TraceOptions:
        """From one value per option (as either parser gives them), the target options gathered into flags."""
        from jitscope.api.targets import TargetFlags

        shared = {name: values.pop(name) for name in TargetFlags.__dataclass_fields__ if name in values}
        return cls(TargetFlags(**shared), **values)


_FORMAT = fast_args.choice(REPORT_FORMATS)

#: Every option of ``cli/trace.py`` by every spelling (--help and anything unknown go to typer).
_OPTIONS = fast_args.Options(
    valued={
        "--shapes": ("shapes", fast_args.text), "-s": ("shapes", fast_args.text),
        "--static": ("static", fast_args.text), "--arg": ("arg", fast_args.text),
        "--stages": ("stages", fast_args.text), "--depth": ("depth", fast_args.integer(0)),
        "--locations": ("locations", fast_args.choice(LOCATIONS)),
        "--out": ("out", fast_args.path), "--format": ("fmt", _FORMAT), "-f": ("fmt", _FORMAT),
        "--devices": ("devices", fast_args.integer(1)), "--mesh": ("mesh", fast_args.text),
        "--call": ("call", fast_args.integer(1)), "--from": ("from_capture", fast_args.path),
        "--compile": ("compile_number", fast_args.integer(1)), "--profile-html": ("profile_html", fast_args.path),
        "--processes": ("processes", fast_args.integer()), "--save": ("save", fast_args.path),
    },
    flags={
        "--no-locations": ("no_locations", True),
        "--fold-libraries": ("fold_libraries", True), "--no-fold-libraries": ("fold_libraries", False),
        "--effects": ("effects", True), "--no-effects": ("effects", False),
        "--x64": ("x64", True), "--from-run": ("from_run", True), "--continue": ("keep_running", True),
        "--profile": ("profile", True), "--distributed": ("distributed", True),
        "--compile-profile": ("compile_profile", True),
    },
    repeated=frozenset({"shapes", "static", "arg"}),
)


def parse_trace_args(args: Sequence[str]) -> TraceOptions | None:
    """``args`` after ``trace``; None when typer should parse them (help, errors, anything unusual)."""
    parsed = fast_args.parse(args, _OPTIONS)
    if parsed is None or not parsed[1]:
        return None  # no target: typer shows the help
    values, targets = parsed
    return TraceOptions.of({**values, "targets": targets})


def main_fast(args: Sequence[str]) -> bool:
    """``jitscope trace ...`` from ``cli.app.main``: True when the arguments parsed here and the command ran."""
    if not fast_args.enabled():
        return False
    options = parse_trace_args(args)
    if options is None:
        return False
    sys.stdout.flush()
    trace_main(options)
    return True


def trace_main(o: TraceOptions) -> None:
    """The command: check the options that go together, then trace (in this process, or in N)."""
    from jitscope.api.checks import check_distributed
    from jitscope.api.commands.trace import trace_command

    flags = o.flags
    check_distributed(o.distributed, o.processes)
    if o.processes is not None or o.distributed:
        _check_many(o.processes, o.profile or o.profile_html is not None, o.out)
    if o.processes is not None:
        from jitscope.api.checks import format_of
        from jitscope.api.commands.trace import trace_processes_command

        trace_processes_command(flags, o.processes, format_of(o.fmt, o.out), o.out, save=o.save)
        return
    if o.save is not None and not o.distributed:
        from jitscope.errors import UsageError

        raise UsageError("--save goes with --processes or --distributed",
                         hint="one process's report: --format json --out FILE.json")
    trace_command(flags, stages=o.stages, fmt=o.fmt, out=o.out, effects=o.effects, profile=o.profile,
                  profile_html=o.profile_html, locations="none" if o.no_locations else o.locations,  # type: ignore[arg-type]
                  depth=o.depth, fold=o.fold_libraries, distributed=o.distributed, save=o.save,
                  compile_profile=o.compile_profile)


def _check_many(processes: int | None, profile: bool, out: Path | None) -> None:
    """What ``--processes``/``--distributed`` refuse here: --profile, and an ``--out`` folder (the merged report
    is one file)."""
    from jitscope.errors import UsageError
    from jitscope.report.formats import is_report_file

    switch = "--processes" if processes is not None else "--distributed"
    if profile:
        raise UsageError(f"{switch} cannot be combined with --profile",
                         hint="profile the Python side of tracing in one process")
    if out is not None and not is_report_file(out):
        raise UsageError(f"--out {out}: with {switch}, a report file (.json, .txt, .md, .html)",
                         hint="the per-process reports: --save FILE.json")
