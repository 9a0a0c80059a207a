"""How much of the code that real JAX libraries compile does ``jitscope lint`` analyse as traced?

The rules only look inside functions the linter knows run under a transform (jit, pmap, vmap,
scan bodies, and everything those call). A library that compiles through its own decorator
(kfac-jax's ``@utils.staged``), through ``jax.jit(env.step)`` on an instance (jumanji), or through
a module's ``apply`` is invisible to them unless the linter follows those patterns (issue 34).

For each repository of the ``reach`` corpus of ``lint_false_positives.py`` (checked out under
``--repos DIR`` as ``owner+name``, at the pinned commit) this prints:

- ``array defs``: functions of the library's own source (tests excluded) whose body calls
  ``jnp.``/``lax.``/``jax.`` code: the functions that can run under a transform. This is a proxy
  for "runs under a transform", counted from the source, not from running the library (in both
  libraries nearly every such function is compiled: the environments' ``step``/``reset`` and what
  they call, the optimizer's staged methods and what they call);
- ``traced``: how many of them the linter analyses as traced;
- ``reach``: traced / array defs.

Its findings on the same repositories are judged in ``lint_verdicts.json``: run
``lint_false_positives.py --corpus reach --repos DIR`` for the wrong-findings rate next to it.

    python benchmarks/lint_reach.py --repos DIR
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import sys
from pathlib import Path

from lint_false_positives import CORPORA, repository_source

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from jitscope.config import LintConfig  # noqa: E402
from jitscope.linter import lint_paths  # noqa: E402
from jitscope.linter import runner  # noqa: E402

_ARRAY_CODE = re.compile(r"\b(?:jnp|lax|jax|jrandom)\.")
_TESTS = re.compile(r"(?:^|/)(?:tests?|testing|conftest\.py|\w+_test\.py|test_\w+\.py)(?:/|$)")


def array_defs(source: Path) -> set[tuple[str, int]]:
    """(path, line) of each def outside tests whose body calls JAX array code."""
    out: set[tuple[str, int]] = set()
    for path in source.rglob("*.py"):
        rel = path.relative_to(source).as_posix()
        if _TESTS.search(rel) or "/." in f"/{rel}":
            continue
        text = path.read_text(errors="replace")
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                body = ast.get_source_segment(text, node) or ""
                doc = ast.get_docstring(node) or ""
                if _ARRAY_CODE.search(body.replace(doc, "")):
                    out.add((str(path.resolve()), node.lineno))
    return out


def traced_defs(source: Path) -> tuple[set[tuple[str, int]], int]:
    """(path, line) of each function the linter analyses as traced, and the number of findings.
    Lints in one process and records what ``analyze_module`` returns for each file."""
    seen: set[tuple[str, int]] = set()
    original = runner.analyze_module

    def recording(index, extra=()):  # type: ignore[no-untyped-def]
        analysis = original(index, extra)
        path = str(Path(index.path).resolve())
        seen.update((path, getattr(f.func, "lineno", 0)) for f in analysis.functions)
        return analysis

    runner.analyze_module = recording
    try:
        report = lint_paths([source], LintConfig(), root=source, jobs=1)
    finally:
        runner.analyze_module = original
    return seen, len(report.findings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--repos",
        type=Path,
        default=Path(os.environ["JITSCOPE_LINT_REPOS"]) if os.environ.get("JITSCOPE_LINT_REPOS") else None,
        help="folder holding the checkouts as owner+name (default: $JITSCOPE_LINT_REPOS)",
    )
    args = parser.parse_args()
    print(f"{'repository':<11} {'array defs':>10} {'traced':>7} {'reach':>6} {'findings':>9}")
    for package in CORPORA["reach"]:
        source = repository_source(package, args.repos)
        if source is None:
            print(f"{package:<11} not checked out (--repos), skipped")
            continue
        wanted = array_defs(source)
        traced, findings = traced_defs(source)
        hit = len(wanted & traced)
        print(f"{package:<11} {len(wanted):>10} {hit:>7} {hit / max(1, len(wanted)):>6.0%} {findings:>9}")


if __name__ == "__main__":
    main()
