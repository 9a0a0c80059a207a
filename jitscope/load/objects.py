"""Objects passed as arguments, summarised for a call label: ``GPT(110,529 params, 432 KiB)``.

A model or optimizer state reaches a traced function as an object (an nnx module, an equinox
module, a TrainState, an optax state); its repr can run to hundreds of lines and print array
values. Here it becomes its type's name with what it holds: a module's parameter count, any
other object's number of arrays, and their bytes. Nothing here imports JAX: its tree functions
are used when JAX is already loaded (the objects came from code that imported it), and a plain
walk of the object's attributes is the fallback for what is not a registered pytree.
"""

from __future__ import annotations

import math
import sys
import types
from typing import Any

from jitscope.dtypes import array_nbytes, dtype_name, short_name
from jitscope.units import fmt_bytes, plural

#: A repr up to this long, on one line and without an address, is shown as it is.
SHORT_REPR = 60
#: Objects visited at most by the attribute walk (a huge object graph is summarised from what was seen).
MAX_NODES = 20_000


def describe_object(value: Any) -> str:
    """``GPT(110,529 params, 432 KiB)`` for a module, ``Optimizer(77 arrays, 864 KiB)`` for other array
    holders, a short repr as it is, else ``TypeName(...)``; never an array's values."""
    if is_array(value):  # a live array: its spec, not its values
        return f"{short_name(dtype_name(value.dtype))}[{','.join(str(d) for d in value.shape)}]"
    name = type(value).__name__
    leaves = array_leaves(value)
    if leaves:
        nbytes = sum(leaf_bytes(leaf) for leaf in leaves)
        if is_module(value):
            params = sum(leaf_size(leaf) for leaf in leaves if _floating(leaf))
            return f"{name}({params:,} params, {fmt_bytes(nbytes)})"
        return f"{name}({plural(len(leaves), 'array')}, {fmt_bytes(nbytes)})"
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a broken __repr__ must not break a label
        text = ""
    if text and len(text) <= SHORT_REPR and "\n" not in text and " at 0x" not in text:
        return text
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, types.MethodType)):
        return str(getattr(value, "__qualname__", name))
    return f"{name}(...)"


def is_module(value: Any) -> bool:
    """A neural-network module (flax nnx or linen, equinox, haiku...): its leaves are its parameters."""
    return any(cls.__name__ == "Module" for cls in type(value).__mro__)


def is_array(value: Any) -> bool:
    return not isinstance(value, type) and hasattr(value, "shape") and hasattr(value, "dtype")


def leaf_size(leaf: Any) -> int:
    try:
        return math.prod(int(d) for d in leaf.shape)
    except (TypeError, ValueError):  # a symbolic dimension
        return 0


def leaf_bytes(leaf: Any) -> int:
    try:
        nbytes = getattr(leaf, "nbytes", None)
    except NotImplementedError:  # JAX 0.4.x: a typed key array's nbytes is an abstract method
        nbytes = None
    if isinstance(nbytes, int):
        return nbytes
    try:
        itemsize = getattr(leaf.dtype, "itemsize", None)
    except NotImplementedError:
        itemsize = None
    if not isinstance(itemsize, int):  # a key<fry> (by its key data), float0, or a dtype given by name
        try:
            return array_nbytes(tuple(int(d) for d in leaf.shape), dtype_name(leaf.dtype))
        except (TypeError, ValueError):  # a symbolic dimension
            return 0
    return leaf_size(leaf) * itemsize


def _floating(leaf: Any) -> bool:
    name = dtype_name(leaf.dtype)
    if name == "float0":  # a tangent of an integer: no parameter
        return False
    return name.startswith(("float", "bfloat", "complex")) or name in ("bf16", "f16", "f32", "f64")


def array_leaves(value: Any) -> list[Any]:
    """The arrays ``value`` holds (each once): JAX's tree leaves where it is a registered pytree, else
    what a walk of its attributes, dicts and sequences finds."""
    jax = sys.modules.get("jax")
    if jax is not None:
        try:
            leaves = jax.tree_util.tree_leaves(value)
        except Exception:  # noqa: BLE001 - a pytree whose flatten fails: walk it instead
            leaves = [value]
        if not (len(leaves) == 1 and leaves[0] is value):
            found = []
            for leaf in leaves:
                found.extend([leaf] if is_array(leaf) else _walk(leaf))
            return found
    return [] if is_array(value) else _walk(value)


_OPAQUE = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType, str, bytes)


def _walk(root: Any) -> list[Any]:
    found: list[Any] = []
    seen: set[int] = set()
    stack = [root]
    while stack and len(seen) < MAX_NODES:
        value = stack.pop()
        if id(value) in seen or isinstance(value, _OPAQUE):
            continue
        seen.add(id(value))
        if is_array(value):
            found.append(value)
            continue
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, (list, tuple, set, frozenset)):
            stack.extend(value)
        else:
            attrs = getattr(value, "__dict__", None)
            if isinstance(attrs, dict):
                stack.extend(attrs.values())
            for slot in getattr(type(value), "__slots__", ()):
                if isinstance(slot, str) and hasattr(value, slot):
                    stack.append(getattr(value, slot))
    return found
