"""How a report is written: ``render_document(document, "html")`` picks a writer by format name."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jitscope.report.views.document import Document


def render_document(document: Document, fmt: str) -> str:
    """A view model as plain text, Markdown or HTML (back ends are imported only when used)."""
    if fmt == "html":
        from jitscope.report.writers.html import render_html

        return render_html(document)
    if fmt == "markdown":
        from jitscope.report.writers.markdown import render_markdown

        return render_markdown(document)
    if fmt == "text":
        from jitscope.report.writers.terminal import render_plain

        return render_plain(document)
    raise ValueError(f"no view back end for format {fmt!r}")
