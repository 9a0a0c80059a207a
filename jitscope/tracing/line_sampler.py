"""Tracing time by line of the user's code: a thread samples the tracing thread's Python stack.

Each sample is listed at the innermost frame in the user's code (JAX's own work inside ``jnp.sin`` counts
toward the user's line that called it); a sample with no user frame (JAX building the jaxpr after the
function returned) is listed under None. A thread, not ``sys.setprofile``: the effect monitor holds the
profile hook while tracing, and a sampler costs the traced code nothing but the GIL hand-overs. The
interpreter's switch interval is shortened while sampling (restored after) so that the sampler gets the
GIL about every ``INTERVAL`` seconds while the tracing thread is busy.
"""

from __future__ import annotations

import sys
import threading
from collections import Counter
from collections.abc import Callable
from types import FrameType

from jitscope.tracing.lines import LineKey

#: Seconds between samples.
INTERVAL = 0.0005


class LineSampler:
    """``with LineSampler(is_user_file) as sampler: ...`` then ``sampler.seconds(total)``."""

    def __init__(self, is_user_file: Callable[[str], bool], interval: float = INTERVAL) -> None:
        self.is_user_file = is_user_file
        self.interval = interval
        self.counts: Counter[LineKey | None] = Counter()
        self._stop = threading.Event()
        self._target = threading.get_ident()
        self._thread = threading.Thread(target=self._run, name="jitscope-line-sampler", daemon=True)
        self._switch = sys.getswitchinterval()
        self._known: dict[str, bool] = {}

    def __enter__(self) -> LineSampler:
        self._target = threading.get_ident()
        sys.setswitchinterval(min(self._switch, self.interval))
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        sys.setswitchinterval(self._switch)

    def _user(self, filename: str) -> bool:
        known = self._known.get(filename)
        if known is None:
            known = self._known[filename] = self.is_user_file(filename)
        return known

    def _line(self, frame: FrameType | None) -> LineKey | None:
        while frame is not None:
            if self._user(frame.f_code.co_filename):
                return frame.f_code.co_filename, frame.f_lineno
            frame = frame.f_back
        return None

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            frame = sys._current_frames().get(self._target)
            if frame is not None:
                self.counts[self._line(frame)] += 1

    def seconds(self, total: float) -> dict[LineKey | None, float]:
        """``total`` seconds of tracing split over the lines in proportion to their samples."""
        n = sum(self.counts.values())
        return {key: total * c / n for key, c in self.counts.items()} if n else {}
