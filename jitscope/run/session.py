"""``jitscope run`` as a library call: observe a program from start to exit, return its ``RunRecord``."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from jitscope.model.run import CompileEvent, RunRecord
from jitscope.run.collector import collector_paused
from jitscope.run.observer import RunObserver
from jitscope.run.program import Outcome, Program, run_program, when_imported
from jitscope.run.summary import Gates, check_gates, summarize


@contextlib.contextmanager
def observing(observer: RunObserver) -> Iterator[list[str]]:
    """Hook ``observer`` into JAX as soon as the program imports it; unhook on exit. Yields notes."""
    notes: list[str] = []
    uninstall: list[Callable[[], None]] = []

    def install() -> None:
        with collector_paused():
            from jitscope.jaxcompat.compile_hooks import install as install_hooks

            remove, status = install_hooks(observer)
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


def run_observed(program: Program, *, effects: bool = True, gates: Gates | None = None,
                 on_event: Callable[[CompileEvent], None] | None = None, capture: Path | None = None) -> RunRecord:
    """Run ``program`` with the observer installed; the record is built even when the program fails.

    ``capture``: a folder to write every compile's abstract signature to (``run/signature.py``).
    """
    writer = None
    if capture is not None:
        from jitscope.run.signature import CaptureWriter

        writer = CaptureWriter(capture)
    observer = RunObserver(effects=effects, on_event=on_event, on_compile=writer)
    outcome = Outcome(1, "did not run")
    with observing(observer) as notes:
        outcome = run_program(program)  # the collector as the program sets it; jitscope's own work pauses it
    with collector_paused():
        wall = observer.elapsed()
        events = tuple(observer.finish())
        functions = summarize(events)
        # the imported module's own version (importlib.metadata costs ~20 ms of imports at exit)
        jax_version = getattr(sys.modules.get("jax"), "__version__", None)
        if writer is not None:
            writer.write(program.display, program.args, jax_version)
            notes.append(f"{len(writer.calls)} compile signature(s) captured in {writer.directory}")
        return RunRecord(
            program=program.display, argv=program.args, exit_code=outcome.exit_code,
            outcome=outcome.description, wall_s=round(wall, 6), events=events, functions=functions,
            gate_failures=check_gates(gates, functions) if gates is not None else (),
            notes=tuple(notes + observer.notes), jax_version=jax_version,
        )
