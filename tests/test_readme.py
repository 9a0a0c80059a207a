"""The documentation's commands, run as written, so the docs cannot drift from the tool.

Every page of the docs site (``docs/**/*.md``, less the pages the build generates) is read. Every
command in a ```bash or ```console block is run with bash in a scratch copy of the
examples, unless it needs the network, installs packages or is this test suite itself
(``SKIPPED`` says which and why). A ```console block's output lines are an excerpt: each
must appear in the command's output, in order (whitespace-insensitive; ``...`` skips, and a
line ending in ``...`` need only match its beginning, one inside a line skips that part). Exit codes other than 0 are listed
in ``EXIT_CODES``, so a command that starts failing, or stops failing, is caught too.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.docs_excerpts import assert_excerpt, assert_same_shape

ROOT = Path(__file__).resolve().parents[1]
#: The README is the front door; its commands are the docs pages' (checked below), which this file runs.
FRONT = ROOT / "README.md"
DOCS = ROOT / "docs"
#: Pages docs/_ext/jitscope_docs writes while the site builds (from jitscope itself; never edited).
GENERATED = ("reference/cli/", "reference/rules/", "reference/schemas.md", "_build/")


def doc_pages() -> list[Path]:
    """The hand-written pages of the docs site, in a stable order."""
    return sorted(p for p in DOCS.rglob("*.md")
                  if not p.relative_to(DOCS).as_posix().startswith(GENERATED))

#: Commands (or the part of a `&&` chain) not run here, by pattern, with the reason.
SKIPPED = {
    r"\bpip install\b": "installs packages (needs the package index); .ci/run does it in fresh venvs",
    r"\bpytest\b": "the test suite itself",
    r"\.ci/run\b": "CI itself: builds the whole support matrix",
    r"\bbenchmarks/": "benchmarks take minutes and measure the machine; run by hand",
    r"\bvenv\b|\bactivate\b": "sets up a virtual environment",
}

#: Commands on real models need those libraries (the `test-models` extra): skipped where they are absent.
REQUIRES: dict[str, tuple[str, ...]] = {
    "examples/gpt_nnx.py": ("flax", "optax"),
    # the arguments table's excerpt: nnx modules are pytrees (traced leaves) from flax 0.11 on; before,
    # a module is one static leaf
    "gpt_nnx.py:train_step --from-run --stages jaxpr": ("flax>=0.11",),
    # the excerpt's figures are XLA's schedule of JAX >= 0.5; 0.4.x's XLA peaks lower (150 MiB) and
    # marks no backward pass in op names (no residuals column)
    "jitscope memory examples/memory_peak.py:train_step": ("jax>=0.5",),
}

#: Commands whose documented outcome is not exit code 0 (substring -> the codes allowed).
EXIT_CODES: dict[str, tuple[int, ...]] = {
    "static_args.py:conditional_double": (1,),  # the explained tracing failure
    "lint tests/targets/lint_recall/train.py": (1,),  # findings
    "lint examples/static_args.py --trace": (1,),  # findings
    "lint examples/impure.py examples/static_args.py --out": (1,),  # findings, written as a report
    "lint --diff examples/lint_fixes.py": (1,),  # something to fix
    "--select JS201 examples/lint_fixes.py": (1,),  # the finding that has no fix
    # XLA's peak for this pair depends on its version (+18% on JAX 0.4.38's, within 5% on 0.10's).
    "--fail-on 'flops>+10%,peak>+5%,new-collective'": (0, 1),
    # Comparing two runs on one machine: a regression verdict depends on the machine's noise.
    "--compare baseline.json --fail-if-slower": (0, 1),
}

_BLOCK = re.compile(r"^```(bash|console)[^\n]*\n(.*?)^```", re.DOTALL | re.MULTILINE)


@dataclass(frozen=True)
class Command:
    line: int
    text: str
    excerpt: tuple[str, ...]  # expected output lines (console blocks only)
    block: int = 0  # the line its code block starts on: a block's commands run in order, in one folder
    page: str = ""  # the page, relative to docs/

    @property
    def where(self) -> str:
        return f"docs/{self.page}:{self.line}" if self.page else str(self.line)


def _join_continuations(lines: list[str]) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    buffer: list[str] = []
    start = 0
    for i, line in enumerate(lines):
        if not buffer:
            start = i
        if line.rstrip().endswith("\\"):
            buffer.append(line.rstrip()[:-1])
            continue
        buffer.append(line)
        out.append((start, " ".join(part.strip() for part in buffer)))
        buffer = []
    return out


def readme_commands(text: str, page: str = "") -> list[Command]:
    commands: list[Command] = []
    for match in _BLOCK.finditer(text):
        kind, body = match.group(1), match.group(2)
        first_line = text.count("\n", 0, match.start(2)) + 1
        lines = body.splitlines()
        if kind == "bash":
            for offset, cmd in _join_continuations(lines):
                if cmd.strip() and not cmd.lstrip().startswith("#"):
                    commands.append(Command(first_line + offset, cmd.strip(), (), first_line, page))
            continue
        # console: "$ cmd" lines (with "\\" continuations), each followed by an excerpt of its output.
        cmd_lines: list[str] = []
        for i, line in enumerate(lines):
            continues = bool(cmd_lines) and cmd_lines[-1].rstrip().endswith("\\")
            if line.startswith("$ ") or continues:
                if line.startswith("$ ") and not continues:
                    cmd_lines, line_no = [line[2:]], first_line + i
                else:
                    cmd_lines.append(line)
                if not line.rstrip().endswith("\\"):
                    cmd = _join_continuations(cmd_lines)[0][1]
                    commands.append(Command(line_no, cmd.strip(), (), first_line, page))
            elif commands and commands[-1].line >= first_line:
                last = commands[-1]
                commands[-1] = Command(last.line, last.text, (*last.excerpt, line), last.block, page)
    return commands


def _strip_comment(cmd: str) -> str:
    """``jitscope trace f.py:g   # a note`` -> ``jitscope trace f.py:g`` (quotes respected)."""
    quote = None
    for i, ch in enumerate(cmd):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or cmd[i - 1].isspace()):
            return cmd[:i].rstrip()
    return cmd


def runnable_parts(cmd: str) -> list[str]:
    """The parts of a `&&` chain this test runs."""
    parts = [p.strip() for p in _strip_comment(cmd).split("&&")]
    return [p for p in parts if p and not any(re.search(pattern, p) for pattern in SKIPPED)]


COMMANDS = [c for page in doc_pages()
            for c in readme_commands(page.read_text(encoding="utf-8"), page.relative_to(DOCS).as_posix())]
RUNNABLE = [c for c in COMMANDS if runnable_parts(c.text)]
#: Commands by code block: a later command may read what an earlier one wrote (`--save`, then `--compare`).
BLOCKS = [[c for c in RUNNABLE if (c.page, c.block) == key]
          for key in sorted({(c.page, c.block) for c in RUNNABLE})]
# A block that repeats one run on another page (the tour shows a command its guide runs) runs once.
BLOCKS = [b for i, b in enumerate(BLOCKS)
          if [c.text for c in b] not in [[c.text for c in earlier] for earlier in BLOCKS[:i]]]


def test_the_docs_have_commands_to_check() -> None:
    # The parser must find the set-up commands and the per-command sections, or the docs test
    # below silently checks nothing.
    texts = [c.text for c in COMMANDS]
    assert any(t.startswith("python3 -m pip install . &&") for t in texts)
    assert sum(t.startswith("jitscope trace") for t in texts) >= 3
    assert sum(t.startswith("jitscope bench") for t in texts) >= 3
    assert sum(t.startswith("jitscope lint") for t in texts) >= 2
    assert all(any(key in t for t in texts) for key in EXIT_CODES), "an EXIT_CODES entry matches no command"


def test_skipped_commands_are_only_the_documented_kinds() -> None:
    skipped = [c.text for c in COMMANDS if not runnable_parts(c.text)]
    for text in skipped:
        assert not text.startswith("jitscope"), f"a jitscope command would be skipped: {text}"


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A scratch folder with the examples and test targets, so commands that write files stay out of the repo."""
    work = tmp_path
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "examples", work / "examples", ignore=ignore)
    shutil.copytree(ROOT / "tests" / "targets", work / "tests" / "targets", ignore=ignore)
    shutil.copy(ROOT / "pyproject.toml", work / "pyproject.toml")
    return work


def _needs_models(block: list[Command]) -> bool:
    return any(key in command.text for command in block for key in REQUIRES)


@pytest.mark.parametrize("block", [pytest.param(b, marks=[pytest.mark.models] if _needs_models(b) else [])
                                   for b in BLOCKS], ids=[f"{b[0].page}:L{b[0].block}:{b[0].text[:50]}" for b in BLOCKS])
def test_readme_block_runs_as_documented(block: list[Command], workdir: Path) -> None:
    for command in block:
        for key, libraries in REQUIRES.items():
            if key in command.text:
                for library in libraries:
                    name, _, least = library.partition(">=")
                    pytest.importorskip(name, minversion=least or None,
                                        reason=f"{library} is not installed (.[test-models])" if name != "jax"
                                    else f"the excerpt is of {library}")
    bindir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": bindir + os.pathsep + os.environ.get("PATH", ""), "NO_COLOR": "1", "COLUMNS": "100"}
    env.pop("FORCE_COLOR", None)
    for command in block:
        run_documented(command, workdir, env)


def run_documented(command: Command, workdir: Path, env: dict[str, str]) -> None:
    expected = next((codes for key, codes in EXIT_CODES.items() if key in command.text), (0,))
    for part in runnable_parts(command.text):
        # `python3` in a README command is the environment's python, as in a user's venv.
        script = re.sub(r"^python3?\b", lambda _: shlex.quote(sys.executable), part)
        proc = subprocess.run(
            ["bash", "-c", script], cwd=workdir, env=env, capture_output=True, text=True, timeout=300, check=False
        )
        output = proc.stdout + proc.stderr
        where = f"{command.where} `{part}`"
        assert "Traceback (most recent call last)" not in output and "internal error" not in output, (
            f"docs line {where} crashed:\n{output}"
        )
        assert proc.returncode in expected, f"docs line {where}: exit {proc.returncode}, expected {expected}\n{output}"
    assert_excerpt(output, command.excerpt, command.where)


def test_console_blocks_are_parsed_into_commands_and_excerpts() -> None:
    text = "intro\n```console\n$ jitscope lint a.py \\\n    --no-show-source\na.py:1:1: JS101 ...\n ...\nFound 1 finding\n```\n"
    (command,) = readme_commands(text)
    assert command.text == "jitscope lint a.py --no-show-source"
    assert command.line == 3
    assert command.excerpt == ("a.py:1:1: JS101 ...", " ...", "Found 1 finding")


def test_an_excerpt_that_drifted_from_the_output_fails() -> None:
    output = "a.py:1:1: JS101 [warning] print in f\n   help: remove it\nFound 1 finding (0 errors, 1 warning)\n"
    assert_excerpt(output, ("a.py:1:1: JS101 [warning] ...", " ...", "Found 1 finding"), "1")
    with pytest.raises(AssertionError, match="does not contain"):
        assert_excerpt(output, ("Found 2 findings",), "1")
    with pytest.raises(AssertionError, match="does not contain"):  # right lines, wrong order
        assert_excerpt(output, ("Found 1 finding", "a.py:1:1: JS101"), "1")
    assert_excerpt(output, ("a.py:1:1: JS101 [...] print in f",), "1")  # "..." inside a line skips that part
    with pytest.raises(AssertionError, match="does not contain"):
        assert_excerpt(output, ("a.py:1:1: JS101 [...] print in g",), "1")


def test_a_hand_written_block_is_compared_by_its_shape() -> None:
    """A ```text block a test checks (tests/docs_excerpts.py): its numbers and fingerprints may differ from the
    run's, its words and their order may not."""
    run = "slow: p1 is the straggler: median 21.3 ms, 27.11x p0's 786 µs\nmore\nprogram 55347d8b\n"
    shown = ("$ jitscope bench ...", "slow: p1 is the straggler: median 20.9 ms, 126.16x p0's 166 µs", "...",
             "program 77ff9a72")
    assert_same_shape(run, shown, "1")
    with pytest.raises(AssertionError, match="does not contain"):
        assert_same_shape(run, ("slow: p0 is the straggler: median 20.9 ms",), "1")
    with pytest.raises(AssertionError, match="does not contain"):
        assert_same_shape(run, ("slow: p1 is the fastest: median 20.9 ms",), "1")


#: How a line of a ```text block of commands begins (a cheat-sheet of commands to type, not their output).
_COMMAND_LINE = re.compile(r"(jitscope|python3?|pytest|srun|torchrun|mpirun|sphinx-build|%%?jitscope|%load_ext"
                           r"|r = %jitscope|JAX_\w+=\S*)\s")


def _hand_written_output(block: str) -> bool:
    """A ```text block's body shows output, rather than commands to type or a JSON outline."""
    lines = block.splitlines()
    if not lines or lines[0].startswith(("{", "%%")):  # a JSON outline (checked above), a notebook cell
        return False
    commands = [line for previous, line in zip(["", *lines], lines, strict=False)
                if line.strip() and not line.startswith((" ", "#")) and not previous.rstrip().endswith("\\")]
    return not all(_COMMAND_LINE.match(line + " ") for line in commands)


def test_every_hand_written_output_block_is_checked() -> None:
    """No page shows output that jitscope would not print: output is produced while the site builds
    (``{command-output}``), is a ```console excerpt run above, or is a ```text block that the test running its
    command compares (``assert_shown(OUTPUT, PAGE, FIRST_LINE)``, tests/docs_excerpts.py). Other ```text blocks
    hold commands to type (one a line; their options, continuations or comments indented) or a JSON outline."""
    from tests.docs_excerpts import text_block

    tests = "\n".join(p.read_text(encoding="utf-8") for p in ROOT.joinpath("tests").rglob("test_*.py"))
    checked = re.findall(r'assert_shown\([^,]+, "([^"]+)", "([^"]+)"\)', tests)
    assert len(checked) >= 3, "the tests' assert_shown calls were not found"
    unchecked = []
    for page in doc_pages():
        name = page.relative_to(DOCS).as_posix()
        for match in re.finditer(r"^( *)```text\n(.*?)^\1```", page.read_text(encoding="utf-8"),
                                 re.DOTALL | re.MULTILINE):
            body = textwrap.dedent(match.group(2))
            if _hand_written_output(body) and not any(
                    (name, body.lstrip().startswith(first)) == (p, True) for p, first in checked):
                unchecked.append(f"docs/{name}: {body.strip().splitlines()[0][:80]}")
    assert not unchecked, "hand-written output that no test compares with jitscope's:\n" + "\n".join(unchecked)
    for page, first_line in checked:
        text_block(page, first_line)  # each block a test compares is still on its page


def _schema_block(kind: str) -> str:
    text = "\n".join(page.read_text(encoding="utf-8") for page in doc_pages())
    for match in re.finditer(r"^```text\n(.*?)^```", text, re.DOTALL | re.MULTILINE):
        if f'"kind": "{kind}"' in match.group(1):
            return match.group(1)
    raise AssertionError(f"no docs page has a schema block for {kind}")


def test_bench_json_schema_in_the_readme_names_every_field() -> None:
    # The README's outline of the bench JSON is hand-written: every field of every record it
    # contains must appear in it, and its version must be the one jitscope writes.
    import dataclasses
    import typing

    from jitscope.model import bench

    block = _schema_block("jitscope.bench")
    assert f'"schema_version": "{bench.BENCH_SCHEMA_VERSION}"' in block
    named = set(re.findall(r'"(\w+)"', block))
    seen: set[type] = set()
    todo: list[type] = [bench.BenchReport]
    missing = []
    while todo:
        cls = todo.pop()
        if cls in seen:
            continue
        seen.add(cls)
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            if f.name not in named:
                missing.append(f"{cls.__name__}.{f.name}")
            for arg in re.findall(r"\b[A-Z]\w+", str(hints[f.name])):
                nested = getattr(bench, arg, None)
                if isinstance(nested, type) and dataclasses.is_dataclass(nested):
                    todo.append(nested)
    assert not missing, f"fields missing from the README's bench JSON outline: {missing}"


def _api_examples() -> list[str]:
    """The ```python blocks of the "Python API and notebooks" page: complete, runnable scripts."""
    text = (DOCS / "guides" / "notebooks.md").read_text(encoding="utf-8")
    return re.findall(r"^```python\n(.*?)^```", text, re.DOTALL | re.MULTILINE)


def test_the_python_api_examples_run_as_written(workdir: Path) -> None:
    examples = _api_examples()
    assert examples, "the README's Python API section has no example"
    for source in examples:
        proc = subprocess.run([sys.executable, "-c", source], cwd=workdir / "examples", capture_output=True,
                              text=True, timeout=600, check=False,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert "equations" in proc.stdout and "compiles;" in proc.stdout and "JS101" in proc.stdout, proc.stdout
    assert (workdir / "examples" / "train_step.html").read_text().startswith("<!DOCTYPE html>")


def test_the_front_readme_is_short_and_its_commands_are_the_docs() -> None:
    """README.md is read in two minutes; every command it shows is one a docs page has, so it is run above."""
    front = FRONT.read_text(encoding="utf-8")
    assert len(front.splitlines()) <= 150
    guide = "\n".join(page.read_text(encoding="utf-8") for page in doc_pages())
    for block in re.findall(r"^```bash\n(.*?)^```", front, re.DOTALL | re.MULTILINE):
        for line in block.splitlines():
            command = _strip_comment(line).strip()
            if command:
                assert command in guide, f"README.md shows a command no docs page runs: {command}"
