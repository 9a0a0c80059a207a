"""The end of ``jitscope run``: the summary (or the JSON log) on stderr, ``--out``, the gates' verdict.

Imported only once the program has exited, so rich's import is not paid before it starts.
"""

from __future__ import annotations

from pathlib import Path

from jitscope.model.run import RunRecord

#: Exit code when a CI gate (--max-compiles, --fail-on-recompile, --max-compile-time) failed.
EXIT_GATE = 1


def report(record: RunRecord, fmt: str, out: str | None) -> int:
    """Write the record where asked; the exit code of ``jitscope run`` (the program's, or EXIT_GATE)."""
    from rich.markup import escape

    from jitscope.render.console import make_console
    from jitscope.render.json import dumps
    from jitscope.render.run import render_summary

    stderr = make_console(stderr=True)
    if out is not None:
        Path(out).write_text(dumps(record) + "\n", encoding="utf-8")
    if fmt == "json" and out is None:
        stderr.file.write(dumps(record) + "\n")
    else:
        stderr.print(render_summary(record))
        if out is not None:
            stderr.print(f"jitscope run: log written to {out}", style="jitscope.muted", markup=False)
    if record.gate_failures:
        stderr.print(f"[jitscope.bad]error:[/] jitscope run: {escape('; '.join(record.gate_failures))}",
                     markup=True, highlight=False)
        return EXIT_GATE
    return record.exit_code
