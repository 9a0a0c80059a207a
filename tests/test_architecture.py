"""The house keeps its shape: no import circles, and no package imports one in a higher layer.

Every ``import`` in ``jitscope/`` counts, wherever it is written: at the top of a module, inside a
function (a lazy import is still a dependency) or under ``if TYPE_CHECKING:``. ``LAYERS`` below is
the one written-down order (``docs/explanation/architecture.md`` explains it); a package may import its own
modules and anything in its layer or below.

Imports of the root package ``jitscope`` itself (``from jitscope import __version__``) are not
counted: every submodule import runs it anyway, and it loads the API above it only on first use.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "jitscope"

#: Top-level packages and modules of jitscope, lowest layer first. Names in one layer may import
#: each other (the module graph must still have no circle).
LAYERS: tuple[tuple[str, ...], ...] = (
    # plain data and helpers that import nothing above them
    ("errors", "units", "dtypes", "userframes", "inputs", "outputs", "model", "faults", "stdout", "children"),
    # the only package that touches JAX internals and version quirks
    ("jaxcompat",),
    # the effect monitor; project configuration and the static linter
    ("effects",),
    ("config", "linter"),
    # load: target, argument specs, meshes and the calls to make
    ("load",),
    # trace: jitscope's tracer, lowering and compiling, cache keys, why a trace failed
    ("tracing",),
    # analyse: timing, HLO reading and device-time attribution, sharding analysis, jitscope run,
    # jitscope diff's comparison
    ("timing",),
    ("profiling",),
    ("sharding", "buffers"),
    ("run",),
    # jitscope merge: the runs of every process of one multi-process program, read as one
    ("hosts",),
    ("comparison",),
    ("testing",),
    # jitscope doctor: findings composed from the records above
    ("doctor",),
    # the output layer: what a report shows (report/views/) and how it is written (report/writers/)
    ("report",),
    # the user-facing surface: the Python API, the CLI on top of it, the editor server, notebooks, pytest
    ("api", "cli", "lsp", "notebook", "pytest_plugin", "__main__", "__init__"),
)


def _module_names() -> dict[str, Path]:
    names = {}
    for path in ROOT.rglob("*.py"):
        parts = ["jitscope", *path.relative_to(ROOT).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def _imports(modules: dict[str, Path]) -> dict[str, set[str]]:
    """module -> the jitscope modules it imports (the longest known prefix of each imported name)."""

    def known(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = defaultdict(set)
    for module, path in modules.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parent, *([base] if base else [])])
                targets = [base, *(f"{base}.{alias.name}" for alias in node.names)]
            else:
                continue
            for target in targets:
                found = known(target) if target.startswith("jitscope") else None
                if found and found not in (module, "jitscope"):
                    graph[module].add(found)
    return graph


def _layer_of(module: str) -> int:
    top = module.split(".")[1] if "." in module else "__init__"
    for rank, layer in enumerate(LAYERS):
        if top in layer:
            return rank
    raise AssertionError(f"{module}: its package {top!r} is in no layer; add it to LAYERS in {__file__}")


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_circles() -> None:
    graph = _imports(_module_names())
    assert _cycles(graph) == []


def test_no_package_imports_a_higher_layer() -> None:
    graph = _imports(_module_names())
    upward = sorted(f"{module} -> {target}" for module, targets in graph.items() for target in targets
                    if _layer_of(target) > _layer_of(module))
    assert upward == [], "imports into a higher layer (see LAYERS):\n" + "\n".join(upward)


def test_views_never_import_writers() -> None:
    """Inside the output layer, a view says what a report shows and a writer how it is written: a view
    that imported a writer would tie what is shown to one format."""
    graph = _imports(_module_names())
    inward = sorted(f"{module} -> {target}" for module, targets in graph.items() for target in targets
                    if module.startswith("jitscope.report.views") and target.startswith("jitscope.report.writers"))
    assert inward == []


def test_the_checks_see_a_circle_and_an_upward_import() -> None:
    """The helpers themselves: a two-module circle is found, and model -> cli is upward."""
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    assert _layer_of("jitscope.model.trace") < _layer_of("jitscope.cli.app")


def test_trace_imports_only_what_it_runs() -> None:
    """``jitscope trace``'s start-up is part of what it costs (issue 18: 1.05x a plain script): it must not
    import the other commands' machinery (bench's timing, the profiler's capture reader, the linter, ...)."""
    import os
    import subprocess
    import sys

    code = ("import sys, atexit, runpy\n"
            "atexit.register(lambda: print(sorted(m for m in sys.modules if m.startswith('jitscope.')), "
            "file=sys.stderr))\n"
            "sys.argv = ['jitscope', 'trace', 'mlp.py:predict']\n"
            "runpy.run_module('jitscope', run_name='__main__')\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT.parent / "examples", capture_output=True,
                            text=True, timeout=300, check=False,
                            env={**os.environ, "JAX_PLATFORMS": "cpu", "NO_COLOR": "1"})
    assert result.returncode == 0, result.stderr[-2000:]
    imported = ast.literal_eval(result.stderr.strip().splitlines()[-1])
    assert "jitscope.tracing.session" in imported  # it did trace
    others = ("jitscope.timing", "jitscope.model.bench", "jitscope.profiling.xspace", "jitscope.profiling.runner",
              "jitscope.linter", "jitscope.buffers", "jitscope.comparison", "jitscope.run.", "jitscope.api.commands.bench",
              "jitscope.api.commands.profile", "jitscope.api.commands.memory", "jitscope.api.commands.diff")
    assert [m for m in imported if m.startswith(others)] == []
