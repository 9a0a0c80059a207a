"""What the modules a buffer imports know: ``jitscope lint``'s cross-module facts, for one file.

``jitscope lint`` over a tree lints every module once, then gives each one what the modules it imports
know (:func:`jitscope.linter.module_facts.imported_facts`): fields a pytree registration there keeps
static, jit factories with literal static arguments, methods that return a static value; and it asks
for methods that override a base-class method traced in another module to be checked as traced
(:func:`~jitscope.linter.module_facts.override_requests`). Without them, the editor would flag
``prop.trainable`` in a jitted function where ``trainable`` is a ``meta_fields`` entry of a class
registered in ``params.py``, which ``jitscope lint`` in CI does not.

:class:`Neighbours` finds the modules a buffer imports, and the modules those import (in the buffer's
own tree, at most ``MAX_MODULES``, never installed packages), lints each once for its facts (kept until
the file changes; an open buffer's unsaved text is used where the server has one), and hands the
buffer's lint the same facts and requests the CLI's would get.

What it does not do: findings in this buffer that only a *caller* in another module causes (a helper
in ``utils.py`` that only ``train.py`` jits) need every module that imports this one, the whole tree:
``jitscope lint`` finds those.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from jitscope.linter.analysis.discovered import ExternalRef
from jitscope.linter.analysis.module_index import ImportedFacts
from jitscope.linter.files import SourceFileRef, collect_files
from jitscope.linter.module_facts import ModuleFacts, imported_facts, override_requests
from jitscope.linter.runner import FileTask, lint_data, lint_one

#: Modules read for one buffer, at most (its imports, then theirs).
MAX_MODULES = 64


@dataclass(frozen=True, slots=True)
class Context:
    """What one buffer's lint gets from the modules it imports."""

    imported: ImportedFacts | None = None
    #: (name in the buffer's module, request): methods to check as traced (overrides of traced methods)
    requests: tuple[tuple[str, ExternalRef], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.imported) or bool(self.requests)


@dataclass(slots=True)
class Neighbours:
    """The facts of the modules buffers import, each kept until its file (or open buffer) changes."""

    #: the unsaved text of an open buffer, by resolved path (None: read the file)
    open_text: Callable[[Path], str | None] = lambda path: None
    _facts: dict[tuple[str, frozenset[str]], tuple[object, ModuleFacts]] = field(default_factory=dict)

    def context(self, ref: SourceFileRef, facts: ModuleFacts, codes: frozenset[str],
                root: Path, exclude: tuple[str, ...]) -> Context:
        """The facts and requests the buffer ``ref`` (whose first pass found ``facts``) gets."""
        base = _tree_base(ref)
        if base is None:
            return Context()
        refs, all_facts = [ref], [facts]
        seen = {Path(ref.path)}
        queue = list(facts.imports)
        files: dict[str, Path | None] = {}  # every module imports jax: each dotted name is looked up once
        while queue and len(refs) <= MAX_MODULES:
            _, dotted = queue.pop(0)
            if dotted not in files:
                files[dotted] = _module_file(base, dotted)
            path = files[dotted]
            if path is None or path in seen:
                continue
            seen.add(path)
            found = collect_files([path], root, exclude).files  # the engine's module name; excludes apply
            if not found:
                continue
            module_facts = self._facts_of(found[0], codes)
            refs.append(found[0])
            all_facts.append(module_facts)
            queue.extend(module_facts.imports)
        modules: dict[str, list[int]] = {}
        for index, each in enumerate(refs):
            modules.setdefault(each.module, []).append(index)
        prefix = ref.module + "."
        requests = tuple((request.qualname[len(prefix):], request)
                         for index, request in override_requests(modules, all_facts)
                         if index == 0 and request.qualname.startswith(prefix))
        return Context(imported_facts(modules, all_facts).get(0), requests)

    def _facts_of(self, ref: SourceFileRef, codes: frozenset[str]) -> ModuleFacts:
        text = self.open_text(Path(ref.path))
        try:
            stamp: object = text if text is not None else os.stat(ref.path).st_mtime_ns
        except OSError:
            return ModuleFacts()
        key = (ref.path, codes)
        cached = self._facts.get(key)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        task = FileTask(ref, codes)
        result = lint_one(task) if text is None else lint_data(task, text.encode("utf-8", errors="surrogatepass"))
        self._facts[key] = (stamp, result.facts)
        return result.facts


def _tree_base(ref: SourceFileRef) -> Path | None:
    """The folder the module's dotted name starts from (``/src`` for ``/src/pkg/use.py``, ``pkg.use``)."""
    if not os.path.isabs(ref.path):
        return None
    depth = len(ref.module.split(".")) - (0 if ref.is_package else 1)
    parents = Path(ref.path).parents
    return parents[depth] if depth < len(parents) else None


def _module_file(base: Path, dotted: str) -> Path | None:
    """The file of the longest module prefix of ``dotted`` under ``base`` (``pkg.params.Props`` ->
    ``base/pkg/params.py``), or None when it is not in this tree."""
    parts = dotted.split(".")
    if not (base / parts[0]).is_dir() and not (base / f"{parts[0]}.py").is_file():
        return None  # jax, numpy...: not a module of this tree
    for cut in range(len(parts), 0, -1):
        folder = base.joinpath(*parts[:cut])
        for candidate in (folder.with_suffix(".py"), folder / "__init__.py"):
            if candidate.is_file():
                return candidate.resolve()
    return None
