"""Code frames number lines as Python does: a form feed (common in older GNU-style sources) or a
vertical tab inside a line must not shift the lines shown under a finding."""

from __future__ import annotations

from pathlib import Path

from jitscope.userframes import read_source_lines
from tests.conftest import run_cli

SOURCE = (
    "import jax\n"
    "\x0c\n"  # a page break on its own line, as Emacs writes it
    "x = 1  # a\x0bvertical tab\n"
    "@jax.jit\n"
    "def f(x):\n"
    "    print('tracing')\n"
    "    return x\n"
)


def test_lines_end_only_where_python_ends_them(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_bytes(SOURCE.encode())
    lines = read_source_lines(str(path))
    assert len(lines) == 7 and lines[5] == "    print('tracing')"
    (tmp_path / "crlf.py").write_bytes(b"a\r\nb\r\n")
    assert read_source_lines(str(tmp_path / "crlf.py")) == ["a", "b"]


def test_the_code_frame_under_a_finding_shows_the_flagged_line(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_bytes(SOURCE.encode())
    result = run_cli("lint", "m.py", "--select", "JS101", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert "m.py:6:5: JS101" in result.stdout
    frame = [line for line in result.stdout.splitlines() if line.lstrip(" >").startswith("6 ")]
    assert frame and frame[0].endswith("print('tracing')"), result.stdout
