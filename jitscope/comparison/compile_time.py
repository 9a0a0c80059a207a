"""``jitscope diff``: the compile by line of the user's code and by XLA phase, old against new (pure).

Lines are matched by their source text, so a line that moved (or sits in another file: ``diff old.py:f
new.py:f``) keeps its counterpart; lines are listed where their HLO instructions changed, the new side's
costliest first. Phases are matched by name. Times are noisy (shown, never gated).
"""

from __future__ import annotations

import os

from jitscope.comparison.sources import SourceTree
from jitscope.model.compile import CompileLine, CompileTimeRecord
from jitscope.model.diff import CompileTimeDiff, Metric

#: Lines listed.
LINES_SHOWN = 8

LineId = tuple[str, str]


def _lines(record: CompileTimeRecord, sources: SourceTree) -> dict[LineId, tuple[str, CompileLine]]:
    """Each line by its source text and the how-many-th line of that text it is (the two sides may be two
    files: ``diff old.py:f new.py:f``), with its ``file:line`` label."""
    out: dict[LineId, tuple[str, CompileLine]] = {}
    seen: dict[str, int] = {}
    for line in sorted((x for x in record.lines if x.location is not None),
                       key=lambda x: (x.location.file, x.location.line)):  # type: ignore[union-attr]
        assert line.location is not None
        file = sources.relative(line.location.file)
        text = sources.line(file, line.location.line).strip() or f"{file}:{line.location.line}"
        seen[text] = seen.get(text, 0) + 1
        out[(text, str(seen[text]))] = (f"{os.path.basename(file)}:{line.location.line}", line)
    return out


def compare_compile_times(old: CompileTimeRecord | None, new: CompileTimeRecord | None, old_sources: SourceTree,
                          new_sources: SourceTree) -> CompileTimeDiff | None:
    """Both sides' compiles by line and phase; None unless both sides were compiled and ``--compile-profile``
    timed them (without it the optimised HLO's changes say the same, and documents keep their schema)."""
    if old is None or new is None or not (old.profiled or new.profiled):
        return None
    before, after = _lines(old, old_sources), _lines(new, new_sources)
    rank = {id(line): i for i, line in enumerate(new.lines)}
    order = sorted(after, key=lambda k: rank.get(id(after[k][1]), 0))  # the new side's costliest first
    order += [k for k in before if k not in after]  # then what went away
    counts, seconds = [], []
    for key in order:
        label, line = after.get(key) or before[key]
        was, now = before.get(key), after.get(key)
        counts.append(Metric(f"line:{key[0]}:{key[1]}", label, float(was[1].hlo_instructions) if was else 0.0,
                             float(now[1].hlo_instructions) if now else 0.0))
        if old.profiled or new.profiled:
            seconds.append(Metric(f"line-time:{key[0]}:{key[1]}", label, was[1].compile_seconds if was else None,
                                  now[1].compile_seconds if now else None, "seconds", True))
    changed = [m for m in counts if m.old != m.new][:LINES_SHOWN]
    names = {m.name.removeprefix("line:") for m in changed}
    timed = [m for m in seconds if m.name.removeprefix("line-time:") in names or len(names) == 0][:LINES_SHOWN]
    old_phases = {p.name: p.seconds for p in old.phases}
    new_phases = {p.name: p.seconds for p in new.phases}
    phases = tuple(Metric(f"phase:{name}", name, old_phases.get(name), new_phases.get(name), "seconds", True)
                   for name in dict.fromkeys([*new_phases, *old_phases]))
    whole = Metric("phase:total", "XLA compile (captured)", old.compile_seconds, new.compile_seconds, "seconds", True)
    return CompileTimeDiff(lines=tuple(changed), line_seconds=tuple(timed),
                           phases=(whole, *phases) if phases else ())
