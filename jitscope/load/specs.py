"""Argument specs: ``"f32[8,128], {'w': f32[128,10]}, i32[]"`` -> abstract argument records.

The spec language is a small subset of Python expressions, so we parse it with
``ast`` instead of a hand-written tokenizer: ``f32[8,128]`` is a subscript,
pytrees are tuple/list/dict displays and static values are literals. The only
non-Python form is the scalar ``f32[]``, which we rewrite to ``f32[()]`` before
parsing while keeping error columns in terms of the text the user typed.

Nothing here imports jax: specs are plain records, turned into
``jax.ShapeDtypeStruct`` by :mod:`jitscope.load.abstract`.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import math
import re
from dataclasses import dataclass, field
from typing import Any

from jitscope.dtypes import MAX_ARRAY_BYTES, ML_DTYPES, array_nbytes, canonical_dtype, itemsize, short_name
from jitscope.errors import SpecError
from jitscope.load.partition import Partition, format_partition, parse_partition


@dataclass(frozen=True, slots=True)
class ArraySpec:
    """An abstract array argument: shape and dtype, no data."""

    shape: tuple[int, ...]
    #: NumPy name, e.g. "float32"; JAX's extended ones as JAX prints them: "key<fry>", "float0" ("key": the
    #: default PRNG implementation)
    dtype: str
    weak_type: bool = False
    #: How it is laid out over the mesh (``@(data,None)``), one entry per leading dimension; None: unsaid.
    sharding: Partition | None = None
    #: The mesh a ``ShapeDtypeStruct``'s NamedSharding named (``data=4,model=2``); "" for ``--mesh``'s.
    mesh: str = ""

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return array_nbytes(self.shape, self.dtype)

    def __str__(self) -> str:
        text = f"{short_name(self.dtype)}[{','.join(map(str, self.shape))}]"
        return text if self.sharding is None else f"{text}@{format_partition(self.sharding)}"


@dataclass(frozen=True, slots=True)
class ArgSet:
    """One way to call the target: positional args, keyword args, and which names are static.

    Leaves of ``args``/``kwargs`` are ``ArraySpec`` (traced) or Python values (static, or
    Python scalars that JAX traces as weak-typed values when not marked static).
    """

    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    static_names: tuple[str, ...] = ()
    label: str = ""

    def describe(self) -> str:
        """Compact text like ``f32[8,128], i32[8], threshold=0.0``; objects and long pytrees summarised
        (``GPT(110,529 params, 432 KiB)``, ``dict(12 arrays, 4 MiB)``)."""
        parts = [format_value(a, limit=LABEL_LIMIT) for a in self.args]
        parts += [f"{k}={format_value(v, limit=LABEL_LIMIT)}" for k, v in self.kwargs.items()]
        return ", ".join(parts)

    def with_overrides(self, other: ArgSet) -> ArgSet:
        """This call with ``other``'s keyword and static values on top (its shapes are kept)."""
        kwargs = {**self.kwargs, **other.kwargs}
        statics = tuple(dict.fromkeys(self.static_names + other.static_names))
        return ArgSet(self.args, kwargs, statics, self.label)

    @property
    def nbytes(self) -> int:
        """Total bytes of the array leaves, for refusing inputs too large for memory."""
        return sum(leaf.nbytes for leaf in iter_array_specs((self.args, self.kwargs)))


def iter_array_specs(tree: Any) -> Any:
    """Yield every ArraySpec leaf of a pytree of tuples, lists and dicts."""
    if isinstance(tree, ArraySpec):
        yield tree
    elif isinstance(tree, dict):
        for value in tree.values():
            yield from iter_array_specs(value)
    elif isinstance(tree, (list, tuple)):
        for value in tree:
            yield from iter_array_specs(value)


def format_value(value: Any, *, limit: int | None = None) -> str:
    """Spec-language text for a pytree of specs and literals; any other object summarised (``describe_object``).

    With ``limit``, a container whose text would be longer is summarised too (``dict(12 arrays, 4 MiB)``):
    a model's parameter tree or an optimizer state is one item of a call label, not a page of it.
    """
    if isinstance(value, ArraySpec):
        return str(value)
    if isinstance(value, (dict, tuple, list)):
        text = _format_container(value)
        if limit is None or len(text) <= limit:
            return text
    elif isinstance(value, _LITERALS) or value is Ellipsis:
        return repr(value)
    from jitscope.load.objects import describe_object

    return describe_object(value)


def _format_container(value: dict[Any, Any] | tuple[Any, ...] | list[Any]) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {format_value(v)}" for k, v in value.items()) + "}"
    fields = getattr(type(value), "_fields", None)
    if isinstance(value, tuple) and isinstance(fields, tuple):  # a NamedTuple (optax's states): its names
        inner = ", ".join(f"{name}={format_value(v)}" for name, v in zip(fields, value, strict=False))
        return f"{type(value).__name__}({inner})"
    if isinstance(value, tuple):
        inner = ", ".join(format_value(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    return "[" + ", ".join(format_value(v) for v in value) + "]"


#: An argument's text in a call label longer than this is summarised (``ArgSet.describe``).
LABEL_LIMIT = 120


#: Values whose repr is their spec text.
_LITERALS = (type(None), bool, int, float, complex, str, bytes)


#: A quoted string: the rewrites below leave the text of string literals (``mode='[]'``) as it is.
_STRING = r"'(?:[^'\\\n]|\\.)*'" + "|" + r'"(?:[^"\\\n]|\\.)*"'
_EMPTY_SUBSCRIPT = re.compile(rf"({_STRING})|\[\s*\]")
#: A typed key's dtype as JAX prints it, ``key<fry>``: not Python, so it is rewritten to an identifier of the
#: same length (``key_fry_``) before parsing, which keeps error columns where the user typed them.
_KEY_DTYPE = re.compile(rf"({_STRING})|\bkey<(\w+)>")
_KEY_NAME = re.compile(r"key_(\w+)_")


def _dtype_text(name: str) -> str:
    """The dtype as the user wrote it, for a name the parser saw (``key_fry_`` was ``key<fry>``)."""
    m = _KEY_NAME.fullmatch(name)
    return f"key<{m.group(1)}>" if m else name


#: An array spec must describe fewer bytes than this (``dtypes.MAX_ARRAY_BYTES``, why).
MAX_BYTES = MAX_ARRAY_BYTES


@functools.cache
def max_rank() -> int:
    """The most dimensions an array spec may have: NumPy's (64 from NumPy 2, 32 before), which every command
    needs to make its inputs (``bench`` fails past it); XLA itself takes more, until a compile with thousands of
    dimensions runs out of stack."""
    import numpy as np

    return 64 if int(np.__version__.split(".")[0]) >= 2 else 32


def array_problem(shape: Any, dtype: str) -> str | None:
    """Why ``shape`` of ``dtype`` is no array jitscope can make (too many dimensions, a dimension that is not a
    non-negative integer, 2**62 bytes or more), or None. The spec parser and captures both ask."""
    if not isinstance(shape, (list, tuple)):
        return "the shape is not a list of dimensions"
    if len(shape) > max_rank():
        return f"{len(shape)} dimensions, more than the {max_rank()} NumPy and jitscope support"
    nbytes = itemsize(dtype)
    for dim in shape:
        if type(dim) is not int or dim < 0:
            return f"dimension {dim!r} is not a non-negative integer"
        nbytes *= dim
    return "2**62 bytes or more, past what XLA can size" if nbytes >= MAX_BYTES else None


class _Parser:
    """Turns the ``ast`` of a spec into spec values, reporting errors at user columns."""

    def __init__(self, text: str, what: str) -> None:
        self.text = text
        self.what = what
        # Rewrite `f32[]` -> `f32[()]`; remember where we inserted so columns map back.
        self.inserts: list[int] = []
        out, last = [], 0
        text = _KEY_DTYPE.sub(lambda m: m.group(1) or f"key_{m.group(2)}_", text)
        for m in _EMPTY_SUBSCRIPT.finditer(text):
            if m.group(1):  # a string literal
                continue
            out.append(text[last : m.start()] + "[()]")
            self.inserts.append(m.start())
            last = m.end()
        out.append(text[last:])
        self.source = "".join(out)

    def user_col(self, col: int) -> int:
        shift = 0
        for pos in self.inserts:
            if pos + shift < col:
                shift += 2
        return max(0, col - shift - 1)  # ast parses "(" + source; drop that char

    def error(
        self, message: str, node: ast.AST | None = None, col: int | None = None, *, syntax: bool = False
    ) -> SpecError:
        if node is not None:
            col = self.user_col(getattr(node, "col_offset", 0))
        col = 0 if col is None else min(col, len(self.text))
        pointer = f"  {self.text}\n  {' ' * col}^"
        hint = ("arrays look like f32[8,128], scalars f32[], typed PRNG keys key<fry>[] or key[], "
                "pytrees (..), [..], {'k': ..}") if syntax else None
        return SpecError(f"bad {self.what} at column {col + 1}: {message}", hint=hint, detail=pointer)

    def parse(self, *, top_level_tuple: bool) -> Any:
        wrapped = f"({self.source},)" if top_level_tuple else f"({self.source})"
        if not self.text.strip():
            return () if top_level_tuple else self.error_empty()
        try:
            tree = ast.parse(wrapped, mode="eval")
        except SyntaxError as exc:
            col = self.user_col(max((exc.offset or 1) - 1, 0))
            if "closing parenthesis ')'" in (exc.msg or "") or "never closed" in (exc.msg or ""):
                exc.msg = "unclosed bracket"  # the ')' is ours: we wrapped the text in parentheses
            raise self.error(f"invalid syntax ({exc.msg})", col=col, syntax=True) from None
        return self.value(tree.body)

    def error_empty(self) -> Any:
        raise self.error("empty spec", col=0)

    def value(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Subscript):
            return self.array(node)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):  # f32[8,4]@(data,None)
            if not isinstance(node.left, ast.Subscript):
                raise self.error("a sharding (@...) follows an array spec such as f32[8,128]", node)
            partition = parse_partition(node.right, lambda message, at: self.error(message, at))
            return dataclasses.replace(self.array(node.left), sharding=partition)
        if isinstance(node, ast.Tuple):
            return tuple(self.value(e) for e in node.elts)
        if isinstance(node, ast.List):
            return [self.value(e) for e in node.elts]
        if isinstance(node, ast.Dict):
            out: dict[Any, Any] = {}
            for key, val in zip(node.keys, node.values, strict=True):
                if key is None:
                    raise self.error("'**' is not allowed in a spec", val)
                k = key.id if isinstance(key, ast.Name) else self.literal(key)
                if not isinstance(k, (str, int)):
                    raise self.error("dict keys must be strings or ints", key)
                out[k] = self.value(val)
            return out
        if isinstance(node, ast.Name):
            name = _dtype_text(node.id)
            if canonical_dtype(name):
                raise self.error(f"'{name}' needs a shape: {name}[...] (scalar: {name}[])", node)
            raise self.error(f"unknown name '{name}' (a dtype like f32[3] or a Python literal)", node)
        return self.literal(node)

    def literal(self, node: ast.expr) -> Any:
        try:
            return ast.literal_eval(node)
        except (ValueError, SyntaxError, TypeError):
            raise self.error(f"not an array spec or a Python literal: {ast.unparse(node)}", node) from None

    def array(self, node: ast.Subscript) -> ArraySpec:
        base = node.value
        name = base.attr if isinstance(base, ast.Attribute) else base.id if isinstance(base, ast.Name) else None
        dtype = canonical_dtype(_dtype_text(name)) if name else None
        if dtype is None:
            raise self.error(
                f"unknown dtype '{_dtype_text(name) if name else ast.unparse(base)}' (use bf16, f16, f32, "
                "f64, i8..i64, u8..u64, bool, c64, c128, a numpy or ml_dtypes name such as float32 or "
                "float8_e4m3fn, float0, or a typed PRNG key: key<fry>, key<rbg>, key<urbg>, key for JAX's "
                "default)",
                base,
            )
        if dtype in ML_DTYPES:  # a narrow dtype: older JAX versions lack some (float8_e8m0fnu, int2 in 0.4.38)
            from jitscope.jaxcompat.dtypes import has_dtype

            if not has_dtype(dtype):
                import jax

                raise self.error(f"this JAX ({jax.__version__}) has no dtype {dtype!r}: a newer JAX has it", base)
        dims_node = node.slice
        elts = dims_node.elts if isinstance(dims_node, ast.Tuple) else [dims_node]
        if len(elts) > max_rank():  # before anything walks them: thousands of dimensions crash XLA's compiler
            raise self.error(f"{len(elts)} dimensions, more than the {max_rank()} NumPy and jitscope support",
                             elts[max_rank()])
        shape = []
        nbytes = itemsize(dtype)
        for dim in elts:
            if not (isinstance(dim, ast.Constant) and type(dim.value) is int and dim.value >= 0):
                raise self.error(f"dimension must be a non-negative integer, got {ast.unparse(dim)}", dim)
            nbytes *= dim.value
            if nbytes >= MAX_BYTES:  # XLA sizes arrays in int64 bytes: near 2**63 it aborts the process
                raise self.error(f"{ast.unparse(node)} is 2**62 bytes or more, past what XLA can size", dim)
            shape.append(dim.value)
        return ArraySpec(tuple(shape), dtype)


def parse_shapes(text: str) -> tuple[Any, ...]:
    """Parse ``--shapes`` text into a tuple of positional argument specs."""
    return tuple(_Parser(text, "--shapes").parse(top_level_tuple=True))


def parse_value(text: str, what: str = "value") -> Any:
    """Parse a single spec or Python literal (the right-hand side of ``--arg``/``--static``)."""
    return _Parser(text, what).parse(top_level_tuple=False)


def parse_assignment(text: str, what: str) -> tuple[str, Any]:
    """Parse ``name=value`` from ``--static`` or ``--arg``."""
    name, sep, rhs = text.partition("=")
    name = name.strip()
    if not sep or not name.isidentifier():
        raise SpecError(
            f"bad {what} {text!r}: expected NAME=VALUE",
            hint=f"for example {what} threshold=0.0" if what == "--static" else f"for example {what} x=f32[3]",
        )
    return name, parse_value(rhs.strip(), f"{what} {name}")


def build_argset(
    shapes: str | None = None,
    statics: list[str] | None = None,
    kwargs: list[str] | None = None,
    label: str = "",
) -> ArgSet:
    """Combine ``--shapes``, ``--static`` and ``--arg`` into one ArgSet."""
    args = parse_shapes(shapes) if shapes is not None else ()
    kw: dict[str, Any] = {}
    static_names: list[str] = []
    for item in statics or ():
        name, value = parse_assignment(item, "--static")
        if any(True for _ in iter_array_specs(value)):
            raise SpecError(f"--static {name}: a static value must be a Python literal, not an array spec")
        kw[name] = value
        static_names.append(name)
    for item in kwargs or ():
        name, value = parse_assignment(item, "--arg")
        kw[name] = value
    return ArgSet(args=args, kwargs=kw, static_names=tuple(static_names), label=label)
