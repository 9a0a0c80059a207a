"""``jitscope memory`` as a user runs it: JSON that round-trips, the formats, the --fail-over gate, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from jitscope.model.common import from_jsonable
from jitscope.model.memory import MEMORY_KIND, MEMORY_SCHEMA_VERSION, MemoryReport
from jitscope.report.views.memory import memory_document
from jitscope.report.writers import render_document
from jitscope.report.writers.json import dumps

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).parent


def test_help_does_not_import_jax():
    code = ("import sys\nfrom typer.testing import CliRunner\nfrom jitscope.cli.app import app\n"
            "result = CliRunner().invoke(app, ['memory', '--help'])\nassert result.exit_code == 0, result.output\n"
            "assert '--fail-over' in result.output\nprint('jax' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "False"


def test_json_round_trips(cli):
    result = cli("memory", "targets.py:big_intermediate", "--format", "json", cwd=HERE)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["kind"] == MEMORY_KIND and data["schema_version"] == MEMORY_SCHEMA_VERSION
    report = from_jsonable(MemoryReport, data)
    assert json.loads(dumps(report)) == data
    assert report.rows[0].lines[0].location.line == 9


@pytest.mark.parametrize("fmt", ["text", "markdown", "html"])
def test_every_format_shows_lines_listing_buffers_and_totals(report, fmt):
    text = render_document(memory_document(report, fmt), fmt)
    for heading in ("live at the peak, by source line", "buffers live at the peak", "totals", "residuals",
                    "could be donated"):
        assert heading in text
    assert "█" in text and "jnp.outer(small, small)" in text and "f32[2048,2048]" in text


def test_fail_over_is_a_gate(cli):
    over = cli("memory", "targets.py:update", "--fail-over", "8MiB", cwd=HERE)
    assert over.returncode == 1
    assert over.stderr.strip().splitlines()[-1] == (
        "error: targets.py:update(f32[1024,1024], f32[1024,1024]) needs 12 MiB of device memory (12,582,912 "
        "bytes), over --fail-over 8 MiB")
    under = cli("memory", "targets.py:update", "--fail-over", "1GiB", "--format", "json", cwd=HERE)
    assert under.returncode == 0, under.stderr
    assert json.loads(under.stdout)["over"] == []


@pytest.mark.parametrize(("args", "message"), [
    (("memory", "targets.py:update", "--fail-over", "lots"), "error: --fail-over: cannot read 'lots' as a size"),
    (("memory", "targets.py:update", "--fail-over", "1e400"), "error: --fail-over: 1e400 is out of range"),
    (("memory", "no_such_file.py:f"), "error: file not found: no_such_file.py"),
    (("memory", "targets.py:update", "--out", "report.xyz"), "error: cannot tell the format"),
])
def test_bad_input_is_one_line_and_exit_2(cli, args, message):
    result = cli(*args, cwd=HERE)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(message), result.stderr


def test_no_dump_is_one_line(tmp_path):
    from jitscope.jaxcompat.xla_dump import MemoryAnalysisUnavailable, read_dump

    with pytest.raises(MemoryAnalysisUnavailable) as caught:
        read_dump(tmp_path)
    assert caught.value.exit_code == 2 and "\n" not in caught.value.one_line()
    assert caught.value.message.startswith("memory analysis needs XLA's buffer assignment")


def test_python_api(tmp_path):
    import jax.numpy as jnp

    from jitscope.api.commands.memory import MemoryResult, memory
    from tests.memory import targets  # by its package: a bare `import targets` can find tests/targets/

    result = memory(targets.big_intermediate, jnp.ones(2048), fail_over="1MiB")
    assert isinstance(result, MemoryResult) and result.over
    assert result.lines[0].location.line == 9 and result.buffers[0].shape == "f32[2048,2048]"
    assert result.peak_bytes >= 16 * 2**20 and "peak" in repr(result)
    assert result.save(tmp_path / "m.html").read_text().startswith("<!")
