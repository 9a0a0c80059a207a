"""``jitscope.watch()``: every compile made inside a block, as ``jitscope run`` watches a program."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jitscope.api.results import WatchResult


class Watch:
    """What ``jitscope.watch()`` yields: ``report`` is filled when the block ends."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.report: WatchResult | None = None
        self._observer: Any = None

    @property
    def compiles(self) -> int:
        """XLA compiles of your jitted functions so far (inside the block too)."""
        from jitscope.model.run import USER

        if self.report is not None:
            return self.report.compiles
        events = self._observer.events if self._observer is not None else ()
        return sum(e.compiled for e in events if e.kind == USER)


@contextlib.contextmanager
def watch(name: str = "<block>", *, effects: bool = True, fresh: bool = False) -> Iterator[Watch]:
    """Watch every compile made inside the block, as ``jitscope run`` watches a program.

    ``fresh`` clears JAX's in-memory caches first, so what earlier code compiled is compiled (and
    counted) again; by default a function already compiled before the block is a cache hit and
    is not counted.

    >>> with jitscope.watch() as w:
    ...     for batch in batches: state = train_step(state, batch)
    >>> w.report.compiles, w.report.functions
    """
    from jitscope.api.results import WatchResult
    from jitscope.model.run import RunRecord
    from jitscope.run.collector import collector_paused
    from jitscope.run.observer import RunObserver
    from jitscope.run.session import observing
    from jitscope.run.summary import summarize

    if fresh:
        from jitscope.testing.watch import clear_jax_caches

        clear_jax_caches()
    handle = Watch(name)
    observer = RunObserver(effects=effects)
    handle._observer = observer
    outcome, code, notes = "finished", 0, []
    started = time.perf_counter()
    try:
        with observing(observer) as notes:
            yield handle
    except BaseException as exc:
        outcome, code = f"raised {type(exc).__name__}", 1
        raise
    finally:
        with collector_paused():
            events = tuple(observer.finish())
            jax = sys.modules.get("jax")
            record = RunRecord(program=name, argv=(), exit_code=code, outcome=outcome,
                               wall_s=round(time.perf_counter() - started, 6), events=events,
                               functions=summarize(events), notes=tuple(notes + observer.notes),
                               jax_version=getattr(jax, "__version__", None))
            handle.report = WatchResult(record)
