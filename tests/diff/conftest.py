"""A scratch git repository for ``jitscope diff --base``: commit one version of a module, then edit it."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

import pytest

GIT = ("git", "-c", "user.name=jitscope tests", "-c", "user.email=tests@jitscope.invalid", "-c",
       "commit.gpgsign=false", "-c", "init.defaultBranch=main")


class Repo:
    """``write`` a file of the working tree, ``commit`` what is there."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q")

    def git(self, *args: str) -> str:
        return subprocess.run([*GIT, *args], cwd=self.root, capture_output=True, text=True, check=True).stdout

    def write(self, name: str, text: str) -> Path:
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
        return path

    def commit(self, message: str = "version") -> str:
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)
        return self.git("rev-parse", "HEAD").strip()


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return Repo(tmp_path / "repo")


def line_of(text: str, needle: str) -> int:
    """The 1-based number of the line of ``text`` (dedented as ``Repo.write`` writes it) holding ``needle``."""
    lines = textwrap.dedent(text).lstrip("\n").splitlines()
    return next(i for i, line in enumerate(lines, 1) if needle in line)

