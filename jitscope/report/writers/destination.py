"""Where a command's document goes: stdout (the themed console, for text) or ``--out FILE``, written whole.

Every command ends the same way (``write_result``): the API's result in the chosen format, so the
CLI and the Python API render through one object.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Protocol


class Renders(Protocol):
    """What ``write_result`` needs of a result (``api/results.py``'s ``Result``)."""

    def render(self, fmt: str) -> str: ...

    def renderable(self) -> Any: ...


def write_report(text: str, out: Path | None) -> None:
    """The report on stdout, or into ``out`` (with one line on stderr saying where)."""
    if not text.endswith("\n"):
        text += "\n"
    if out is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    from jitscope.outputs import write_atomic

    write_atomic(out, text)  # whole or not at all, relative to where jitscope started
    print(f"report written to {out} ({len(text.encode()):,} bytes)", file=sys.stderr)


def write_result(result: Renders, fmt: str, out: Path | None) -> None:
    """What every command ends with: the API's result in ``fmt``, on stdout (the themed console, colour on a
    terminal, for text) or into ``out``. The CLI and the Python API render through the same object."""
    if fmt == "text" and out is None:
        from jitscope.report.writers.console import make_console

        make_console().print(result.renderable())
        return
    write_report(result.render(fmt), out)


def write_document(document: Any, fmt: str, out: Path | None) -> None:
    """A view's document (``report/views/``) in ``fmt`` (not json: that is the record's), on stdout or into
    ``out``, for the reports no API result holds (``jitscope merge``'s)."""
    if fmt == "text" and out is None:
        from jitscope.report.writers.console import make_console
        from jitscope.report.writers.terminal import render_rich

        make_console().print(render_rich(document))
        return
    from jitscope.report.writers import render_document

    write_report(render_document(document, fmt), out)
