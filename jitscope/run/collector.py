"""Keep jitscope's own allocations from moving the program's garbage collections.

CPython starts a collection every 700 net allocations, a collection of the middle
generation every 10 of those, and a full one every 10 of those (when the old generation
grew by a quarter). With JAX loaded a full collection walks some 100,000 objects (~40 ms
on a 2-core VM), so the few thousand objects jitscope allocates (its modules, its hooks,
the effect monitor, its records and summary) can add a full collection the program would
not have run under ``python``: in ``benchmarks/run_overhead.py`` that one collection was
about half of ``jitscope run``'s whole-process overhead.

While the collector is paused, allocations still count but no collection starts; when it
is resumed the next allocation starts at most one young collection. So each paused
stretch of jitscope's work moves the program's schedule by at most one young collection,
whatever it allocates. The program itself always runs with the collector as it set it.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """No garbage collection starts inside the block (unless the block enables it); nests freely."""
    if not gc.isenabled():  # the program disabled it, or an outer block paused it
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
