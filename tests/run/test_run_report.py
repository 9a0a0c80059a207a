"""``jitscope run --out report.html|.md|.txt`` and ``-f markdown``, as a user runs them (a subprocess): the
report is one self-contained file naming every cause, stdout stays the program's."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_cli
from tests.report.test_backends import check_html

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX paths")

PROGRAM = """
import jax, jax.numpy as jnp
open("ran", "w").write("yes")

@jax.jit
def f(x):
    return x * 2

for n in (3, 4):
    f(jnp.ones(n))
print("program stdout")
"""


def test_html_report_of_the_example_training_loop_is_self_contained_and_names_the_causes(tmp_path: Path) -> None:
    report = tmp_path / "report.html"
    done = run_cli("run", "--no-effects", "--out", str(report), "examples/train_loop.py", cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].startswith("epoch 0: loss ")  # stdout is the program's alone
    assert "jitscope run: examples/train_loop.py exited 0" in done.stderr  # the summary still goes to stderr
    assert f"jitscope run: html report written to {report} (" in done.stderr
    html = report.read_text(encoding="utf-8")
    check_html(html)
    assert "http://" not in html.replace("http://www.w3.org/2000/svg", "") and "https://" not in html
    assert len(html.encode()) < 100_000
    assert "<title>jitscope run: examples/train_loop.py</title>" in html
    assert html.count('<svg class="chart"') == 1 and 'aria-label="compile timeline' in html
    for cause in ("x: shape", "(64, 16)", "(8, 16)", "training (static): value", "lr: weak_type",
                  "function: object", "1, 2 (equally near)"):
        assert cause in html, cause
    assert "<h3>step: 5 recompiles" in html and "<h3>main.&lt;locals&gt;.&lt;lambda&gt;: 2 recompiles" in html


def _program(tmp_path: Path) -> Path:
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent(PROGRAM))
    return script


def test_markdown_goes_to_stderr_and_text_to_a_file(tmp_path: Path) -> None:
    script = _program(tmp_path)
    done = run_cli("run", "-f", "markdown", "--log", "none", str(script), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "program stdout\n"
    assert "# jitscope run: " in done.stderr
    assert "| 2 | " in done.stderr and "| x: shape | (3,) | (4,) | 1 |" in done.stderr
    done = run_cli("run", "--out", "run.txt", "--log", "none", str(script), cwd=tmp_path)
    text = (tmp_path / "run.txt").read_text(encoding="utf-8")
    assert done.returncode == 0 and "2 compiles of 1 jitted function (1 recompile)" in text
    assert "x: shape (3,) -> (4,) (vs compile 1)" in text and "\x1b[" not in text
    assert "jitscope run: text report written to run.txt (" in done.stderr


def test_html_without_a_file_is_refused_before_the_program_runs(tmp_path: Path) -> None:
    script = _program(tmp_path)
    done = run_cli("run", "-f", "html", str(script), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("error: --format html writes a file (add --out FILE.html")
    assert not (tmp_path / "ran").exists() and done.stdout == ""


def test_out_with_another_suffix_is_still_the_json_log(tmp_path: Path) -> None:
    script = _program(tmp_path)
    done = run_cli("run", "--out", "run.log", "--log", "none", str(script), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "run.log").read_text(encoding="utf-8").startswith('{\n  "program": ')
