"""JS103-JS104: writes to shared state and mutation of objects a traced function does not own."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jitscope.lint.analysis.taint_flags import ARRAY, CONTAINER, FunctionFacts
from jitscope.lint.rule import ModuleContext, Rule
from jitscope.lint.rules.common import is_ref_write, mutates, origin, root_name, traced_because
from jitscope.model.lint import Finding


class GlobalWriteInTracedCode(Rule):
    """Write to a global, a nonlocal or a module attribute inside traced code.

    ## What it does
    Flags assignments to names declared `global` or `nonlocal`, and assignments to
    attributes of imported modules, inside a traced function.

    ## Why is this bad?
    The write happens once, while tracing. Calls that hit the compilation cache do not
    update the variable, so counters, flags and caches silently stop changing.

    ## Example
    ```python
    calls = 0

    @jax.jit
    def step(x):
        global calls
        calls += 1
        return x + 1
    ```

    ## Use instead
    ```python
    @jax.jit
    def step(x, calls):
        return x + 1, calls + 1
    ```
    """

    code = "JS103"
    name = "global-write-in-traced-code"
    severity = "error"
    summary = (
        "writes to global/nonlocal names or module attributes inside traced code happen only at trace time"
    )
    bad = (
        "import jax\ncalls = 0\n@jax.jit\ndef f(x):\n    global calls\n    calls += 1\n    return x\n",
        "import jax\nlast_seen = None\n@jax.jit\ndef f(x):\n    global last_seen\n    last_seen = 'f'\n    return x\n",
        "import jax\nimport config\n@jax.jit\ndef f(x):\n    config.seen = True\n    return x\n",
        "from jax import lax\ndef run(xs):\n    n = 0\n    def body(c, x):\n        nonlocal n\n        n += 1\n        return c, x\n    return lax.scan(body, 0, xs)\n",
    )
    good = (
        "import jax\ncalls = 0\ndef count():\n    global calls\n    calls += 1\n",
        "import jax\n@jax.jit\ndef f(x):\n    total = 0\n    total += 1\n    return x + total\n",
        "import jax\ndef outer(x):\n    tree = None\n    @jax.custom_jvp\n    def g(v):\n        nonlocal tree\n        tree = jax.tree_util.tree_structure(v)\n        return v\n    return g(x), tree\n",
    )

    def check(self, ctx: ModuleContext) -> Iterator[Finding]:
        for facts in ctx.functions:
            declared = facts.globals_declared | facts.nonlocals_declared
            for node, _ in ctx.body(facts):
                targets: list[ast.expr] = []
                value: ast.expr | None = None
                if isinstance(node, ast.Assign):
                    targets, value = node.targets, node.value
                elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                    targets, value = [node.target], node.value
                if value is not None and facts.is_traced(value):
                    continue  # JS107 reports traced values that escape
                for target in targets:
                    if isinstance(target, ast.Name) and target.id in declared:
                        kind = "global" if target.id in facts.globals_declared else "nonlocal"
                        if kind == "nonlocal" and not isinstance(node, ast.AugAssign):
                            continue  # recording a value for the enclosing function (done once per trace)
                        yield ctx.finding(
                            self,
                            target,
                            f"`{facts.qualname}` writes {kind} `{target.id}`; the write happens only while tracing"
                            + traced_because(facts),
                            facts.qualname,
                            "return the new value from the function instead of writing shared state",
                        )
                    elif isinstance(target, ast.Attribute) and origin(ctx, facts, target.value) == "module":
                        yield ctx.finding(
                            self,
                            target,
                            f"`{facts.qualname}` sets module attribute `{ast.unparse(target)}`; this happens only "
                            "while tracing" + traced_because(facts),
                            facts.qualname,
                            "set configuration before calling the jitted function",
                        )


class MutationInTracedCode(Rule):
    """Mutation of an argument, closed-over or global container inside traced code.

    ## What it does
    Flags `append`/`extend`/`update`/`pop`/... calls and item or attribute
    assignments on objects that were not created inside the traced function:
    its arguments, `self`, closed-over variables and module globals.

    ## Why is this bad?
    The mutation happens once, at trace time, and cached calls skip it. Under `jit`
    the arguments are rebuilt from their leaves, so changes to them are lost anyway.

    ## Example
    ```python
    history = []

    @jax.jit
    def step(state, lr):
        history.append(lr)
        state["step"] = state["step"] + 1
        return state
    ```

    ## Use instead
    ```python
    @jax.jit
    def step(state, lr):
        return {**state, "step": state["step"] + 1}
    ```
    """

    code = "JS104"
    name = "mutation-in-traced-code"
    severity = "warning"
    summary = (
        "mutating arguments, closed-over or global containers inside traced code happens only at trace time"
    )
    bad = (
        "import jax\nseen = []\n@jax.jit\ndef f(x):\n    seen.append(1)\n    return x\n",
        "import jax\nfrom functools import partial\nclass M:\n    @partial(jax.jit, static_argnums=0)\n    def f(self, x):\n        self.calls = 1\n        return x\n",
        "import jax\nfrom functools import partial\n@partial(jax.jit, static_argnums=1)\ndef f(x, opts):\n    opts.calls = 1\n    return x\n",
    )
    good = (
        "import jax\n@jax.jit\ndef f(x):\n    out = []\n    out.append(x)\n    d = {}\n    d['a'] = x\n    return out, d\n",
        "import jax, optax\ntx = optax.adam(1e-3)\n@jax.jit\ndef f(g, s):\n    updates, s = tx.update(g, s)\n    return updates, s\n",
        "import jax\n@jax.jit\ndef f(x, **kw):\n    kw.pop('a', None)\n    return x\n",
        "from jax import lax\ndef run(d):\n    def body(c):\n        c['k'] += 1\n        return c\n    return lax.while_loop(lambda c: c['k'] < 3, body, d)\n",
    )

    def check(self, ctx: ModuleContext) -> Iterator[Finding]:
        for facts in ctx.functions:
            for node, parent in ctx.body(facts):
                target: ast.expr | None = None
                value: ast.expr | None = None
                verb = ""
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and isinstance(parent, ast.Expr)
                ):
                    if mutates(ctx, facts, node):
                        target, verb = node.func.value, f".{node.func.attr}()"
                        args = [*node.args, *(k.value for k in node.keywords)]
                        if any(facts.is_traced(a) for a in args):
                            value = args[0]
                elif isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
                    targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
                    for t in targets:
                        if isinstance(t, (ast.Subscript, ast.Attribute)):
                            target, verb = (
                                t.value,
                                "item assignment" if isinstance(t, ast.Subscript) else "attribute assignment",
                            )
                            value = getattr(node, "value", None)
                            if isinstance(t, ast.Subscript) and (
                                is_array_update(facts, t) or is_ref_write(ctx, t)
                            ):
                                target = None
                            break
                if target is None:
                    continue
                where = origin(ctx, facts, target)
                traced_value = value is not None and facts.is_traced(value)
                if where in ("self", "global", "closure") and traced_value:
                    continue  # JS107: a traced value escapes
                if where in ("param", "alias") and _root_param_traced(ctx, facts, target):
                    continue  # a traced pytree argument is rebuilt for every trace: changing it is harmless
                if where in ("param", "alias") and _returned(ctx, facts, target):
                    continue  # `carry[k] = ...; return carry`: the update leaves through the return value
                if where in ("self", "param", "global", "closure", "alias"):
                    yield ctx.finding(
                        self,
                        node,
                        f"`{facts.qualname}` mutates `{ast.unparse(target)}` ({_ORIGIN_TEXT[where]}) with {verb}; "
                        "this happens only while tracing" + traced_because(facts),
                        facts.qualname,
                        "build and return a new value instead of mutating shared state",
                    )


_ORIGIN_TEXT = {
    "self": "an attribute of self",
    "param": "an argument",
    "global": "a module global",
    "closure": "a closed-over variable",
    "alias": "an object from outside the function",
}


def _root_param_traced(ctx: ModuleContext, facts: FunctionFacts, target: ast.expr) -> bool:
    root = root_name(target)
    if root is None:
        return False
    return root.id in facts.tainted_params or _aliases(ctx, facts).get(root.id) in facts.tainted_params


def _returned(ctx: ModuleContext, facts: FunctionFacts, target: ast.expr) -> bool:
    """True when the mutated object (or the parameter it aliases) is returned by the function."""
    root = root_name(target)
    if root is None:
        return False
    returned = _function_shape(ctx, facts)[1]
    return root.id in returned or _aliases(ctx, facts).get(root.id) in returned


def _aliases(ctx: ModuleContext, facts: FunctionFacts) -> dict[str, str]:
    return _function_shape(ctx, facts)[0]


def _function_shape(ctx: ModuleContext, facts: FunctionFacts) -> tuple[dict[str, str], set[str]]:
    """``st = loop_state`` aliases, and the names a ``return`` hands back (also inside tuples, lists and
    dicts); one walk of the body per function, only for functions with a mutation finding."""
    key = f"mutation-shape:{id(facts.func)}"
    cached = ctx.memo.get(key)
    if cached is not None:
        return cached
    aliases: dict[str, str] = {}
    returned: set[str] = set()
    for node, _ in ctx.body(facts):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    aliases[t.id] = node.value.id
        elif isinstance(node, ast.Return) and node.value is not None:
            value = node.value
            parts = [*value.elts] if isinstance(value, (ast.Tuple, ast.List)) else [value]
            if isinstance(value, ast.Dict):
                parts = [v for v in value.values if v is not None]
            returned.update(p.id for p in parts if isinstance(p, ast.Name))
    if isinstance(facts.func, ast.Lambda):
        body = facts.func.body
        if isinstance(body, ast.Name):
            returned.add(body.id)
    ctx.memo[key] = (aliases, returned)
    return aliases, returned


def is_array_update(facts: FunctionFacts, target: ast.Subscript) -> bool:
    """Item assignment that JS204 reports (on a JAX array) rather than JS104."""
    flags = facts.flags_of(target.value)
    if not flags & ARRAY or flags & CONTAINER:
        return False
    index = target.slice
    return not (isinstance(index, ast.Constant) and isinstance(index.value, str))
