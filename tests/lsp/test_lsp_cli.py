"""``jitscope lsp`` as a command: its help, and the one line it prints when pygls is missing.

These run without pygls (the ``lsp`` extra): they hide it, or never start the server.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT, run_cli

_MAIN = "sys.argv = ['jitscope', *sys.argv[1:]]\nfrom jitscope.cli.app import main\nmain()\n"


def _run_hiding(hidden: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``jitscope ARGS`` in a process where importing ``hidden`` fails, as when it is not installed."""
    code = f"import sys\nsys.modules[{hidden!r}] = None\n" + _MAIN
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT,
                          stdin=subprocess.DEVNULL, check=False, timeout=120, env=_plain_env())


def _plain_env() -> dict[str, str]:
    import os

    return {**{k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "COLUMNS")}, "NO_COLOR": "1"}


def test_without_pygls_one_line_says_how_to_install_it_and_exits_2() -> None:
    result = _run_hiding("pygls", "lsp")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.strip().splitlines() == ["error: jitscope lsp needs pygls: pip install 'jitscope[lsp]'"]


def test_without_lsprotocol_the_same_line() -> None:
    result = _run_hiding("lsprotocol", "lsp", "--stdio")
    assert result.returncode == 2
    assert "pip install 'jitscope[lsp]'" in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_help_lists_lsp_and_imports_neither_jax_nor_pygls() -> None:
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from jitscope.cli.app import app\n"
        "for args in (['--help'], ['lsp', '--help']):\n"
        "    result = CliRunner().invoke(app, args)\n"
        "    assert result.exit_code == 0, result.output\n"
        "    print(result.output)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('jax', 'pygls', 'lsprotocol')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True,
                         env=_plain_env())
    assert out.stdout.strip().splitlines()[-1] == "[]"
    assert "lsp" in out.stdout and "--stdio" in out.stdout and "--debounce" in out.stdout


def test_lsp_rejects_an_unknown_option_in_one_line() -> None:
    result = run_cli("lsp", "--tcp")
    assert result.returncode == 2
    assert result.stderr.splitlines() == ["error: no such option: --tcp (jitscope lsp -h lists the options)"]


def test_with_pygls_1_it_says_pygls_2_is_needed(tmp_path: Path) -> None:
    """pygls 1.x has another API (no ``pygls.lsp.server``): found first on the path, it is named."""
    (tmp_path / "pygls").mkdir()
    (tmp_path / "pygls" / "__init__.py").write_text("")
    (tmp_path / "pygls-1.3.1.dist-info").mkdir()
    (tmp_path / "pygls-1.3.1.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: pygls\nVersion: 1.3.1\n")
    env = {**_plain_env(), "PYTHONPATH": str(tmp_path)}
    result = subprocess.run([sys.executable, "-c", "import sys\n" + _MAIN, "lsp"], capture_output=True, text=True,
                            cwd=ROOT, stdin=subprocess.DEVNULL, check=False, timeout=120, env=env)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "error: jitscope lsp needs pygls 2 (found pygls 1.3.1): pip install 'jitscope[lsp]'"
    ]
