"""The Markdown back end: GitHub-flavoured Markdown for pull-request comments and ``$GITHUB_STEP_SUMMARY``.

Tables are pipe tables, listings fenced code (long ones folded in ``<details>``, which GitHub
renders), charts a table of their data. Styles are dropped.
"""

from __future__ import annotations

import html
import re

from jitscope.report.views.document import (
    Block,
    Chart,
    CodeListing,
    Document,
    Fit,
    KeyValues,
    Note,
    Panels,
    Paragraph,
    Section,
    Table,
    plain,
)
from jitscope.report.writers.listings import listing_text, timeline_table
from jitscope.units import fmt_slope, fmt_value

#: Listings longer than this are folded in ``<details>``.
FOLD_LINES = 40
#: Characters that may start Markdown inside a line; ``_escape_inline`` decides for each one in its context.
_INLINE = re.compile(r"[\\*_<\[&~$|]")
_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
#: What makes a line a block other than a paragraph: a quote, heading, list item, fence or setext underline.
_BLOCK_START = re.compile(r"^( {0,3})(?=>|#{1,6}(?:\s|$)|[-+*](?:\s|$)|`{3,}|~{3,}|=+\s*$|-+\s*$)")
#: An ordered list item: ``1. `` or ``1) `` (the dot or parenthesis is escaped).
_ORDERED = re.compile(r"^( {0,3}\d{1,9})(?=[.)](?:\s|$))")


def _escape_inline(match: re.Match[str], text: str, cell: bool) -> str:
    char, i = match.group(), match.start()
    before, after = text[i - 1:i], text[i + 1:i + 2]
    if char == "\\":  # a backslash escapes only the punctuation after it (or breaks a line at the end)
        needed = not after or after in _PUNCTUATION
    elif char == "*":  # emphasis needs a * that is not between spaces
        needed = not ((not before or before.isspace()) and (not after or after.isspace()))
    elif char == "_":  # GitHub does not emphasise inside words (jit_sin), nor a lone _ between spaces
        needed = not ((before.isalnum() and after.isalnum()) or ((not before or before.isspace())
                                                                 and (not after or after.isspace())))
    elif char == "<":  # a tag, comment or autolink starts <a, </, <!, <?
        needed = after.isalpha() or after in ("/", "!", "?")
    elif char == "[":  # a link or image: [text](url) or [text][ref]
        needed = re.match(r"\[[^\]]*\][(\[]", text[i:]) is not None
    elif char == "&":  # an entity or character reference: &amp; &#38;
        needed = re.match(r"&#?[0-9A-Za-z]+;", text[i:]) is not None
    elif char in "~$":  # strikethrough ~x~ and GitHub's math $x$ need a pair
        needed = text.count(char) > 1
    else:  # |: only a table cell ends at one
        needed = cell
    return "\\" + char if needed else char


#: A code span: inside it backslashes show as written, so nothing in it is escaped.
_CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)")
#: ``@name`` outside code: a GitHub mention (``decorated with @jax.jit`` would notify a user "jax"); set as code.
_MENTION = re.compile(r"(?<![\w`])@[A-Za-z][\w.-]*\w|(?<![\w`])@[A-Za-z]")


def _escape_line(line: str, cell: bool) -> str:
    out, pos = [], 0
    for span in [*_CODE_SPAN.finditer(line), None]:
        end = span.start() if span else len(line)
        gap = line[pos:end]
        gap = _INLINE.sub(lambda m, gap=gap: _escape_inline(m, gap, cell), gap)  # type: ignore[misc]
        out.append(_MENTION.sub(lambda m: f"`{m.group()}`", gap))
        if span:
            out.append(span.group())
            pos = span.end()
    return "".join(out)


def escape_md(text: str, *, cell: bool = False, line_start: bool = True) -> str:
    """Text that GitHub-flavoured Markdown shows as written: only what would start emphasis, a link,
    HTML, an entity, strikethrough or math in its context is escaped (``>``, ``#``, ``-``... only where
    they would start a block: at the start of a line); ``|`` in table cells. Code spans (messages quote
    code in backticks) are left as they are, and ``@name`` becomes code, so a comment mentions nobody."""
    out = []
    for n, line in enumerate(text.split("\n")):
        line = _escape_line(line, cell)
        if (line_start or n) and not cell:
            line = _ORDERED.sub(r"\1\\", _BLOCK_START.sub(r"\1\\", line, count=1), count=1)
        out.append(line)
    return "\n".join(out)


def _summary(text: str) -> str:
    """Text inside ``<summary>`` (raw HTML, where Markdown escapes would show)."""
    return html.escape(text, quote=False)


def _cell(text: str) -> str:
    return escape_md(text, cell=True).replace("\n", " ") or " "


def _table(header: list[str], rows: list[list[str]], right: list[bool]) -> str:
    lines = ["| " + " | ".join(_cell(h) for h in header) + " |",
             "| " + " | ".join("---:" if r else "---" for r in right) + " |"]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _fence(text: str, language: str) -> str:
    longest = max((len(m) for m in re.findall(r"`{3,}", text)), default=2)
    fence = "`" * (longest + 1)
    return f"{fence}{language}\n{text.rstrip()}\n{fence}"


def _listing(listing: CodeListing) -> str:
    text = listing_text(listing)
    block = _fence(text, "python" if listing.language == "python" else "text")
    title = listing.title or listing.language
    if text.count("\n") > FOLD_LINES:
        return f"<details><summary>{_summary(title)} ({text.count(chr(10)):,} lines)</summary>\n\n{block}\n\n</details>"
    return (f"**{escape_md(listing.title)}**\n\n" if listing.title else "") + block


def _chart(chart: Chart) -> str:
    if chart.kind == "timeline":
        return block_md(timeline_table(chart))
    if chart.kind == "bars":
        header = ["", *[s.name for s in chart.series]]
        rows = [[cat, *[fmt_value(sum(v for c, v in s.points if int(c) == i), chart.x_unit) for s in chart.series]]
                for i, cat in enumerate(chart.categories)]
        return f"**{escape_md(chart.title)}**\n\n" + _table(header, rows, [False] + [True] * len(chart.series))
    if chart.kind == "distribution":
        ys = sorted(y for s in chart.series[:1] for _, y in s.points)
        if not ys:
            return ""
        figures = [("samples", str(len(ys))), ("min", fmt_value(ys[0], chart.y_unit)),
                   ("median", fmt_value(ys[len(ys) // 2], chart.y_unit)), ("max", fmt_value(ys[-1], chart.y_unit))]
        return f"**{escape_md(chart.title)}**: " + ", ".join(f"{k} {v}" for k, v in figures)
    fits = {name: slope for name, slope, _ in chart.fits}
    rows = [[s.name, fmt_value(x, chart.x_unit), fmt_value(y, chart.y_unit)] for s in chart.series for x, y in s.points]
    slopes = "; ".join(f"{name}: slope {fmt_slope(slope)}" for name, slope in fits.items())
    return (f"**{escape_md(chart.title)}**" + (f" ({escape_md(slopes)})" if slopes else "") + "\n\n"
            + _table(["series", chart.x_label or "x", chart.y_label or "y"], rows, [False, True, True]))


def _section(section: Section, depth: int) -> str:
    if not section.title:  # a plain group
        return "\n\n".join(p for p in (block_md(b, depth) for b in section.blocks) if p)
    hashes = "#" * min(depth + section.level, 6)
    note = f" — *{escape_md(section.note)}*" if section.note else ""
    body = "\n\n".join(p for p in (block_md(b, depth) for b in section.blocks) if p)
    if section.collapsed:
        return f"<details><summary>{_summary(section.title)}</summary>\n\n{body}\n\n</details>"
    return f"{hashes} {escape_md(section.title, line_start=False)}{note}\n\n{body}"


def block_md(block: Block, depth: int = 1) -> str:
    if isinstance(block, Section):
        return _section(block, depth)
    if isinstance(block, Paragraph):
        text = plain(block.text)
        return _fence(text, "text") if block.preformatted or text.startswith("  ") else escape_md(text)
    if isinstance(block, Note):
        label = f"**{escape_md(block.label)}:** " if block.label else ""
        return f"> {label}{escape_md(block.text, line_start=not label)}"
    if isinstance(block, KeyValues):
        return _table(["", ""], [[k, v] for k, v in block.rows], [False, True])
    if isinstance(block, Table):
        rows = [[c if isinstance(c, str) else plain(c) for c in row] for row in block.rows]
        title = f"**{escape_md(block.title)}**\n\n" if block.title else ""
        return title + _table([c.name for c in block.columns], rows, [c.align == "right" for c in block.columns])
    if isinstance(block, CodeListing):
        return _listing(block)
    if isinstance(block, Chart):
        return _chart(block)
    if isinstance(block, Panels | Fit):
        return "\n\n".join(p for p in (block_md(b, depth) for b in block.blocks) if p)
    raise TypeError(f"not a view block: {type(block).__name__}")


def render_markdown(document: Document) -> str:
    parts = [f"# {escape_md(document.title, line_start=False)}"]
    if document.subtitle:
        parts.append(escape_md(document.subtitle))
    # Headings nest without gaps: a document of pages (##) has its sections at ###, one without at ##.
    pages = any(isinstance(b, Section) and b.title and b.level <= 1 for b in document.blocks)
    parts += [p for p in (block_md(b, 1 if pages else 0) for b in document.blocks) if p]
    if document.meta:
        parts.append("<sub>" + escape_md(", ".join(f"{k} {v}" for k, v in document.meta)) + "</sub>")
    return "\n\n".join(parts) + "\n"
