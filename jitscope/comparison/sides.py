"""Getting each side's trace: a ``jitscope trace --format json`` child process, in a git worktree of REV
or another Python environment.

Each side is traced in a fresh process of its own: two versions of one module (``--base REV``) cannot
share an interpreter's ``sys.modules``, JAX's caches must not carry over from one side to the other,
and both compiles then start equally cold, so their times compare. The child runs *this* jitscope
(its folder first on ``sys.path``), so both sides are read by the same code even when ``--base-env``
names another environment with an older JAX; that environment needs jitscope's dependencies (typer,
rich) beside its JAX.

``git worktree add --detach`` checks REV out into a scratch folder, removed (with its worktree entry)
on the way out and on Ctrl-C; the user's working tree and index are never touched.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import jitscope
from jitscope.errors import JitscopeError, TargetError, UsageError, UserCodeError
from jitscope.model.common import from_jsonable
from jitscope.model.trace import TraceReport

#: The folder holding the ``jitscope`` package the parent runs, put first on the child's ``sys.path``.
_PACKAGE_ROOT = str(Path(jitscope.__file__).resolve().parent.parent)
_BOOT = ("import sys; sys.path.insert(0, sys.argv.pop(1)); sys.argv[0] = 'jitscope'; "
         "from jitscope.cli.app import main; main()")


@dataclass(frozen=True, slots=True)
class Side:
    """How to trace one side: the interpreter, the folder to run in, the target as typed there."""

    label: str
    target: str
    cwd: Path
    python: str = sys.executable
    #: The folder paths are shown relative to (the repository's top level, or the worktree).
    root: Path | None = None
    #: Seconds its child process may take (each command: trace, memory, a bench round); None: no limit.
    timeout: float | None = None


def trace_side(side: Side, flags: Sequence[str]) -> TraceReport:
    """Trace ``side`` in a child process; its one-line error becomes ours, prefixed with the side."""
    stdout = run_side(side, "trace", ["--format", "json", "--no-effects", *flags])
    report = _parse(stdout)
    if report is not None and report.traces:
        return report
    raise UsageError(f"{side.label}: jitscope trace wrote no report")


def run_side(side: Side, command: str, flags: Sequence[str]) -> str:
    """``jitscope COMMAND TARGET FLAGS`` for ``side`` in a child process (killed with everything it started
    after ``side.timeout``, on Ctrl-C or SIGTERM): its stdout, or its one-line error as ours, prefixed with the
    side (exit 1 of a report with failures still returns the report)."""
    from jitscope import children

    args = [side.python, "-c", _BOOT, _PACKAGE_ROOT, command, side.target, *flags]
    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("FORCE_COLOR", None)
    try:
        proc = children.run(args, cwd=side.cwd, env=env, text=True, timeout=side.timeout)
    except subprocess.TimeoutExpired:
        raise UserCodeError(f"{side.label}: {side.python} running jitscope {command} {side.target} did not finish "
                            f"within {side.timeout:g} s, and was stopped",
                            hint=f"check that {side.python} -c 'import jax' runs; or give it longer with "
                            "--timeout SECONDS, 0 for no limit") from None
    except FileNotFoundError:
        raise UsageError(f"{side.label}: no Python at {side.python}", hint="--base-env takes a python executable, "
                         "e.g. ../old-venv/bin/python") from None
    except PermissionError:
        raise UsageError(f"{side.label}: {side.python} is not executable") from None
    if proc.stdout.strip().startswith("{"):
        return proc.stdout
    raise _child_error(side, proc.returncode, proc.stderr)


def _parse(stdout: str) -> TraceReport | None:
    text = stdout.strip()
    if not text.startswith("{"):
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict) or data.get("kind") != "jitscope.trace":
        return None
    try:
        return from_jsonable(TraceReport, data)
    except ValueError:  # FieldError: a report this jitscope cannot read: said as the child's failure
        return None


def _child_error(side: Side, code: int, stderr: str) -> JitscopeError:
    lines = [line for line in stderr.splitlines() if line.strip()]
    error = next((line for line in reversed(lines) if line.startswith("error: ")), None)
    missing = next((line for line in reversed(lines) if "ModuleNotFoundError" in line), None)
    if missing is not None and (error is None or "internal error" in error):
        reason = missing[missing.index("ModuleNotFoundError"):].split(" (this is a bug")[0]
        return UsageError(f"{side.label}: {side.python} cannot run jitscope: {reason}",
                          hint="install jax, typer and rich in that environment")
    if error is None:
        last = lines[-1] if lines else f"exit status {code}"
        return UsageError(f"{side.label}: tracing stopped with exit status {code}: {last}")
    message = f"{side.label}: {error.removeprefix('error: ')}"
    detail = "\n".join(lines[lines.index(error) + 1:]) or None
    if code == 1:
        return UserCodeError(message, detail=detail)
    return TargetError(message, detail=detail)


# -- git ------------------------------------------------------------------------------------------------


def _git(args: Sequence[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise UsageError("--base needs git, and no git command was found") from None


def repository_root(cwd: Path) -> Path:
    proc = _git(["rev-parse", "--show-toplevel"], cwd)
    if proc.returncode != 0:
        raise UsageError(f"--base needs a git repository, and {cwd} is not in one",
                         hint="run from your repository, or compare two targets: jitscope diff OLD NEW")
    return Path(proc.stdout.strip()).resolve()


def resolve_revision(rev: str, top: Path) -> str:
    if rev.startswith("-"):
        raise UsageError(f"--base {rev!r} is not a revision")
    proc = _git(["rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], top)
    if proc.returncode != 0 or not proc.stdout.strip():
        raise UsageError(f"--base {rev}: no such revision in {top}",
                         hint="name a commit, branch or tag (git log --oneline shows them)")
    return proc.stdout.strip()


@contextlib.contextmanager
def worktree(rev: str, cwd: Path) -> Iterator[tuple[Path, Path, str]]:
    """REV checked out in a scratch folder: (its root, the repository's root, the commit), removed after."""
    from jitscope.outputs import scratch_folder

    top = repository_root(cwd)
    commit = resolve_revision(rev, top)
    with scratch_folder("jitscope-diff-") as scratch:
        tree = scratch / "tree"
        proc = _git(["worktree", "add", "--detach", "--quiet", str(tree), commit], top)
        if proc.returncode != 0:
            reason = (proc.stderr.strip().splitlines() or ["git worktree add failed"])[-1]
            raise UsageError(f"--base {rev}: cannot check it out: {reason}")
        try:
            yield tree, top, commit
        finally:
            if _git(["worktree", "remove", "--force", str(tree)], top).returncode != 0:
                _git(["worktree", "prune"], top)


def side_in_tree(target: str, cwd: Path, top: Path, tree: Path) -> tuple[str, Path]:
    """The target and folder in the worktree that stand for ``target`` typed in ``cwd`` of the real tree."""
    try:
        inside = cwd.resolve().relative_to(top)
    except ValueError:
        raise UsageError(f"{cwd} is outside the repository {top}") from None
    head, sep, attr = target.rpartition(":")
    if sep and os.path.isabs(head):
        try:
            head = str(tree / Path(head).resolve().relative_to(top))
        except ValueError:
            raise UsageError(f"--base: {head} is outside the repository {top}") from None
        target = f"{head}:{attr}"
    where = tree / inside
    if not where.is_dir():
        raise TargetError(f"the folder {inside} does not exist at the base revision")
    return target, where
