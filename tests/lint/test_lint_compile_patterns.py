"""The ways real libraries compile code (issue 34): each pattern with a hazard inside, found, and a
clean twin, quiet. Project jit factories (forwarding closures, factories of factories, partial of a
factory, across modules), ``jax.jit(obj.method)`` / ``partial(obj.method)`` / ``getattr(obj, name)``,
modules compiled through the module, objects held by ``self``; the captured-constant rule (JS307);
and the false alarms of the issue's reading, fixed as patterns."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from jitscope.linter import lint_paths
from tests.lint.helpers import lint

_CONCRETIZE = """
    def step(x):
        total = jnp.sum(x)
        return {body}
"""

# name -> (how the function is compiled; {fn} is where `step` goes)
PATTERNS: dict[str, str] = {
    "factory-forwarding-closure": """
        def compiled(fn):
            jitted = jax.jit(fn)
            @functools.wraps(fn)
            def wrapper(*args):
                return jitted(*args)
            return wrapper
        fast = compiled(step)
    """,
    "factory-jitted-closure": """
        def compiled(fn):
            @jax.jit
            def inner(*args):
                return fn(*args)
            return inner
        fast = compiled(step)
    """,
    "factory-of-factory-decorator": """
        def compiled(fn):
            return jax.jit(fn)
        def staged(fn):
            return compiled(fn)
        fast = staged(step)
    """,
    "partial-of-factory": """
        def compiled(fn, donate_argnums=()):
            return jax.jit(fn, donate_argnums=donate_argnums)
        fast = functools.partial(compiled, donate_argnums=0)(step)
    """,
}

_HAZARD = "float(total)"
_CLEAN = "total * 2"


def _module(pattern: str, body: str) -> str:
    return (
        "import functools\nimport jax\nimport jax.numpy as jnp\n"
        + textwrap.dedent(_CONCRETIZE.format(body=body))
        + textwrap.dedent(PATTERNS[pattern])
    )


@pytest.mark.parametrize("pattern", sorted(PATTERNS))
def test_hazard_inside_a_factory_is_found(pattern: str) -> None:
    assert "JS202" in [f.code for f in lint(_module(pattern, _HAZARD))]


@pytest.mark.parametrize("pattern", sorted(PATTERNS))
def test_clean_twin_of_a_factory_is_quiet(pattern: str) -> None:
    assert [f.code for f in lint(_module(pattern, _CLEAN))] == []


_METHODS = """
import functools
import jax
import jax.numpy as jnp


class Env:
    def step(self, state, action):
        total = jnp.sum(state) + action
        return {body}


class Snake(Env):
    pass


def run(env: Env, state):
    return {compile}(state, 1)


def main_like():
    env = Snake()
    return {compile}
"""

METHOD_COMPILES = {
    "bound-method": "jax.jit(env.step)",
    "partial-of-bound-method": "jax.jit(functools.partial(env.step, action=1))",
    "getattr": 'jax.jit(getattr(env, "step"))',
}


@pytest.mark.parametrize("how", sorted(METHOD_COMPILES))
@pytest.mark.parametrize(("body", "expected"), [(_HAZARD, ["JS202"]), (_CLEAN, [])])
def test_jit_of_an_instance_method(how: str, body: str, expected: list[str]) -> None:
    source = _METHODS.format(body=body, compile=METHOD_COMPILES[how])
    assert sorted({f.code for f in lint(source)} - {"JS303"}) == expected


@pytest.mark.parametrize(("body", "expected"), [("int(y.sum())", ["JS202"]), ("y.sum()", [])])
def test_modules_compiled_through_the_module(body: str, expected: list[str]) -> None:
    """``jax.jit(net.apply)`` (flax) and ``eqx.filter_jit(model)``: the module's ``__call__`` is traced."""
    source = f"""
    import equinox as eqx
    import flax.linen as nn
    import jax

    class Dense(nn.Module):
        features: int

        @nn.compact
        def __call__(self, x):
            y = nn.Dense(self.features)(x)
            return {body}

    class MLP(eqx.Module):
        width: int

        def __call__(self, x: jax.Array):
            y = x * self.width
            return {body}

    def train(x):
        net = Dense(4)
        model = MLP(3)
        return jax.jit(net.apply)({{}}, x), eqx.filter_jit(model)(x)
    """
    found = [f for f in lint(source) if f.code != "JS303"]
    assert [f.code for f in found] == expected * 2
    if expected:
        assert {f.function for f in found} == {"Dense.__call__", "MLP.__call__"}


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


_STAGING = """
import functools
import jax

def staged(method, static_argnums=None):
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    static_argnums = (0,) + tuple(i + 1 for i in (static_argnums or ()))
    jitted = jax.jit(method, static_argnums=static_argnums)

    @functools.wraps(method)
    def decorated(instance, *args):
        return jitted(instance, *args)

    return decorated
"""


@pytest.mark.parametrize(("body", "expected"), [("float(jnp.sum(state))", {"JS202"}), ("jnp.sum(state)", set())])
def test_a_staging_decorator_of_another_module_through_a_re_export(
    tmp_path: Path, body: str, expected: set[str]
) -> None:
    """kfac-jax's shape: ``@utils.staged`` where ``utils/__init__.py`` re-exports ``staging.staged`` by
    assignment; ``partial(utils.staged, static_argnums=1)`` counts after ``self`` (both numberings are
    static, so the static flag is never taken for traced)."""
    _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/utils/__init__.py": "from pkg.utils import staging\nstaged = staging.staged\n",
            "pkg/utils/staging.py": _STAGING,
            "pkg/optimizer.py": f"""
            import functools
            import jax.numpy as jnp
            from pkg import utils

            class Optimizer:
                @utils.staged
                def step(self, state):
                    return {body}

                @functools.partial(utils.staged, static_argnums=1)
                def update(self, state, flag):
                    if flag:
                        return state
                    return -state
            """,
        },
    )
    report = lint_paths([tmp_path], root=tmp_path, jobs=1)
    assert {f.code for f in report.findings} == expected


@pytest.mark.parametrize(("body", "expected"), [("float(jnp.sum(state))", {"JS202"}), ("jnp.sum(state)", set())])
def test_objects_held_by_self_and_overrides_of_a_generic_base(
    tmp_path: Path, body: str, expected: set[str]
) -> None:
    """jumanji's shape: ``jax.jit(env.step)`` on a parameter annotated with the base class, whose
    ``step`` calls ``self.reward_fn(state)``; the reward class is a generic base's subclass in another module."""
    _write(
        tmp_path,
        {
            "envs/__init__.py": "",
            "envs/base.py": """
            import abc
            from typing import Generic, TypeVar
            T = TypeVar("T")

            class Environment(abc.ABC, Generic[T]):
                @abc.abstractmethod
                def step(self, state, action):
                    ...

            class RewardFn(abc.ABC):
                @abc.abstractmethod
                def __call__(self, state):
                    ...
            """,
            "envs/snake.py": f"""
            from typing import Optional
            import jax.numpy as jnp
            from envs.base import Environment, RewardFn

            class DenseReward(RewardFn):
                def __call__(self, state):
                    return {body}

            class Snake(Environment[int]):
                def __init__(self, reward_fn: Optional[RewardFn] = None):
                    self.reward_fn = reward_fn or DenseReward()

                def step(self, state, action):
                    return state + action, self.reward_fn(state)
            """,
            "envs/smoke.py": """
            import jax
            from envs.base import Environment

            def check(env: Environment, state):
                step = jax.jit(env.step)
                return step(state, 1)
            """,
        },
    )
    report = lint_paths([tmp_path], root=tmp_path, jobs=1)
    assert {f.code for f in report.findings} == expected


# -- JS307 captured-constant -----------------------------------------------------------------------

_CONSTANTS = """
import jax
import jax.numpy as jnp
import numpy as np

TABLE = np.random.rand(4096, 4096)
SMALL = jnp.zeros((16, 16))


@jax.jit
def lookup(i):
    return TABLE[i] + SMALL[i]


def make(path):
    data = np.load(path)

    @jax.jit
    def pick(i):
        return data[i]

    return pick


class Generator:
    def __init__(self, path):
        with open(path, "rb") as f:
            dataset = np.load(f)
        self._grids = jnp.asarray(dataset[:10, ..., 0], jnp.uint8)

    def reset(self, key):
        idx = jax.random.randint(key, (), 0, self._grids.shape[0])
        return self._grids.take(idx, axis=0)


def main(path):
    return jax.jit(Generator(path).reset)
"""


def test_captured_constants_are_found_with_their_size_or_origin() -> None:
    found = {(f.line, f.message.split(",")[1].strip()) for f in lint(_CONSTANTS) if f.code == "JS307"}
    assert found == {
        (12, "a 128 MiB array at module level"),
        (20, "an array loaded from disk in the enclosing function"),
        (33, "an array loaded from disk held by `Generator`"),  # the take, not the .shape read
    }
    (first, *_) = [f for f in lint(_CONSTANTS) if f.code == "JS307"]
    assert "jitscope trace" in first.suggestion


def test_captured_constants_passed_as_arguments_are_quiet() -> None:
    source = """
    import flax.struct
    import jax
    import numpy as np

    TABLE = np.random.rand(4096, 4096)

    @jax.jit
    def lookup(table, i):
        return table[i]

    @flax.struct.dataclass
    class Data:
        grids: jax.Array

        def reset(self, i):
            return self.grids[i]

    def main(path):
        data = Data(np.load(path))
        return lookup(TABLE, 3), jax.jit(data.reset)
    """
    assert [f.code for f in lint(source) if f.code == "JS307"] == []


# -- the false alarms of the reading ---------------------------------------------------------


@pytest.mark.parametrize(("annotation", "expected"), [("Dict", []), ("jax.Array", ["JS201"])])
def test_truth_of_a_container_field_is_static(annotation: str, expected: list[str]) -> None:
    source = f"""
    import dataclasses
    from typing import Dict
    import jax

    @dataclasses.dataclass
    class TimeStep:
        reward: jax.Array
        extras: {annotation}

    def evaluate(timesteps):
        def one(timestep: TimeStep):
            metrics = {{"reward": timestep.reward}}
            extras = timestep.extras
            if extras:
                metrics["extras"] = extras
            return metrics
        return jax.vmap(one)(timesteps)
    """
    assert [f.code for f in lint(source)] == expected


@pytest.mark.parametrize(
    ("decorator", "expected"), [("@hydra.main(config_path='c')", []), ("@functools.lru_cache(1)", []), ("", ["JS303"])]
)
def test_a_closure_pmapped_in_a_run_once_entry_point(decorator: str, expected: list[str]) -> None:
    source = f"""
    import functools
    import hydra
    import jax

    {decorator}
    def train(cfg):
        @functools.partial(jax.pmap, axis_name="devices")
        def epoch_fn(state):
            return state * cfg.lr
        return epoch_fn(cfg.state)
    """
    found = lint(textwrap.dedent(source).replace("\n\n\n", "\n\n"))
    assert [f.code for f in found] == expected
    for finding in found:
        assert "closure" in finding.message and "bound method" not in finding.message


def test_a_closure_built_in_a_function_called_from_the_main_block_is_quiet() -> None:
    source = """
    import jax

    def run(cfg):
        @jax.jit
        def step(x):
            return x * cfg
        return step(cfg)

    if __name__ == "__main__":
        run(3.0)
    """
    assert [f.code for f in lint(source)] == []


@pytest.mark.parametrize(("setter", "expected"), [
    ("def set_scale(value):\n    '''Before compiling.'''\n    global _SCALE\n    _SCALE = value\n", []),
    ("def train(xs):\n    global _SCALE\n    out = [f(x) for x in xs]\n    _SCALE = 2.0\n    return out\n", ["JS105"]),
])  # fmt: skip
def test_a_switch_changed_only_by_its_setter_is_configuration(setter: str, expected: list[str]) -> None:
    source = "import jax\n_SCALE = 1.0\n" + setter + "@jax.jit\ndef f(x):\n    return x * _SCALE\n"
    assert [f.code for f in lint(source)] == expected


# -- false alarms found while judging the newly reached code -----------------------------------------


def test_the_key_path_of_tree_map_with_path_is_static() -> None:
    """``jax.tree.map_with_path(f, tree)`` calls ``f(path, leaf)``: the path is a tuple of keys."""
    source = """
    import jax
    import jax.numpy as jnp

    @jax.jit
    def mask(params):
        def one(path, leaf):
            names = []
            for p in path:
                if isinstance(p, jax.tree_util.DictKey):
                    names.append(p.key)
            if leaf.sum() > 0:
                return leaf
            return jnp.zeros_like(leaf) if "bias" in names else leaf
        return jax.tree.map_with_path(one, params)
    """
    assert [(f.code, f.line) for f in lint(source)] == [("JS201", 12)]


def test_comparing_abstract_values_is_static() -> None:
    source = """
    import jax
    from pkg.utils import abstract_objects_equal

    @jax.jit
    def add(a, b):
        assert abstract_objects_equal(a, b)
        return a + b
    """
    assert [f.code for f in lint(source)] == []


@pytest.mark.parametrize(("guard", "expected"), [("isinstance(c[1], float) and ", []), ("", ["JS201"])])
def test_isinstance_of_a_part_narrows_the_rest_of_the_and(guard: str, expected: list[str]) -> None:
    source = f"""
    import jax

    @jax.jit
    def f(x, c):
        if {guard}c[1] == 0.0:
            return x
        return x * c[1]
    """
    assert [f.code for f in lint(source)] == expected


@pytest.mark.parametrize(("made", "mib"), [("np.ones((1024, 1024), np.float32)", 4), ("np.ones((1024, 1024))", 8),
                                           ("np.full((1024, 1024), 0.5, np.float16)", 2),
                                           ("np.zeros((1024, 1024), dtype='float32')", 4)])
def test_a_constants_size_reads_its_dtype_given_by_position_or_keyword(made: str, mib: int) -> None:
    source = f"""
import jax
import jax.numpy as jnp
import numpy as np

TABLE = {made}


@jax.jit
def lookup(i):
    return jnp.asarray(TABLE)[i].sum()
"""
    (found,) = [f for f in lint(source) if f.code == "JS307"]
    assert f"a {mib} MiB array at module level" in found.message
