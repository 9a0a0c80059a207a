"""Hostile inputs for `jitscope lint` (issue 25): nothing lost, nothing hangs.

Each case is the command a user runs, in a subprocess bounded by a timeout (a hang fails the test
instead of stalling the suite) and, where reading could run away, by an address-space limit:
FIFOs and links to /dev/zero, line endings and encodings as Python reads them, SARIF file names
that need percent-encoding (validated against the official SARIF 2.1.0 schema), `--trace` targets
that raise or call sys.exit, and a config file that is not UTF-8.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from jitscope.config import LintConfig
from jitscope.linter import lint_paths
from jitscope.linter.analysis import source as source_mod
from jitscope.linter.engine import make_finding
from tests.conftest import ROOT, STYLE_ENV
from tests.lint.sarif_schema import sarif_errors

#: Static lint never imports jax: seconds. A hang (a FIFO read) would wait forever: fail well before.
STATIC_TIMEOUT_S = 60
#: --trace imports jax and traces the target.
TRACE_TIMEOUT_S = 240
#: Enough for static lint; reading /dev/zero into memory would pass it within a second.
STATIC_ADDRESS_SPACE = 2 << 30

TWO_FINDINGS = (
    "import time\n"
    "import jax\n"
    "@jax.jit\n"
    "def step(x):\n"
    "    print(x)\n"
    "    return x * time.time()\n"
)


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (STATIC_ADDRESS_SPACE, STATIC_ADDRESS_SPACE))


def lint_cli(*args: str, cwd: Path, trace: bool = False) -> subprocess.CompletedProcess[str]:
    """``python -m jitscope lint ARGS`` as a user runs it, bounded in time (and memory, without --trace)."""
    env = {k: v for k, v in os.environ.items() if k not in STYLE_ENV}
    env.update({"NO_COLOR": "1", "COLUMNS": "100", "PYTHONPATH": str(ROOT)})
    return subprocess.run(
        [sys.executable, "-m", "jitscope", "lint", *args], cwd=cwd, env=env, capture_output=True, text=True,
        check=False, timeout=TRACE_TIMEOUT_S if trace else STATIC_TIMEOUT_S,
        preexec_fn=None if trace else _limit_memory,
    )


def error_lines(stderr: str) -> list[str]:
    assert "Traceback" not in stderr, stderr
    return [line for line in stderr.splitlines() if line.startswith("error:")]


def _places(report_findings: object) -> list[tuple[int, int, str]]:
    return sorted((f.line, f.column, f.code) for f in report_findings)  # type: ignore[attr-defined]


# -- only regular files are read --------------------------------------------------------------------


@pytest.fixture
def special_files(tmp_path: Path) -> Path:
    """A folder with a FIFO and a link to /dev/zero named like sources, next to a real finding."""
    (tmp_path / "real.py").write_text(TWO_FINDINGS, encoding="utf-8")
    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "zero.py").symlink_to("/dev/zero")
    return tmp_path


def test_fifo_and_dev_zero_are_skipped_with_a_note(special_files: Path) -> None:
    result = lint_cli(".", "--no-show-source", cwd=special_files)
    assert result.returncode == 1, result.stderr  # the real file's findings
    assert "real.py:5:5: JS101" in result.stdout and "real.py:6:16: JS106" in result.stdout
    assert "in 1 file" in result.stdout
    notes = [line for line in result.stderr.splitlines() if line.startswith("note:")]
    assert notes == [
        "note: skipped pipe.py: a FIFO, not a regular file",
        "note: skipped zero.py: a symbolic link to a character device (/dev/zero), not a regular file",
    ]
    assert error_lines(result.stderr) == []


def test_fifo_given_by_name_is_skipped(special_files: Path) -> None:
    result = lint_cli("pipe.py", "zero.py", cwd=special_files)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("All checks passed: 0 files")
    assert "note: skipped pipe.py: a FIFO" in result.stderr and "note: skipped zero.py:" in result.stderr


def test_skipped_files_are_in_json_and_sarif(special_files: Path) -> None:
    as_json = lint_cli(".", "-f", "json", cwd=special_files)
    assert as_json.returncode == 1
    data = json.loads(as_json.stdout)
    assert data["summary"]["skipped"] == 2 and data["summary"]["files_checked"] == 1
    assert [s["file"] for s in data["skipped"]] == ["pipe.py", "zero.py"]
    sarif = lint_cli(".", "-f", "sarif", cwd=special_files)
    document = json.loads(sarif.stdout)
    assert sarif_errors(document) == []
    (invocation,) = document["runs"][0]["invocations"]
    notes = invocation["toolExecutionNotifications"]
    assert [n["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for n in notes] == ["pipe.py", "zero.py"]
    assert all(n["level"] == "note" for n in notes)


def test_file_over_the_size_cap_is_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(source_mod, "MAX_FILE_BYTES", 1_000)
    (tmp_path / "big.py").write_text("x = 1\n" * 1_000, encoding="utf-8")
    report = lint_paths([tmp_path], LintConfig(), root=tmp_path, jobs=1)
    (finding,) = report.findings
    assert finding.code == "JS000" and "too large to lint (6,000 bytes > 1,000)" in finding.message
    assert Path(finding.file).name == "big.py"


def test_a_file_that_becomes_a_fifo_after_the_walk_is_never_opened_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "late.py")
    data = source_mod.read_source_bytes(str(tmp_path / "late.py"), "late.py")  # returns at once, not blocks
    assert isinstance(data, source_mod.NotRegular) and data.reason == "a FIFO, not a regular file"


# -- read as Python reads it ------------------------------------------------------------------------


@pytest.mark.parametrize("newline", ["\r", "\r\n"])
def test_line_endings_are_universal(tmp_path: Path, newline: str) -> None:
    (tmp_path / "lf.py").write_bytes(TWO_FINDINGS.encode())
    (tmp_path / "other.py").write_bytes(TWO_FINDINGS.replace("\n", newline).encode())
    lf = lint_paths([tmp_path / "lf.py"], root=tmp_path, jobs=1)
    other = lint_paths([tmp_path / "other.py"], root=tmp_path, jobs=1)
    assert _places(lf.findings) == [(5, 5, "JS101"), (6, 16, "JS106")]
    assert _places(other.findings) == _places(lf.findings)
    assert other.lines_checked == lf.lines_checked == 6


def test_cr_only_file_from_the_command_line(tmp_path: Path) -> None:
    (tmp_path / "cr.py").write_bytes(TWO_FINDINGS.replace("\n", "\r").encode())
    result = lint_cli("cr.py", "-f", "json", cwd=tmp_path)
    assert result.returncode == 1
    data = json.loads(result.stdout)
    assert [(f["line"], f["code"]) for f in data["findings"]] == [(5, "JS101"), (6, "JS106")]


def test_encoding_cookie_latin1(tmp_path: Path) -> None:
    text = TWO_FINDINGS.replace("    print(x)\n", "    s = 'caf\u00e9'; print(x)\n")
    (tmp_path / "utf8.py").write_bytes(text.encode("utf-8"))
    (tmp_path / "latin.py").write_bytes(("# -*- coding: latin-1 -*-\n" + text).encode("latin-1"))
    utf8 = lint_paths([tmp_path / "utf8.py"], root=tmp_path, jobs=1)
    latin = lint_paths([tmp_path / "latin.py"], root=tmp_path, jobs=1)
    assert _places(utf8.findings) == [(5, 17, "JS101"), (6, 16, "JS106")]  # character columns, not bytes
    assert [(line - 1, col, code) for line, col, code in _places(latin.findings)] == _places(utf8.findings)


def test_cookie_on_the_second_line_of_a_cr_only_file(tmp_path: Path) -> None:
    text = "#!/usr/bin/env python\r# coding: latin-1\rimport jax\r@jax.jit\rdef f(x):\r    print('\u00e9', x)\r"
    (tmp_path / "cr_latin.py").write_bytes(text.encode("latin-1"))
    report = lint_paths([tmp_path], root=tmp_path, jobs=1)
    assert _places(report.findings) == [(6, 5, "JS101")]


def test_utf8_bom(tmp_path: Path) -> None:
    (tmp_path / "plain.py").write_bytes(TWO_FINDINGS.encode())
    (tmp_path / "bom.py").write_bytes(b"\xef\xbb\xbf" + TWO_FINDINGS.encode())
    plain = lint_paths([tmp_path / "plain.py"], root=tmp_path, jobs=1)
    bom = lint_paths([tmp_path / "bom.py"], root=tmp_path, jobs=1)
    assert _places(bom.findings) == _places(plain.findings) == [(5, 5, "JS101"), (6, 16, "JS106")]


def test_bom_with_a_conflicting_cookie_is_js000(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_bytes(b"\xef\xbb\xbf# coding: latin-1\nx = 1\n")
    (finding,) = lint_paths([tmp_path], root=tmp_path, jobs=1).findings
    assert finding.code == "JS000" and "cannot be decoded" in finding.message


def test_form_feed_does_not_shift_suppression_comments(tmp_path: Path) -> None:
    # str.splitlines() would split at the form feed too, putting every later comment one line off.
    source = "import jax\n\x0c\n@jax.jit\ndef f(x):\n    print(x)  # jitscope: ignore[JS101]\n    return x\n"
    (tmp_path / "ff.py").write_text(source, encoding="utf-8")
    report = lint_paths([tmp_path], root=tmp_path, jobs=1)
    assert report.findings == () and report.suppressed == 1


# -- SARIF URIs --------------------------------------------------------------------------------------

NAMES = ["a b#c.py", "p%25q.py", "x:y.py", "caf\u00e9 [1].py", "q?.py"]


def test_sarif_uris_are_percent_encoded_and_schema_valid(tmp_path: Path) -> None:
    for name in NAMES:
        (tmp_path / name).write_text("import jax\n@jax.jit\ndef f(x):\n    print(x)\n    return x\n")
    result = lint_cli(".", "-f", "sarif", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    document = json.loads(result.stdout)
    assert sarif_errors(document) == []
    uris = sorted(
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in document["runs"][0]["results"]
    )
    assert uris == sorted(["a%20b%23c.py", "p%2525q.py", "x%3Ay.py", "caf%C3%A9%20%5B1%5D.py", "q%3F.py"])
    for uri in uris:
        parts = urlsplit(uri)
        assert (parts.scheme, parts.netloc, parts.query, parts.fragment) == ("", "", "", "")
    assert sorted(unquote(uri) for uri in uris) == sorted(NAMES)


def test_sarif_carries_the_safe_fix_and_stays_schema_valid(tmp_path: Path) -> None:
    """A finding --fix can rewrite carries that rewrite as a SARIF fix; applying its replacements
    gives what `jitscope lint --fix` writes."""
    source = "import jax\n@jax.jit\ndef f(x):\n    print(x)\n    return x\n"
    (tmp_path / "m.py").write_text(source)
    document = json.loads(lint_cli("m.py", "-f", "sarif", cwd=tmp_path).stdout)
    assert sarif_errors(document) == []
    (fix,) = document["runs"][0]["results"][0]["fixes"]
    assert "jax.debug.print" in fix["description"]["text"]
    (change,) = fix["artifactChanges"]
    assert change["artifactLocation"]["uri"] == "m.py"
    lines = source.splitlines(keepends=True)
    for replacement in sorted(change["replacements"], key=lambda r: (r["deletedRegion"]["startLine"],
                                                                     r["deletedRegion"]["startColumn"]), reverse=True):
        region = replacement["deletedRegion"]
        text = "".join(lines)
        offsets = [0]
        for line in lines:
            offsets.append(offsets[-1] + len(line))
        start = offsets[region["startLine"] - 1] + region["startColumn"] - 1
        end = offsets[region["endLine"] - 1] + region["endColumn"] - 1
        text = text[:start] + replacement["insertedContent"]["text"] + text[end:]
        lines = text.splitlines(keepends=True)
    assert lint_cli("m.py", "--fix", cwd=tmp_path).returncode == 0
    assert "".join(lines) == (tmp_path / "m.py").read_text()


def test_sarif_absolute_uri_outside_the_working_folder(tmp_path: Path) -> None:
    project = tmp_path / "my project#1"
    project.mkdir()
    (project / "m.py").write_text("import jax\n@jax.jit\ndef f(x):\n    print(x)\n    return x\n")
    (tmp_path / "elsewhere").mkdir()
    result = lint_cli(str(project), "-f", "sarif", cwd=tmp_path / "elsewhere")
    document = json.loads(result.stdout)
    assert sarif_errors(document) == []
    location = document["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert "uriBaseId" not in location
    assert location["uri"].endswith("/my%20project%231/m.py") and location["uri"].startswith("file:///")
    assert unquote(urlsplit(location["uri"]).path) == str(project / "m.py")


def test_schema_check_catches_an_unencoded_uri() -> None:
    """The validator itself: a raw file name with a space is not a URI reference."""
    document = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [
        {"message": {"text": "m"}, "locations": [{"physicalLocation": {"artifactLocation": {"uri": "a b.py"}}}]}
    ]}]}
    assert any("uri-reference" in error for error in sarif_errors(document))


# -- lint --trace: failures are findings -------------------------------------------------------------

FAULTS = """\
import sys

import jax


def raises(x):
    raise ValueError("boom")


def exits(x):
    sys.exit(7)


def eight_fails(x):
    if x.shape[0] == 8:
        raise ValueError("no eights")
    return x * 2
"""


@pytest.fixture
def faults(tmp_path: Path) -> Path:
    (tmp_path / "good.py").write_text("x = 1\n")
    (tmp_path / "faults.py").write_text(FAULTS)
    return tmp_path


def test_trace_of_a_function_that_raises_fails_the_run(faults: Path) -> None:
    result = lint_cli("good.py", "--trace", "faults.py:raises", "-s", "f32[4]", "--select", "JS1",
                      "--no-show-source", cwd=faults, trace=True)
    assert result.returncode == 1, result.stderr
    assert "All checks passed" not in result.stdout
    assert "faults.py:7:5: JS001 [error] tracing raises failed: ValueError: boom" in result.stdout
    assert error_lines(result.stderr) == []


def test_sys_exit_in_a_traced_function_is_the_users_failure(faults: Path) -> None:
    result = lint_cli("good.py", "--trace", "faults.py:exits", "-s", "f32[4]", "-f", "json", cwd=faults, trace=True)
    assert result.returncode == 1, result.stderr
    assert error_lines(result.stderr) == []
    data = json.loads(result.stdout)  # still one whole document
    assert data["summary"]["failed"] is True
    (finding,) = data["findings"]
    assert (finding["code"], finding["file"], finding["line"], finding["function"]) == (
        "JS001", "faults.py", 11, "exits")
    assert finding["message"] == "exits exited while JAX traced it: the code called sys.exit(7)"
    assert finding["severity"] == "error" and finding["source"] == "dynamic"


def test_a_later_call_of_a_sequence_that_fails_is_reported(faults: Path) -> None:
    result = lint_cli("good.py", "--trace", "faults.py:eight_fails", "-s", "f32[4]", "-s", "f32[8]",
                      "--no-show-source", cwd=faults, trace=True)
    assert result.returncode == 1, result.stderr
    assert ("faults.py:16:9: JS001 [error] tracing eight_fails failed in call 2 of 2 (f32[8]): "
            "ValueError: no eights") in result.stdout


def _trace_report(tmp_path: Path, extra: list[object], **config: object) -> list[str]:
    (tmp_path / "m.py").write_text("import jax\n\ndef f(x):\n    if x > 0:\n        return x\n    return -x\n")
    report = lint_paths([tmp_path / "m.py"], LintConfig(**config), root=tmp_path, jobs=1,  # type: ignore[arg-type]
                        extra_findings=extra)  # type: ignore[arg-type]
    return [f.code for f in report.findings]


def test_js001_gives_way_to_the_rule_that_explains_the_failure(tmp_path: Path) -> None:
    file = str(tmp_path / "m.py")
    failure = [make_finding("JS201", "tracing f failed: TracerBoolConversionError", file, 4),
               make_finding("JS001", "tracing f failed: TracerBoolConversionError", file, 4)]
    assert _trace_report(tmp_path, failure) == ["JS201"]
    # JS201 not selected: the failure is still reported, as JS001, and fails the run.
    assert _trace_report(tmp_path, failure, select=("JS1",)) == ["JS001"]
    # Only ignoring JS001 itself drops it.
    assert _trace_report(tmp_path, failure, select=("JS1",), ignore=("JS001",)) == []


def test_js001_is_suppressed_by_a_comment(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("def f(x):\n    raise ValueError  # jitscope: ignore[JS001]\n")
    failure = make_finding("JS001", "tracing f failed: ValueError", str(tmp_path / "m.py"), 2)
    report = lint_paths([tmp_path / "m.py"], root=tmp_path, jobs=1, extra_findings=[failure])
    assert report.findings == () and report.suppressed == 1


# -- configuration -----------------------------------------------------------------------------------


def test_config_that_is_not_utf8_is_one_error_line(tmp_path: Path) -> None:
    (tmp_path / "good.py").write_text("x = 1\n")
    (tmp_path / "latin.toml").write_bytes(b"[tool.jitscope.lint]\nignore = ['JS101']  # caf\xe9\n")
    result = lint_cli("good.py", "--config", "latin.toml", "-f", "json", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stdout == ""
    (line,) = error_lines(result.stderr)
    assert line.startswith("error: ") and "latin.toml: not UTF-8 text" in line
    assert result.stderr.strip() == line


def test_config_that_is_a_fifo_is_never_opened(tmp_path: Path) -> None:
    (tmp_path / "good.py").write_text("x = 1\n")
    os.mkfifo(tmp_path / "pipe.toml")
    result = lint_cli("good.py", "--config", "pipe.toml", cwd=tmp_path)
    assert result.returncode == 2
    assert error_lines(result.stderr) == ["error: config file is not a regular file: pipe.toml"]


def test_sarif_keeps_the_bytes_of_a_file_name_that_is_not_utf8(tmp_path: Path) -> None:
    """Linux file names are bytes: one that is not valid UTF-8 is percent-encoded byte by byte (it was exit 3)."""
    folder = os.fsencode(tmp_path)
    with open(os.path.join(folder, b"bad\xff.py"), "w") as handle:
        handle.write("import jax\n@jax.jit\ndef f(x):\n    print(x)\n    return x\n")
    result = lint_cli(".", "-f", "sarif", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    document = json.loads(result.stdout)
    assert sarif_errors(document) == []
    (finding,) = document["runs"][0]["results"]
    assert finding["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "bad%FF.py"
