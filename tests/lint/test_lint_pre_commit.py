"""The pre-commit hook (.pre-commit-hooks.yaml): a valid manifest, run by pre-commit on the staged files only.

pre-commit's own `try-repo` would build the hook's `language: python` environment by pip-installing
this repository and its dependencies (jax among them) from the network, which a test must not need.
So the real pre-commit runs the manifest's hook verbatim but for `language: system` (the `jitscope`
of the environment running the tests), in a throw-away git repository: what is tested is what
pre-commit does with the hook (which files it passes, the exit code), and what jitscope does with them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, run_cli

MANIFEST = ROOT / ".pre-commit-hooks.yaml"
HAZARD = "import jax\n\n\n@jax.jit\ndef f(x):\n    print(x)\n    return x\n"
CLEAN = "import jax\n\n\n@jax.jit\ndef f(x):\n    return x * 2\n"
#: The keys pre-commit 4 knows in a manifest's hook (pre_commit/clientlib.py, MANIFEST_HOOK_DICT).
HOOK_KEYS = {"id", "name", "entry", "language", "alias", "files", "exclude", "types", "types_or", "exclude_types",
             "additional_dependencies", "args", "always_run", "fail_fast", "pass_filenames", "description",
             "language_version", "log_file", "require_serial", "stages", "verbose", "minimum_pre_commit_version"}


def _hooks() -> list[dict[str, Any]]:
    clientlib = pytest.importorskip("pre_commit.clientlib")
    return list(clientlib.load_manifest(str(MANIFEST)))


def test_manifest_is_valid_for_pre_commit() -> None:
    (hook,) = _hooks()  # pre-commit's own schema: raises InvalidManifestError on a bad manifest
    assert hook["id"] == "jitscope-lint" and hook["language"] == "python"
    # only the changed Python files, all of them in one process (cross-module analysis, one pool)
    assert hook["types"] == ["python"] and hook["pass_filenames"] is True and hook["always_run"] is False
    assert hook["require_serial"] is True
    assert hook["entry"] == "jitscope lint --static-only" and hook["args"] == ["--no-show-source"]


def test_manifest_keys_are_pre_commits() -> None:
    yaml = pytest.importorskip("yaml")
    (hook,) = yaml.safe_load(MANIFEST.read_text())
    assert {"id", "name", "entry", "language"} <= set(hook) <= HOOK_KEYS


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "commit.gpgsign=false",
                    *args], cwd=repo, check=True, capture_output=True, timeout=60)


def _pre_commit(repo: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT"))}
    env.update(PRE_COMMIT_HOME=str(cache), NO_COLOR="1", PRE_COMMIT_COLOR="never",
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}")
    return subprocess.run([sys.executable, "-m", "pre_commit", "run", "--color", "never"], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


def test_pre_commit_runs_the_hook_on_the_staged_python_files_only(tmp_path: Path) -> None:
    (hook,) = _hooks()
    if shutil.which("git") is None or shutil.which("jitscope", path=str(Path(sys.executable).parent)) is None:
        pytest.skip("needs git and this environment's jitscope script")
    repo, cache = tmp_path / "repo", tmp_path / "cache"
    repo.mkdir()
    config = {"repos": [{"repo": "local", "hooks": [{**hook, "language": "system"}]}]}
    (repo / ".pre-commit-config.yaml").write_text(json.dumps(config))  # JSON is YAML
    (repo / "old.py").write_text(HAZARD)  # committed before: pre-commit never passes it
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "start")
    (repo / "new.py").write_text(HAZARD)
    (repo / "notes.md").write_text("print(x) in a jitted function\n")
    (repo / "unstaged.py").write_text(HAZARD)  # not added: not part of the commit
    _git(repo, "add", "new.py", "notes.md")
    failed = _pre_commit(repo, cache)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "new.py:6:5: JS101" in failed.stdout
    assert "old.py" not in failed.stdout and "unstaged.py" not in failed.stdout and "notes.md" not in failed.stdout
    assert "Found 1 finding" in failed.stdout and "in 1 file" in failed.stdout
    (repo / "new.py").write_text(CLEAN)
    _git(repo, "add", "new.py")
    passed = _pre_commit(repo, cache)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "jitscope lint" in passed.stdout and "Passed" in passed.stdout


def test_lint_of_the_files_pre_commit_passes(tmp_path: Path) -> None:
    # What the hook runs: `jitscope lint --static-only --no-show-source FILE...`: only those files, exit 1
    # on findings, 0 when they are clean, even if other files of the project have findings.
    for name, text in {"a.py": HAZARD, "b.py": CLEAN, "c.py": HAZARD}.items():
        (tmp_path / name).write_text(text)
    hook = ("lint", "--static-only", "--no-show-source")
    two = run_cli(*hook, "a.py", "b.py", cwd=tmp_path)
    assert two.returncode == 1 and "a.py:6:5: JS101" in two.stdout and "c.py" not in two.stdout
    assert "in 2 files" in two.stdout
    clean = run_cli(*hook, "b.py", cwd=tmp_path)
    assert clean.returncode == 0 and "All checks passed" in clean.stdout
    (tmp_path / "pyproject.toml").write_text('[tool.jitscope.lint]\nexclude = ["a.py"]\n')
    excluded = run_cli(*hook, "a.py", "b.py", cwd=tmp_path)  # the config's exclude applies to given files
    assert excluded.returncode == 0, excluded.stdout
    fixed = run_cli(*hook, "--fix", "c.py", cwd=tmp_path)  # `args: [--fix]`: fixed, nothing remains
    assert fixed.returncode == 0 and "jax.debug.print" in (tmp_path / "c.py").read_text()
