"""Shell completion (typer's ``--install-completion``/``--show-completion`` and click's completion protocol) and
``--version``, through the command's real entry point: the fast paths in ``cli/app.py`` must not answer a
completion request, and ``--version`` must stay fast (no typer, no jax) and print the one version."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import jitscope
from tests.conftest import ROOT, run_cli

COMMANDS = ("doctor", "trace", "bench", "profile", "memory", "diff", "lint", "run", "merge", "rule", "lsp")


def complete(words: str, *argv: str, shell: str = "bash", cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """What the shell's completion function gets for ``words`` (the line typed so far, ending where the cursor is).

    bash's script sends the words in COMP_WORDS and the cursor's word in COMP_CWORD; zsh, fish and PowerShell's
    send the line in _TYPER_COMPLETE_ARGS. ``argv``: arguments on jitscope's own command line (the scripts pass
    none; a fast path must not take them either).
    """
    env = {"_JITSCOPE_COMPLETE": f"complete_{shell}", "_TYPER_COMPLETE_ARGS": words}
    if shell == "bash":
        env.update(COMP_WORDS=words, COMP_CWORD=str(len(words.split()) - (0 if words.endswith(" ") else 1)))
    full_env = {**os.environ, **env}
    return subprocess.run([sys.executable, "-m", "jitscope", *argv], cwd=cwd, env=full_env, capture_output=True,
                          text=True, timeout=120, check=False)


def test_bash_completion_offers_every_command() -> None:
    result = complete("jitscope ")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == list(COMMANDS)


def test_bash_completion_offers_an_option_of_trace() -> None:
    result = complete("jitscope trace --sta")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["--static", "--stages"]


def test_zsh_completion_describes_the_commands() -> None:
    result = complete("jitscope li", shell="zsh")
    assert result.returncode == 0, result.stderr
    assert '"lint":"Lint Python files for JAX hazards' in result.stdout


@pytest.mark.parametrize("argv", [["trace", "mlp.py:train_step"], ["run", "train_loop.py"], ["--version"]])
def test_a_completion_request_is_never_taken_by_a_fast_path(argv: list[str]) -> None:
    # With the protocol's variable set, jitscope must complete, not trace the function or run the program.
    result = complete("jitscope trace --sta", *argv, cwd=ROOT / "examples")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["--static", "--stages"]


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_show_completion_prints_the_script_that_calls_jitscope(shell: str) -> None:
    result = run_cli("--show-completion", shell)
    assert result.returncode == 0, result.stderr
    assert "_JITSCOPE_COMPLETE=complete_" in result.stdout and "jitscope" in result.stdout


def test_help_lists_the_completion_options() -> None:
    result = run_cli("--help")
    assert "--install-completion" in result.stdout and "--show-completion" in result.stdout


def test_version_is_the_package_version_without_typer_or_jax() -> None:
    code = ("import sys\nfrom jitscope.cli.app import main\nsys.argv = ['jitscope', '--version']\nmain()\n"
            "print(sorted(m for m in ('typer', 'click', 'rich', 'jax') if m in sys.modules))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True,
                            timeout=120)
    assert result.stdout.splitlines() == [f"jitscope {jitscope.__version__}", "[]"]
