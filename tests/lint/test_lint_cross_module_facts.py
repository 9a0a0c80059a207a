"""Facts one module knows and another needs: the last wrong findings on the untuned corpus.

- a field kept static by a custom pytree registration in another module (dynamax's
  ``ParameterProperties.trainable``);
- a method traced because a base class in another module calls it from jitted code (evosax's
  ``_tell``): a fresh jit inside it is traced with its caller, not rebuilt per call;
- a tree structure compared with another (``jax.custom_gradient``'s ``bwd``): Python equality.

Each test also checks the hazardous sibling is still found.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from jitscope.linter import lint_paths
from tests.lint.helpers import codes


def _lint_project(tmp_path: Path, files: dict[str, str]) -> list[tuple[str, int, str]]:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    report = lint_paths([tmp_path], root=tmp_path, jobs=1)
    return [(Path(f.file).name, f.line, f.code) for f in report.findings]


_USE = """
import jax
from jax.tree_util import tree_map
from pkg.params import Props

@jax.jit
def trainable(params, props):
    return tree_map(lambda node, prop: node if prop.{attr} else None, params, props)
"""

_REGISTRATIONS = {
    "class decorator": """
        from jax.tree_util import register_pytree_node_class

        @register_pytree_node_class
        class Props:
            def __init__(self, trainable=True, scale=None):
                self.trainable, self.scale = trainable, scale
            def tree_flatten(self):
                aux = (self.trainable,)
                return (self.scale,), aux
            @classmethod
            def tree_unflatten(cls, aux, children):
                return cls(aux[0], children[0])
        """,
    "register_pytree_node": """
        import jax

        class Props:
            def __init__(self, trainable=True, scale=None):
                self.trainable, self.scale = trainable, scale

        def _flatten(p):
            return (p.scale,), (p.trainable,)

        jax.tree_util.register_pytree_node(Props, _flatten, lambda aux, ch: Props(aux[0], ch[0]))
        """,
    "register_dataclass": """
        import dataclasses
        import functools
        import jax

        @functools.partial(jax.tree_util.register_dataclass, data_fields=["scale"], meta_fields=["trainable"])
        @dataclasses.dataclass
        class Props:
            trainable: object
            scale: object
        """,
}


@pytest.mark.parametrize("registration", sorted(_REGISTRATIONS))
def test_field_static_through_a_registration_in_another_module(tmp_path: Path, registration: str) -> None:
    files = {"pkg/__init__.py": "", "pkg/params.py": _REGISTRATIONS[registration]}
    quiet = _lint_project(tmp_path / "quiet", {**files, "pkg/use.py": _USE.format(attr="trainable")})
    assert not [f for f in quiet if f[0] == "use.py"]
    hazard = _lint_project(tmp_path / "hazard", {**files, "pkg/use.py": _USE.format(attr="scale")})
    assert ("use.py", 8, "JS201") in hazard


_BASE = """
from functools import partial
import jax

class Strategy:
    @partial(jax.jit, static_argnames=("self",))
    def tell(self, x, state):
        return self._tell(x, state)

    def _tell(self, x, state):
        return state
"""

_SUB = """
import jax
from pkg.base import Strategy

class {name}({base}):
    def _tell(self, x, state):
        @jax.jit
        def infer(v):
            return v * state
        return infer(x)
"""


def test_override_of_a_method_traced_in_a_base_class_module(tmp_path: Path) -> None:
    files = {"pkg/__init__.py": "", "pkg/base.py": _BASE}
    quiet = _lint_project(
        tmp_path / "quiet", {**files, "pkg/sub.py": _SUB.format(name="EvoTF", base="Strategy")}
    )
    assert not [f for f in quiet if f[0] == "sub.py"]
    hazard = _lint_project(
        tmp_path / "hazard", {**files, "pkg/sub.py": _SUB.format(name="Plain", base="object")}
    )
    assert ("sub.py", 7, "JS303") in hazard


def test_override_through_an_intermediate_class_and_its_traced_helpers(tmp_path: Path) -> None:
    """The override is traced (so its own hazards are found) through a chain of base classes."""
    files = {
        "pkg/__init__.py": "",
        "pkg/base.py": _BASE,
        "pkg/mid.py": "from pkg.base import Strategy\nclass Distribution(Strategy):\n    pass\n",
        "pkg/sub.py": """
            from pkg.mid import Distribution
            class Leaf(Distribution):
                def _tell(self, x, state):
                    if x > 0:
                        return state
                    return x
            """,
    }
    assert ("sub.py", 5, "JS201") in _lint_project(tmp_path, files)


def test_tree_structures_compare_in_python() -> None:
    source = """
    import jax
    from jax.tree_util import tree_flatten, tree_structure

    @jax.custom_vjp
    def f(x):
        return x

    def bwd(res, cts):
        flat, in_tree = res
        cts_flat, out_tree = tree_flatten((cts,))
        if in_tree != out_tree:
            raise TypeError("structure changed")
        if in_tree == tree_structure(cts):
            pass
        if in_tree != flat:
            pass
        return (cts,)

    f.defvjp(lambda x: (x, (x, None)), bwd)
    """
    assert codes(source) == ["JS201"]  # only `in_tree != flat`: two traced values
