"""What ``--fold-libraries`` folds in a jaxpr: library calls and library jaxprs, planned on the records.

A run of equations that one line of the user's code made by calling into a library (an optax
update, a flax attention block: ``EqnRecord.library_call`` is set) becomes one line under that user
line, ``<122 eqns in flax MultiHeadAttention.__call__>``, binding what the rest of the jaxpr reads
from it. A nested jaxpr whose equations all carry the enclosing equation's user line (a ``jnp.where``
or ``jnp.take`` jit, a ``custom_jvp`` rule) is plumbing of that line and collapses the same way. An
equation whose nested jaxpr holds other lines of the user's code (``nnx.jit``'s call of the step) is
never folded: the user's code stays in view.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from jitscope.model.common import Location
from jitscope.model.jaxpr import EqnRecord, JaxprRecord, LiteralRecord, VarRecord, count_eqns
from jitscope.userframes import library_call_name

#: A list of variables longer than this is shortened to its first ``SHOWN_VARS`` and a count.
MAX_VARS = 8
SHOWN_VARS = 4
#: Library calls named on a folded line, and the outputs it binds; more are counted.
SHOWN_CALLS = 3
FOLD_OUTPUTS = 2

LineKey = tuple[str, int]
T = TypeVar("T", VarRecord, VarRecord | LiteralRecord)


def line_key(location: Location | None) -> LineKey | None:
    return None if location is None else (location.file, location.line)


def call_label(call: Location) -> tuple[str, str]:
    """(``flax``, ``MultiHeadAttention``): the library's top package and the function called."""
    return library_call_name(call.file, call.function)


def calls_text(calls: tuple[tuple[str, str], ...], shown: int) -> str:
    """``flax LayerNorm, MultiHeadAttention; jax gelu``: the first ``shown`` calls by package, then ``+N``."""
    by_package: dict[str, list[str]] = {}
    for package, function in calls[:shown]:
        by_package.setdefault(package, []).append(function)
    text = "; ".join(f"{package} {', '.join(functions)}" for package, functions in by_package.items())
    return text + (f" +{len(calls) - shown}" if len(calls) > shown else "")


@dataclass(frozen=True, slots=True)
class FoldGroup:
    """Equations ``eqns[start:end]`` of one jaxpr, shown as one line."""

    start: int
    end: int
    location: Location
    #: Library calls in the run as (package, function), in order of first use.
    calls: tuple[tuple[str, str], ...]
    #: Equations folded, nested ones included.
    n_eqns: int
    #: Variables it binds that the rest of the jaxpr reads (or returns).
    outputs: tuple[VarRecord, ...]

    def label(self) -> str:
        return f"<{self.n_eqns} eqn{'' if self.n_eqns == 1 else 's'}: {calls_text(self.calls, SHOWN_CALLS)}>"


class FoldPlan:
    """Answers, per jaxpr record, which equations fold and which nested jaxprs collapse (memoised by id)."""

    def __init__(self) -> None:
        self._lines: dict[int, frozenset[LineKey | None]] = {}
        self._groups: dict[int, dict[int, FoldGroup]] = {}
        self._counts: dict[int, int] = {}

    def user_lines(self, record: JaxprRecord) -> frozenset[LineKey | None]:
        """Every user line (None for none) the equations of ``record`` carry, nested ones included."""
        found = self._lines.get(id(record))
        if found is None:
            lines: set[LineKey | None] = set()
            for eqn in record.eqns:
                lines.add(line_key(eqn.location))
                for _, sub in eqn.subjaxprs:
                    lines |= self.user_lines(sub)
            found = self._lines[id(record)] = frozenset(lines)
        return found

    def plumbing(self, sub: JaxprRecord, key: LineKey | None) -> bool:
        """True when ``sub`` holds no line of the user's code but ``key`` (the line of its equation)."""
        return self.user_lines(sub) <= {key, None}

    def shared_plumbing(self, sub: JaxprRecord) -> bool:
        """A jaxpr used at several places is plumbing when it carries at most one user line."""
        return len(self.user_lines(sub) - {None}) <= 1

    def eqn_count(self, eqn: EqnRecord) -> int:
        n = 1
        for _, sub in eqn.subjaxprs:
            count = self._counts.get(id(sub))
            if count is None:
                count = self._counts[id(sub)] = count_eqns(sub)
            n += count
        return n

    def foldable(self, eqn: EqnRecord) -> LineKey | None:
        """The user line ``eqn`` folds under, or None when it stays in view."""
        if eqn.library_call is None or eqn.location is None:
            return None
        key = line_key(eqn.location)
        if any(not self.plumbing(sub, key) for _, sub in eqn.subjaxprs):
            return None
        return key

    def groups(self, record: JaxprRecord) -> dict[int, FoldGroup]:
        """Folded runs of ``record``'s equations, keyed by their first equation's index."""
        found = self._groups.get(id(record))
        if found is None:
            found = self._groups[id(record)] = self._plan(record)
        return found

    def _plan(self, record: JaxprRecord) -> dict[int, FoldGroup]:
        eqns = record.eqns
        keys = [self.foldable(eqn) for eqn in eqns]
        runs: list[tuple[int, int]] = []
        i = 0
        while i < len(eqns):
            if keys[i] is None:
                i += 1
                continue
            j = i + 1
            while j < len(eqns) and keys[j] == keys[i]:
                j += 1
            # One plain equation reads as well as its fold line: only runs (or nested jaxprs) fold.
            if j - i > 1 or eqns[i].subjaxprs:
                runs.append((i, j))
            i = j
        # What each run binds that later equations (or the jaxpr's outputs) read: one backward pass.
        used = {id(v) for v in record.outvars if type(v) is VarRecord}
        done = len(eqns)
        groups: dict[int, FoldGroup] = {}
        for start, end in reversed(runs):
            for eqn in eqns[end:done]:
                used.update(id(a) for a in eqn.invars if type(a) is VarRecord)
            run = eqns[start:end]
            outputs = tuple(v for eqn in run for v in eqn.outvars if id(v) in used and v.name != "_")
            calls = tuple(dict.fromkeys(call_label(e.library_call) for e in run if e.library_call is not None))
            location = run[0].location
            assert location is not None  # foldable() checked it
            groups[start] = FoldGroup(start, end, location, calls, sum(self.eqn_count(e) for e in run), outputs)
            for eqn in run:
                used.update(id(a) for a in eqn.invars if type(a) is VarRecord)
            done = start
        return groups


def shortened(items: tuple[T, ...], limit: int = MAX_VARS, shown: int = SHOWN_VARS) -> tuple[tuple[T, ...], int]:
    """(the items to show, how many are left out): lists longer than ``limit`` keep their first ``shown``."""
    if len(items) <= limit:
        return tuple(items), 0
    return tuple(items[:shown]), len(items) - shown
