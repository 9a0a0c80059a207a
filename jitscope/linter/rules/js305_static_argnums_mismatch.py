"""JS305 `static-argnums-mismatch`: docs, examples and static check."""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterator

from jitscope.linter.context import (
    FuncNode,
    ModuleContext,
    label,
    literal_ints,
    literal_strs,
    positional_params,
)
from jitscope.linter.rule import Rule
from jitscope.model.lint import Finding


class StaticArgnumsMismatch(Rule):
    """static_argnums / static_argnames that do not match the signature.

    ## What it does
    Flags `static_argnums` indices outside the function's positional parameters and
    `static_argnames` that name no parameter, for jit, pmap, checkpoint and
    custom_jvp/custom_vjp (`nondiff_argnums`).

    ## Why is this bad?
    Depending on the JAX version the mismatch raises, warns, or is silently ignored,
    so the argument you meant to be static is traced after all.

    ## Example
    ```python
    @functools.partial(jax.jit, static_argnames="num_steps")
    def run(x, n_steps):
        ...
    ```

    ## Use instead
    ```python
    @functools.partial(jax.jit, static_argnames="n_steps")
    def run(x, n_steps):
        ...
    ```
    """

    code = "JS305"
    name = "static-argnums-mismatch"
    severity = "error"
    summary = "static_argnums/static_argnames that do not match the function's parameters"
    bad = (
        "import jax\nfrom functools import partial\n@partial(jax.jit, static_argnames='num_steps')\ndef f(x, n_steps):\n    return x\n",
        "import jax\ndef g(x, n):\n    return x\ngj = jax.jit(g, static_argnums=(2,))\n",
    )
    good = (
        "import jax\nfrom functools import partial\n@partial(jax.jit, static_argnums=(1,), static_argnames=('mode',))\ndef f(x, n, *, mode='a'):\n    return x\n",
        "import jax\ndef g(x, *args, **kwargs):\n    return x\ngj = jax.jit(g, static_argnums=(3,), static_argnames='anything')\n",
        "import jax\nfrom functools import partial\n@partial(jax.jit, static_argnums=-1)\ndef f(x, n):\n    return x\n",
    )

    def check(self, ctx: ModuleContext) -> Iterator[Finding]:
        for site in ctx.jit_sites:
            target = site.target
            if target is None:
                continue
            positional = positional_params(target)
            if site.bound_method:
                positional = positional[1:]
            args = target.args
            name = ctx.name_of(target)
            rewrapped = _rewrapped(target, site.node)
            for key in ("static_argnums", "static_broadcasted_argnums"):
                node = site.keywords.get(key)
                nums = literal_ints(node)
                if node is None or nums is None or args.vararg is not None:
                    continue
                for i in nums:
                    if not -len(positional) <= i < len(positional):
                        yield _severity(rewrapped, ctx.finding(
                            self,
                            node,
                            f"{key}={i} is out of range: `{name}` has {len(positional)} "
                            "positional parameter(s)",
                            name,
                            "fix the index, or use static_argnames",
                        ))
            node = site.keywords.get("static_argnames")
            names = literal_strs(node)
            if node is None or names is None or args.kwarg is not None:
                continue
            valid = {a.arg for a in (*args.args, *args.kwonlyargs)}
            for bad in names:
                if bad not in valid:
                    yield _severity(rewrapped, ctx.finding(
                        self,
                        node,
                        f"static_argnames '{bad}' is not a parameter of `{name}`",
                        name,
                        f"parameters are: {', '.join(sorted(valid)) or 'none'}",
                    ))


def _rewrapped(target: FuncNode, jit_node: ast.expr) -> bool:
    """Another decorator between ``def`` and jit (or any, for ``jax.jit(f)``) may give jit a wrapper with
    another signature (``*args``): the mismatch is then not certain."""
    decorators = list(getattr(target, "decorator_list", ()))
    inner = decorators[decorators.index(jit_node) + 1 :] if jit_node in decorators else decorators
    return any(label(d) not in ("staticmethod", "classmethod") for d in inner)


def _severity(rewrapped: bool, finding: Finding) -> Finding:
    return dataclasses.replace(finding, severity="warning") if rewrapped else finding
