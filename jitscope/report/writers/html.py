"""The HTML back end: any view model as one self-contained page (CSS and script inline, no network).

Static content needs no JavaScript: nested jaxprs and HLO computations fold with
``<details>``, charts are inline SVG with ``<title>`` tooltips. The script adds
cross-highlighting between listings that share link keys (``CodeLine.src``/``ops``).
"""

from __future__ import annotations

from html import escape
from urllib.parse import quote

from jitscope import __version__
from jitscope.report.views.document import (
    Block,
    Chart,
    CodeLine,
    CodeListing,
    Document,
    Fit,
    KeyValues,
    Note,
    Panels,
    Paragraph,
    Piece,
    Pieces,
    Section,
    Table,
)
from jitscope.report.writers.html_assets import CSS, JS, STYLE_CLASSES
from jitscope.report.writers.svg import render_svg


def _class(style: str) -> str:
    return " ".join(STYLE_CLASSES.get(part, part.replace(".", "-")) for part in style.split())


def pieces_html(p: Pieces) -> str:
    out = []
    for text, style in p:
        if not text:
            continue
        out.append(f'<span class="{_class(style)}">{escape(text, False)}</span>' if style else escape(text, False))
    return "".join(out)


def _line(line: CodeLine, digits: int) -> str:
    attrs = ' class="l mark"' if line.mark else ' class="l"'
    if line.src:
        attrs += f' data-src="{escape(line.src)}"'
    if line.ops:
        attrs += f' data-ops="{escape(" ".join(line.ops))}"'
    number = f'<span class="n">{line.number:>{digits}} </span>' if line.number is not None else (
        f'<span class="n">{" " * (digits + 1)}</span>' if digits else "")
    note = f' <span class="note">{escape(line.note)}</span>' if line.note else ""
    text = pieces_html(line.text) if line.underline is None else _underlined(line)
    return f"<div{attrs}>{number}{text}{note}</div>"


def _underlined(line: CodeLine) -> str:
    """The line's pieces with its underlined span wrapped in ``<u>`` (a wavy line under a finding)."""
    start, end = line.underline or (0, 0)
    before: list[Piece] = []
    inside: list[Piece] = []
    after: list[Piece] = []
    pos = 0
    for text, style in line.text:
        for part, bucket in ((text[:max(start - pos, 0)], before), (text[max(start - pos, 0):max(end - pos, 0)], inside),
                             (text[max(end - pos, 0):], after)):
            if part:
                bucket.append((part, style))
        pos += len(text)
    cls = f' class="{_class(line.underline_style)}"' if line.underline_style else ""
    return (pieces_html(tuple(before)) + f"<u{cls}>{pieces_html(tuple(inside))}</u>" + pieces_html(tuple(after)))


def listing_html(listing: CodeListing) -> str:
    head = f'<div class="code-title">{escape(listing.title)}</div>' if listing.title else ""
    ident = f' id="{escape(listing.id)}"' if listing.id else ""
    parts = [f'{head}<div class="code" data-lang="{escape(listing.language)}"{ident}>']
    if not listing.lines and listing.raw is not None:
        parts.append("".join(f'<div class="l">{escape(t, False)}</div>' for t in listing.raw.removesuffix("\n").split("\n")))
    digits = max((len(str(line.number)) for line in listing.lines if line.number is not None), default=0)
    for line in listing.lines:
        html = _line(line, digits)
        if line.fold:
            parts.append(f'<details{"" if line.folded else " open"} class="fold"><summary>' + html + "</summary>"
                         + '<details open class="fold">' * (line.fold - 1))
        else:
            parts.append(html)
        parts.append("</details>" * line.unfold)
    parts.append("</div>")
    return "".join(parts)


def _cell(cell: str | Pieces, tag: str, align: str) -> str:
    cls = ' class="r"' if align == "right" else ""
    body = escape(cell, False) if isinstance(cell, str) else pieces_html(cell)
    return f"<{tag}{cls}>{body}</{tag}>"


def table_html(table: Table) -> str:
    out = [f"<h4>{escape(table.title)}</h4>" if table.title else "", "<table>"]
    if table.show_header:
        out.append("<thead><tr>" + "".join(_cell(c.name, "th", c.align) for c in table.columns) + "</tr></thead>")
    out.append("<tbody>")
    for row in table.rows:
        out.append("<tr>" + "".join(_cell(cell, "td", col.align) for cell, col in zip(row, table.columns, strict=False))
                   + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def section_html(section: Section) -> str:
    ident = f' id="{escape(section.id)}"' if section.id else ""
    note = f" <small>{escape(section.note)}</small>" if section.note else ""
    body = "".join(block_html(b) for b in section.blocks)
    if not section.title:  # a plain group
        return f'<div class="group"{ident}>{body}</div>'
    if section.level <= 1:
        return f'<section class="page"{ident}><h2>{escape(section.title)}{note}</h2>{body}</section>'
    if section.collapsed:
        return (f'<details class="sec"{ident}><summary><h3>{escape(section.title)}{note}</h3></summary>'
                f"{body}</details>")
    return f"<section{ident}><h3>{escape(section.title)}{note}</h3>{body}</section>"


def block_html(block: Block) -> str:
    if isinstance(block, Section):
        return section_html(block)
    if isinstance(block, Paragraph):
        if block.preformatted:
            return f'<pre class="out">{pieces_html(block.text)}</pre>'
        return f"<p>{pieces_html(block.text)}</p>".replace("\n", "<br>")
    if isinstance(block, Note):
        label = f"<strong>{escape(block.label)}:</strong> " if block.label else ""
        return f'<div class="note-box {block.level}">{label}{escape(block.text, False)}</div>'
    if isinstance(block, KeyValues):
        rows = "".join(f"<tr><td>{escape(k, False)}</td><td>{escape(v, False)}</td></tr>" for k, v in block.rows)
        return f'<table class="kv"><tbody>{rows}</tbody></table>'
    if isinstance(block, Table):
        return table_html(block)
    if isinstance(block, CodeListing):
        return listing_html(block)
    if isinstance(block, Chart):
        caption = f"<figcaption>{escape(block.caption)}</figcaption>" if block.caption else ""
        return f"<figure><h4>{escape(block.title)}</h4>{render_svg(block)}{caption}</figure>"
    if isinstance(block, Fit):
        return "".join(block_html(b) for b in block.blocks)
    if isinstance(block, Panels):
        return '<div class="panels">' + "".join(f'<div class="panel">{block_html(b)}</div>' for b in block.blocks) + "</div>"
    raise TypeError(f"not a view block: {type(block).__name__}")


def _contents(document: Document) -> str:
    """Links to the pages (traced calls, linted files) when there are several, as tlparse's index has."""
    pages = [b for b in document.blocks if isinstance(b, Section) and b.level <= 1 and b.id and b.title]
    if len(pages) < 2:
        return ""
    links = "".join(f'<li><a href="#{quote(p.id, safe="/:._-")}">{escape(p.title)}</a>'
                    + (f" <small>{escape(p.note)}</small>" if p.note else "") + "</li>" for p in pages)
    return f'<nav class="toc"><ul>{links}</ul></nav>'


def render_html(document: Document) -> str:
    """One self-contained HTML page."""
    meta = "".join(f"<div><dt>{escape(k)}</dt><dd>{escape(v)}</dd></div>" for k, v in document.meta)
    subtitle = f'<p class="mu">{escape(document.subtitle)}</p>' if document.subtitle else ""
    body = _contents(document) + "".join(block_html(b) for b in document.blocks)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f'<meta name="generator" content="jitscope {escape(__version__)}">'
        f"<title>{escape(document.title)}</title><style>{CSS.strip()}</style></head>"
        f'<body class="report-{escape(document.kind)}"><header><h1>{escape(document.title)}</h1>{subtitle}</header>'
        f"<main>{body}</main><footer><dl>{meta}</dl><p>jitscope {escape(__version__)}</p></footer>"
        f"<script>{JS.strip()}</script></body></html>\n"
    )
