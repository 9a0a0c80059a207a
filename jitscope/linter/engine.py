"""The lint engine: paths and configuration in, a :class:`LintReport` out.

This is the one place where suppression comments, ``select``/``ignore``,
``per-file-ignores`` and ``fail-on`` apply -- to static findings and to findings other
checkers hand in through ``extra_findings`` (the tracer-based dynamic lint), so every
finding goes through the same filters and the same renderers. One exception: a failed
trace (JS001) is reported unless ignored by name, even where ``select`` leaves it out,
so a ``--trace`` target that could not be traced never reads "All checks passed".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from jitscope.config import LintConfig
from jitscope.errors import BadValueError
from jitscope.linter.analysis.source import source_lines
from jitscope.linter.files import SourceFileRef, collect_files, matches, relative_to
from jitscope.linter.registry import RULES, enabled_codes, expand, find_rule, suggest
from jitscope.linter.rules.js001_trace_failed import TRACE_FAILED
from jitscope.linter.runner import FileResult, FileTask, lint_data, lint_files
from jitscope.linter.suppression import is_suppressed
from jitscope.model.lint import Finding, FindingSource, LintReport, RuleInfo, RuleStat, SkippedFile


def resolve_codes(select: Sequence[str] | None, ignore: Sequence[str]) -> frozenset[str]:
    """Enabled codes, or a UsageError naming the unknown selector (with a close match)."""
    try:
        return enabled_codes(select, ignore)
    except KeyError as err:
        raise unknown_rule(str(err.args[0])) from None


def unknown_rule(bad: str, option: str | None = None) -> BadValueError:
    """The one line for a selector that names no rule (``option``: where it was given), with the closest one."""
    close = suggest(bad)
    return BadValueError(f"{option + ': ' if option else ''}unknown rule '{bad}'",
                         hint=f"did you mean {close}?" if close else "see `jitscope rule`")


def lint_paths(
    paths: Sequence[str | Path],
    config: LintConfig | None = None,
    *,
    root: Path | None = None,
    extra_findings: Iterable[Finding] = (),
    jobs: int | None = None,
) -> LintReport:
    """Lint the Python files under ``paths``.

    ``extra_findings`` (e.g. from ``jitscope lint --trace``) are filtered and reported
    exactly like static ones: suppression comments on their lines, select/ignore,
    per-file-ignores and fail-on all apply.
    """
    config = config or LintConfig()
    root = (root or Path.cwd()).resolve()
    codes = resolve_codes(config.select, config.ignore)
    collected = collect_files(paths or ["."], root, config.exclude)
    results = lint_files(collected.files, codes, jobs)
    return build_report(results, collected.files, config, root, codes, extra_findings, collected.skipped)


def make_finding(
    code: str,
    message: str,
    file: str,
    line: int,
    column: int = 1,
    *,
    end_line: int | None = None,
    end_column: int | None = None,
    function: str = "<module>",
    suggestion: str = "",
    source: FindingSource = "dynamic",
) -> Finding:
    """A finding for rule ``code`` with the rule's registered name and severity.

    For checkers outside the static engine (the tracer-based ``--trace`` lint): build
    findings with this and pass them to ``lint_paths(..., extra_findings=...)``.
    Columns are 1-based; ``end_column`` is exclusive.
    """
    rule = find_rule(code)
    if rule is None:
        raise ValueError(f"unknown rule code {code!r}")
    return Finding(
        code=rule.code,
        name=rule.name,
        message=message,
        severity=rule.severity,
        file=file,
        line=line,
        column=column,
        end_line=end_line if end_line is not None else line,
        end_column=end_column if end_column is not None else column + 1,
        function=function,
        suggestion=suggestion,
        source=source,
    )


def lint_source(source: str, path: str = "<string>", select: Sequence[str] | None = None) -> list[Finding]:
    """Lint one module given as text (no files, no pool): the findings after suppression."""
    codes = resolve_codes(select, ())
    ref = SourceFileRef(path, path, Path(path).stem or "module", False, len(source))
    return lint_data(FileTask(ref, codes), source.encode("utf-8")).findings


def build_report(
    results: Sequence[FileResult],
    refs: Sequence[SourceFileRef],
    config: LintConfig,
    root: Path,
    codes: frozenset[str],
    extra_findings: Iterable[Finding] = (),
    skipped: Sequence[SkippedFile] = (),
) -> LintReport:
    """Merge per-file results and extra findings into one report, applying every filter."""
    by_display = {ref.display: ref for ref in refs}
    suppressed = sum(r.suppressed for r in results)
    findings: list[Finding] = [f for r in results for f in r.findings]
    # A failed trace is always worth a finding: JS001 unless ignored by name or prefix.
    extra_codes = codes | ({TRACE_FAILED} - expand(config.ignore))
    extra_kept, extra_suppressed = _filter_extra(_unexplained_failures(extra_findings, findings, codes), extra_codes)
    # A dynamic finding that confirms a static one at the same place adds nothing but noise.
    static_places = {(f.code, f.file, f.line) for f in findings}
    findings.extend(f for f in extra_kept if (f.code, f.file, f.line) not in static_places)
    suppressed += extra_suppressed
    ignores = [(pattern, expand(codes_)) for pattern, codes_ in config.per_file_ignores]
    if ignores:
        findings = [f for f in findings if not _file_ignored(f, by_display, root, ignores)]
    findings.sort(key=Finding.sort_key)
    counts = Counter(f.code for f in findings)
    stats = []
    used_rules: list[RuleInfo] = []
    for rule in RULES:
        if counts.get(rule.code):
            stats.append(RuleStat(rule.code, rule.name, rule.severity, counts[rule.code]))
            used_rules.append(rule.info())
    # Files that turned out not to be regular files when opened (replaced since the walk).
    late = [SkippedFile(r.display, r.skipped) for r in results if r.skipped]
    return LintReport(
        findings=tuple(findings),
        files_checked=len(results) - len(late),
        lines_checked=sum(r.lines for r in results),
        statistics=tuple(stats),
        rules=tuple(used_rules),
        fail_on=config.fail_on,
        suppressed=suppressed,
        skipped=tuple(sorted([*skipped, *late], key=lambda s: s.file)),
    )


def _unexplained_failures(
    extra: Iterable[Finding], static: Sequence[Finding], codes: frozenset[str]
) -> list[Finding]:
    """``extra`` without the JS001 findings that an enabled rule explains at the same line.

    JS001 reports every failed trace; JS201, JS202... report the failures they explain (suppressed
    or not, the explanation is the user's to keep). Where one of those is enabled at that line, JS001
    adds nothing; where it is not (``select`` left it out), JS001 is what says that the trace failed.
    """
    extra = list(extra)
    explaining = {rule.code for rule in RULES if rule.failure_kinds} & codes
    explained = {(f.file, f.line) for f in [*static, *extra] if f.code in explaining}
    return [f for f in extra if f.code != TRACE_FAILED or (f.file, f.line) not in explained]


def _filter_extra(findings: Iterable[Finding], codes: frozenset[str]) -> tuple[list[Finding], int]:
    kept: list[Finding] = []
    suppressed = 0
    lines_cache: dict[str, list[str]] = {}
    for finding in findings:
        if finding.code not in codes and find_rule(finding.code) is not None:
            continue
        lines = lines_cache.get(finding.file)
        if lines is None:
            lines = source_lines(finding.file)
            lines_cache[finding.file] = lines
        if is_suppressed(finding, lines):
            suppressed += 1
        else:
            kept.append(finding)
    return kept, suppressed


def _file_ignored(
    finding: Finding, refs: dict[str, SourceFileRef], root: Path, ignores: list[tuple[str, frozenset[str]]]
) -> bool:
    ref = refs.get(finding.file)
    path = Path(ref.path) if ref is not None else Path(finding.file).resolve()
    rel = relative_to(path, root) or path.as_posix().lstrip("/")
    return any(finding.code in codes and matches(rel, pattern) for pattern, codes in ignores)
