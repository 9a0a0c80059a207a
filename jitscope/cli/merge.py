"""``jitscope merge``: the ``jitscope run`` reports of every process of one program, as one report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from jitscope.api.checks import format_of
from jitscope.cli.options import FILE_OUT, format_option
from jitscope.report.writers.destination import write_document, write_report


def merge(
    reports: Annotated[list[str], typer.Argument(
        help="The per-process reports (run.p0.json run.p1.json ...) that jitscope run --out run.json wrote in each "
        "process, or those of jitscope bench/profile/trace --processes N --save FILE.json, or the folder holding them.", show_default=False, metavar="FILES...|DIR")],
    fmt: Annotated[str | None, format_option(what=" (json: every compile of every process lined up)")] = None,
    out: Annotated[Path | None, typer.Option(help="Write the report to this file (the suffix picks the format).",
                                             show_default=False, **FILE_OUT)] = None,
    allow_missing: Annotated[bool, typer.Option(
        "--allow-missing", help="Merge what there is when a process left no report (killed before its first "
        "compile), instead of stopping.")] = False,
    check: Annotated[bool, typer.Option(
        "--check", help="Exit 1 when a finding can hang the job (a process that never finished, programs that "
        "differ, a compile with collectives on some processes only, different exits or JAX versions).")] = False,
) -> None:
    """Merge the jitscope run reports of a multi-process program (one per process, jax.distributed): compiles per
    function per process side by side, compiles some processes made alone and why, whether every process compiled
    the same program (with the first difference: the likely cause of a hang), compile-time and arrival skew with the
    stragglers named, trace-time side effects that differ."""
    fmt_name = format_of(fmt, out)
    from jitscope.hosts.reports import report_kind
    from jitscope.model.bench import BENCH_KIND
    from jitscope.model.profile import PROFILE_KIND

    kind = report_kind(reports)
    if kind == BENCH_KIND:  # the per-process reports of bench --processes --save
        from jitscope.api.commands.jobs import write_merged
        from jitscope.hosts.bench import load_bench_reports, merge_bench

        write_merged(merge_bench(load_bench_reports(reports)), fmt_name, out)
        return
    if kind == "jitscope.trace":  # those of trace --processes --save
        from jitscope.api.commands.jobs import write_merged
        from jitscope.hosts.trace import load_trace_reports, merge_trace

        write_merged(merge_trace(load_trace_reports(reports)), fmt_name, out)
        return
    if kind == PROFILE_KIND:  # those of profile --processes --save
        from jitscope.api.commands.jobs import write_merged
        from jitscope.hosts.profile import load_profile_reports, merge_profile

        write_merged(merge_profile(load_profile_reports(reports)), fmt_name, out)
        return
    from jitscope.hosts.load import load_reports
    from jitscope.hosts.merge import merge as merge_reports
    from jitscope.model.hosts import HANG

    loaded, notes = load_reports(reports, allow_missing=allow_missing)
    report = merge_reports(loaded, notes)
    if fmt_name == "json":
        from jitscope.report.writers.json import dumps

        write_report(dumps(report), out)
    else:
        from jitscope.report.views.merge import merge_document

        write_document(merge_document(report), fmt_name, out)
    if check and any(f.level == HANG for f in report.findings):
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("merge")(merge)
