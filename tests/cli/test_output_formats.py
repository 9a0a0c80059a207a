"""One --format option on every command; --out FILE picks the format from its suffix."""

from __future__ import annotations

import json

import pytest

from jitscope.errors import UsageError
from jitscope.report.formats import resolve_format
from tests.conftest import EXAMPLES, run_cli
from tests.report.test_backends import check_html


def test_resolve_format(tmp_path):
    assert resolve_format(None, None) == "text"
    assert resolve_format(None, tmp_path / "r.HTML") == "html"
    assert resolve_format(None, tmp_path / "r.md") == "markdown"
    assert resolve_format("json", tmp_path / "r.md") == "json"  # --format wins
    assert resolve_format(None, tmp_path / "r.sarif", ("text", "sarif")) == "sarif"
    with pytest.raises(UsageError, match="asks for sarif, which this command does not write") as error:
        resolve_format(None, tmp_path / "r.sarif")
    assert error.value.hint == ("its formats are text, json, markdown, html: name the file .txt, .json, .md or "
                                ".html, or pass --format")
    for name in ("r.pdf", "report"):  # an unknown suffix or none: say so, never guess
        with pytest.raises(UsageError, match=f"cannot tell the format from the suffix of --out .*{name}"):
            resolve_format(None, tmp_path / name)


@pytest.mark.parametrize("command", [["run", "prog.py"], ["bench", "jit_sin.py:fsin"], ["trace", "jit_sin.py:fsin"]])
def test_a_suffix_naming_a_format_the_command_lacks_is_one_line(tmp_path, command):
    """``run --out x.sarif`` used to write JSON there: now exit 2 before anything runs, naming what it writes."""
    out = tmp_path / "x.sarif"
    result = run_cli(command[0], "--out", str(out), *command[1:], cwd=EXAMPLES)
    assert result.returncode == 2 and result.stdout == "" and not out.exists()
    assert result.stderr == (f"error: --out {out} asks for sarif, which this command does not write (its formats are "
                             "text, json, markdown, html: name the file .txt, .json, .md or .html, or pass --format)\n")


def test_trace_out_file_picks_the_format(tmp_path):
    html, md = tmp_path / "report.html", tmp_path / "report.md"
    result = run_cli("trace", "mlp.py:predict", "--out", str(html), cwd=EXAMPLES)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "" and f"report written to {html}" in result.stderr
    page = html.read_text()
    check_html(page)
    assert 'data-lang="python"' in page and 'data-lang="jaxpr"' in page and 'data-lang="hlo"' in page
    assert '<div class="l mark" data-src="mlp.py:28"><span class="n">28 </span>' in page
    assert 'data-src="mlp.py:30" data-ops="jit(relu)/max jit(relu)/~maximum"' in page  # the eqn inside jit(relu)
    assert 'data-ops="jit(relu)/max"' in page  # ... and the HLO instruction it became
    assert '<details open class="fold"><summary>' in page
    assert len(page.encode()) < 60_000
    result = run_cli("trace", "mlp.py:predict", "--stages", "jaxpr", "--out", str(md), cwd=EXAMPLES)
    assert result.returncode == 0, result.stderr
    text = md.read_text()
    assert text.startswith("# jitscope trace: mlp.py:predict\n\n## mlp.py:predict\n")
    assert "```python\n  26 │     for i in range(len(params)):" in text
    # the jaxpr listing, folded in <details> when it is long (JAX < 0.5 prints a few more lines)
    assert "### jaxpr\n\n" in text and "```text\ninputs " in text


def test_trace_format_on_stdout_and_folder_out(tmp_path):
    result = run_cli("trace", "jit_sin.py:fsin", "--stages", "jaxpr", "--format", "markdown", cwd=EXAMPLES)
    assert result.returncode == 0 and result.stdout.startswith("# jitscope trace: jit_sin.py:fsin")
    result = run_cli("trace", "jit_sin.py:fsin", "--stages", "jaxpr", "--out", str(tmp_path / "dir"),
                     "--format", "json", cwd=EXAMPLES)
    assert result.returncode == 0 and json.loads(result.stdout)["kind"] == "jitscope.trace"
    assert (tmp_path / "dir" / "report.json").exists()  # a path without a format suffix is still a folder
    result = run_cli("trace", "jit_sin.py:fsin", "--out", str(tmp_path / "r.pdf"), cwd=EXAMPLES)
    assert result.returncode == 0 and (tmp_path / "r.pdf" / "report.json").exists()
