"""The jaxprs of both sides, compared line by line of the user's code.

Each side's equations (nested ones included) are grouped by the line of the user's code that made
them, in the order the jaxpr first uses each line. A line is identified by *what it computes*: the
signatures of its equations (primitive, parameters, input and output types, literals), never by its
variable names, its text or its number. The two sequences of lines are aligned with difflib:

- equal runs are unchanged lines (a line whose text changed but whose equations did not, a rename,
  is counted in ``edited_same``, never reported as a change);
- a line removed in one place and added, with the same equations, in another is one ``moved`` line;
- within a replaced run, lines paired by text, number or primitives are ``changed``, with the
  equations only on each side; the rest are ``added`` or ``removed``.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from jitscope.model.diff import CountDelta, LineChange
from jitscope.model.jaxpr import EqnRecord, JaxprRecord, JaxprSummary, LiteralRecord

#: Parameters that name things rather than compute: a renamed helper function is not a change.
_IGNORED_PARAMS = frozenset({"name", "debug_info", "source_info"})
#: Object addresses in parameter reprs (``<function f at 0x7f..>``) change from process to process.
_ADDRESS = re.compile(r"\s+at\s+0x[0-9a-fA-F]+")
#: Equations shown per line and side in a change.
MAX_EQNS_SHOWN = 6


@dataclass(frozen=True, slots=True)
class FlatEqn:
    """One equation with where it sits: the user's line and the nested jaxprs around it."""

    signature: str
    primitive: str
    file: str  # "" when no line of the user's code made it
    line: int
    context: str
    out_shapes: tuple[str, ...]


@dataclass(slots=True)
class LineGroup:
    """The equations one line of the user's code made (in one nesting context)."""

    file: str
    line: int
    context: str
    eqns: list[FlatEqn] = field(default_factory=list)

    @property
    def key(self) -> tuple[str, tuple[str, ...]]:
        return self.context, tuple(e.signature for e in self.eqns)

    @property
    def primitives(self) -> Counter[str]:
        return Counter(e.primitive for e in self.eqns)


def _atom(atom: object) -> str:
    if isinstance(atom, LiteralRecord):
        return f"{atom.value}:{atom.aval}"
    aval = getattr(atom, "aval", None)
    return str(aval) if aval is not None else "?"


def signature(eqn: EqnRecord) -> str:
    """``dot_general[dimension_numbers=...] f32[8,16], f32[16,4] -> f32[8,4]``: what the equation computes."""
    params = ", ".join(f"{k}={_ADDRESS.sub('', v)}" for k, v in eqn.params if k not in _IGNORED_PARAMS)
    ins = ", ".join(_atom(a) for a in eqn.invars)
    outs = ", ".join(str(v.aval) for v in eqn.outvars)
    return f"{eqn.primitive}{f'[{params}]' if params else ''} {ins} -> {outs}"


def short_signature(eqn: FlatEqn) -> str:
    """The signature without parameters, for people: ``dot_general f32[8,16], f32[16,4] -> f32[8,4]``."""
    text = eqn.signature
    if text.startswith(eqn.primitive + "["):
        depth, i = 0, len(eqn.primitive)
        for i in range(len(eqn.primitive), len(text)):
            depth += text[i] == "["
            depth -= text[i] == "]"
            if depth == 0:
                break
        text = eqn.primitive + text[i + 1:]
    return text


def flatten(jaxpr: JaxprRecord, relative: Callable[[str], str] = lambda f: f) -> Iterator[FlatEqn]:
    """Every equation, nested ones after the equation that holds them, with its user line and context."""
    # An explicit stack of iterators keeps the jaxpr's order without recursion (deep nests of scans).
    iters: list[tuple[Iterator[EqnRecord], str]] = [(iter(jaxpr.eqns), "")]
    while iters:
        eqns, context = iters[-1]
        eqn = next(eqns, None)
        if eqn is None:
            iters.pop()
            continue
        loc = eqn.location
        yield FlatEqn(signature(eqn), eqn.primitive, relative(loc.file) if loc else "", loc.line if loc else 0,
                      context, tuple(str(v.aval) for v in eqn.outvars))
        for name, sub in reversed(eqn.subjaxprs):
            inner = f"{eqn.primitive} {_body_name(eqn.primitive, name)}"
            iters.append((iter(sub.eqns), f"{context} > {inner}" if context else inner))


def _body_name(primitive: str, param: str) -> str:
    if param.startswith("branches"):
        return f"branch {param.partition('[')[2].rstrip(']') or ''}".strip()
    if param in ("jaxpr", "call_jaxpr", "fun_jaxpr"):
        return "body"
    return param.replace("_jaxpr", "")


def group_lines(eqns: Sequence[FlatEqn]) -> list[LineGroup]:
    """Equations by (line, context), in the order each line is first used."""
    groups: dict[tuple[str, int, str], LineGroup] = {}
    for eqn in eqns:
        key = (eqn.file, eqn.line, eqn.context)
        group = groups.get(key)
        if group is None:
            group = groups[key] = LineGroup(eqn.file, eqn.line, eqn.context)
        group.eqns.append(eqn)
    return list(groups.values())


SourceOf = Callable[[str, int], str]
#: (old file, old line, new file) -> the new line it became, or None (``sources.LineCounterparts``).
Counterpart = Callable[[str, int, str], "int | None"]


@dataclass(frozen=True, slots=True)
class LineDiff:
    changes: tuple[LineChange, ...]
    edited_same: int
    unchanged: int
    #: The unchanged lines, old (file, line) with new (file, line): how ``--memory`` aligns its lines.
    same: tuple[tuple[tuple[str, int], tuple[str, int]], ...] = ()


def diff_lines(old: Sequence[LineGroup], new: Sequence[LineGroup], old_source: SourceOf,
               new_source: SourceOf, counterpart: Counterpart | None = None) -> LineDiff:
    """Align the two sides' lines by what they compute; see the module docstring. ``counterpart``: which new
    line an old one became by a text diff of their files (``sources.LineCounterparts``); without it, the line
    of the same number."""
    matcher = difflib.SequenceMatcher(None, [g.key for g in old], [g.key for g in new], autojunk=False)
    removed: list[LineGroup] = []
    added: list[LineGroup] = []
    replaced: list[tuple[list[LineGroup], list[LineGroup]]] = []
    edited_same = unchanged = 0
    same: list[tuple[tuple[str, int], tuple[str, int]]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for a, b in zip(old[i1:i2], new[j1:j2], strict=True):
                unchanged += 1
                if a.line and b.line:
                    same.append(((a.file, a.line), (b.file, b.line)))
                if a.line and _norm(old_source(a.file, a.line)) != _norm(new_source(b.file, b.line)):
                    edited_same += 1
            continue
        removed += old[i1:i2]
        added += new[j1:j2]
        if tag == "replace":
            replaced.append((list(old[i1:i2]), list(new[j1:j2])))
    changes: list[LineChange] = []
    # Moves first: the same equations removed in one place and added in another.
    by_key: dict[tuple[str, tuple[str, ...]], list[LineGroup]] = {}
    for group in added:
        by_key.setdefault(group.key, []).append(group)
    paired: set[int] = set()
    for group in removed:
        twins = by_key.get(group.key)
        if twins and group.line:
            twin = twins.pop(0)
            paired.update((id(group), id(twin)))
            changes.append(_change("moved", group, twin, old_source, new_source))
    # Then lines edited in place, within each replaced run.
    for olds, news in replaced:
        olds = [g for g in olds if id(g) not in paired]
        news = [g for g in news if id(g) not in paired]
        for a in olds:
            match = next((b for b in news if id(b) not in paired
                          and _same_line(a, b, old_source, new_source, counterpart)), None)
            if match is not None:
                paired.update((id(a), id(match)))
                changes.append(_change("changed", a, match, old_source, new_source))
    changes += [_change("removed", g, None, old_source, new_source) for g in removed if id(g) not in paired]
    changes += [_change("added", None, g, old_source, new_source) for g in added if id(g) not in paired]
    changes.sort(key=lambda c: (c.new_file or c.old_file, c.new_line or c.old_line, c.kind, c.context))
    return LineDiff(_merged(changes), edited_same, unchanged, tuple(same))


def _merged(changes: list[LineChange]) -> tuple[LineChange, ...]:
    """One entry per line and kind: a line whose equations sit at several depths (a call into a jitted helper,
    a scan) is one change, its equations together; the context is the outermost one."""
    out: list[LineChange] = []
    for change in changes:
        last = out[-1] if out else None
        if (last is not None and (last.old_line or last.new_line) and (last.kind, last.old_where, last.new_where)
                == (change.kind, change.old_where, change.new_where)):
            out[-1] = dataclasses.replace(
                last, removed_eqns=(last.removed_eqns + change.removed_eqns)[:MAX_EQNS_SHOWN],
                added_eqns=(last.added_eqns + change.added_eqns)[:MAX_EQNS_SHOWN])
        else:
            out.append(change)
    return tuple(out)


def _norm(text: str) -> str:
    return " ".join(text.split())


def _same_line(a: LineGroup, b: LineGroup, old_source: SourceOf, new_source: SourceOf,
               counterpart: Counterpart | None) -> bool:
    """Is ``b`` the line ``a`` became? The same context, and the same text, the line the text diff of the files
    pairs it with (the same number without one), or the same primitives."""
    if a.context != b.context:
        return False
    text_a, text_b = _norm(old_source(a.file, a.line)), _norm(new_source(b.file, b.line))
    if text_a and text_a == text_b:
        return True
    became = (a.line if counterpart is None else counterpart(a.file, a.line, b.file)) if a.line else None
    return (became is not None and became == b.line) or a.primitives == b.primitives


def _change(kind: str, a: LineGroup | None, b: LineGroup | None, old_source: SourceOf,
            new_source: SourceOf) -> LineChange:
    old_sigs = Counter(short_signature(e) for e in a.eqns) if a else Counter[str]()
    new_sigs = Counter(short_signature(e) for e in b.eqns) if b else Counter[str]()
    if kind == "moved":
        removed_eqns: tuple[str, ...] = ()
        added_eqns: tuple[str, ...] = ()
    else:
        removed_eqns = tuple((old_sigs - new_sigs).elements())[:MAX_EQNS_SHOWN]
        added_eqns = tuple((new_sigs - old_sigs).elements())[:MAX_EQNS_SHOWN]
    return LineChange(
        kind=kind,  # type: ignore[arg-type]
        old_file=a.file if a else "", old_line=a.line if a else 0,
        new_file=b.file if b else "", new_line=b.line if b else 0,
        old_source=old_source(a.file, a.line).strip() if a and a.line else "",
        new_source=new_source(b.file, b.line).strip() if b and b.line else "",
        removed_eqns=removed_eqns, added_eqns=added_eqns,
        context=b.context if b is not None else a.context if a is not None else "",
    )


def primitive_deltas(old: JaxprSummary | None, new: JaxprSummary | None) -> tuple[CountDelta, ...]:
    """Primitives whose count (nested equations included) differs, largest change first."""
    a = dict(old.primitive_counts) if old else {}
    b = dict(new.primitive_counts) if new else {}
    out = [CountDelta(name, a.get(name, 0), b.get(name, 0)) for name in sorted(set(a) | set(b))
           if a.get(name, 0) != b.get(name, 0)]
    return tuple(sorted(out, key=lambda d: (-abs(d.new - d.old), d.name)))


def lines_by_primitive(eqns: Sequence[FlatEqn]) -> Mapping[str, list[FlatEqn]]:
    """Equations with a user line, by primitive: how HLO instructions find their line (``comparison/hlo.py``)."""
    out: dict[str, list[FlatEqn]] = {}
    for eqn in eqns:
        if eqn.line:
            out.setdefault(eqn.primitive, []).append(eqn)
    return out
