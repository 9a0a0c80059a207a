"""The end of ``jitscope run``: the summary (or the report) on stderr, ``--out``, the gates' verdict.

Imported only once the program has exited, so rich's import is not paid before it starts. The
view layer (Markdown, HTML) is imported only when one of those formats was asked for.
"""

from __future__ import annotations

import sys

from jitscope.model.run import RunRecord

#: Exit code when a CI gate (--max-compiles, --fail-on-recompile, --max-compile-time) failed.
EXIT_GATE = 1


def render_report(record: RunRecord, fmt: str) -> str:
    """The record as one document in ``fmt`` (text, json, markdown or html), ending in a newline."""
    if fmt == "json":
        from jitscope.report.writers.json import dumps

        return dumps(record) + "\n"
    if fmt == "text":
        import io

        from jitscope.report.writers.console import plain_console
        from jitscope.report.writers.run_live import render_summary

        buffer = io.StringIO()
        plain_console(buffer, 100).print(render_summary(record))
        return buffer.getvalue()
    from jitscope.report.views.run import run_document
    from jitscope.report.writers import render_document

    text = render_document(run_document(record), fmt)
    return text if text.endswith("\n") else text + "\n"


def report(record: RunRecord, fmt: str, out: str | None) -> int:
    """Write the record where asked; the exit code of ``jitscope run`` (the program's, or EXIT_GATE)."""
    if fmt == "text" and out is None and not record.gate_failures:
        from jitscope.report.writers.run_plain import plain_stderr, plain_summary

        text = plain_summary(record) if plain_stderr() else None
        if text is not None:  # the same text, without rich's imports (see report/writers/run_plain.py)
            sys.stderr.write(text)
            sys.stderr.flush()
            return record.exit_code
    from rich.markup import escape

    from jitscope.report.writers.console import make_console
    from jitscope.report.writers.run_live import render_summary

    stderr = make_console(stderr=True)
    text = ""
    if out is not None:
        text = render_report(record, fmt)
        from jitscope.outputs import write_atomic

        write_atomic(out, text)
    if fmt in ("json", "markdown") and out is None:
        stderr.file.write(render_report(record, fmt))
    else:
        stderr.print(render_summary(record))
        if out is not None:
            stderr.print(f"jitscope run: {fmt} report written to {out} ({len(text.encode()):,} bytes)",
                         style="jitscope.muted", markup=False)
    if record.gate_failures:
        stderr.print(f"[jitscope.bad]error:[/] jitscope run: {escape('; '.join(record.gate_failures))}",
                     markup=True, highlight=False)
        return EXIT_GATE
    return record.exit_code
