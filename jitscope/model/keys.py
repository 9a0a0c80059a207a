"""A compile-cache key component that changed: the cause of a recompile, as ``jitscope run`` and
``lint --trace`` (JS306) report it. Keys themselves are built and compared in ``tracing/cachekeys.py``."""

from __future__ import annotations

import re
from dataclasses import dataclass

#: How a static value compared by identity reads in a key: ``<Config object #2, compared by identity>``.
IDENTITY = re.compile(r"^<(.+) object #\d+, compared by identity>$")


@dataclass(frozen=True, slots=True)
class KeyDiff:
    """One component of the cache key that differs from the nearest previous compile."""

    component: str  # e.g. "x: shape", "threshold (static): value", "params: pytree structure"
    before: str
    after: str

    def __str__(self) -> str:
        note = self.note
        return f"{self.component}: {note}" if note else f"{self.component} {self.before} -> {self.after}"

    @property
    def note(self) -> str:
        """The cause in words, where the two values alone would mislead: two objects compared by identity."""
        before, after = IDENTITY.match(self.before), IDENTITY.match(self.after)
        if before and after and before.group(1) == after.group(1):
            return (f"a new object of class {after.group(1)} with identity equality on every call: "
                    "give it __eq__/__hash__ or reuse one instance")
        return ""
