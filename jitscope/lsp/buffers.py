"""Lint the text of an editor buffer as ``jitscope lint`` would lint that file.

The buffer's own text is linted (unsaved edits included), under the ``[tool.jitscope]`` table of the
nearest pyproject.toml above the file (:func:`jitscope.config.load_config`, read again on every lint so
an edited configuration applies at the next change or save): ``select``/``ignore``, ``exclude``,
``per-file-ignores`` and suppression comments all apply, through the same engine functions as the CLI.

The modules the buffer imports (in its own tree) are read for what ``jitscope lint`` of the tree would
tell this file about them (:mod:`.neighbours`: static fields, jit factories, traced base-class methods).
One difference remains: a finding that only a *caller* in another module causes (a helper in
``utils.py`` that only ``train.py`` jits) shows when the tree is linted, not in the editor.
"""

from __future__ import annotations

import io
import tokenize
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from jitscope.config import load_config
from jitscope.errors import JitscopeError
from jitscope.linter.engine import build_report, resolve_codes
from jitscope.linter.files import DEFAULT_EXCLUDED_DIRS, SourceFileRef, collect_files, excluded
from jitscope.linter.fixes import apply_fixes
from jitscope.linter.fixing import MAX_ROUNDS
from jitscope.linter.runner import FileTask, lint_data
from jitscope.lsp.edits import lines_ending_in_strings, split_lines
from jitscope.lsp.neighbours import Neighbours
from jitscope.model.lint import Finding

#: Folders whose files are never linted when opened in the editor: installed packages, virtual
#: environments, caches (``jitscope lint`` does not walk into them either).
_SKIPPED_DIRS = DEFAULT_EXCLUDED_DIRS | {"site-packages", "dist-packages"}


@dataclass(frozen=True, slots=True)
class BufferLint:
    """What linting one buffer gave: its findings, or why it was not linted."""

    findings: tuple[Finding, ...] = ()
    #: one line when the configuration could not be read (then nothing is linted, as the CLI exits 2)
    error: str | None = None
    #: why the file was not linted although it is Python (excluded by the configuration, an installed package)
    skipped: str | None = None


@dataclass(slots=True)
class Linted:
    """One buffer's last lint, as the server keeps it: the text it read (and its version), what it found."""

    version: int | None
    text: str
    findings: tuple[Finding, ...]
    #: the file (None: untitled) and where its configuration is looked for, to lint fixed text again
    path: Path | None = None
    start: Path | None = None
    neighbours: Neighbours | None = None
    lines: list[str] = field(init=False)
    _strings: frozenset[int] | None = field(default=None, init=False)
    _parsed: bool = field(default=False, init=False)
    _fixed: tuple[str, int] | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.lines = split_lines(self.text)

    def lines_in_strings(self) -> frozenset[int] | None:
        """:func:`~jitscope.lsp.edits.lines_ending_in_strings` of the text, parsed on first use only: an
        editor asks for code actions on every cursor move."""
        if not self._parsed:
            self._strings, self._parsed = lines_ending_in_strings(self.text), True
        return self._strings

    def fixed(self) -> tuple[str, int]:
        """The text with every safe fix applied and how many were (:func:`fix_buffer`), worked out once."""
        if self._fixed is None:
            self._fixed = fix_buffer(self.path, self.text, self.findings, self.start, self.neighbours)
        return self._fixed


def lint_buffer(
    path: Path | None, text: str, start: Path | None = None, neighbours: Neighbours | None = None
) -> BufferLint:
    """Lint ``text``, the contents of ``path`` in the editor (None for an unsaved, untitled buffer).

    ``start`` is where the configuration is looked for when ``path`` is None (the workspace folder).
    With ``neighbours``, the buffer also gets what the modules it imports know, as in a lint of the tree
    (:mod:`.neighbours`).
    """
    where = path.parent if path is not None else (start or Path.cwd())
    try:
        config = load_config(where)
        codes = resolve_codes(config.lint.select, config.lint.ignore)
    except JitscopeError as err:
        return BufferLint(error=err.one_line())
    ref = _file_ref(path, config.root, config.lint.exclude, len(text))
    if isinstance(ref, str):
        return BufferLint(skipped=ref)
    data = _source_bytes(text)
    result = lint_data(FileTask(ref, codes), data)
    if neighbours is not None and path is not None:
        context = neighbours.context(ref, result.facts, codes, config.root, config.lint.exclude)
        if context:
            result = lint_data(FileTask(ref, codes, context.requests, context.imported), data)
    report = build_report([result], [ref], config.lint, config.root, codes)
    return BufferLint(report.findings)


def _file_ref(path: Path | None, root: Path, exclude: tuple[str, ...], size: int) -> SourceFileRef | str:
    """How the engine names the file (its dotted module name matters for relative imports), or why it is
    skipped."""
    if path is None:
        return SourceFileRef("<untitled>", "<untitled>", "untitled", False, size)
    path = path.resolve()
    if _SKIPPED_DIRS.intersection(path.parts[:-1]):
        return "in an installed package, a virtual environment or a cache folder"
    if excluded(path, root, exclude):
        return f"excluded by {root / 'pyproject.toml'}"
    if path.is_file():  # the engine's own naming (packages from the __init__.py files above it)
        found = collect_files([path], root, exclude).files
        if found:
            return found[0]
    return SourceFileRef(str(path), str(path), path.stem, path.name == "__init__.py", size)


def _source_bytes(text: str) -> bytes:
    """The buffer as the file's bytes: in the encoding its coding cookie names (UTF-8 without one)."""
    data = text.encode("utf-8", errors="surrogatepass")
    if "coding" not in text[:400]:
        return data
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data if encoding in ("utf-8", "utf-8-sig") else text.encode(encoding)
    except (SyntaxError, LookupError, UnicodeEncodeError):  # the engine reports the bad cookie (JS000)
        return data


def fix_buffer(
    path: Path | None, text: str, findings: Sequence[Finding], start: Path | None = None,
    neighbours: Neighbours | None = None,
) -> tuple[str, int]:
    """``text`` with the safe fixes of ``findings`` applied, then those the fixed text shows, round by round
    as ``jitscope lint --fix`` fixes a file (a fix that overlapped another is taken in the next round);
    and how many were applied."""
    fixes = [f.fix for f in findings if f.fix is not None]
    applied = 0
    for _ in range(MAX_ROUNDS):
        if not fixes:
            break
        try:
            text, count = apply_fixes(text, fixes)
        except ValueError:  # edits that no longer fit the text: keep what was applied
            break
        applied += count
        if not count:
            break
        fixes = [f.fix for f in lint_buffer(path, text, start, neighbours).findings if f.fix is not None]
    return text, applied
