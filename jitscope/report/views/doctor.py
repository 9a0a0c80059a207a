"""``jitscope doctor`` as a view model: the headline (what the run wasted), the findings ranked, each with its
line of code, the change and the gain, labelled measured or estimated."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from jitscope.model.doctor import MEASURED, NOT_ESTIMATED, DoctorReport, Finding
from jitscope.report.views.document import (
    Block,
    CodeLine,
    CodeListing,
    Column,
    Document,
    Note,
    Paragraph,
    Section,
    Table,
)
from jitscope.units import fmt_bytes, fmt_duration, plural
from jitscope.userframes import read_source_lines

#: Findings the terminal shows; the rest are counted ("N more") and are all in json, markdown and html.
TOP = 5


def headline(report: DoctorReport) -> str:
    ran = f"{report.program} {report.outcome}" + (f" in {fmt_duration(report.wall_s)}" if report.wall_s else "")
    memory = f"; {plural(len(report.memory), 'memory finding')}" if report.memory else ""
    if not report.findings:
        if memory:
            return f"{ran}: no time to save above the noise floor ({fmt_duration(report.noise_floor_s)}){memory}"
        return f"{ran}: nothing to fix above the noise floor ({fmt_duration(report.noise_floor_s)})"
    avoidable = report.avoidable_s
    share = f", {report.avoidable_share:.0%} of the run," if avoidable else ""
    return (f"{ran}: {plural(len(report.findings), 'finding')}; about {fmt_duration(avoidable)}{share} "
            f"avoidable{memory}" if avoidable else f"{ran}: {plural(len(report.findings), 'finding')}{memory}")


def gain_text(finding: Finding) -> str:
    if finding.gain == NOT_ESTIMATED:
        return finding.gain_note
    label = "measured" if finding.gain == MEASURED else "estimated"
    amount = f"{fmt_bytes(finding.gain_bytes)} off the peak" if finding.cost_bytes else fmt_duration(finding.gain_s)
    return f"{amount} ({label}: {finding.gain_note})"


def _cost_text(finding: Finding, wall_s: float) -> str:
    if finding.per_call_s:
        return f"{fmt_duration(finding.per_call_s)} of device time per call"
    if finding.cost_bytes:
        return f"{fmt_bytes(finding.cost_bytes)} at the peak"
    return (f"{fmt_duration(finding.cost_s)} ({finding.cost_s / wall_s:.0%} of the run)" if finding.cost_s and wall_s
            else "no measurable time")


def _frame(finding: Finding, read_lines: Callable[[str], Sequence[str]]) -> CodeListing | None:
    where = finding.location
    if where is None:
        return None
    lines = read_lines(where.file)
    if not 1 <= where.line <= len(lines):
        return None
    return CodeListing((CodeLine(((lines[where.line - 1].rstrip(), ""),), number=where.line, mark=True),), "python")


def finding_section(rank: int, finding: Finding, wall_s: float,
                    read_lines: Callable[[str], Sequence[str]] = read_source_lines, prefix: str = "") -> Section:
    cost = _cost_text(finding, wall_s)
    blocks: list[Block] = [Paragraph(((str(finding.location or "(no source line)"), "jitscope.path"),
                                      (f"  cost {cost}", "jitscope.muted")))]
    frame = _frame(finding, read_lines)
    if frame is not None:
        blocks.append(frame)
    blocks += [Note(finding.change, "good", "change", wrap=True), Note(gain_text(finding), "info", "gain", wrap=True)]
    blocks += [Paragraph(((line, "jitscope.muted"),)) for line in finding.evidence]
    return Section(f"{prefix}{rank}. {finding.title}", tuple(blocks), level=3)


def doctor_document(report: DoctorReport, top: int | None = TOP,
                    read_lines: Callable[[str], Sequence[str]] = read_source_lines) -> Document:
    """The report; ``top`` findings in full (None: all), the rest counted."""
    shown = report.findings if top is None else report.findings[:top]
    blocks: list[Block] = [Paragraph(((headline(report), ""),), wrap=True)]
    if report.calls:
        blocks.append(Section("calls (bench)", (Table(
            (Column("call"), Column("first call", "right"), Column("of which compile", "right"),
             Column("cached call", "right")),
            tuple((f"{c.target}({c.call})", fmt_duration(c.first_call_s), fmt_duration(c.compile_s),
                   fmt_duration(c.cached_s)) for c in report.calls)),)))
    if report.findings:
        rows = tuple((str(i), fmt_duration(f.cost_s) if f.cost_s else "-",
                      fmt_duration(f.gain_s) + (" measured" if f.gain == MEASURED else " est.")
                      if f.gain != NOT_ESTIMATED else "-", str(f.location or ""), f.title)
                     for i, f in enumerate(report.findings, 1))
        table = Table((Column("#", "right"), Column("cost", "right"), Column("gain", "right"), Column("where"),
                       Column("finding")), rows if top is None else rows[:top])
        blocks.append(Section("what to fix first", (table,)))
        blocks += [finding_section(i, f, report.wall_s, read_lines) for i, f in enumerate(shown, 1)]
        if len(shown) < len(report.findings):
            blocks.append(Note(f"{len(report.findings) - len(shown)} more: --all, or --format json|markdown|html",
                               "muted"))
    if report.memory:
        rows = tuple((str(i), fmt_bytes(f.cost_bytes), fmt_bytes(f.gain_bytes) + (" measured" if f.gain == MEASURED
                                                                                 else " est."),
                      str(f.location or ""), f.title) for i, f in enumerate(report.memory, 1))
        blocks.append(Section("memory at the peak", (Table((Column("#", "right"), Column("at peak", "right"),
                                                            Column("gain", "right"), Column("where"),
                                                            Column("finding")), rows),)))
        blocks += [finding_section(i, f, report.wall_s, read_lines, prefix="M")
                   for i, f in enumerate(report.memory, 1)]
    if report.device:
        rows = tuple((str(i), fmt_duration(f.per_call_s), str(f.location or ""), f.title)
                     for i, f in enumerate(report.device, 1))
        blocks.append(Section("device time", (Table((Column("#", "right"), Column("per call", "right"),
                                                     Column("where"), Column("finding")), rows),)))
        blocks += [finding_section(i, f, report.wall_s, read_lines, prefix="D")
                   for i, f in enumerate(report.device, 1)]
    if report.below_floor:
        blocks.append(Note(f"{plural(report.below_floor, 'smaller finding')} under the noise floor "
                           f"({fmt_duration(report.noise_floor_s)}) left out", "muted"))
    blocks += [Note(note, "warning" if "exit" in note else "info", wrap=True) for note in report.notes]
    return Document(title=f"jitscope doctor: {report.program}", kind="doctor", blocks=tuple(blocks),
                    meta=(("compiles", str(report.compiles)), ("compile time", fmt_duration(report.compile_s)),
                          ("jax", report.jax_version or "?")))
