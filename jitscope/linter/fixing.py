"""``jitscope lint --fix`` and ``--diff``: apply the findings' safe fixes to the files, or show them.

One lint of the whole tree (with cross-module analysis) finds the fixes; each file that has some is
then fixed in memory, round after round: a fix that overlapped one already applied, or one that only
appears once another is in (a second update of the same array), is found by linting the new text
again, until a round applies nothing (at most ``MAX_ROUNDS``). Later rounds see one module at a time,
so they only ever find fewer fixes, never other ones. Files are decoded as the interpreter decodes them
and written back in their own encoding (a BOM kept) and newline style, atomically
(:func:`jitscope.outputs.write_atomic`); with ``write=False`` (``--diff``) nothing is written.

The same select/ignore, per-file-ignores and suppression comments apply as to the report: a
suppressed finding is never fixed.
"""

from __future__ import annotations

import difflib
import re
import tokenize
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from jitscope.config import LintConfig
from jitscope.linter.engine import build_report, resolve_codes
from jitscope.linter.files import SourceFileRef, collect_files
from jitscope.linter.fixes import apply_fixes
from jitscope.linter.runner import FileTask, lint_data, lint_files
from jitscope.model.lint import Finding, Fix

#: Rounds of fixing one file (each applies every fix that does not overlap another).
MAX_ROUNDS = 10

_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


@dataclass(frozen=True, slots=True)
class FileFix:
    """One file's text before and after its fixes, and how many were applied."""

    file: str
    path: str
    before: str
    after: str
    applied: int
    encoding: str

    def diff(self) -> str:
        """The change as a unified diff (``--- file`` / ``+++ file``)."""
        return "".join(difflib.unified_diff(_LINES.findall(self.before), _LINES.findall(self.after),
                                            fromfile=self.file, tofile=self.file))


@dataclass(frozen=True, slots=True)
class FixOutcome:
    """What ``fix_paths`` did (or, without writing, would do)."""

    files: tuple[FileFix, ...]
    written: bool

    @property
    def fixed(self) -> int:
        return sum(f.applied for f in self.files)

    def diff(self) -> str:
        """Every changed file's unified diff, one after another."""
        return "".join(f.diff() for f in self.files)


def fix_paths(
    paths: Sequence[str | Path],
    config: LintConfig | None = None,
    *,
    root: Path | None = None,
    jobs: int | None = None,
    write: bool = True,
) -> FixOutcome:
    """Apply the safe fixes of the static findings under ``paths`` (or, with ``write=False``, only work
    them out): the files' new text and how many fixes each got."""
    from jitscope.outputs import write_atomic

    config = config or LintConfig()
    root = (root or Path.cwd()).resolve()
    codes = resolve_codes(config.select, config.ignore)
    collected = collect_files(paths or ["."], root, config.exclude)
    results = lint_files(collected.files, codes, jobs)
    report = build_report(results, collected.files, config, root, codes)
    fixes: dict[str, list[Fix]] = {}
    for finding in report.findings:
        if finding.fix is not None:
            fixes.setdefault(finding.file, []).append(finding.fix)
    refs = {ref.display: ref for ref in collected.files}
    done: list[FileFix] = []
    for display, first in fixes.items():
        ref = refs.get(display)
        fixed = _fix_file(ref, first, config, root, codes) if ref is not None else None
        if fixed is not None and fixed.applied:
            if write:
                write_atomic(fixed.path, fixed.after.encode(fixed.encoding))
            done.append(fixed)
    return FixOutcome(tuple(done), write)


def _fix_file(ref: SourceFileRef, first: list[Fix], config: LintConfig, root: Path,
              codes: frozenset[str]) -> FileFix | None:
    try:
        data = Path(ref.path).read_bytes()
        encoding = _encoding(data)
        before = data.decode(encoding)
    except (OSError, SyntaxError, UnicodeDecodeError, LookupError):
        return None
    text, applied, fixes = before, 0, first
    for _ in range(MAX_ROUNDS):
        try:
            text, count = apply_fixes(text, fixes)
        except ValueError:  # the file changed since it was linted: leave it alone
            return None
        applied += count
        if not count:
            break
        fixes = [f.fix for f in _static_findings(ref, text, encoding, config, root, codes) if f.fix is not None]
        if not fixes:
            break
    return FileFix(ref.display, ref.path, before, text, applied, encoding)


def _static_findings(ref: SourceFileRef, text: str, encoding: str, config: LintConfig, root: Path,
                     codes: frozenset[str]) -> tuple[Finding, ...]:
    """The findings of one file's new text, filtered as the report filters them."""
    result = lint_data(FileTask(ref, codes), text.encode(encoding))
    return build_report([result], [ref], config, root, codes).findings


def _encoding(data: bytes) -> str:
    """The file's encoding as the interpreter reads it (``utf-8-sig`` keeps a BOM when writing back)."""
    lines = iter(data.splitlines(keepends=True)[:2])
    encoding, _ = tokenize.detect_encoding(lambda: next(lines, b""))
    return encoding
