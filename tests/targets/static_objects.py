"""Static argument values whose repr misleads: JAX keys statics by type, hash and ==, never repr.

Shared by the cache-key tests of ``lint --trace`` (tests/tracing/test_recompile.py) and of
``jitscope run`` (tests/run/test_run_observer.py), which must agree.
"""

from __future__ import annotations


class EqualByValue:
    """Equal by value, with a repr that differs every time it is shown."""

    shown = 0

    def __init__(self, n: int) -> None:
        self.n = n

    def __eq__(self, other: object) -> bool:
        return type(other) is EqualByValue and other.n == self.n

    def __hash__(self) -> int:
        return hash(self.n)

    def __repr__(self) -> str:
        EqualByValue.shown += 1
        return f"EqualByValue(n={self.n}, shown={EqualByValue.shown})"


class ComparedByIdentity:
    """Compared by identity (object.__eq__), with a repr that does not tell instances apart."""

    def __repr__(self) -> str:
        return "ComparedByIdentity()"
