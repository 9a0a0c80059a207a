"""``--help`` written to a pipe or a file is complete plain text, wrapped at COLUMNS (or 100)."""

from __future__ import annotations

import pytest

from jitscope.cli.commands import COMMAND_MODULES
from tests.conftest import run_cli

#: The top-level help and every registered command's (a new command is covered without editing this).
COMMANDS = ("", *COMMAND_MODULES)


def _help(command: str, columns: str | None) -> str:
    env = {"COLUMNS": columns} if columns else {}
    result = run_cli(*([command] if command else []), "--help", env=env, unset=() if columns else ("COLUMNS",))
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize(("columns", "width"), [(None, 100), ("60", 60)])
def test_piped_help_is_complete_and_wrapped(command: str, columns: str | None, width: int):
    out = _help(command, columns)
    assert out.startswith(f"Usage: jitscope {command}".rstrip())
    assert "…" not in out and "╭" not in out and "\x1b[" not in out
    assert max(len(line) for line in out.splitlines()) <= width
    assert "-h, --help" in out


def test_piped_help_keeps_every_word_of_long_option_help():
    words = " ".join(_help("bench", None).split())
    assert "JAX's config (JAX_COMPILATION_CACHE_DIR)" in words
    words = " ".join(_help("trace", "60").split())
    assert "0 collapses every nested jaxpr, 1 shows a scan body" in words and "--profile-html <path>" in words
