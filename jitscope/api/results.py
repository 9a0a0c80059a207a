"""What the Python API returns: the record the CLI renders, wrapped with the ways to show and keep it.

Every result has

- ``record``: the frozen, JSON-able record (``model/``) that ``--format json`` writes;
- ``to_json()`` / ``to_dict()``: that JSON document (the same schema as the CLI's);
- ``render(format)``: ``text``, ``json``, ``markdown`` or ``html`` (lint adds ``sarif`` and ``github``);
- ``save(path, format=None)``: the file written whole or not at all, format from the suffix as ``--out``;
- ``__rich_console__`` (``rich.print(result)``), ``_repr_pretty_`` (IPython in a terminal) and ``_repr_html_``
  (Jupyter, VS Code, Colab: the HTML report in an isolated frame);

plus plain fields a script needs: ``result.calls[0].jaxpr_text``, ``bench.cached.median_s``,
``profile.lines[0]``, ``lint.findings``, ``watch.compiles``.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from jitscope.report.formats import REPORT_FORMATS, format_of_suffix, suffixes_of

if TYPE_CHECKING:
    # the records are named in strings in the classes' bases (Result["BenchReport"]): F401 cannot see it
    from jitscope.model.bench import BenchReport, BenchRow, TimingStats  # noqa: F401
    from jitscope.model.common import Location
    from jitscope.model.lint import Finding, LintReport
    from jitscope.model.profile import LineRecord, ProfileReport, ProfileRow
    from jitscope.model.run import CompileEvent, FunctionSummary, RunRecord  # noqa: F401
    from jitscope.model.trace import CostRecord, Diagnostic, LibraryCall, MemoryRecord, TraceRecord, TraceReport
    from jitscope.report.views.document import Document

R = TypeVar("R")


#: A notebook output larger than this shows the report without its IR listings (and links the whole).
INLINE_HTML_BYTES = 512 * 1024
#: Listings up to this long stay in the inline report (a small function's whole jaxpr).
INLINE_LISTING_LINES = 60


def _save_beside_notebook(title: str, page: str) -> Path | None:
    """The whole report in ``jitscope-reports/`` of the current directory (the notebook's, in Jupyter), named
    after its title and content; None where it cannot be written."""
    import hashlib
    import re

    from jitscope.outputs import write_atomic

    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", title.removeprefix("jitscope ")).strip("-.")[:60] or "report"
    path = Path("jitscope-reports") / f"{slug}-{hashlib.sha256(page.encode()).hexdigest()[:10]}.html"
    try:
        (Path.cwd() / path.parent).mkdir(exist_ok=True)
        write_atomic(Path.cwd() / path, page)
    except Exception:  # noqa: BLE001 - a read-only folder: the note says how to save it instead
        return None
    return path


class Result(Generic[R]):
    """A command's record with its renderings. Subclasses say which view draws it."""

    command: ClassVar[str] = ""
    formats: ClassVar[tuple[str, ...]] = REPORT_FORMATS

    def __init__(self, record: R) -> None:
        self.record = record

    # -- what subclasses provide -------------------------------------------------------------------
    def document(self, fmt: str) -> Document:
        """The view model of the report for ``fmt`` (text, markdown or html)."""
        raise NotImplementedError

    def title(self) -> str:
        return f"jitscope {self.command}"

    def _first_row(self, nothing: str) -> Any:
        """The (first) call's row of a record with ``rows`` and ``failures``: never an empty answer without a
        word, a call that failed raises its error (``UsageError``, as every mistake the API reports)."""
        rows = self.record.rows  # type: ignore[attr-defined]
        if rows:
            return rows[0]
        from jitscope.errors import UsageError

        failures = self.record.failures  # type: ignore[attr-defined]
        failure = failures[0] if failures else None
        raise UsageError(f"{nothing}: {failure.error if failure else 'nothing was run'}",
                         hint=failure.hint if failure else None, detail=failure.detail if failure else None)

    # -- the same for every command -----------------------------------------------------------------
    def to_json(self) -> str:
        """The report as ``--format json`` writes it (a versioned schema: ``kind``, ``schema_version``)."""
        from jitscope.report.writers.json import dumps

        return dumps(self.record)

    def to_dict(self) -> dict[str, Any]:
        return dict(json.loads(self.to_json()))

    def render(self, format: str = "text") -> str:
        """The whole report as text in ``format``, ending in a newline."""
        from jitscope.api.checks import check_choice

        check_choice("format", format, self.formats, none_ok=False)
        text = self.to_json() if format == "json" else self._render(format)
        return text if not text or text.endswith("\n") else text + "\n"  # github: nothing when nothing was found

    def _render(self, fmt: str) -> str:
        from jitscope.report.writers import render_document

        return render_document(self.document(fmt), fmt)

    def save(self, path: str | Path, format: str | None = None) -> Path:
        """Write the report to ``path`` (whole or not at all); the suffix picks the format, as ``--out``."""
        from jitscope.api.checks import check_choice, check_path
        from jitscope.outputs import check_file_name, write_atomic

        check_path("path", path, none_ok=False)
        check_choice("format", format, self.formats)
        check_file_name(path)  # before the suffix is read: "x.json/" names a folder
        fmt = format or format_of_suffix(str(path), self.formats)
        if fmt is None:
            from jitscope.errors import UsageError

            raise UsageError(f"cannot tell the format from the suffix of {path}",
                             hint=f"name it {suffixes_of(self.formats)}, or pass format=")
        write_atomic(path, self.render(fmt))
        return Path(path)

    def text_document(self) -> Document | None:
        """The document a console shows (``renderable()`` draws it); None where the console shows something
        else (``WatchResult``'s summary). Piped, it is written without rich (``report/writers/destination.py``)."""
        return self.document("text")

    def renderable(self) -> Any:
        """The report as a rich renderable (styled with jitscope's theme names)."""
        from jitscope.report.writers.terminal import render_rich

        return render_rich(self.document("text"))

    def __rich_console__(self, console: Any, options: Any) -> Any:
        """``rich.print(result)`` on any console: rendered under jitscope's theme, which that console lacks."""
        from jitscope.report.writers.theme import THEME

        with console.use_theme(THEME):
            segments = list(console.render(self.renderable(), options))
        yield from segments

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.__repr__() if cycle else self.render("text").rstrip("\n"))

    def _repr_html_(self) -> str:
        """The HTML report in a frame of its own: its styles and script cannot touch the notebook's page.
        The frame grows to the report's height once loaded.

        A notebook saves what a cell shows, so a large report (a model's jaxpr and HLO are megabytes) is shown
        without its IR listings, with a link to the whole report, saved beside the notebook in
        ``jitscope-reports/``."""
        page = self.render("html")
        above = ""
        if len(page) > INLINE_HTML_BYTES:
            from jitscope.report.views.document import compact
            from jitscope.report.writers import render_document
            from jitscope.units import fmt_bytes

            small, left_out = compact(self.document("html"), INLINE_LISTING_LINES)
            whole = _save_beside_notebook(self.title(), page)
            where = (f'<a href="{html.escape(whole.as_posix(), quote=True)}" target="_blank">'
                     f"{html.escape(whole.as_posix())}</a>" if whole is not None
                     else "<code>result.save(\"report.html\")</code>")
            above = (f'<p class="jitscope-report-note" style="margin:0 0 4px 0">The IR listings ({left_out:,} '
                     f"lines, {fmt_bytes(len(page))}) are left out of the notebook; the whole report: {where}"
                     "</p>")
            page = render_document(small, "html")
        resize = "this.style.height=(this.contentWindow.document.documentElement.scrollHeight+4)+'px'"
        return (f'{above}<iframe class="jitscope-report" title="{html.escape(self.title())}" '
                f'srcdoc="{html.escape(page, quote=True)}" onload="{resize}" '
                'style="width:100%;height:480px;border:1px solid #d1d9e0;border-radius:6px"></iframe>')

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.summary()}>"

    def summary(self) -> str:
        return self.title()


# -- trace -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TraceCall:
    """One traced call: the record, and its stages as the text jitscope prints."""

    record: TraceRecord

    @property
    def target(self) -> str:
        return self.record.target

    @property
    def call(self) -> str:
        return self.record.call

    @property
    def failed(self) -> bool:
        return self.record.diagnostic is not None

    @property
    def diagnostic(self) -> Diagnostic | None:
        return self.record.diagnostic

    @property
    def jaxpr_text(self) -> str | None:
        """The jaxpr as ``jitscope trace`` prints it (plain text, each equation with your file:line)."""
        if self.record.jaxpr is None:
            return None
        from jitscope.report.views.jaxpr import render_jaxpr_text

        return render_jaxpr_text(self.record.jaxpr, None, header=False)

    @property
    def stablehlo_text(self) -> str | None:
        return self.record.stages.stablehlo if self.record.stages is not None else None

    @property
    def hlo_text(self) -> str | None:
        return self.record.stages.hlo if self.record.stages is not None else None

    @property
    def cost(self) -> CostRecord | None:
        return self.record.stages.cost if self.record.stages is not None else None

    @property
    def memory(self) -> MemoryRecord | None:
        return self.record.stages.memory if self.record.stages is not None else None

    @property
    def library_calls(self) -> tuple[LibraryCall, ...]:
        """The optimised HLO's custom calls (cuBLAS, cuDNN, LAPACK, callbacks ...), named, with your lines."""
        return self.record.library_calls

    @property
    def equations(self) -> int | None:
        """Equations, counting those in nested jaxprs."""
        return self.record.summary.n_eqns_total if self.record.summary is not None else None


class TraceResult(Result["TraceReport"]):
    """``jitscope.trace(...)``: every stage of what jit makes of the call."""

    command = "trace"

    def __init__(self, record: TraceReport, *, stages: Sequence[str], locations: str = "full",
                 depth: int | None = None, fold: bool | None = None) -> None:
        super().__init__(record)
        self.stages = tuple(stages)
        self.locations = locations
        self.depth = depth
        self.fold = fold

    @property
    def calls(self) -> tuple[TraceCall, ...]:
        return tuple(TraceCall(r) for r in self.record.traces)

    def document(self, fmt: str) -> Document:
        from jitscope.report.views.trace import trace_document

        fold = self.fold if self.fold is not None else fmt == "html"
        return trace_document(self.record, stages=self.stages, locations=self.locations,  # type: ignore[arg-type]
                              depth=self.depth, linked=fmt != "text", fold=fold, expandable=fmt == "html")

    def title(self) -> str:
        return f"jitscope trace: {self.record.traces[0].target}" if self.record.traces else "jitscope trace"

    def summary(self) -> str:
        calls = self.calls
        if not calls:
            return "trace: no calls"
        first = calls[0]
        if first.failed:
            return f"{first.target}({first.call}): failed: {first.diagnostic.message if first.diagnostic else ''}"
        eqns = f", {first.equations} equations" if first.equations is not None else ""
        return f"{first.target}({first.call}){eqns}" + (f" (+{len(calls) - 1} calls)" if len(calls) > 1 else "")


# -- bench -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Timing:
    """Per-call seconds of one kind of call (``TimingStats`` under names that say the unit)."""

    stats: TimingStats

    @property
    def median_s(self) -> float:
        return self.stats.median

    @property
    def mean_s(self) -> float:
        return self.stats.mean

    @property
    def min_s(self) -> float:
        return self.stats.min

    @property
    def max_s(self) -> float:
        return self.stats.max

    @property
    def stddev_s(self) -> float:
        return self.stats.stddev

    @property
    def iqr_s(self) -> float:
        return self.stats.iqr

    @property
    def rounds(self) -> int:
        return self.stats.rounds

    @property
    def calls(self) -> int:
        return self.stats.calls


@dataclass(frozen=True)
class FirstCall:
    """The cold first call (median of ``cold_runs``), by phase, in seconds (None: JAX reported no event)."""

    total_s: float
    trace_s: float | None
    lower_s: float | None
    compile_s: float | None
    first_run_s: float | None


class BenchResult(Result["BenchReport"]):
    """``jitscope.bench(...)``: the cold first call against cached calls, blocking on every output leaf."""

    command = "bench"

    @property
    def rows(self) -> tuple[BenchRow, ...]:
        return self.record.rows

    def _row(self) -> BenchRow:
        row: BenchRow = self._first_row("no timings")
        return row

    @property
    def cached(self) -> Timing:
        """Cached calls of the (first) row, each blocked on every output leaf."""
        return Timing(self._row().cached.blocked)

    @property
    def cold(self) -> FirstCall:
        """The first call of the (first) row, on a fresh jit wrapper with JAX's in-memory caches cleared."""
        run = self._row().cold.median
        return FirstCall(run.total, run.trace, run.lower, run.compile, run.first_run)

    def document(self, fmt: str) -> Document:
        from jitscope.report.views.bench import bench_document

        return bench_document(self.record)

    def title(self) -> str:
        return f"jitscope bench: {self.record.rows[0].target}" if self.record.rows else "jitscope bench"

    def summary(self) -> str:
        if not self.record.rows:
            return "bench: nothing measured"
        from jitscope.units import fmt_duration

        row = self.record.rows[0]
        return (f"{row.target}({row.call}): first call {fmt_duration(row.cold.median.total)}, cached "
                f"{fmt_duration(row.cached.blocked.median)} (median of {row.cached.blocked.rounds} rounds)")


# -- profile ---------------------------------------------------------------------------------------


class ProfileResult(Result["ProfileReport"]):
    """``jitscope.profile(...)``: device time of the cached calls, by source line."""

    command = "profile"

    def __init__(self, record: ProfileReport, *, failures_inline: bool = True) -> None:
        super().__init__(record)
        #: failed calls as a section of the report (the CLI's terminal view lists them on stderr instead)
        self.failures_inline = failures_inline

    @property
    def lines(self) -> tuple[LineRecord, ...]:
        """The (first) call's source lines, most device time first.

        Never empty without a word: a call that failed raises ``UsageError`` with its error, and a
        call whose device time reached no source line warns why.
        """
        row: ProfileRow = self._first_row("no profile")
        if not row.lines:
            import warnings

            # the row's notes say why (profiling/runner.py: no events captured, or no op with a source line)
            why = "; ".join(row.warnings) or "no device time was attributed to a source line"
            warnings.warn(f"jitscope.profile({row.target}): {why}", stacklevel=2)
        return row.lines

    def document(self, fmt: str) -> Document:
        from jitscope.report.views.profile import profile_document

        return profile_document(self.record, failures=self.failures_inline)

    def title(self) -> str:
        return f"jitscope profile: {self.record.rows[0].target}" if self.record.rows else "jitscope profile"

    def summary(self) -> str:
        if not self.record.rows:
            failure = self.record.failures[0].error if self.record.failures else "nothing was profiled"
            return f"profile: no rows: {failure}"
        row = self.record.rows[0]
        if not row.lines:
            return f"{row.target}: no device time on a source line"
        top = row.lines[0]
        return f"{row.target}: top line {_where(top.location)} ({top.share:.0%} of device time)"


def _where(location: Location | None) -> str:
    return f"{location.file}:{location.line}" if location is not None else "?"


# -- lint ------------------------------------------------------------------------------------------


class LintResult(Result["LintReport"]):
    """``jitscope.lint(paths)``: the findings, after suppressions, select/ignore and per-file ignores."""

    command = "lint"
    formats = (*REPORT_FORMATS, "sarif", "github")

    def __init__(self, record: LintReport, *, show_source: bool = True, statistics: bool = True,
                 fixed: int = 0) -> None:
        super().__init__(record)
        self.show_source = show_source  # a code frame under each finding (always in Markdown and HTML)
        self.statistics = statistics  # counts by rule (always in Markdown and HTML)
        self.fixed = fixed  # findings fixed before linting (``jitscope.lint(..., fix=True)``)

    @property
    def findings(self) -> tuple[Finding, ...]:
        return self.record.findings

    @property
    def failed(self) -> bool:
        """True when a finding reaches ``fail_on`` (what makes ``jitscope lint`` exit 1)."""
        return bool(self.record.failed)

    def document(self, fmt: str) -> Document:
        from jitscope.report.views.lint import lint_document

        text = fmt == "text"
        return lint_document(self.record, layout="flat" if text else "grouped",
                             show_source=self.show_source or not text, statistics=self.statistics or not text)

    def _render(self, fmt: str) -> str:
        if fmt in ("sarif", "github"):
            from jitscope.report.writers.github import render_github
            from jitscope.report.writers.sarif import render_sarif

            return render_sarif(self.record) if fmt == "sarif" else render_github(self.record)
        return super()._render(fmt)

    def to_json(self) -> str:
        from jitscope.report.writers.json import render_lint_json

        return render_lint_json(self.record).rstrip("\n")

    def summary(self) -> str:
        return f"lint: {len(self.findings)} findings in {self.record.files_checked} files"


# -- watch -----------------------------------------------------------------------------------------


class WatchResult(Result["RunRecord"]):
    """``jitscope.watch()``: every compile of the block, with the cause of each recompile."""

    command = "run"

    @property
    def events(self) -> tuple[CompileEvent, ...]:
        return self.record.events

    @property
    def functions(self) -> tuple[FunctionSummary, ...]:
        return self.record.functions

    @property
    def compiles(self) -> int:
        """XLA compiles of your jitted functions (not JAX's internal op-by-op ones)."""
        from jitscope.model.run import USER

        return sum(e.compiled for e in self.record.events if e.kind == USER)

    def count(self, function: str | None = None) -> int:
        """Compiles of the functions whose name (or qualified name's last part) is ``function``."""
        from jitscope.model.run import USER

        return sum(e.compiled for e in self.record.events if e.kind == USER and (
            function is None or function in (e.function, e.function.rsplit(".", 1)[-1])))

    def document(self, fmt: str) -> Document:
        from jitscope.report.views.run import run_document

        return run_document(self.record)

    def _render(self, fmt: str) -> str:
        from jitscope.report.writers.run_report import render_report

        return render_report(self.record, fmt)

    def text_document(self) -> Document | None:
        return None  # the console shows the run's summary (renderable), not its document

    def renderable(self) -> Any:
        from jitscope.report.writers.run_live import render_summary

        return render_summary(self.record)

    def title(self) -> str:
        return f"jitscope run: {self.record.program}"

    def summary(self) -> str:
        from jitscope.model.run import USER

        recompiles = sum(max(f.compiles - 1, 0) for f in self.record.functions if f.kind == USER)
        return f"{self.record.program}: {self.compiles} compiles, {recompiles} recompiles"
