"""Import aliases and what a qualified name means to the linter.

The linter never imports user code, so ``jnp.sum`` is just the attribute chain
``jnp`` . ``sum``; :class:`ImportMap` turns it into ``jax.numpy.sum`` by reading the
module's ``import`` statements, and the ``classify_*`` helpers say what that name is
(a jit transform, a lax control-flow primitive, a host callback, a NumPy function, ...).
Names under ``jax._src`` count as their public counterparts, so jax's own source is
understood too.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable


def words(text: str) -> frozenset[str]:
    """``words("a b c")`` -> frozenset({"a", "b", "c"}): long name tables stay compact."""
    return frozenset(text.split())


def last_name(node: ast.AST | None) -> str:
    """The name a call or decorator is spelled with, whatever it is imported as: ``partial`` for both
    ``partial`` and ``functools.partial``; ``""`` for anything else (a subscript, a call, None)."""
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


#: Transforms whose wrapped function is traced, keyed by the last component of the name.
_JAX_TRANSFORMS: dict[str, str] = {
    "jit": "jit",
    "pjit": "jit",
    "pmap": "pmap",
    "vmap": "vmap",
    "shard_map": "shard_map",
    "checkpoint": "checkpoint",
    "remat": "checkpoint",
    "custom_jvp": "custom_jvp",
    "custom_vjp": "custom_vjp",
}

#: Third-party transforms that trace like jit but keep non-array arguments static.
_FILTER_TRANSFORMS: dict[str, str] = {
    "equinox.filter_jit": "filter_jit",
    "equinox.filter_pmap": "filter_jit",
    "equinox.filter_vmap": "filter_vmap",
    "equinox.filter_checkpoint": "filter_vmap",
    "flax.nnx.jit": "filter_jit",
    "flax.nnx.pmap": "filter_jit",
    "flax.nnx.vmap": "filter_vmap",
    "flax.nnx.remat": "filter_vmap",
    "flax.linen.jit": "jit",
    "haliax.named_jit": "filter_jit",
}

#: Components that mark a name as part of lax (public or private paths).
_LAX_COMPONENTS = frozenset({"lax", "control_flow", "loops", "conditionals", "lax_control_flow"})

#: lax functions whose function arguments are traced bodies.
_BODY_TAKERS = words(
    "scan fori_loop while_loop cond switch map associative_scan custom_root custom_linear_solve "
    "reduce reduce_window platform_dependent for_loop select_n_fun"
)

#: jax functions that call their function argument on (leaves of) their traced arguments.
_TRACING_CALLERS = words(
    "tree_map map tree_map_with_path map_with_path grad value_and_grad jacfwd jacrev hessian jvp vjp "
    "linearize eval_shape make_jaxpr custom_gradient closure_convert"
)

#: jax-family names whose function arguments run on the host, not under tracing.
_HOST_CALLBACKS = words(
    "pure_callback io_callback callback id_tap id_print call debug_callback host_callback"
)

#: Calls that return static (trace-time Python) values even when given traced arrays.
STATIC_RESULT_FUNCS = words(
    "shape ndim size result_type dtype issubdtype iscomplexobj isrealobj isscalar promote_types finfo "
    "iinfo can_cast canonicalize_dtype eval_shape ShapeDtypeStruct tree_structure structure "
    "treedef_is_leaf typeof get_aval is_weakly_typed isdtype issubsctype axis_size broadcast_shapes "
    "padtype_to_pads conv_dimension_numbers conv_general_shape_tuple ConvDimensionNumbers "
    "GatherDimensionNumbers ScatterDimensionNumbers RaggedDotDimensionNumbers"
)

#: Attributes of an array that are known when tracing.
STATIC_ATTRS = words(
    "shape ndim dtype size aval sharding weak_type itemsize nbytes named_shape __class__ __name__ "
    "device devices format committed"
)

#: Prefixes of functions that return (traced) JAX arrays when called inside traced code.
_ARRAY_PREFIXES = (
    "jax.numpy.",
    "jax.lax.",
    "jax.random.",
    "jax.nn.",
    "jax.scipy.",
    "jax._src.numpy.",
    "jax._src.lax.",
    "jax._src.random.",
    "jax._src.nn.",
    "jax._src.scipy.",
)


class ImportMap:
    """Local names bound by imports (and simple module-level aliases) to qualified names."""

    __slots__ = ("aliases", "module_aliases")

    def __init__(self) -> None:
        #: local name -> qualified name (``jnp`` -> ``jax.numpy``, ``jit`` -> ``jax.jit``)
        self.aliases: dict[str, str] = {}
        #: local names known to be modules (bound by a plain ``import``)
        self.module_aliases: set[str] = set()

    def add_import(self, node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> None:
        """Record one import statement, resolving relative imports against ``module``."""
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    self.aliases[alias.asname] = alias.name
                    self.module_aliases.add(alias.asname)
                else:
                    top = alias.name.partition(".")[0]
                    self.aliases[top] = top
                    self.module_aliases.add(top)
            return
        base = resolve_relative(node.module, node.level, module, is_package)
        if base is None:
            return
        for alias in node.names:
            if alias.name == "*":
                continue
            local = alias.asname or alias.name
            self.aliases[local] = f"{base}.{alias.name}" if base else alias.name
            self.module_aliases.discard(local)

    def add_alias(self, name: str, qualified: str) -> None:
        self.aliases[name] = qualified

    def qualify(self, node: ast.expr, local: dict[str, str] | None = None) -> str | None:
        """``jnp.sum`` -> ``jax.numpy.sum`` when the root name is imported; else None."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        root = None
        if local is not None:
            root = local.get(node.id)
        if root is None:
            root = self.aliases.get(node.id)
        if root is None:
            return None
        if parts:
            parts.reverse()
            return root + "." + ".".join(parts)
        return root


def resolve_relative(name: str | None, level: int, module: str, is_package: bool) -> str | None:
    """Absolute module for ``from <level dots><name> import ...`` inside ``module``."""
    if level == 0:
        return name or ""
    parts = module.split(".") if module else []
    if not is_package:
        parts = parts[:-1]
    drop = level - 1
    if drop > len(parts):
        return None
    if drop:
        parts = parts[:-drop]
    if name:
        parts.append(name)
    return ".".join(parts)


def _parts(qualified: str) -> list[str]:
    return qualified.split(".")


def classify_transform(qualified: str | None) -> str | None:
    """'jit', 'pmap', 'vmap', 'checkpoint', 'custom_jvp', ... or None."""
    if not qualified:
        return None
    if qualified in _FILTER_TRANSFORMS:
        return _FILTER_TRANSFORMS[qualified]
    parts = _parts(qualified)
    if parts[0] != "jax" or len(parts) < 2:
        return None
    kind = _JAX_TRANSFORMS.get(parts[-1])
    if kind is None:
        return None
    if kind in ("checkpoint",) and any(p in ("checkpoint_policies", "experimental") for p in parts[1:-1]):
        return None
    return kind


#: transforms that trace only some arguments of their function: the differentiated ones
#: (``argnums``) or the mapped ones (``in_axes`` not None)
_MAPPING_TRANSFORMS = words("grad value_and_grad jacfwd jacrev hessian vmap")


def mapping_transform(qualified: str | None) -> str | None:
    """``jax.grad``, ``jax.value_and_grad``, ``jax.jacfwd``, ``jax.jacrev``, ``jax.hessian``, ``jax.vmap``:
    the last component of the name, or None."""
    if not qualified or not qualified.startswith("jax."):
        return None
    last = qualified.rpartition(".")[2]
    return last if last in _MAPPING_TRANSFORMS else None


def is_lax_family(qualified: str | None) -> bool:
    """True for ``jax.lax.*`` (and private lax paths, equinox.internal loops)."""
    if not qualified:
        return False
    parts = _parts(qualified)
    if parts[0] == "jax":
        return any(p in _LAX_COMPONENTS for p in parts[1:-1])
    if parts[0] == "equinox" and len(parts) > 2 and parts[1] == "internal":
        return parts[-1] in ("while_loop", "scan", "for_loop")
    return False


def is_body_taker(qualified: str | None) -> bool:
    """``lax.scan``, ``lax.cond``, ``fori_loop``...: their function arguments are traced bodies."""
    return is_lax_family(qualified) and (qualified or "").rpartition(".")[2] in _BODY_TAKERS


def is_tracing_caller(qualified: str | None) -> bool:
    """``jax.tree.map``, ``jax.grad``...: they call their function argument on traced values."""
    if not qualified or not qualified.startswith("jax."):
        return False
    parts = _parts(qualified)
    if parts[-1] in ("map", "map_with_path"):
        return "tree" in parts or "tree_util" in parts
    return parts[-1] in _TRACING_CALLERS


def is_tree_map(qualified: str | None) -> bool:
    """``jax.tree.map`` / ``jax.tree_util.tree_map`` and their ``*_with_path`` forms (whose callback gets
    the key path first: see ``taint_calls``)."""
    if not qualified or not qualified.startswith("jax."):
        return False
    parts = _parts(qualified)
    last = parts[-1].removesuffix("_with_path")
    return last == "tree_map" or (last == "map" and ("tree" in parts or "tree_util" in parts))


def is_host_callback(qualified: str | None) -> bool:
    """True for APIs whose function argument runs on the host (pure_callback, io_callback, ...)."""
    if not qualified:
        return False
    parts = _parts(qualified)
    return parts[0] == "jax" and (parts[-1] in _HOST_CALLBACKS or "host_callback" in parts)


def is_jax_name(qualified: str | None) -> bool:
    return bool(qualified) and (qualified == "jax" or qualified.startswith("jax."))  # type: ignore[union-attr]


def is_array_producer(qualified: str | None) -> bool:
    """True for jax.numpy / lax / random / nn / scipy functions: tracers inside traced code."""
    if not qualified or not qualified.startswith("jax") or not qualified.startswith(_ARRAY_PREFIXES):
        return False
    module, _, last = qualified.rpartition(".")
    if last in STATIC_RESULT_FUNCS:
        return False
    # private helpers of jax's own modules are unknown, not array ops
    return not ("._src." in qualified and (last.startswith("_") or module.endswith((".util", ".utils"))))


def is_tree_flatten(qualified: str | None) -> bool:
    """``jax.tree_util.tree_flatten`` / ``jax.tree.flatten``: (leaves, treedef)."""
    if not qualified or not qualified.startswith("jax."):
        return False
    parts = _parts(qualified)
    return parts[-1] == "tree_flatten" or (
        parts[-1] == "flatten" and ("tree" in parts or "tree_util" in parts)
    )


#: jax modules whose functions compute on dtypes, shapes and avals, never on array values.
_STATIC_MODULES = ("jax._src.dtypes.", "jax.dtypes.", "jax._src.typing.")
_STATIC_HELPERS = words(
    "get_aval typeof concrete_or_error concrete_dim_or_error canonicalize_shape is_constant_dim "
    "is_constant_shape definitely_equal definitely_equal_shape is_symbolic_dim shaped_abstractify "
    "valid_jaxtype typematch physical_aval canonicalize_axis ceil_of_ratio is_dim is_empty_shape "
    "standard_abstract_eval result_shape_dtype tree_structure treedef_children tree_flatten_with_path"
)


def static_function_name(name: str) -> bool:
    """Names of functions that compute shapes, dtypes or tree structures (``tree_structure``,
    ``_dtype``, ``result_shape``): their results are trace-time constants."""
    name = name.lstrip("_")
    return (
        name in STATIC_RESULT_FUNCS
        or "dtype" in name
        or "treedef" in name
        or name.endswith(("_shape", "shapes", "_structure", "tree_size", "_ndim"))
        # `abstract_objects_equal(a, b)`: compares abstract values (shapes, dtypes, structure)
        or name.rpartition(".")[2].startswith("abstract_")
    )


def is_static_result(qualified: str | None) -> bool:
    """Calls that return trace-time constants (shapes, dtypes, tree structures) whatever their inputs."""
    if not qualified:
        return False
    last = qualified.rpartition(".")[2]
    root = qualified.partition(".")[0]
    if root not in ("jax", "numpy", "equinox", "flax"):
        return False
    if static_function_name(last):
        return True
    last = last.lstrip("_")
    return root == "jax" and (
        qualified.startswith(_STATIC_MODULES) or (last in _STATIC_HELPERS and "_src" in qualified)
    )


def is_numpy(qualified: str | None) -> bool:
    return bool(qualified) and (qualified == "numpy" or qualified.startswith("numpy."))  # type: ignore[union-attr]


def any_startswith(qualified: str, prefixes: Iterable[str]) -> bool:
    return any(qualified == p or qualified.startswith(p + ".") for p in prefixes)
