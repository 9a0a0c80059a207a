"""JS000: files that cannot be read or parsed become findings, never crashes."""

from __future__ import annotations

from pathlib import Path

import pytest

from jitscope.config import LintConfig
from jitscope.linter import lint_paths, lint_source
from jitscope.linter.analysis import source as source_mod


def _lint_dir(path: Path) -> list[tuple[str, str]]:
    report = lint_paths([path], LintConfig(), root=path, jobs=1)
    return [(Path(f.file).name, f.code) for f in report.findings]


def test_syntax_error_points_at_the_error() -> None:
    (finding,) = lint_source("x = 1\ndef f(:\n    pass\n", "bad.py")
    assert (finding.code, finding.line, finding.column, finding.severity) == ("JS000", 2, 7, "error")
    assert "syntax error" in finding.message


def test_bad_encoding(tmp_path: Path) -> None:
    (tmp_path / "latin.py").write_bytes(b"x = '\xff\xfe caf\xe9'\n")
    (tmp_path / "declared.py").write_bytes(b"# -*- coding: latin-1 -*-\nx = 'caf\xe9'\n")
    (tmp_path / "unknown.py").write_bytes(b"# coding: no-such-codec\nx = 1\n")
    found = sorted(_lint_dir(tmp_path))
    assert found == [("latin.py", "JS000"), ("unknown.py", "JS000")]


def test_null_bytes_and_deep_nesting(tmp_path: Path) -> None:
    (tmp_path / "nul.py").write_bytes(b"x = 1\x00\n")
    (tmp_path / "deep.py").write_text("x = " + "(" * 1000 + "1" + ")" * 1000 + "\n")
    assert sorted(_lint_dir(tmp_path)) == [("deep.py", "JS000"), ("nul.py", "JS000")]


def test_huge_file_is_skipped_with_a_finding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(source_mod, "MAX_FILE_BYTES", 100)
    (tmp_path / "big.py").write_text("x = 1\n" * 50)
    report = lint_paths([tmp_path], LintConfig(), root=tmp_path, jobs=1)
    (finding,) = report.findings
    assert finding.code == "JS000" and "too large" in finding.message
    assert finding.severity == "warning"  # only jitscope skipped it: the file itself may be fine


def test_one_bad_file_does_not_hide_the_others(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text("def (\n")
    (tmp_path / "good.py").write_text("import jax\n@jax.jit\ndef f(x):\n    print(x)\n    return x\n")
    assert sorted(_lint_dir(tmp_path)) == [("bad.py", "JS000"), ("good.py", "JS101")]


@pytest.mark.parametrize("expression",
                         ["-" * 100_000 + "x", "x" + ".a" * 100_000, " + ".join(["x"] * 100_000)])
def test_nesting_100k_deep_is_a_warning_naming_the_nesting(expression: str) -> None:
    """Python's parser gives up (RecursionError, or a MemoryError with no message): one JS000 warning
    that says why, never a traceback."""
    (finding,) = lint_source(f"import jax\n\n@jax.jit\ndef f(x):\n    return {expression}\n", "deep.py")
    assert (finding.code, finding.severity) == ("JS000", "warning")
    assert "nested too deeply for Python's parser" in finding.message


def test_nesting_the_parser_takes_but_the_analysis_cannot_is_a_warning() -> None:
    (finding,) = lint_source("import jax\n\n@jax.jit\ndef f(x):\n    return " + "-" * 2500 + "x\n", "deep.py")
    assert (finding.code, finding.severity, finding.message) == ("JS000", "warning",
                                                                 "file is too deeply nested to analyse")
