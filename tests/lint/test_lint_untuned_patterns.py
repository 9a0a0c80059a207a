"""False-positive patterns found by reading every finding on JAX projects the rules were never tuned on
(numpyro, blackjax, lineax, dynamax, optimistix, evosax, ...; see benchmarks/lint_false_positives.py).

Each case is a pair: correct code that must produce no finding of the rule, and a sibling that differs
in the one way that makes it a hazard, which must still be found.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from jitscope.linter import lint_paths
from tests.lint.helpers import codes, lint

#: name -> (rule, correct code, hazardous sibling)
PAIRS: dict[str, tuple[str, str, str]] = {
    "predicate-from-another-module": (
        "JS201",
        """
        from jax import lax
        from mylib.util import not_jax_tracer
        def run(xs):
            def body(c, i):
                init = True if not_jax_tracer(i) else False
                return c, init
            return lax.scan(body, 0, xs)
        """,
        """
        from jax import lax
        import jax.numpy as jnp
        def run(xs):
            def body(c, i):
                init = True if jnp.isnan(i) else False
                return c, init
            return lax.scan(body, 0, xs)
        """,
    ),
    "equinox-is-array-in-tree-map": (
        "JS201",
        """
        import jax, jax.numpy as jnp
        import equinox as eqx
        @jax.jit
        def f(tree):
            return jax.tree_util.tree_map(lambda x: jnp.zeros_like(x) if eqx.is_array(x) else x, tree)
        """,
        """
        import jax, jax.numpy as jnp
        @jax.jit
        def f(tree):
            return jax.tree_util.tree_map(lambda x: jnp.zeros_like(x) if x.sum() > 0 else x, tree)
        """,
    ),
    "tree-size-helper-is-static": (
        "JS201",
        """
        import jax
        from mylib.util import pytree_size
        @jax.jit
        def init(position):
            if pytree_size(position) < 2:
                raise ValueError("need at least two dimensions")
            return position
        """,
        """
        import jax
        from mylib.util import normalize
        @jax.jit
        def init(position):
            if normalize(position) < 2:
                raise ValueError("too small")
            return position
        """,
    ),
    "trace-metadata-from-another-module": (
        "JS201",
        """
        import jax, jax.numpy as jnp
        from mylib.handlers import substitute, trace
        @jax.jit
        def log_density(params):
            model_trace = trace(substitute(model, data=params)).get_trace()
            total = 0.0
            for site in model_trace.values():
                if site["intermediates"]:
                    total = total + 1.0
                if site.get("is_observed", False):
                    total = total + jnp.sum(site["value"])
            return total
        """,
        """
        import jax, jax.numpy as jnp
        from mylib.handlers import substitute, trace
        @jax.jit
        def log_density(params):
            total = jnp.sum(params["w"])
            if total > 0:
                total = -total
            return total
        """,
    ),
    "literal-pairs-of-param-and-int": (
        "JS201",
        """
        import jax
        @jax.jit
        def f(params, emissions):
            n = emissions.shape[0]
            for param, ndim in ((params.weights, 2), (params.bias, 1)):
                if param is not None and param.ndim == ndim + 1:
                    assert param.shape[0] == n
            return emissions
        """,
        """
        import jax
        @jax.jit
        def f(params, emissions):
            for param, ndim in ((params.weights, 2), (params.bias, 1)):
                if param.sum() > ndim:
                    return emissions
            return emissions
        """,
    ),
    "loop-carry-alias-mutated-and-returned": (
        "JS104",
        """
        from jax import lax
        def solve(state):
            def body(loop_state):
                st = loop_state
                st["itn"] = st["itn"] + 1
                return st
            return lax.while_loop(lambda s: s["itn"] < 10, body, state)
        """,
        """
        from jax import lax
        def solve(state):
            log = {}
            def body(loop_state):
                log["itn"] = 1
                return loop_state
            return lax.while_loop(lambda s: s["itn"] < 10, body, state)
        """,
    ),
    "helper-argument-mutated-and-returned": (
        "JS104",
        """
        import jax
        def bump(d, k):
            d[k] = d[k].at[0].set(1.0)
            return d
        @jax.jit
        def f(x):
            return bump({"a": x}, "a")
        """,
        """
        import jax
        CACHE = {}
        def bump(d, k):
            CACHE[k] = 1
            return d
        @jax.jit
        def f(x):
            return bump({"a": x}, "a")
        """,
    ),
    "sites-of-a-trace-built-in-this-call": (
        "JS104",
        """
        import jax
        from mylib.handlers import trace
        @jax.jit
        def f(params):
            guide_trace = trace(guide).get_trace(params)
            model_trace = trace(model).get_trace(params)
            for tr in (guide_trace, model_trace):
                for site in tr.values():
                    site["log_prob"] = site["value"] * 2
            return model_trace
        """,
        """
        import jax
        from mylib.handlers import trace
        SITES = {}
        @jax.jit
        def f(params):
            for site in SITES.values():
                site["log_prob"] = 2
            return params
        """,
    ),
    "result-of-a-method-call-on-a-closed-over-object": (
        "JS104",
        """
        import jax
        def make(model, x):
            @jax.jit
            def init(key):
                params = model.init(key, x)["params"]
                params["head"] = params["head"] * 0
                return params
            return init
        """,
        """
        import jax
        def make(model, x):
            params = model.init(0, x)["params"]
            @jax.jit
            def init(key):
                params["head"] = None
                return key
            return init
        """,
    ),
    "static-dataclass-fields": (
        "JS202",
        """
        import dataclasses, jax
        from flax import struct
        class Cfg(struct.PyTreeNode):
            n: int = struct.field(pytree_node=False)
            m: int = dataclasses.field(metadata={"static": True})
            w: jax.Array = None
        @jax.jit
        def f(cfg, x):
            for i in range(cfg.n + cfg.m):
                x = x * cfg.w
            return x
        """,
        """
        import jax
        from flax import struct
        class Cfg(struct.PyTreeNode):
            n: int = struct.field(pytree_node=False)
            w: jax.Array = None
        @jax.jit
        def f(cfg, x):
            for i in range(cfg.w):
                x = x + i
            return x
        """,
    ),
    "psum-of-one-is-the-axis-size": (
        "JS202",
        """
        import jax
        from jax import lax
        @jax.pmap
        def f(x):
            for i in range(lax.psum(1, "i") + lax.axis_size("i")):
                x = x + i
            return x
        """,
        """
        import jax
        from jax import lax
        @jax.pmap
        def f(x):
            for i in range(lax.psum(x, "i")):
                x = x + i
            return x
        """,
    ),
    "if-inside-try-except-concretization-error": (
        "JS201",
        """
        import jax
        @jax.jit
        def f(x):
            try:
                if x > 0:
                    x = x + 1
            except jax.errors.ConcretizationTypeError:
                pass
            return x
        """,
        """
        import jax
        @jax.jit
        def f(x):
            try:
                if x > 0:
                    x = x + 1
            except ValueError:
                pass
            return x
        """,
    ),
    "attribute-set-on-a-local-function": (
        "JS104",
        """
        import inspect, jax
        @jax.jit
        def f(x):
            def g(y):
                return y
            g.__signature__ = inspect.signature(f)
            return g(x)
        """,
        """
        import inspect, jax
        def g(y):
            return y
        @jax.jit
        def f(x):
            g.__signature__ = inspect.signature(f)
            return g(x)
        """,
    ),
    "static-argument-through-value-and-grad": (
        "JS202",
        """
        import jax, jax.numpy as jnp
        def loss_fn(x, n_heads):
            return jnp.sum(x.reshape(n_heads, -1))
        @jax.jit
        def step(x):
            return jax.value_and_grad(loss_fn)(x, 4)
        """,
        """
        import jax, jax.numpy as jnp
        def loss_fn(x, n_heads):
            return jnp.sum(x.reshape(n_heads, -1))
        @jax.jit
        def step(x):
            return jax.value_and_grad(loss_fn, argnums=(0, 1))(x, 4)
        """,
    ),
    "numpy-on-an-argument-grad-does-not-differentiate": (
        "JS203",
        """
        import jax, jax.numpy as jnp
        import numpy as np
        def loss_fn(x, n_heads):
            return jnp.sum(x) / np.sqrt(n_heads)
        @jax.jit
        def train(x):
            grad_fn = jax.grad(loss_fn)
            return grad_fn(x, 4)
        """,
        """
        import jax, jax.numpy as jnp
        import numpy as np
        def loss_fn(x, n_heads):
            return np.sqrt(jnp.sum(x)) / n_heads
        @jax.jit
        def train(x, n_heads):
            grad_fn = jax.grad(loss_fn)
            return grad_fn(x, n_heads)
        """,
    ),
    "unmapped-argument-of-vmap-called-at-once": (
        "JS202",
        """
        import jax, jax.numpy as jnp
        def head(x, n):
            return x.reshape(n, -1).sum(0)
        @jax.jit
        def f(xs):
            return jax.vmap(head, in_axes=(0, None))(xs, 2)
        """,
        """
        import jax, jax.numpy as jnp
        def head(x, n):
            return x.reshape(n, -1).sum(0)
        @jax.jit
        def f(xs, n):
            return jax.vmap(head, in_axes=(0, None))(xs, n)
        """,
    ),
    "tree-map-over-a-tree-of-python-bools": (
        "JS201",
        """
        import jax
        def weight_mask(params):
            return jax.tree_util.tree_map(lambda p: p.ndim > 1, params)
        @jax.jit
        def f(params, r):
            flags = jax.tree_util.tree_map(lambda p: isinstance(p, float), params)
            params = jax.tree_util.tree_map(lambda v, f: r if f else v, params, flags)
            return jax.tree.map(lambda v, f: r if f else v, params, weight_mask(params))
        """,
        """
        import jax
        @jax.jit
        def f(params, r):
            flags = jax.tree_util.tree_map(lambda p: p.sum() > 1, params)
            return jax.tree_util.tree_map(lambda v, f: r if f else v, params, flags)
        """,
    ),
    "list-padded-to-a-fixed-size": (
        "JS304",
        """
        import jax
        @jax.jit
        def f(x):
            return x.sum()
        def run(stream, size, pad):
            buf = []
            for x in stream:
                buf.append(x)
                padded = buf + [pad] * (size - len(buf))
                f(padded)
        """,
        """
        import jax
        @jax.jit
        def f(x):
            return x.sum()
        def run(stream, size, pad):
            buf = []
            for x in stream:
                buf.append(x)
                padded = buf + [pad] * 2
                f(padded)
        """,
    ),
    "list-padded-by-a-while-loop": (
        "JS304",
        """
        import jax, numpy as np
        @jax.jit
        def f(x):
            return x.sum()
        def run(data, bs):
            batch = []
            for item in data:
                batch.append(item)
                while len(batch) < bs:
                    batch.append(item)
                f(np.stack(batch))
        """,
        """
        import jax, numpy as np
        @jax.jit
        def f(x):
            return x.sum()
        def run(data, bs):
            batch = []
            for item in data:
                batch.append(item)
                while len(batch) < bs:
                    pass
                f(np.stack(batch))
        """,
    ),
    "list-passed-only-when-full": (
        "JS304",
        """
        import jax, jax.numpy as jnp
        @jax.jit
        def f(x):
            return x.sum()
        def run(data, bs):
            batch = []
            for item in data:
                batch.append(item)
                if len(batch) >= bs:
                    f(jnp.stack(batch))
                    batch = []
        """,
        """
        import jax, jax.numpy as jnp
        @jax.jit
        def f(x):
            return x.sum()
        def run(data, bs):
            batch = []
            for item in data:
                batch.append(item)
                if len(batch) >= bs:
                    f(jnp.stack(batch))
        """,
    ),
    "element-of-a-growing-list": (
        "JS304",
        """
        import jax, jax.numpy as jnp
        @jax.jit
        def f(x):
            return x.sum()
        def run(x0, steps):
            xs = [x0]
            for _ in range(steps):
                xs.append(x0)
                f(jnp.stack(xs)[-1])
                f(xs[-4:])
        """,
        """
        import jax, jax.numpy as jnp
        @jax.jit
        def f(x):
            return x.sum()
        def run(x0, steps):
            xs = [x0]
            for _ in range(steps):
                xs.append(x0)
                f(jnp.stack(xs)[:, -1])
        """,
    ),
    "str-field-of-a-pytree-dataclass": (
        "JS201",
        """
        import jax
        from flax import struct
        @struct.dataclass
        class State:
            x: jax.Array
            mode: str
        @jax.jit
        def f(s: State, kind):
            if s.mode:
                return s.x
            return -s.x
        """,
        """
        import jax
        from flax import struct
        @struct.dataclass
        class State:
            x: jax.Array
            mode: jax.Array
        @jax.jit
        def f(s: State, kind):
            if s.mode:
                return s.x
            return -s.x
        """,
    ),
    # found on the "fresh" corpus (chex, orbax, tensorflow_probability, ...), read before any fix for it
    "code-under-a-module-flag-set-to-false": (
        "JS203",
        """
        import numpy as np
        JAX_MODE = False
        if JAX_MODE:
            import jax
            @jax.custom_jvp
            def maximum(x, y):
                return np.maximum(x, y)
        """,
        """
        import numpy as np
        JAX_MODE = True
        if JAX_MODE:
            import jax
            @jax.custom_jvp
            def maximum(x, y):
                return np.maximum(x, y)
        """,
    ),
    "name-rebound-to-a-partial-of-itself": (
        "JS201",
        """
        import functools
        import jax
        def run(xs):
            def foo(x, y, flag):
                return x * 2 + y if flag else x + y
            foo = functools.partial(foo, flag=True)
            return jax.pmap(foo)(xs, xs)
        """,
        """
        import functools
        import jax
        def run(xs):
            def foo(x, y, flag):
                return x * 2 + y if flag else x + y
            bar = functools.partial(foo, flag=True)
            return jax.pmap(foo)(xs, xs, xs)
        """,
    ),
}


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_correct_code_is_quiet(name: str) -> None:
    rule, quiet, _ = PAIRS[name]
    assert rule not in codes(quiet)


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_hazardous_sibling_is_found(name: str) -> None:
    rule, _, found = PAIRS[name]
    assert rule in codes(found)


def test_traced_value_errors_only_where_certain() -> None:
    """A branch on a traced value is an error in the jitted function itself, a warning in a helper
    whose taint is inferred from one call site (it may also run eagerly or get static values)."""
    findings = lint(
        """
        import jax
        def helper(v):
            if v.sum() > 0:
                return v
            return -v
        @jax.jit
        def f(x):
            if x.sum() > 0:
                x = -x
            return helper(x)
        """
    )
    by_line = {(f.code, f.line): f.severity for f in findings}
    assert by_line == {("JS201", 4): "warning", ("JS201", 9): "error"}


@pytest.mark.parametrize("header", [
    "from flax import struct\n@struct.dataclass",
    "import chex\n@chex.dataclass",
    "import equinox as eqx\n@eqx.filter_jit\ndef _unused(m):\n    return m",
])
def test_an_int_field_alone_is_a_warning_an_array_field_an_error(header: str) -> None:
    """flax/chex fields are leaves unless ``pytree_node=False``; equinox fields are static under filter_jit
    but traced under jax.jit: an ``int``/``bool`` annotation alone does not make the branch certain."""
    base = "eqx.Module" if "equinox" in header else ""
    decorator = "" if "equinox" in header else header.splitlines()[1]
    source = f"""
import jax
{header.splitlines()[0]}
{decorator}
class State({base}):
    x: jax.Array
    n: int
    on: bool
@jax.jit
def f(s: State, y):
    if s.n > 2:
        return s.x
    for _ in range(s.n):
        y = y + 1
    if s.on:
        return y
    if y.sum() > s.n:
        return -y
    return y
"""
    found = {(f.code, f.line): f.severity for f in lint(source)}
    assert found == {("JS201", 11): "warning", ("JS202", 13): "warning", ("JS201", 15): "warning",
                     ("JS201", 17): "error"}


def test_one_ragged_batch_is_one_finding_per_call() -> None:
    """``g(x[s:s + b], y[s:s + b])``: both arguments are the same short last batch, one recompile."""
    (finding,) = lint(
        """
        import jax
        @jax.jit
        def g(x, y):
            return x.sum() + y.sum()
        def run(x, y, n, b):
            for s in range(0, n, b):
                g(x[s:s + b], y[s:s + b])
        """
    )
    assert finding.code == "JS304"
    assert "with `x[s:s + b]` and `y[s:s + b]`, whose last batch is shorter" in finding.message


def test_traced_argument_through_grad_names_the_caller() -> None:
    """``jax.value_and_grad(loss)(x, n)``: ``n`` is traced only because the jitted caller passes a traced
    value, and the message says so instead of blaming the differentiation."""
    (finding,) = lint(
        """
        import jax, jax.numpy as jnp
        def loss_fn(x, n_heads):
            return jnp.sum(x.reshape(n_heads, -1))
        @jax.jit
        def step(x, n):
            return jax.value_and_grad(loss_fn)(x, n)
        """
    )
    assert (finding.code, finding.severity) == ("JS202", "error")
    assert "called through jax.value_and_grad by `step`, which passes it traced values" in finding.message


def _lint_project(tmp_path: Path, files: dict[str, str]) -> list[tuple[str, str]]:
    """(file name, code) of the findings on a small package written under ``tmp_path``."""
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    report = lint_paths([tmp_path], root=tmp_path, jobs=1)
    return [(Path(f.file).name, f.code) for f in report.findings]


_OPS = """
def attend(x, n, scale=1.0):
    return x.reshape(n, -1).sum(0) * scale
"""


@pytest.mark.parametrize("transform", ["jax.vmap", "jax.jit"])
def test_partial_of_another_modules_function_keeps_its_binding(tmp_path: Path, transform: str) -> None:
    """``partial(fn, n=n)`` handed to vmap/jit binds ``n`` to the caller's Python value, whether ``fn``
    lives in this module or another one; binding another parameter leaves ``n`` traced."""
    quiet = f"""
    import functools, jax
    from pkg.ops import attend
    def run(xs, n):
        return {transform}(functools.partial(attend, n=n))(xs)
    """
    hazard = f"""
    import functools, jax
    from pkg.ops import attend
    def run(xs, n):
        return {transform}(functools.partial(attend, scale=2.0))(xs, n)
    """
    files = {"pkg/__init__.py": "", "pkg/ops.py": _OPS}
    assert ("ops.py", "JS202") not in _lint_project(tmp_path / "quiet", {**files, "pkg/model.py": quiet})
    assert ("ops.py", "JS202") in _lint_project(tmp_path / "hazard", {**files, "pkg/model.py": hazard})


#: name -> (rule, quiet, hazardous): trace-time effects reached through builtins used indirectly
EFFECT_PAIRS: dict[str, tuple[str, str, str]] = {
    "partial-of-print": (
        "JS101",
        """
        import functools, jax
        log = functools.partial(jax.debug.print, "step {}")
        @jax.jit
        def f(x):
            log(x)
            jax.debug.callback(print, x)
            return x
        """,
        """
        import functools, jax
        log = functools.partial(print, "step:")
        @jax.jit
        def f(x):
            log(x)
            return x
        """,
    ),
    "print-handed-to-tree-map": (
        "JS101",
        """
        import jax
        @jax.jit
        def f(grads):
            jax.tree_util.tree_map(lambda g: jax.debug.print("{}", g), grads)
            return grads
        """,
        """
        import jax
        @jax.jit
        def f(grads):
            jax.tree_util.tree_map(print, grads)
            return grads
        """,
    ),
    "setattr-on-a-closed-over-object": (
        "JS107",
        """
        import jax
        def make(model):
            @jax.jit
            def g(x):
                out = type("Out", (), {})()
                setattr(out, "h", x)
                return out.h
            return g
        """,
        """
        import jax
        def make(model):
            @jax.jit
            def g(x):
                setattr(model, "h", x)
                return x
            return g
        """,
    ),
    "setattr-of-a-python-value-on-a-global": (
        "JS104",
        """
        import jax
        class Box:
            pass
        @jax.jit
        def f(x):
            box = Box()
            setattr(box, "calls", 1)
            return x
        """,
        """
        import jax
        class Box:
            pass
        BOX = Box()
        @jax.jit
        def f(x):
            setattr(BOX, "calls", 1)
            return x
        """,
    ),
}


@pytest.mark.parametrize("name", sorted(EFFECT_PAIRS))
def test_effect_pairs(name: str) -> None:
    rule, quiet, found = EFFECT_PAIRS[name]
    assert rule not in codes(quiet)
    assert rule in codes(found)
