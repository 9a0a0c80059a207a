"""The builder behind ``report/views/jaxpr.py``: a jaxpr record laid out as JAX prints it, line by line.

``JaxprLayout`` emits styled lines and remembers, per line, its location annotation, the equation
it starts, the ``jit`` scopes it is in and the blocks it opens or closes, for linked views.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal

from jitscope.model.jaxpr import AvalRecord, EqnRecord, JaxprRecord, LiteralRecord, VarRecord, count_eqns
from jitscope.report.views.jaxpr_fold import (
    FOLD_OUTPUTS,
    MAX_VARS,
    SHOWN_VARS,
    FoldGroup,
    FoldPlan,
    line_key,
    shortened,
)
from jitscope.report.views.lines import Line, line_width
from jitscope.report.views.links import scope_of
from jitscope.userframes import library_path

PRIM = "jaxpr.primitive"
VAR = "jaxpr.var"
TYPE = "jaxpr.type"
LIT = "jaxpr.literal"
PARAM = "jaxpr.param"
KW = "jaxpr.keyword"
LOC = "jaxpr.location"
MUTED = "jitscope.muted"

#: JAX's pretty-printer width: past it, parameters break one per line.
JAX_WIDTH = 80
#: Location annotations line up at this column at most; longer lines just get two spaces.
MAX_LOCATION_COLUMN = 80
#: Width assumed for plain text: header rows wrap here.
TEXT_WIDTH = 100


LocationsMode = Literal["user", "full", "none"]
LOCATIONS: tuple[LocationsMode, ...] = ("full", "user", "none")  # the order --help and errors list them in


def locations_mode(value: bool | str) -> LocationsMode:
    """``True`` -> ``full``, ``False`` -> ``none``; a mode name as it is."""
    if isinstance(value, bool):
        return "full" if value else "none"
    if value not in LOCATIONS:
        raise ValueError(f"locations must be one of {', '.join(LOCATIONS)}, not {value!r}")
    return value


@dataclass(frozen=True, slots=True)
class JaxprRenderOptions:
    """How to render a jaxpr."""

    #: ``full``: the user's ``file:line`` and the library line it called into; ``user``: the user's line
    #: only; ``none``. ``True``/``False`` mean ``full``/``none``.
    locations: LocationsMode | bool = "full"
    #: Levels of nested jaxprs shown (the top-level jaxpr is level 0): 0 collapses every nested one,
    #: 1 shows a scan body but collapses what it contains; None shows all.
    depth: int | None = None
    #: Print the summary header (avals, counts, constants, effects) above the jaxpr.
    header: bool = True
    #: Fold library calls and library jaxprs to one line each, shorten long variable lists.
    fold: bool = False
    #: With ``fold``: keep the folded lines, in blocks that start closed (``JaxprLayout.closed``).
    expand_folds: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "locations", locations_mode(self.locations))


class JaxprLayout:
    """Builds the lines of one rendering; ``lines[i]`` is annotated with ``locations[i]``.

    For linked views (the HTML report) it also records, per line, the equation it starts
    (``line_eqns``), the ``jit`` names it is nested in (``line_scopes``, as XLA's op_name
    paths say them: ``("jit(relu)",)``), and the nested jaxprs it opens (``folds``) or closes
    (``unfolds``).
    """

    def __init__(self, options: JaxprRenderOptions, width: int) -> None:
        self.options = options
        self.width = width
        self.lines: list[Line] = []
        self.locations: list[str] = []
        self.line_eqns: list[EqnRecord | None] = []
        self.line_scopes: list[tuple[str, ...]] = []
        self.folds: list[int] = []
        self.unfolds: list[int] = []
        #: The blocks a line opens start closed (folded library code, with ``expand_folds``).
        self.closed: list[bool] = []
        #: The folded run of library equations a line stands for (its fold line), else None.
        self.line_groups: list[FoldGroup | None] = []
        self.scope: tuple[str, ...] = ()
        self.aval_texts: dict[int, str] = {}
        self.eqn_counts: dict[int, int] = {}
        self.location_texts: dict[tuple[int, int], str] = {}
        self.plan = FoldPlan() if options.fold else None
        self.expand = options.fold and options.expand_folds
        #: Nested jaxprs to emit in a closed block (library jaxprs, with ``expand_folds``).
        self.closed_subs: set[int] = set()
        self.n_folded = 0  # fold lines emitted: a run with one can never be joined onto one line
        #: Parameters stay on their equation's line up to this width: JAX's 80 columns, or, folded, the whole width.
        self.flat_width = max(JAX_WIDTH, width) if options.fold else JAX_WIDTH

    def emit(self, line: Line, location: str = "", eqn: EqnRecord | None = None) -> None:
        self.lines.append(line)
        self.locations.append(location)
        self.line_eqns.append(eqn)
        self.line_scopes.append(self.scope)
        self.folds.append(0)
        self.unfolds.append(0)
        self.closed.append(False)
        self.line_groups.append(None)

    def join_from(
        self, start: int, prefix: Line, parts: list[Line], sep: str, suffix: Line, rest: Line
    ) -> None:
        """Replace ``lines[start:]`` by one line if it fits JAX's width and loses no location.

        Like JAX's printer, the fit is measured up to the end of the group (``suffix``);
        ``rest`` (the operands after ``]``) may run past it.
        """
        if any(self.locations[start:]) or any(self.closed[start:]) or any(self.line_groups[start:]):
            return
        line = [*prefix]
        for i, part in enumerate(parts):
            if i:
                line.append((sep, ""))
            line += part[1:]  # drop the indentation piece
        line += suffix
        if line_width(line) > JAX_WIDTH:
            return
        eqn, scope = self.line_eqns[start], self.line_scopes[start]
        del self.lines[start:], self.locations[start:], self.line_eqns[start:], self.line_scopes[start:]
        del self.folds[start:], self.unfolds[start:], self.closed[start:], self.line_groups[start:]
        self.scope, outer = scope, self.scope
        self.emit(line + rest, eqn=eqn)
        self.scope = outer

    # -- atoms

    def aval(self, aval: AvalRecord) -> str:
        text = self.aval_texts.get(id(aval))
        if text is None:
            text = self.aval_texts[id(aval)] = ":" + str(aval)
        return text

    def binders(self, line: Line, binders: tuple[VarRecord, ...], limit: int = MAX_VARS) -> None:
        shown, more = shortened(binders, limit, min(limit - 1, SHOWN_VARS)) if self.plan is not None else (binders, 0)
        for i, v in enumerate(shown):
            if i:
                line.append((" ", ""))
            line.append((v.name, VAR))
            line.append((self.aval(v.aval), TYPE))
        if more:
            line.append((f" … +{more}", MUTED))

    def atoms(self, line: Line, atoms: tuple[VarRecord | LiteralRecord, ...], sep: str = " ") -> None:
        shown, more = shortened(atoms) if self.plan is not None else (atoms, 0)
        for i, a in enumerate(shown):
            if i:
                line.append((sep, ""))
            if type(a) is VarRecord:
                line.append((a.name, VAR))
            else:
                line.append((a.value, LIT))  # type: ignore[union-attr]
                if a.typed:  # type: ignore[union-attr]
                    line.append((self.aval(a.aval), TYPE))
        if more:
            line.append((f"{sep}… +{more}", MUTED))

    # -- jaxprs

    def collapsed(self, record: JaxprRecord, how: str = "collapsed") -> str:
        n = self.eqn_counts.get(id(record))
        if n is None:
            n = self.eqn_counts[id(record)] = count_eqns(record)
        what = f"jaxpr {record.shared_name}" if record.shared_name else "jaxpr"
        return f"<{what}: {n} eqn{'' if n == 1 else 's'} {how}>"

    def folds_shared(self, record: JaxprRecord) -> bool:
        """A shared jaxpr shown folded at its uses, its definition left out (text with ``fold``)."""
        return self.plan is not None and not self.expand and self.plan.shared_plumbing(record)

    def shared_definitions(self, root: JaxprRecord) -> None:
        """``let name = { ... } in`` for each shared jaxpr that will be referenced, dependencies first."""
        depth = self.options.depth
        if depth is not None and depth < 1:
            return
        seen: set[str] = set()

        def visit(record: JaxprRecord, level: int) -> None:
            for eqn in record.eqns:
                for _, sub in eqn.subjaxprs:
                    name = sub.shared_name
                    if name in seen:
                        continue
                    if name:
                        seen.add(name)
                    sub_level = 1 if name else level + 1
                    if (depth is not None and sub_level > depth) or (name and self.folds_shared(sub)):
                        continue
                    visit(sub, sub_level)
                    if name:
                        self.scope = scope_of(eqn.primitive, eqn.params)
                        if self.expand and self.plan is not None and self.plan.shared_plumbing(sub):
                            self.closed_subs.add(id(sub))
                        self.jaxpr(sub, "", [("let ", KW), (name, PRIM), (" = ", "")], 1)
                        self.scope = ()
                        self.lines[-1].append((" in", KW))

        visit(root, 0)

    def jaxpr(self, record: JaxprRecord, indent: str, prefix: Line, level: int) -> None:
        """Emit ``{ lambda consts ; invars. let`` ... ``in (outvars) }``; ``prefix`` starts the first line."""
        start = len(self.lines)
        head: Line = [(indent, ""), *prefix, ("{ ", ""), ("lambda ", KW)]
        self.binders(head, record.constvars)
        head.append(("; ", ""))
        self.binders(head, record.invars)
        head += [(". ", ""), ("let", KW)]
        self.emit(head)
        if level:
            self.folds[-1] += 1
            self.closed[-1] = id(record) in self.closed_subs
        body = indent + "    "
        folded_before = self.n_folded
        groups = self.plan.groups(record) if self.plan is not None else {}
        eqns, i = record.eqns, 0
        while i < len(eqns):
            group = groups.get(i)
            if group is None:
                self.eqn(eqns[i], body, level)
                i += 1
                continue
            self.fold_line(group, body)
            if self.expand:
                for eqn in eqns[group.start : group.end]:
                    self.eqn(eqn, body, level)
                self.unfolds[-1] += 1
            i = group.end
        tail: Line = [(indent + "  ", ""), ("in ", KW), ("(", "")]
        self.atoms(tail, record.outvars, sep=", ")
        tail.append((",) }" if len(record.outvars) == 1 else ") }", ""))
        self.emit(tail)
        if level:
            self.unfolds[-1] += 1
        if self.n_folded == folded_before and len(self.lines) - start == len(record.eqns) + 2:  # one line each
            eqn_lines = self.lines[start + 1 : -1]
            self.join_from(start, [*head, (" ", "")], eqn_lines, "; ", [(" ", ""), *tail[1:]], [])

    def fold_line(self, group: FoldGroup, indent: str) -> None:
        """``a:f32[8] b:f32[8] = <122 eqns in flax MultiHeadAttention.__call__>`` under the user's line."""
        line: Line = [(indent, "")]
        if group.outputs:
            self.binders(line, group.outputs, FOLD_OUTPUTS)
            line.append((" = ", ""))
        line.append((group.label(), MUTED))
        where = self.options.locations != "none"
        self.emit(line, f"# {os.path.basename(group.location.file)}:{group.location.line}" if where else "")
        self.line_groups[-1] = group
        self.n_folded += 1
        if self.expand:
            self.folds[-1] += 1
            self.closed[-1] = True

    def location(self, eqn: EqnRecord) -> str:
        mode = self.options.locations
        loc, lib = eqn.location, eqn.library if mode == "full" else None
        if mode == "none" or loc is None and lib is None:
            return ""
        key = (id(loc), id(lib))
        text = self.location_texts.get(key)
        if text is None:
            parts = [f"{os.path.basename(loc.file)}:{loc.line}"] if loc is not None else []
            if lib is not None:
                parts.append(f"{library_path(lib.file)}:{lib.line}")
            text = self.location_texts[key] = "# " + " <- ".join(parts)
        return text

    def eqn(self, eqn: EqnRecord, indent: str, level: int) -> None:
        line: Line = [(indent, "")]
        if eqn.outvars:
            self.binders(line, eqn.outvars)
            line.append((" = ", ""))
        line.append((eqn.primitive, PRIM))
        if not eqn.params and not eqn.subjaxprs:  # the common case, kept short
            if eqn.invars:
                line.append((" ", ""))
                self.atoms(line, eqn.invars)
            self.emit(line, self.location(eqn), eqn)
            return
        start = len(self.lines)
        location = self.location(eqn)
        operands: Line = []
        if eqn.invars:
            operands.append((" ", ""))
            self.atoms(operands, eqn.invars)
        items: list[tuple[str, str | JaxprRecord, str]] = [(k, v, PARAM) for k, v in eqn.params]
        depth, plan = self.options.depth, self.plan
        for key, sub in eqn.subjaxprs:
            library = plan is not None and not sub.shared_name and plan.plumbing(sub, line_key(eqn.location))
            if sub.shared_name and self.folds_shared(sub):
                items.append((key, self.collapsed(sub, "folded"), MUTED))
            elif sub.shared_name and (depth is None or depth >= 1):
                items.append((key, sub.shared_name, PRIM))
            elif sub.shared_name or (depth is not None and level + 1 > depth):
                items.append((key, self.collapsed(sub), MUTED))
            elif library and not self.expand:
                items.append((key, self.collapsed(sub, "folded"), MUTED))
            else:
                if library:
                    self.closed_subs.add(id(sub))
                items.append((key, sub, ""))
        if eqn.subjaxprs:
            # JAX's order: name= first, then by key, jaxprs among the other parameters.
            items.sort(key=lambda p: (p[0] != "name", p[0]))
        expanded = any(isinstance(value, JaxprRecord) for _, value, _ in items)
        if not expanded:
            flat = [*line]
            if items:
                flat.append(("[", ""))
                for i, (key, value, style) in enumerate(items):
                    flat += [((" " if i else "") + key + "=", PARAM), (value, style)]  # type: ignore[list-item]
                flat.append(("]", ""))
            if not items or line_width(flat) <= self.flat_width:
                self.emit(flat + operands, location, eqn)
                return
        # JAX's broken form: one parameter per line, operands after the closing bracket.
        line.append(("[", ""))
        self.emit(line, location, eqn)
        outer = self.scope
        self.scope = outer + scope_of(eqn.primitive, eqn.params)
        self.broken_params(items, indent + "  ", level)
        self.scope = outer
        self.emit([(indent, ""), ("]", ""), *operands])
        if expanded and len(self.lines) - start == len(items) + 2:  # nested jaxprs fitted on one line
            self.join_from(start, [*line], self.lines[start + 1 : -1], " ", [("]", "")], operands)

    def broken_params(self, items: list[tuple[str, str | JaxprRecord, str]], indent: str, level: int) -> None:
        """``key=value`` lines; ``branches[0]``, ``branches[1]``... become JAX's ``branches=( ... )``."""
        i = 0
        while i < len(items):
            key, value, style = items[i]
            base, _, index = key.partition("[")
            group = 1
            if index:
                while i + group < len(items) and items[i + group][0].startswith(base + "["):
                    group += 1
            if not index:
                if isinstance(value, JaxprRecord):
                    self.jaxpr(value, indent, [(key + "=", PARAM)], level + 1)
                else:
                    self.emit([(indent, ""), (key + "=", PARAM), (value, style)])
            else:
                self.emit([(indent, ""), (base + "=", PARAM), ("(", "")])
                for _, member, member_style in items[i : i + group]:
                    if isinstance(member, JaxprRecord):
                        self.jaxpr(member, indent + "  ", [], level + 1)
                    else:
                        self.emit([(indent + "  ", ""), (member, member_style)])
                self.emit([(indent, ""), (")", "")])
            i += group

    # -- output

    def location_column(self, widths: list[int]) -> int:
        """Where locations start: aligned, but never pushed past the width."""
        longest = max(len(loc) for loc in self.locations if loc)
        return max(min(max(widths), MAX_LOCATION_COLUMN, self.width - longest - 2), 0)

    def annotated(self) -> list[Line]:
        """Lines with their locations appended, aligned on one column."""
        lines, locations = self.lines, self.locations
        if not any(locations):
            return lines
        widths = [line_width(line) if loc else 0 for line, loc in zip(lines, locations, strict=True)]
        column = self.location_column(widths)
        return [
            [*line, (" " * max(column - width, 0) + "  ", ""), (loc, LOC)] if loc else line
            for line, loc, width in zip(lines, locations, widths, strict=True)
        ]

    def annotated_plain(self) -> str:
        """``annotated`` as plain text, joining each line once (the fast path for big jaxprs)."""
        texts = ["".join([t for t, _ in line]) for line in self.lines]
        locations = self.locations
        if any(locations):
            widths = [len(text) if loc else 0 for text, loc in zip(texts, locations, strict=True)]
            column = self.location_column(widths)
            texts = [
                f"{text}{' ' * max(column - len(text), 0)}  {loc}" if loc else text
                for text, loc in zip(texts, locations, strict=True)
            ]
        return "\n".join(texts) + "\n"
