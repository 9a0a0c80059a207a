"""``jitscope merge`` as a view model: what to read first, the processes, compiles side by side.

``merge_document(report)`` is the whole report (text, Markdown, HTML). The first section is the
findings, worst first (``hosts/merge.py`` orders them: a process that never finished, programs that
differ, compiles one process made alone, different exits, stragglers, side effects); then one row
per process, compiles per function per process, every compile lined up across processes, and for
each program that differs, its first differing HLO line on both sides with the source line.
"""

from __future__ import annotations

from jitscope.model.hosts import HANG, SLOW, MergedCompile, MergeReport, ProcessCompile, ProgramDifference
from jitscope.report.views.document import (
    Block,
    Cell,
    CodeLine,
    CodeListing,
    Column,
    Document,
    Level,
    Note,
    Paragraph,
    Section,
    Table,
    pieces,
)
from jitscope.units import fmt_duration, plural

_LEVELS: dict[str, tuple[Level, str]] = {HANG: ("error", "hang"), SLOW: ("warning", "slow")}
#: Compile rows listed; a pathological program stays readable (the JSON has them all).
MAX_ROWS = 200


def headline(report: MergeReport) -> str:
    hosts = len({p.host for p in report.processes})
    shared = sum(1 for c in report.compiles if not c.missing)
    alone = len(report.compiles) - shared
    differ = sum(1 for c in report.compiles if c.same_program is False)
    unfinished = sum(p.partial for p in report.processes)
    count = len(report.processes)
    parts = [f"{count} process{'es' if count != 1 else ''} of {report.process_count} on {plural(hosts, 'host')}",
             f"{plural(len(report.compiles), 'compile')} lined up ({shared} on every process, {alone} on some only)",
             f"{differ} with different programs" if differ else "every shared program identical"]
    if unfinished:
        parts.append(f"{unfinished} never finished")
    return "; ".join(parts)


def findings_section(report: MergeReport) -> Section:
    if not report.findings:
        return Section("Read first", (Note("nothing to report: every process compiled the same programs, "
                                           "at about the same time, and exited alike", "good"),), id="findings")
    blocks = tuple(Note(f.text, *_LEVELS.get(f.level, ("info", "note")), wrap=True) for f in report.findings)
    return Section("Read first", blocks, id="findings")


def processes_section(report: MergeReport) -> Section:
    columns = (Column("process"), Column("host"), Column("devices"), Column("outcome"), Column("wall", "right"),
               Column("compiles", "right"), Column("compile time", "right"), Column("last compile"),
               Column("report"))
    rows: list[tuple[Cell, ...]] = []
    for p in report.processes:
        outcome: Cell = pieces("never finished (partial report)", "jitscope.bad") if p.partial else \
            (p.outcome if p.exit_code == 0 else pieces(p.outcome, "jitscope.bad"))
        rows.append((f"p{p.index}", p.host, _devices(p.local_devices), outcome, fmt_duration(p.wall_s),
                     str(p.compiles), fmt_duration(p.compile_s), p.last_compile or "-", _basename(p.file)))
    return Section("Processes", (Table(columns, tuple(rows)),), id="processes")


def functions_section(report: MergeReport) -> Section:
    names = [f"p{p.index}" for p in report.processes]
    columns = (Column("function"), Column("defined at"), *(Column(f"{n} compiles", "right") for n in names),
               *(Column(f"{n} time", "right") for n in names))
    rows = []
    for f in report.functions:
        differ = len(set(f.compiles)) > 1
        counts: tuple[Cell, ...] = tuple(pieces(str(c), "jitscope.warn") if differ else str(c) for c in f.compiles)
        rows.append((f.function, str(f.defined_at or ""), *counts, *(fmt_duration(t) for t in f.total_s)))
    return Section("Compiles per function", (Table(columns, tuple(rows)),),
                   note="trace + lower + compile per process", id="functions")


def _cell(part: ProcessCompile | None, merged: MergedCompile) -> Cell:
    if part is None:
        return pieces("-", "jitscope.warn")
    text = f"#{part.number} {fmt_duration(part.total_s)}"
    if merged.arrival_skew is not None and merged.arrival_skew.slowest == part.process and part.behind_s > 0:
        text += f" +{fmt_duration(part.behind_s)}"
    slow = merged.compile_skew is not None and merged.compile_skew.slowest == part.process and \
        merged.compile_skew.max_s > 1.5 * merged.compile_skew.median_s
    return pieces(text, "jitscope.warn" if slow else "")


def _program(merged: MergedCompile) -> Cell:
    same = merged.same_program
    if same is None:
        return "-"
    if same:
        return f"same {merged.programs[0][0][:8]}"
    odd = ", ".join(f"p{i}" for _, procs in merged.programs[1:] for i in procs)
    return pieces(f"DIFFERS on {odd}", "jitscope.bad")


def compiles_section(report: MergeReport) -> Section:
    indices = [p.index for p in report.processes]
    columns = (Column("function"), Column("arguments"), *(Column(f"p{i}", "right") for i in indices),
               Column("program"), Column("collectives"), Column("changed"))
    rows = []
    firsts: dict[str, str] = {}
    for merged in report.compiles[:MAX_ROWS]:
        by = {p.process: p for p in merged.processes}
        why = "; ".join(f"p{p.process}: {', '.join(p.changed)}" for p in merged.processes if p.changed)
        rows.append((merged.function, _arguments(merged, firsts), *(_cell(by.get(i), merged) for i in indices),
                     _program(merged), ", ".join(merged.collectives) or "-", why or "-"))
    blocks: list[Block] = [Table(columns, tuple(rows))]
    if len(report.compiles) > MAX_ROWS:
        blocks.append(Note(f"{len(report.compiles) - MAX_ROWS} more compiles in the JSON report", "muted"))
    blocks.append(Paragraph(pieces("arguments: those that differ from the function's first compile; p0, p1...: the "
                                   "function's compile number on that process and its trace + lower + compile time, "
                                   "+T on the process that began it last, T after the first (wall clocks), - where "
                                   "it was not compiled; changed: the cache key's components that changed there.",
                                   "jitscope.muted"), wrap=True))
    return Section("Compiles side by side", tuple(blocks), id="compiles")


def difference_section(merged: MergedCompile, diff: ProgramDifference, number: int) -> Section:
    ref = ", ".join(f"p{i}" for i in diff.reference)
    other = ", ".join(f"p{i}" for i in diff.processes)
    title = f"{merged.function}: {other} against {ref}"
    if diff.unavailable:
        return Section(title, (Note(diff.unavailable, "muted"),), id=f"difference-{number}")
    lines = [CodeLine(pieces(f"  {line}")) for line in diff.context]
    lines.append(CodeLine(pieces(f"- {diff.reference_text or '(program ends)'}", "jitscope.bad"), mark=True,
                          note=f"{ref}" + (f"  {diff.reference_source}" if diff.reference_source else "")))
    lines.append(CodeLine(pieces(f"+ {diff.text or '(program ends)'}", "jitscope.good"), mark=True,
                          note=f"{other}" + (f"  {diff.source}" if diff.source else "")))
    where = f"line {diff.line} of the optimised HLO" + (f", in {diff.computation}" if diff.computation else "")
    sources = [f"{ref}: {diff.reference_source}" if diff.reference_source else "",
               f"{other}: {diff.source}" if diff.source else ""]
    blocks: list[Block] = [
        Paragraph(pieces(f"First difference at {where} (metadata removed; fingerprints {diff.reference_fingerprint} "
                         f"and {diff.fingerprint}).", "jitscope.muted"), wrap=True),
        CodeListing(tuple(lines), "hlo", id=f"difference-{number}-hlo"),
    ]
    if any(sources):
        blocks.append(Paragraph(pieces("From your code: " + "; ".join(s for s in sources if s)), wrap=True))
    return Section(title, tuple(blocks), id=f"difference-{number}")


def effects_section(report: MergeReport) -> Section | None:
    rows = []
    for merged in report.compiles:
        if not merged.effects_differ:
            continue
        for part in merged.processes:
            effects = ", ".join(f"{e.detail} at {e.location}" + (f" x{e.count}" if e.count > 1 else "")
                                for e in part.effects) or "none"
            rows.append((merged.function, f"p{part.process}", effects))
    if not rows:
        return None
    return Section("Trace-time side effects that differ between processes",
                   (Table((Column("function"), Column("process"), Column("side effects while tracing")), tuple(rows)),),
                   id="effects")


def merge_document(report: MergeReport) -> Document:
    blocks: list[Block] = [findings_section(report), processes_section(report), functions_section(report),
                           compiles_section(report)]
    number = 0
    for merged in report.compiles:
        for diff in merged.differences:
            number += 1
            blocks.append(difference_section(merged, diff, number))
    effects = effects_section(report)
    if effects is not None:
        blocks.append(effects)
    blocks += [Note(note, "muted", "note") for note in report.notes]
    versions = sorted({p.jax_version or "?" for p in report.processes})
    meta = (("jax", ", ".join(versions)), ("merge schema", report.schema_version))
    program = " ".join((report.program, *report.argv))
    return Document(f"jitscope merge: {program}", "merge", tuple(blocks), subtitle=headline(report), meta=meta)


def _arguments(merged: MergedCompile, firsts: dict[str, str]) -> str:
    """The arguments that differ from the function's first compile listed ("first" for that one)."""
    first = firsts.setdefault(f"{merged.function}@{merged.defined_at}", merged.signature)
    if merged.signature == first:
        return "first" if merged.occurrence == 1 else f"first, again ({merged.occurrence})"
    known = set(_split(first))
    changed = [part for part in _split(merged.signature) if part not in known]
    return ", ".join(changed) or merged.signature


def _split(signature: str) -> list[str]:
    """``a: f32[2,3], b: i32[]`` -> its arguments (commas inside brackets and parentheses kept)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(signature):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(signature[start:i].strip())
            start = i + 1
    parts.append(signature[start:].strip())
    return [p for p in parts if p]


def _basename(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def _devices(devices: tuple[str, ...]) -> str:
    if len(devices) <= 3:
        return ", ".join(devices) or "-"
    return f"{devices[0]} ... {devices[-1]} ({len(devices)})"
