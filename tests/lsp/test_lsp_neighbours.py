"""The editor gets what the modules a buffer imports know, as ``jitscope lint`` of the tree does."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

from jitscope.linter import lint_paths
from jitscope.lsp.buffers import lint_buffer
from jitscope.lsp.neighbours import MAX_MODULES, Neighbours

PARAMS = """\
import functools
import jax


@functools.partial(jax.tree_util.register_dataclass, data_fields=["scale"], meta_fields=["trainable"])
class Props:
    def __init__(self, trainable=True, scale=None):
        self.trainable, self.scale = trainable, scale
"""

USE = """\
import jax
from jax.tree_util import tree_map
from .params import Props


@jax.jit
def trainable(params, props):
    return tree_map(lambda node, prop: node if prop.trainable else None, params, props)


@jax.jit
def scaled(params, props):
    return tree_map(lambda node, prop: node if prop.scale else None, params, props)
"""

BASE = """\
from functools import partial
import jax

class Strategy:
    @partial(jax.jit, static_argnames=("self",))
    def tell(self, x, state):
        return self._tell(x, state)

    def _tell(self, x, state):
        return state
"""

SUB = """\
import jax
from pkg.mid import Distribution

class Leaf(Distribution):
    def _tell(self, x, state):
        @jax.jit
        def infer(v):
            return v * state
        return infer(x)
"""


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.jitscope.lint]\n")
    for name, text in {"pkg/__init__.py": "", **files}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(textwrap.dedent(text))
    return tmp_path


def _codes(path: Path, text: str | None = None, neighbours: Neighbours | None = None) -> list[tuple[int, str]]:
    found = lint_buffer(path, path.read_text() if text is None else text, neighbours=neighbours)
    return [(f.line, f.code) for f in found.findings]


def _cli(root: Path, name: str) -> list[tuple[int, str]]:
    return [(f.line, f.code) for f in lint_paths([root], root=root, jobs=1).findings if f.file.endswith(name)]


def test_a_field_a_registration_in_another_module_keeps_static(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"pkg/params.py": PARAMS, "pkg/use.py": USE})
    use = root / "pkg" / "use.py"
    assert _codes(use) == [(8, "JS201"), (13, "JS201")]  # alone, `prop.trainable` looks traced
    assert _codes(use, neighbours=Neighbours()) == [(13, "JS201")] == _cli(root, "use.py")


def test_a_method_traced_through_base_classes_in_other_modules(tmp_path: Path) -> None:
    """sub.py imports mid.py, which imports base.py, where tell() (jitted) calls _tell(): Leaf._tell is
    traced, so the jit inside it is built once per trace, not per call (no JS303)."""
    root = _tree(tmp_path, {"pkg/base.py": BASE, "pkg/mid.py": "from pkg.base import Strategy\n"
                            "class Distribution(Strategy):\n    pass\n", "pkg/sub.py": SUB})
    sub = root / "pkg" / "sub.py"
    assert (6, "JS303") in _codes(sub)
    assert _codes(sub, neighbours=Neighbours()) == [] == _cli(root, "sub.py")


def test_facts_follow_the_other_modules_edits_saved_or_not(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"pkg/params.py": PARAMS, "pkg/use.py": USE})
    use, params = root / "pkg" / "use.py", root / "pkg" / "params.py"
    unsaved: dict[Path, str] = {}
    neighbours = Neighbours(lambda path: unsaved.get(path))
    assert _codes(use, neighbours=neighbours) == [(13, "JS201")]
    # params.py open in the editor, `scale` moved to the static fields too (unsaved)
    unsaved[params.resolve()] = PARAMS.replace('data_fields=["scale"], meta_fields=["trainable"]',
                                               'data_fields=[], meta_fields=["trainable", "scale"]')
    assert _codes(use, neighbours=neighbours) == []
    # closed without saving; then the file changes on disk: the new facts are read
    del unsaved[params.resolve()]
    assert _codes(use, neighbours=neighbours) == [(13, "JS201")]
    params.write_text(PARAMS.replace('meta_fields=["trainable"]', "meta_fields=[]"))
    stat = params.stat()
    os.utime(params, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert _codes(use, neighbours=neighbours) == [(8, "JS201"), (13, "JS201")]


def test_only_the_buffers_own_tree_is_read_and_only_so_much(tmp_path: Path) -> None:
    """Installed packages are never read (jax is imported everywhere); a module graph larger than
    MAX_MODULES stops there instead of reading the whole tree on every keystroke."""
    chain = {f"pkg/m{i}.py": f"from pkg import m{i + 1}\n" for i in range(MAX_MODULES + 10)}
    root = _tree(tmp_path, {**chain, "pkg/params.py": PARAMS, "pkg/use.py": "from pkg import m0\n" + USE})
    read: list[Path] = []
    neighbours = Neighbours(lambda path: read.append(path))  # type: ignore[func-returns-value]
    lint_buffer(root / "pkg" / "use.py", (root / "pkg" / "use.py").read_text(), neighbours=neighbours)
    assert 0 < len(read) <= MAX_MODULES + 1
    assert all(path.is_relative_to(root) for path in read)
