"""``jitscope.watch()``: every compile made inside a block, as ``jitscope run`` watches a program."""

from __future__ import annotations

import contextlib
import sys
import time
from types import TracebackType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jitscope.api.results import WatchResult


class Watch:
    """What ``jitscope.watch()`` returns and its ``with`` yields: ``report`` is filled when the block ends.

    Reusable: each ``with`` watches its own block (``report``: the last block's); ``with`` on a watch that is
    already watching a block is one clear error.
    """

    def __init__(self, name: str = "<block>", *, effects: bool = True, fresh: bool = False) -> None:
        from jitscope.api.checks import check_flag, check_text

        check_text("name", name, none_ok=False)
        check_flag("effects", effects)
        check_flag("fresh", fresh)
        self.name = name
        self.effects = effects
        self.fresh = fresh
        self.report: WatchResult | None = None
        self._observer: Any = None
        self._block: contextlib.ExitStack | None = None
        self._notes: list[str] = []
        self._started = 0.0

    @property
    def compiles(self) -> int:
        """XLA compiles of your jitted functions so far (inside the block too)."""
        from jitscope.model.run import USER

        if self.report is not None and self._block is None:
            return self.report.compiles
        events = self._observer.events if self._observer is not None else ()
        return sum(e.compiled for e in events if e.kind == USER)

    def __enter__(self) -> Watch:
        from jitscope.run.observer import RunObserver
        from jitscope.run.session import observing

        if self._block is not None:
            from jitscope.errors import UsageError

            raise UsageError(f"watch({self.name!r}) is already watching a block",
                             hint="nest another jitscope.watch() instead of entering the same one twice")
        if self.fresh:
            from jitscope.testing.watch import clear_jax_caches

            clear_jax_caches()
        self.report = None
        self._observer = RunObserver(effects=self.effects)
        block = contextlib.ExitStack()
        self._notes = block.enter_context(observing(self._observer))
        self._block = block
        self._started = time.perf_counter()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        from jitscope.api.results import WatchResult
        from jitscope.model.run import RunRecord
        from jitscope.run.collector import collector_paused
        from jitscope.run.summary import summarize

        block, self._block = self._block, None
        outcome, code = ("finished", 0) if kind is None else (f"raised {kind.__name__}", 1)
        try:
            if block is not None:
                block.__exit__(kind, exc, tb)
        finally:
            with collector_paused():
                events = tuple(self._observer.finish())
                jax = sys.modules.get("jax")
                record = RunRecord(program=self.name, argv=(), exit_code=code, outcome=outcome,
                                   wall_s=round(time.perf_counter() - self._started, 6), events=events,
                                   functions=summarize(events), notes=tuple(self._notes + self._observer.notes),
                                   jax_version=getattr(jax, "__version__", None))
                self.report = WatchResult(record)


def watch(name: str = "<block>", *, effects: bool = True, fresh: bool = False) -> Watch:
    """Watch every compile made inside the block, as ``jitscope run`` watches a program.

    ``fresh`` clears JAX's in-memory caches first, so what earlier code compiled is compiled (and
    counted) again; by default a function already compiled before the block is a cache hit and
    is not counted. The watch can be used for several blocks, one after another.

    >>> with jitscope.watch() as w:
    ...     for batch in batches: state = train_step(state, batch)
    >>> w.report.compiles, w.report.functions
    """
    return Watch(name, effects=effects, fresh=fresh)
