"""Host-device syncs: each line of the user's code that copied an array's value to the host, how often, and
how long the host waited for the device there (``jaxcompat/transfers.py`` sees every copy)."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable

from jitscope.model.common import Location
from jitscope.model.run import SyncSite
from jitscope.userframes import display_path


class SyncWatch:
    """Per line of the user's code: the copies to the host, the time waited in them, and the overlap given
    up: for each copy after a line's first, the smaller of the host's work since the line's previous copy
    and this copy's wait (without the sync, async dispatch runs one under the other)."""

    def __init__(self, is_user: Callable[[str], bool]) -> None:
        self._is_user = is_user
        self._lock = threading.Lock()
        # line -> [copies, seconds waited, overlap given up, when the last copy ended]
        self._lines: dict[Location, list[float]] = {}
        self._platforms: dict[Location, str] = {}

    def __call__(self, started: float, ended: float, platform: str = "") -> None:
        frame = sys._getframe(2)  # above the property that made the copy
        while frame is not None and not self._is_user(frame.f_code.co_filename):
            frame = frame.f_back  # type: ignore[assignment]
        if frame is None:
            return  # a copy made by a library or by jitscope itself, not at a line of the user's
        where = Location(display_path(frame.f_code.co_filename), frame.f_lineno, frame.f_code.co_name)
        wait = ended - started
        with self._lock:
            line = self._lines.get(where)
            if line is None:
                self._lines[where] = [1, wait, 0.0, ended]
                self._platforms[where] = platform
                return
            line[0] += 1
            line[1] += wait
            line[2] += min(max(started - line[3], 0.0), wait)
            line[3] = ended

    def sites(self) -> tuple[SyncSite, ...]:
        with self._lock:
            return tuple(SyncSite(where, int(n), round(wait, 6), round(overlap, 6), self._platforms.get(where, ""))
                         for where, (n, wait, overlap, _) in self._lines.items())
