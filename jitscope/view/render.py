"""Pick a back end by format name: ``render_document(document, "html")``."""

from __future__ import annotations

from jitscope.view.model import Document


def render_document(document: Document, fmt: str) -> str:
    """A view model as plain text, Markdown or HTML (back ends are imported only when used)."""
    if fmt == "html":
        from jitscope.view.html import render_html

        return render_html(document)
    if fmt == "markdown":
        from jitscope.view.markdown import render_markdown

        return render_markdown(document)
    if fmt == "text":
        from jitscope.view.rich_text import render_plain

        return render_plain(document)
    raise ValueError(f"no view back end for format {fmt!r}")
