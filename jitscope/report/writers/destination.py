"""Where a command's document goes: stdout (the themed console, for text) or ``--out FILE``, written whole.

Every command ends the same way (``write_result``): the API's result in the chosen format, so the
CLI and the Python API render through one object. Text piped or redirected (no colour to show) is
written by ``plain_text.py`` without importing rich, the same bytes as the console would print:
``jitscope trace ... > file`` starts ~20-30 ms sooner.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from jitscope.report.views.document import Document


class Renders(Protocol):
    """What ``write_result`` needs of a result (``api/results.py``'s ``Result``)."""

    def render(self, fmt: str) -> str: ...

    def text_document(self) -> Document | None: ...

    def renderable(self) -> Any: ...


def write_report(text: str, out: Path | None) -> None:
    """The report on stdout, or into ``out`` (with one line on stderr saying where)."""
    if not text.endswith("\n"):
        text += "\n"
    if out is None:
        from jitscope.stdout import write_document_text

        write_document_text(text)  # to the real stdout, where the document owns it (stdout.py)
        return
    from jitscope.outputs import write_atomic

    write_atomic(out, text)  # whole or not at all, relative to where jitscope started
    print(f"report written to {out} ({len(text.encode()):,} bytes)", file=sys.stderr)


def write_result(result: Renders, fmt: str, out: Path | None) -> None:
    """What every command ends with: the API's result in ``fmt``, on stdout (the themed console, colour on a
    terminal, for text) or into ``out``. The CLI and the Python API render through the same object."""
    if fmt == "text" and out is None:
        document = result.text_document()
        if document is not None:
            write_document(document, fmt, out)
            return
        from jitscope.report.writers.console import make_console

        make_console().print(result.renderable())
        return
    write_report(result.render(fmt), out)


def write_document(document: Document, fmt: str, out: Path | None) -> None:
    """A view's document (``report/views/``) in ``fmt`` (not json: that is the record's), on stdout or into
    ``out``; also for the reports no API result holds (``jitscope merge``'s)."""
    if fmt == "text" and out is None:
        from jitscope.report.writers.plain_text import piped_stdout, render_piped, write_piped

        text = render_piped(document) if piped_stdout() else None
        if text is not None:  # what the piped console below would print, without importing rich
            write_piped(text)
            return
        from jitscope.report.writers.console import make_console
        from jitscope.report.writers.terminal import render_rich

        make_console().print(render_rich(document))
        return
    from jitscope.report.writers import render_document

    write_report(render_document(document, fmt), out)
