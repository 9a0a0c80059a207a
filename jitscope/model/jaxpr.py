"""Records for jaxprs: a JAX-free mirror of a ClosedJaxpr, and its summary.

``jitscope.jaxcompat.jaxpr.jaxpr_to_record`` builds a ``JaxprRecord`` from a live
jaxpr; everything after that (summary, renderers, JSON) works on these records only.
Variables are shared objects: the ``VarRecord`` bound by an equation is the same
object wherever it is used, so a 20,000-equation record stays small in memory.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from jitscope.dtypes import is_key, itemsize
from jitscope.model.common import Location

#: Bits per element, keyed by JAX's short dtype name, for byte counts without numpy.
DTYPE_BITS: dict[str, int] = {
    "bool": 8,
    "i1": 1,
    "i2": 2,
    "i4": 4,
    "i8": 8,
    "i16": 16,
    "i32": 32,
    "i64": 64,
    "u1": 1,
    "u2": 2,
    "u4": 4,
    "u8": 8,
    "u16": 16,
    "u32": 32,
    "u64": 64,
    "f4_e2m1fn": 4,
    "f8_e3m4": 8,
    "f8_e4m3": 8,
    "f8_e4m3b11fnuz": 8,
    "f8_e4m3fn": 8,
    "f8_e4m3fnuz": 8,
    "f8_e5m2": 8,
    "f8_e5m2fnuz": 8,
    "f8_e8m0fnu": 8,
    "bf16": 16,
    "f16": 16,
    "f32": 32,
    "f64": 64,
    "c64": 64,
    "c128": 128,
    "float0": 0,
}


@dataclass(frozen=True, slots=True)
class AvalRecord:
    """An abstract value: shape and dtype, as JAX prints it (``f32[8,128]``)."""

    #: Dimensions; a symbolic dimension (shape polymorphism) is kept as its text.
    shape: tuple[int | str, ...] = ()
    #: JAX's short dtype name: f32, bf16, i32, bool, ...
    dtype: str = ""
    weak_type: bool = False
    #: JAX's own short text when ``dtype[shape]`` does not say it all (tokens, refs,
    #: memory spaces, varying manual axes); empty otherwise.
    text: str = ""

    def __str__(self) -> str:
        if self.text:
            return self.text
        return f"{self.dtype}[{','.join(map(str, self.shape))}]"

    @property
    def size(self) -> int | None:
        """Number of elements, or None when a dimension is symbolic."""
        n = 1
        for d in self.shape:
            if not isinstance(d, int):
                return None
            n *= d
        return n

    @property
    def nbytes(self) -> int | None:
        """Bytes of a dense array of this type, or None when unknown."""
        size = self.size
        bits = DTYPE_BITS.get(self.dtype)
        if bits is None and is_key(self.dtype):  # a typed key (key<fry>) holds its key data
            bits = int(itemsize(self.dtype) * 8)
        if size is None or bits is None:
            return None
        return (size * bits + 7) // 8


@dataclass(frozen=True, slots=True)
class VarRecord:
    """A variable, named as in JAX's printout (``a``, ``b``, ... ``ba``); ``_`` is a dropped output."""

    name: str
    aval: AvalRecord

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class LiteralRecord:
    """A constant inlined into an equation, e.g. ``1.0:f32[]``; non-scalars print as ``[...]``."""

    value: str
    aval: AvalRecord
    #: False where the JAX that made it prints literals without their type (``1.0``, JAX < 0.6-ish).
    typed: bool = True

    def __str__(self) -> str:
        return f"{self.value}:{self.aval}" if self.typed else self.value


Atom = VarRecord | LiteralRecord


@dataclass(frozen=True, slots=True)
class ConstRecord:
    """A constant captured by a jaxpr: a constvar's value, or an array inlined as a literal."""

    #: The constvar's name, or the literal's text.
    name: str
    aval: AvalRecord
    nbytes: int
    #: Where the value came from, e.g. "closure variable `w` in model.py:12"; "unknown" if not known.
    origin: str = "unknown"
    #: True when JAX inlined the value as a literal instead of binding a constvar.
    literal: bool = False


@dataclass(frozen=True, slots=True)
class EqnRecord:
    """One equation: ``outvars = primitive[params] invars``."""

    primitive: str
    outvars: tuple[VarRecord, ...]
    invars: tuple[VarRecord | LiteralRecord, ...]
    #: Non-jaxpr parameters as short strings, in display order (JAX's: ``name`` first, then sorted).
    params: tuple[tuple[str, str], ...] = ()
    #: Nested jaxprs by parameter name; a tuple parameter gives ``branches[0]``, ``branches[1]``...
    subjaxprs: tuple[tuple[str, JaxprRecord], ...] = ()
    #: The nearest frame in the user's code (their project: see ``jitscope.tracing.project``) that
    #: created this equation; None when no frame of theirs is on its stack.
    location: Location | None = None
    effects: tuple[str, ...] = ()
    #: The innermost library line (outside JAX) that made it, when the user's line called into a library
    #: (``flax/nnx/nn/attention.py:288``); None when the user's line made it directly (``jnp``, ``lax``).
    library: Location | None = None
    #: The library function the user's line called to get here (its first frame inside the library: a
    #: flax ``MultiHeadAttention.__call__``, an optax update); None when ``library`` is None.
    library_call: Location | None = None


@dataclass(frozen=True, slots=True)
class JaxprRecord:
    """A jaxpr: ``{ lambda constvars ; invars. let eqns in (outvars) }``."""

    constvars: tuple[VarRecord, ...]
    invars: tuple[VarRecord, ...]
    outvars: tuple[VarRecord | LiteralRecord, ...]
    eqns: tuple[EqnRecord, ...]
    effects: tuple[str, ...] = ()
    #: Captured constants: one per constvar (in order), then arrays inlined as literals.
    consts: tuple[ConstRecord, ...] = ()
    #: Set when the same jaxpr is used at several places (e.g. one jitted function called
    #: twice): renderers print it once under this name, as JAX's ``let block = ... in`` does.
    shared_name: str = ""


@dataclass(frozen=True, slots=True)
class JaxprSummary:
    """The header facts about a jaxpr, counted over nested jaxprs too."""

    in_avals: tuple[AvalRecord, ...]
    out_avals: tuple[AvalRecord, ...]
    #: Equations in the top-level jaxpr.
    n_eqns: int
    #: Equations including those in nested jaxprs (each nested occurrence counted once, not per iteration).
    n_eqns_total: int
    #: Number of nested jaxprs, and how deep they go (0: none).
    n_subjaxprs: int
    max_depth: int
    #: (primitive, count) including nested equations, most frequent first, then by name.
    primitive_counts: tuple[tuple[str, int], ...]
    constants: tuple[ConstRecord, ...]
    const_bytes: int
    effects: tuple[str, ...]


def distinct_eqns(record: JaxprRecord) -> Iterator[EqnRecord]:
    """Every equation of ``record`` and of the jaxprs nested in it, a jaxpr used at several places once."""
    stack, seen = [record], set()
    while stack:
        jaxpr = stack.pop()
        if id(jaxpr) in seen:
            continue
        seen.add(id(jaxpr))
        for eqn in jaxpr.eqns:
            yield eqn
            stack.extend(sub for _, sub in eqn.subjaxprs)


def count_eqns(record: JaxprRecord) -> int:
    """Equations in ``record`` and every jaxpr nested in it."""
    total = 0
    stack = [record]
    while stack:
        jaxpr = stack.pop()
        total += len(jaxpr.eqns)
        for eqn in jaxpr.eqns:
            if eqn.subjaxprs:
                stack.extend(sub for _, sub in eqn.subjaxprs)
    return total


@dataclass(slots=True)
class _Totals:
    """What one jaxpr contributes, nested jaxprs included (independent of where it is used)."""

    n_eqns: int
    counts: Counter[str]
    n_subjaxprs: int
    height: int  # levels of nesting below it


def summarize(record: JaxprRecord) -> JaxprSummary:
    """Count equations, primitives, constants and effects over ``record`` and its nested jaxprs.

    Equations count once per place a nested jaxpr is used (a jit called twice counts twice),
    never per loop iteration. Captured constants of a shared jaxpr are listed once.
    """
    shared: dict[str, _Totals] = {}
    constants: list[ConstRecord] = []

    def totals(jaxpr: JaxprRecord) -> _Totals:
        if jaxpr.shared_name and jaxpr.shared_name in shared:
            return shared[jaxpr.shared_name]
        constants.extend(jaxpr.consts)
        result = _Totals(len(jaxpr.eqns), Counter(eqn.primitive for eqn in jaxpr.eqns), 0, 0)
        for eqn in jaxpr.eqns:
            for _, sub in eqn.subjaxprs:
                inner = totals(sub)
                result.n_eqns += inner.n_eqns
                result.counts.update(inner.counts)
                result.n_subjaxprs += 1 + inner.n_subjaxprs
                result.height = max(result.height, 1 + inner.height)
        if jaxpr.shared_name:
            shared[jaxpr.shared_name] = result
        return result

    top = totals(record)
    return JaxprSummary(
        in_avals=tuple(v.aval for v in record.invars),
        out_avals=tuple(v.aval for v in record.outvars),
        n_eqns=len(record.eqns),
        n_eqns_total=top.n_eqns,
        n_subjaxprs=top.n_subjaxprs,
        max_depth=top.height,
        primitive_counts=tuple(sorted(top.counts.items(), key=lambda kv: (-kv[1], kv[0]))),
        constants=tuple(constants),
        const_bytes=sum(c.nbytes for c in constants),
        effects=record.effects,
    )
