"""JS307 `captured-constant`: a large array that traced code reads from outside its arguments."""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Iterator

from jitscope.linter.analysis.qualified_names import STATIC_ATTRS
from jitscope.linter.context import ModuleContext, TracedFunction, block_statements, traced_because
from jitscope.linter.rule import Rule
from jitscope.model.lint import Finding

#: arrays from this size on are worth a finding (JAX's own warning about large constants starts lower)
_LARGE_BYTES = 1 << 20
#: NumPy/JAX loaders: the array's size depends on the file
_LOADERS = frozenset(
    {
        "numpy.load",
        "numpy.loadtxt",
        "numpy.genfromtxt",
        "numpy.fromfile",
        "numpy.memmap",
        "jax.numpy.load",
    }
)
#: constructors whose first argument is the shape
_SHAPED = frozenset({"zeros", "ones", "empty", "full"})
#: ``np.random.rand(4096, 4096)``: the shape as positional arguments
_SHAPE_ARGS = frozenset({"rand", "randn"})
#: ``np.random.normal(size=...)``, ``random_sample((n, m))``...: the shape as ``size`` (or the first argument)
_SIZED = frozenset({"random", "random_sample", "uniform", "normal", "standard_normal", "integers", "randint"})
#: conversions that keep the array they are given (its size, and whether it was loaded)
_CONVERSIONS = frozenset({"asarray", "array", "device_put", "ascontiguousarray"})
_ITEMSIZE = {
    "float64": 8, "int64": 8, "uint64": 8, "complex64": 8, "complex128": 16,
    "float32": 4, "int32": 4, "uint32": 4, "float16": 2, "bfloat16": 2, "int16": 2, "uint16": 2,
    "int8": 1, "uint8": 1, "bool": 1, "bool_": 1,
}  # fmt: skip
#: ``TABLE = ``, ``self.grid: jax.Array = `` at the start of a line, up to the call or name it assigns from
_ASSIGNED_RE = re.compile(r"[ \t]*([\w.]+)[ \t]*(?::[^=\n]*)?=[^=\n]*")
#: ``np.random.rand(``, ``np.load(``, ``jnp.zeros(``: calls that make a sized or loaded array
_MAKER_RE = re.compile(
    r"(?:np|numpy|random)\.(?:load|loadtxt|genfromtxt|fromfile|memmap|zeros|ones|empty|full|rand|randn"
    r"|random|random_sample|uniform|normal|standard_normal|integers|randint)\("
)
#: pytree classes: ``self``'s array fields are leaves (traced arguments), not constants
_PYTREE_BASES = frozenset({"Module", "PyTreeNode", "Struct"})


class CapturedConstant(Rule):
    """A large array that traced code reads from outside its arguments.

    ## What it does
    Flags a traced function that uses a large array it does not receive as an argument: a
    module-level array, one the enclosing function built (a closure), or one held by `self` of a
    bound method that is jitted (`jax.jit(env.reset)`). It fires when the array's shape is
    written in the code and the array has at least 1 MiB, and for arrays loaded from disk
    (`np.load`), whose size is unknown here and is often a whole dataset.

    ## Why is this bad?
    JAX embeds every such array in the compiled program as a constant: the program text grows by
    the array's size (a 90 MB array gives a ~180 MB StableHLO module), compilation slows down by
    seconds, and each compiled program holds its own copy in device memory. An argument costs
    nothing to compile and is shared. `jitscope trace` lists a function's captured constants with
    their real bytes (the "captured constants" section): run it to measure.

    ## Example
    ``python
    TABLE = np.random.rand(4096, 4096)

    @jax.jit
    def lookup(i):
        return TABLE[i]
    ``

    ## Use instead
    ``python
    TABLE = jnp.asarray(np.random.rand(4096, 4096))

    @jax.jit
    def lookup(table, i):
        return table[i]

    lookup(TABLE, 3)
    ``
    """

    code = "JS307"
    name = "captured-constant"
    severity = "warning"
    summary = "large arrays read from outside a traced function's arguments are embedded in every compiled program"
    bad = (
        "import jax\nimport numpy as np\nTABLE = np.random.rand(4096, 4096)\n@jax.jit\ndef f(i):\n    return TABLE[i]\n",
        "import jax\nimport numpy as np\ndef make(path):\n    data = np.load(path)\n    @jax.jit\n"
        "    def pick(i):\n        return data[i]\n    return pick\n",
    )
    good = (
        "import jax\nimport numpy as np\nTABLE = np.random.rand(4096, 4096)\n@jax.jit\ndef f(table, i):\n"
        "    return table[i]\nf(TABLE, 3)\n",
        "import jax\nimport numpy as np\nSMALL = np.zeros((16, 16))\n@jax.jit\ndef f(i):\n    return SMALL[i]\n",
    )

    def check(self, ctx: ModuleContext) -> Iterator[Finding]:
        names = _candidate_names(ctx.text) if ctx.functions else frozenset()
        if not names:
            return  # no name is assigned a loaded or sized array anywhere in the module
        for facts in ctx.functions:
            seen: set[str] = set()
            for node, parent in ctx.body_nodes(facts, (ast.Name, ast.Attribute)):
                if (node.id if isinstance(node, ast.Name) else node.attr) not in names:  # type: ignore[union-attr]
                    continue
                if isinstance(parent, ast.Attribute) and parent.attr in STATIC_ATTRS:
                    continue  # `TABLE.shape[0]`: read while tracing, nothing is embedded
                found = _captured(ctx, facts, node)
                if found is None:
                    continue
                label, size, origin = found
                if label in seen:
                    continue
                seen.add(label)
                what = f"a {_megabytes(size)} array" if size is not None else "an array loaded from disk"
                unknown = (
                    "" if size is not None else " (its size is unknown here; a dataset is often many MB)"
                )
                yield ctx.finding(
                    self,
                    node,
                    f"`{facts.qualname}` uses `{label}`, {what} {origin}, without receiving it as an argument{unknown}: "
                    "JAX embeds it in every compiled program as a constant (longer compiles, a copy per program "
                    "in device memory)" + traced_because(facts),
                    facts.qualname,
                    f"pass `{label}` as an argument; `jitscope trace` measures the captured constants",
                )


def _candidate_names(text: str) -> frozenset[str]:
    """Names (and ``self.`` attributes) assigned, on one line, a call of a sized constructor or a loader,
    or (for loaded data, whose size is unknown) something made from such a name (``grids =
    jnp.asarray(dataset[:n])``): the only ones worth a look. Found from the calls (a scan for a few words),
    then the start of their lines, so that a module without any costs one scan."""
    found: set[str] = set()
    pattern = _MAKER_RE
    for _ in range(3):
        added: set[str] = set()
        loaded: set[str] = set()
        for m in pattern.finditer(text):
            start = text.rfind("\n", 0, m.start()) + 1
            assigned = _ASSIGNED_RE.match(text, start, m.start())
            if assigned is not None:
                name = assigned.group(1).rpartition(".")[2]
                added.add(name)
                if pattern is not _MAKER_RE or "load" in m.group(0) or "fromfile" in m.group(0):
                    loaded.add(name)
        loaded -= found
        found |= added
        if not loaded:
            break
        pattern = re.compile(r"(?:" + "|".join(sorted(map(re.escape, loaded))) + r")\b")
    return frozenset(found)


def _captured(
    ctx: ModuleContext, facts: TracedFunction, node: ast.AST
) -> tuple[str, int | None, str] | None:
    """(label, bytes or None when unknown, where it comes from) for a large array ``node`` reads."""
    if isinstance(node, ast.Name):
        if not isinstance(node.ctx, ast.Load) or node.id in facts.local_names or node.id in facts.comp_names:
            return None
        if node.id in facts.closure:
            owner = ctx.analysis.index.owner.get(id(facts.func))
            scope: list[ast.stmt] = [] if owner is None or isinstance(owner, ast.Lambda) else owner.body
            value, origin = _last_assignment(scope, node.id), "in the enclosing function"
        elif node.id in ctx.module_values:
            value, origin, scope = ctx.module_values[node.id], "at module level", ctx.tree.body
        else:
            return None
        size = _array_size(ctx, value, scope)
        return (node.id, *size, origin) if size is not None else None  # type: ignore[return-value]
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.ctx, ast.Load)
        and isinstance(node.value, ast.Name)
        and facts.self_name is not None
        and node.value.id == facts.self_name
        and facts.self_name not in facts.tainted_params
    ):
        cls = ctx.analysis.index.method_class.get(id(facts.func))
        if cls is None or _is_pytree(cls):
            return None
        for method in ctx.analysis.index.methods.get(id(cls), {}).values():
            for stmt in block_statements(method.body):
                value = _self_assignment(stmt, node.attr)
                if value is not None:
                    size = _array_size(ctx, value, method.body)
                    if size is not None:
                        return (f"self.{node.attr}", *size, f"held by `{cls.name}`")  # type: ignore[return-value]
    return None


def _is_pytree(cls: ast.ClassDef) -> bool:
    for base in cls.bases:
        name = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")
        if name in _PYTREE_BASES:
            return True
    return any("dataclass" in ast.unparse(d) or "pytree" in ast.unparse(d) for d in cls.decorator_list)


def _self_assignment(stmt: ast.stmt, attr: str) -> ast.expr | None:
    if isinstance(stmt, ast.Assign):
        for target in stmt.targets:
            if isinstance(target, ast.Attribute) and target.attr == attr and isinstance(target.value, ast.Name):
                return stmt.value
    return None


def _array_size(
    ctx: ModuleContext, value: ast.expr | None, scope: list[ast.stmt], depth: int = 0, in_jax: bool = False
) -> tuple[int | None] | None:
    """(bytes,) of a large array ``value`` builds, (None,) for one loaded from disk, None otherwise.
    ``scope``: the statements where names that ``value`` reads were assigned (for ``jnp.asarray(data)``)."""
    if depth > 4:
        return None
    if isinstance(value, ast.Subscript):
        # dataset[:n, ..., 0]: a part of a large array, of a size not known here
        return (None,) if _array_size(ctx, value.value, scope, depth + 1, in_jax) is not None else None
    if isinstance(value, ast.Name):
        assigned = _last_assignment(scope, value.id)
        return _array_size(ctx, assigned, scope, depth + 1, in_jax) if assigned is not None else None
    if not isinstance(value, ast.Call):
        return None
    qualified = ctx.qualified_name(value.func) or ""
    module, _, short = qualified.rpartition(".")
    if not (module.startswith("numpy") or module.startswith("jax.numpy") or module.startswith("jax.random")):
        return None
    if qualified in _LOADERS:
        return (None,)
    if short in _CONVERSIONS and value.args:
        # jnp.asarray(np.random.rand(...)): JAX's default float is 32-bit (x64 off)
        return _array_size(ctx, value.args[0], scope, depth + 1, in_jax or module.startswith("jax"))
    shape: ast.expr | None = None
    if short in _SHAPED and value.args:
        shape = value.args[0]
    elif short in _SHAPE_ARGS and module.endswith("random"):
        shape = ast.Tuple(list(value.args), ast.Load())
    elif short in _SIZED and module.endswith("random"):
        keywords = {k.arg: k.value for k in value.keywords}
        shape = keywords.get("size") or keywords.get("shape")
    dims = _literal_dims(shape)
    if dims is None:
        return None
    dtype = next((k.value for k in value.keywords if k.arg == "dtype"), None)
    if dtype is None and short in _SHAPED:  # np.ones(shape, np.float32), np.full(shape, 0.5, np.float32)
        at = 2 if short == "full" else 1
        dtype = value.args[at] if len(value.args) > at else None
    default = 4 if in_jax or module.startswith("jax") else 8
    nbytes = math.prod(dims) * _itemsize(dtype, default)
    return (nbytes,) if nbytes >= _LARGE_BYTES else None


def _last_assignment(scope: list[ast.stmt], name: str) -> ast.expr | None:
    """The value of the last plain assignment ``name = ...`` among ``scope``'s statements, or None."""
    found: ast.expr | None = None
    for stmt in block_statements(scope):
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets):
            found = stmt.value
    return found


def _literal_dims(shape: ast.expr | None) -> list[int] | None:
    if shape is None:
        return None
    items = shape.elts if isinstance(shape, (ast.Tuple, ast.List)) else [shape]
    dims: list[int] = []
    for item in items:
        if not (isinstance(item, ast.Constant) and type(item.value) is int):
            return None
        dims.append(item.value)
    return dims or None


def _itemsize(dtype: ast.expr | None, default: int) -> int:
    if dtype is None:
        return default
    name = dtype.value if isinstance(dtype, ast.Constant) and isinstance(dtype.value, str) else None
    if name is None:
        name = dtype.attr if isinstance(dtype, ast.Attribute) else getattr(dtype, "id", "")
    return _ITEMSIZE.get(name or "", default)


def _megabytes(nbytes: int) -> str:
    """In MiB, as ``jitscope trace`` reports captured constants."""
    mib = nbytes / (1 << 20)
    return f"{mib:.0f} MiB" if mib >= 10 or mib.is_integer() else f"{mib:.1f} MiB"
