"""Module analysis: discovery, then the taint pass over every traced function.

A worklist runs the taint pass on each function discovery found; the calls each
function makes (and the functions it hands to transforms) add more functions, or
more traced parameters to known ones, until nothing changes. Nested functions see
the flags of the names they close over. Calls that leave the module are collected
as :class:`ExternalRef` for the runner, which may come back with ``extra`` entries.
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from jitscope.linter.analysis.discovered import Entry, ExternalRef, JitSite
from jitscope.linter.analysis.discovery import Discoverer
from jitscope.linter.analysis.jit_calls import CallSite, argument_for, find_call_sites
from jitscope.linter.analysis.jit_factories import find_wrapped_sites
from jitscope.linter.analysis.module_index import FuncNode, ModuleIndex, block_statements, target_names
from jitscope.linter.analysis.parameters import all_params, self_param
from jitscope.linter.analysis.taint import FRESH, TAINT, FunctionFacts, TaintAnalyzer, merge_env

#: Bound on taint passes per module, as a multiple of the number of traced functions.
_PASSES_PER_FUNCTION = 12
_SUMMARY_DEPTH = 3


@dataclass(slots=True)
class _State:
    func: FuncNode
    owner: FuncNode | None
    reason: str
    boundary: bool
    tainted: set[str]
    arrays: set[str]
    static: frozenset[str] = frozenset()
    kind: str = "callee"
    constants: dict[str, object] = field(default_factory=dict)
    facts: FunctionFacts | None = None
    queued: bool = True


@dataclass(slots=True)
class ModuleAnalysis:
    """Traced functions with their taint facts, jit sites, and calls leaving the module."""

    index: ModuleIndex
    functions: list[FunctionFacts] = field(default_factory=list)
    jit_sites: list[JitSite] = field(default_factory=list)
    external: list[ExternalRef] = field(default_factory=list)
    #: calls of jitted functions (computed on first use)
    call_sites: list[CallSite] | None = None


class _Worklist:
    def __init__(self, index: ModuleIndex) -> None:
        self.index = index
        self.states: dict[int, _State] = {}
        self.queue: deque[int] = deque()
        self.summaries: dict[
            tuple[int, frozenset[str], frozenset[str]], tuple[int, tuple[int, ...] | None]
        ] = {}
        self.in_progress: set[tuple[int, frozenset[str], frozenset[str]]] = set()
        self.depth = 0

    def add(
        self,
        func: FuncNode,
        owner: FuncNode | None,
        tainted: Iterable[str],
        boundary: bool,
        reason: str,
        static: frozenset[str] = frozenset(),
        arrays: Iterable[str] | None = None,
        kind: str = "callee",
    ) -> None:
        key = id(func)
        state = self.states.get(key)
        if owner is not None:
            self.index.owner.setdefault(key, owner)
        tainted = set(tainted)
        arrays = tainted if arrays is None else set(arrays)
        if state is None:
            owner = self.index.owner.get(key, owner)
            state = _State(func, owner, reason, boundary, tainted - static, arrays - static, static, kind)
            self.states[key] = state
            self.queue.append(key)
            return
        if static and not state.static:
            state.static = static
            state.tainted -= static
            state.arrays -= static
        before = len(state.tainted) + len(state.arrays)
        state.tainted.update(t for t in tainted if t not in state.static)
        state.arrays.update(t for t in arrays if t not in state.static)
        changed = len(state.tainted) + len(state.arrays) != before
        if boundary and not state.boundary:
            state.boundary, state.reason, state.kind, changed = True, reason, kind, True
        if changed and not state.queued:
            state.queued = True
            self.queue.append(key)

    def closure_for(self, func: FuncNode) -> dict[str, int]:
        owner = self.index.owner.get(id(func))
        if owner is None:
            return {}
        state = self.states.get(id(owner))
        if state is not None and state.facts is not None:
            snapshot = state.facts.closures.get(id(func), {})
            return merge_env(dict(state.facts.closure), snapshot)
        return {name: 0 for name in _bound_names(self.index, owner)}

    def run(self) -> None:
        passes = 0
        while self.queue and passes < _PASSES_PER_FUNCTION * (len(self.states) + 8):
            passes += 1
            key = self.queue.popleft()
            state = self.states[key]
            state.queued = False
            facts = FunctionFacts(
                func=state.func,
                qualname=self.index.name_of(state.func),
                reason=state.reason,
                boundary=state.boundary,
                tainted_params=frozenset(state.tainted),
                self_name=self_param(self.index, state.func),
                array_params=frozenset(state.arrays),
                kind=state.kind,
                constants=state.constants,
                closure=self.closure_for(state.func),
            )
            TaintAnalyzer(self.index, facts, self.summarize).run()
            previous = state.facts
            state.facts = facts
            for edge in facts.edges:
                self.add(
                    edge.callee,
                    edge.owner,
                    edge.tainted,
                    edge.boundary,
                    edge.reason,
                    arrays=edge.arrays,
                    kind=edge.kind,
                )
            for nested, env in facts.closures.items():
                nested_state = self.states.get(nested)
                if nested_state is None or nested_state.queued or nested_state.facts is None:
                    continue
                old = previous.closures.get(nested) if previous is not None else None
                if old != env:
                    nested_state.queued = True
                    self.queue.append(nested)

    def summarize(
        self, func: FuncNode, tainted: frozenset[str], arrays: frozenset[str], closure: Mapping[str, int]
    ) -> tuple[int, tuple[int, ...] | None]:
        """Flags of what ``func`` returns when ``tainted`` parameters hold traced values."""
        key = (id(func), tainted, arrays)
        cached = self.summaries.get(key)
        if cached is not None:
            return cached
        fallback = (TAINT | FRESH) if tainted or any(v & TAINT for v in closure.values()) else FRESH
        if key in self.in_progress or self.depth >= _SUMMARY_DEPTH:
            return fallback, None
        self.in_progress.add(key)
        self.depth += 1
        try:
            facts = FunctionFacts(
                func=func,
                qualname=self.index.name_of(func),
                reason="",
                boundary=False,
                tainted_params=tainted,
                self_name=self_param(self.index, func),
                array_params=arrays,
                closure=dict(closure) or self.closure_for(func),
            )
            TaintAnalyzer(self.index, facts, self.summarize).run()
            elts = None if facts.mixed_returns or facts.return_elts is None else tuple(facts.return_elts)
            result = (facts.returns, elts)
        finally:
            self.depth -= 1
            self.in_progress.discard(key)
        self.summaries[key] = result
        return result


def _bound_names(index: ModuleIndex, func: FuncNode) -> set[str]:
    """Names local to ``func`` and to the functions enclosing it."""
    out: set[str] = set()
    current: FuncNode | None = func
    while current is not None:
        out.update(all_params(current))
        if not isinstance(current, ast.Lambda):
            for stmt in block_statements(current.body):
                if isinstance(stmt, ast.Assign):
                    for target in stmt.targets:
                        out.update(target_names(target))
                elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor)):
                    out.update(target_names(stmt.target))
                elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    out.add(stmt.name)
                elif isinstance(stmt, (ast.With, ast.AsyncWith)):
                    for item in stmt.items:
                        if item.optional_vars is not None:
                            out.update(target_names(item.optional_vars))
        current = index.owner.get(id(current))
    return out


def _retaint_passed_defaults(
    index: ModuleIndex, entries: list[Entry], jit_sites: list[JitSite]
) -> list[CallSite] | None:
    """A defaulted parameter of a jitted function is traced after all when some call passes it."""
    waiting = {id(e.func): e for e in entries if e.defaulted}
    if not waiting:
        return None
    sites = find_call_sites(index, jit_sites)
    for cs in sites:
        entry = waiting.get(id(cs.site.target))
        if entry is not None:
            passed = entry.defaulted.intersection(argument_for(cs.site, cs.call))
            if passed:
                entry.tainted = entry.tainted | passed
    return sites


def analyze_module(index: ModuleIndex, extra: Iterable[Entry] = ()) -> ModuleAnalysis:
    """Discover traced code in ``index`` and run the taint pass over all of it."""
    discovery = Discoverer(index).run()
    discovery.jit_sites.extend(find_wrapped_sites(index, discovery.jit_sites))
    call_sites = _retaint_passed_defaults(index, discovery.entries, discovery.jit_sites)
    work = _Worklist(index)
    for entry in (*discovery.entries, *extra):
        work.add(
            entry.func,
            entry.owner,
            entry.tainted,
            entry.boundary,
            entry.reason,
            entry.static,
            entry.arrays,
            entry.kind,
        )
        if entry.constants:
            work.states[id(entry.func)].constants.update(entry.constants)
    work.run()
    analysis = ModuleAnalysis(index, jit_sites=discovery.jit_sites, external=list(discovery.external))
    analysis.call_sites = call_sites
    for state in work.states.values():
        if state.facts is None:
            continue
        analysis.functions.append(state.facts)
        analysis.external.extend(ref for ref in state.facts.external if isinstance(ref, ExternalRef))
    analysis.functions.sort(key=lambda f: (getattr(f.func, "lineno", 0), getattr(f.func, "col_offset", 0)))
    return analysis
