"""JS104 `mutation-in-traced-code`: docs, examples, static check and `jitscope lint --trace` check."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING

from jitscope.linter.context import (
    ModuleContext,
    TracedFunction,
    root_name,
    traced_because,
)
from jitscope.linter.rule import Rule
from jitscope.model.effects import EffectKind
from jitscope.model.lint import Finding

if TYPE_CHECKING:  # the tracer's records: imported only by lint --trace, not by static lint
    from jitscope.linter.trace_context import TraceContext

#: the nodes check looks at: calls (mutating methods, setattr/delattr) and assignments/deletions
_MUTATING = (ast.Call, ast.Assign, ast.AugAssign, ast.Delete)
_ORIGIN_TEXT = {
    "self": "an attribute of self",
    "param": "an argument",
    "global": "a module global",
    "closure": "a closed-over variable",
    "alias": "an object from outside the function",
}


def _root_param_traced(ctx: ModuleContext, facts: TracedFunction, target: ast.expr) -> bool:
    root = root_name(target)
    if root is None:
        return False
    return root.id in facts.tainted_params or _aliases(ctx, facts).get(root.id) in facts.tainted_params


def _returned(ctx: ModuleContext, facts: TracedFunction, target: ast.expr) -> bool:
    """True when the mutated object (or the parameter it aliases) is returned by the function."""
    root = root_name(target)
    if root is None:
        return False
    returned = _function_shape(ctx, facts)[1]
    return root.id in returned or _aliases(ctx, facts).get(root.id) in returned


def _aliases(ctx: ModuleContext, facts: TracedFunction) -> dict[str, str]:
    return _function_shape(ctx, facts)[0]


def _function_shape(ctx: ModuleContext, facts: TracedFunction) -> tuple[dict[str, str], set[str]]:
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


#: a traced argument at the jit boundary: jit hands the function a copy rebuilt from the leaves
_LOST = "jit passes a copy rebuilt from its leaves, so the caller's object never sees the change"


class MutationInTracedCode(Rule):
    """Mutation of an argument, closed-over or global container inside traced code.

    ## What it does
    Flags `append`/`extend`/`update`/`pop`/... calls and item or attribute
    assignments on objects that were not created inside the traced function:
    its arguments, `self`, closed-over variables and module globals. A traced argument
    changed inside a helper or a transform's body is left alone (it is a copy rebuilt for
    the trace); at the jit boundary it is flagged unless the function returns it, since the
    caller's object never sees the change.

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

    effect_kinds = frozenset({EffectKind.ARGUMENT_MUTATION, EffectKind.CLOSURE_MUTATION})

    def check_trace(self, trace: TraceContext) -> Iterator[Finding]:
        for effect in trace.effects:
            in_place = effect.kind is EffectKind.GLOBAL_WRITE and "() on " in effect.detail
            if effect.kind in self.effect_kinds or in_place:
                yield trace.effect_finding(self, effect)

    def check(self, ctx: ModuleContext) -> Iterator[Finding]:
        for facts in ctx.functions:
            for node, parent in ctx.body_nodes(facts, _MUTATING):
                target: ast.expr | None = None
                value: ast.expr | None = None
                verb = ""
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and (
                        isinstance(parent, ast.Expr)
                        or (ctx.is_dict_method_call(node) and node.func.attr != "update")
                    )
                ):
                    if ctx.mutates(facts, node):
                        target, verb = node.func.value, f".{node.func.attr}()"
                        args = [*node.args, *(k.value for k in node.keywords)]
                        if any(facts.is_traced(a) for a in args):
                            value = args[0]
                elif (setter := ctx.setattr_call(facts, node, parent)) is not None:
                    target, verb = setter.args[0], f"{ast.unparse(setter.func)}()"
                    value = setter.args[2] if len(setter.args) > 2 else None
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
                                ctx.is_array_update(facts, t) or ctx.is_ref_write(t)
                            ):
                                target = None
                            break
                if target is None:
                    continue
                where = ctx.origin(facts, target)
                traced_value = value is not None and facts.is_traced(value)
                if where in ("self", "global", "closure") and traced_value:
                    continue  # JS107: a traced value escapes
                rebuilt = where in ("param", "alias") and _root_param_traced(ctx, facts, target)
                if rebuilt and facts.kind != "jit":
                    continue  # a traced argument of a helper or a transform's body: changing it is harmless
                if where in ("param", "alias") and _returned(ctx, facts, target):
                    continue  # `carry[k] = ...; return carry`: the update leaves through the return value
                if where in ("self", "param", "global", "closure", "alias"):
                    yield ctx.finding(
                        self,
                        node,
                        f"`{facts.qualname}` mutates `{ast.unparse(target)}` ({_ORIGIN_TEXT[where]}) with {verb}; "
                        + (_LOST if rebuilt else "this happens only while tracing")
                        + traced_because(facts),
                        facts.qualname,
                        "build and return a new value instead of mutating shared state",
                    )
