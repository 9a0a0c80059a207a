"""``jitscope run`` as a library call: observe a program from start to exit, return its ``RunRecord``."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from jitscope.model.run import (
    USER,
    CompileEvent,
    RunRecord,
)
from jitscope.run.collector import collector_paused
from jitscope.run.observer import RunObserver
from jitscope.run.processes import Checkpoints, ProcessWatch, process_path
from jitscope.run.program import Outcome, Program, run_program, when_imported
from jitscope.run.summary import Gates, check_gates, summarize
from jitscope.run.syncs import SyncWatch


@contextlib.contextmanager
def observing(observer: RunObserver, syncs: SyncWatch | None = None) -> Iterator[list[str]]:
    """Hook ``observer`` (and ``syncs``, the copies to the host) into JAX as soon as the program imports it;
    unhook on exit. Yields notes."""
    notes: list[str] = []
    uninstall: list[Callable[[], None]] = []

    def install() -> None:
        with collector_paused():
            from jitscope.jaxcompat.compile_hooks import install as install_hooks

            remove, status = install_hooks(observer)
            if syncs is not None:
                from jitscope.jaxcompat.transfers import watch_fetches

                stop = watch_fetches(syncs)
                if stop is not None:
                    uninstall.append(stop)
            if observer.processes is not None:  # each compile's program, for a multi-process run
                from jitscope.jaxcompat.executables import install_executable_hook

                uninstall.append(install_executable_hook(observer.on_executable))
        uninstall.append(remove)
        notes.extend(f"not hooked on this JAX: {m}" for m in status.missing)

    stop_waiting = when_imported("jax", install)
    try:
        yield notes
    finally:
        stop_waiting()
        if not uninstall:
            notes.append("the program never imported jax")
        for remove in uninstall:
            remove()


#: Trace times are the program's with jitscope's side-effect monitor watching every Python call made while
#: tracing, which can slow a trace several times (an nnx eval step: 94 ms watched, 4.7 ms not).
TRACE_TIMES_NOTE = ("trace times include jitscope's side-effect monitor, which slows tracing; --no-effects "
                    "measures the program's own")


def run_observed(program: Program, *, effects: bool = True, effects_once: bool = False, gates: Gates | None = None,
                 on_event: Callable[[CompileEvent], None] | None = None, capture: Path | None = None,
                 checkpoint_to: str | None = None,
                 on_compile: Callable[[CompileEvent, Any], None] | None = None) -> RunRecord:
    """Run ``program`` with the observer installed; the record is built even when the program fails.

    ``capture``: a folder to write every compile's abstract signature to (``run/signature.py``).
    ``on_compile``: called with each compile of a user's function and its call (live objects: a handle),
    as ``--capture``'s writer is (``doctor`` keeps them abstract, to try its changes after the run).
    ``checkpoint_to``: the JSON ``--out``; in one process of a multi-process program, the partial
    report is rewritten there (per process: ``run/processes.py``) after compiles while it runs.
    """
    writer = None
    if capture is not None:
        from jitscope.run.signature import CaptureWriter

        writer = CaptureWriter(capture)
    processes = ProcessWatch()
    checkpoints = None
    if checkpoint_to is not None:
        checkpoints = Checkpoints(lambda: _write_checkpoint(observer, program, checkpoint_to))
        on_event = _checkpointing(on_event, checkpoints)
    if writer is not None and on_compile is not None:
        raise ValueError("run_observed takes capture or on_compile, not both")
    observer = RunObserver(effects=effects, effects_once=effects_once, on_event=on_event, on_compile=writer or on_compile, processes=processes)
    syncs = SyncWatch(observer.is_user)
    outcome = Outcome(1, "did not run")
    started_in = os.getpid()
    try:
        with observing(observer, syncs) as notes:
            outcome = run_program(program)  # the collector as the program sets it; jitscope's own work pauses it
    finally:
        if checkpoints is not None and os.getpid() == started_in:
            checkpoints.close()
    if os.getpid() != started_in:
        # A child the program forked (os.fork) that returned or exited through jitscope's frames: it ends as it
        # would under python, with its exit code; only the process jitscope started writes the report and summary.
        raise SystemExit(outcome.exit_code)
    with collector_paused():
        wall = observer.elapsed()
        events = tuple(observer.finish())
        process = processes.at_exit()
        if process is not None:
            events = tuple(e if e.process == process.index else replace(e, process=process.index) for e in events)
        functions = summarize(events)
        if effects and any(f.kind == USER and f.trace_s for f in functions):
            notes.append(TRACE_TIMES_NOTE)
        # the imported module's own version (importlib.metadata costs ~20 ms of imports at exit)
        jax_version = getattr(sys.modules.get("jax"), "__version__", None)
        if writer is not None:
            writer.write(program.display, program.args, jax_version)
            notes.append(f"{len(writer.calls)} compile signature(s) captured in {writer.directory}")
        if checkpoints is not None and checkpoints.failed:
            notes.append(f"could not write the partial report while the program ran: {checkpoints.failed}")
        return RunRecord(
            program=program.display, argv=program.args, exit_code=outcome.exit_code,
            outcome=outcome.description, wall_s=round(wall, 6), events=events, functions=functions,
            gate_failures=check_gates(gates, functions) if gates is not None else (),
            notes=tuple(notes + observer.notes), jax_version=jax_version,
            process=process, syncs=syncs.sites(),
        )




def _checkpointing(on_event: Callable[[CompileEvent], None] | None, checkpoints: Checkpoints) -> Callable[[CompileEvent], None]:
    """``on_event``, plus a checkpoint request after each compile of the user's code in a multi-process run."""
    def event(e: CompileEvent) -> None:
        if on_event is not None:
            on_event(e)
        if e.kind == USER and e.process is not None:
            checkpoints.request()

    return event


def _write_checkpoint(observer: RunObserver, program: Program, out: str) -> None:
    """The report so far, marked partial, in this process's file (the checkpoint thread)."""
    import json

    from jitscope.model.common import to_jsonable
    from jitscope.outputs import write_atomic

    process = observer.processes.info if observer.processes is not None else None
    if process is None:
        return
    events = tuple(observer.events)
    elapsed = observer.elapsed()
    record = RunRecord(
        program=program.display, argv=program.args, exit_code=-1,
        outcome=f"still running after {elapsed:.1f} s (a partial report: the process hung, or was killed, "
                "before jitscope could write the final one)",
        wall_s=round(elapsed, 6), events=events, functions=summarize(events), partial=True,
        jax_version=getattr(sys.modules.get("jax"), "__version__", None), process=process)
    write_atomic(process_path(out, process.index), json.dumps(to_jsonable(record), indent=2, allow_nan=False) + "\n")
