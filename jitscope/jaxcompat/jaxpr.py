"""Walk a live jaxpr into a ``JaxprRecord``: the only place that reads jaxpr internals.

The walker is a plain loop in the autodidax style: per-primitive tables (keyed by
primitive name) decide which parameters are worth showing, nested jaxprs are found
by inspecting parameters (as ``jax.extend.core.jaxprs_in_params`` does), and source
locations come from JAX's own user-frame heuristic in ``source_info_util``.

Speed matters: a large model has tens of thousands of equations, and converting them
must cost little next to ``str(jaxpr)``. Hence the caches keyed by ``id()`` (avals,
tracebacks, code locations): every keyed object stays alive for the whole walk,
because the jaxpr being walked holds it.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from jitscope.dtypes import dtype_name
from jitscope.jaxcompat.features import JIT_TRACE_FRAMES, jaxpr_types, printer_style, source_info_hooks
from jitscope.jaxcompat.jaxpr_naming import inner_jaxpr, jaxprs_in, shared_jaxprs, unused_outputs, var_names
from jitscope.jaxcompat.jaxpr_params import format_param, shown_params
from jitscope.model.common import Location
from jitscope.model.jaxpr import (
    AvalRecord,
    ConstRecord,
    EqnRecord,
    JaxprRecord,
    LiteralRecord,
    VarRecord,
)
from jitscope.userframes import IsUserFile, default_is_user_file, is_stdlib_file

_TYPES = jaxpr_types()
ClosedJaxpr = _TYPES.closed_jaxpr  # the same class as Jaxpr on JAX 0.12+, which merged them
Jaxpr = _TYPES.jaxpr
Literal = _TYPES.literal
DropVar = _TYPES.drop_var
_SOURCE_INFO = source_info_hooks()

#: (the user's line, the innermost library line, the library function the user's line called).
Origin = tuple[Location | None, Location | None, Location | None]
_NO_ORIGIN: Origin = (None, None, None)
#: JAX's own libraries of composite functions (``jax.nn.gelu``, ``jax.random.normal``): a call into them is
#: a library call like flax's, folded under the user's line; ``jnp`` and ``lax`` are the user's own ops.
_JAX_LIBRARIES = tuple(os.sep.join(("", "jax", "_src", name)) for name in ("nn" + os.sep, "random.py", "scipy" + os.sep,
                                                                          "image" + os.sep))
#: What a code object on an equation's stack is (``_Walker.code_kind``).
_SKIP, _USER, _LIBRARY, _JIT_BOUNDARY = range(4)

#: jitscope's own frames (its tracer calls the user's function) are never "the user's line".
_JITSCOPE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _same_names_inside() -> frozenset[str]:
    """Call primitives whose inner jaxpr reuses the caller's variable names (none on older JAX)."""
    return frozenset({"jit", "pjit"}) if printer_style().jit_names_inside else frozenset()


# ---------------------------------------------------------------- the walker


class _Walker:
    def __init__(self, const_origins: dict[int, str], shared: dict[int, str], unused: set[int],
                 is_user_file: IsUserFile) -> None:
        self.const_origins = const_origins
        #: id() of top-level outputs nobody reads: named ``_`` as JAX prints them.
        self.unused = unused
        #: id(inner Jaxpr) -> name, for jaxprs used at several places (printed once, as JAX does).
        self.shared = shared
        self.next_name = var_names(set(shared.values())).__next__
        self.vars: dict[int, VarRecord] = {}
        self.avals: dict[int, AvalRecord] = {}
        self.aval_keys: dict[Any, AvalRecord] = {}
        self.is_user_file = is_user_file
        #: id(traceback) -> what ``classify`` found in it
        self.tracebacks: dict[int, tuple[Location | None, Location | None, Location | None, bool]] = {}
        #: id(code) -> _USER, _LIBRARY, _SKIP or _JIT_BOUNDARY
        self.code_kinds: dict[int, int] = {}
        self.code_locations: dict[tuple[int, int], Location] = {}
        self.effects: dict[int, str] = {}
        self.done: dict[int, JaxprRecord] = {}
        self.literals: dict[tuple[str, int], LiteralRecord] = {}
        #: Origin of the equation whose nested jaxpr is being walked (see ``jaxpr``).
        self.call_site: Origin | None = None
        #: Constants found as literals in the jaxpr being walked (see ``literal``).
        self.literal_consts: list[ConstRecord] = []
        #: id(var) -> name to reuse: a jit's inner variables take the names of the call's operands.
        self.suggested: dict[int, str] = {}
        style = printer_style()
        self.same_names_inside = _same_names_inside()
        self.typed_literals = style.typed_literals
        self.pp_rules = style.pp_rules

    # -- values

    def aval(self, aval: Any) -> AvalRecord:
        rec = self.avals.get(id(aval))
        if rec is not None:
            return rec
        shape = getattr(aval, "shape", None)
        dtype = getattr(aval, "dtype", None)
        if shape is None or dtype is None:
            rec = AvalRecord(dtype=type(aval).__name__, text=aval.str_short(short_dtypes=True))
        else:
            # Equal avals share a record. The aval itself is the key: its hash covers what its
            # text shows (memory space, varying axes, Ref{...}), which a hand-made key would miss.
            try:
                key: Any = (type(aval), aval)
                rec = self.aval_keys.get(key)
            except TypeError:  # an unhashable aval kind
                key, rec = None, None
            if rec is None:
                dims = tuple(d if type(d) is int else str(d) for d in shape)
                short = _short_dtype_name(dtype)
                text = aval.str_short(short_dtypes=True)
                plain = f"{short}[{','.join(map(str, dims))}]"
                weak = bool(getattr(aval, "weak_type", False))
                rec = AvalRecord(dims, short, weak, "" if text == plain else text)
                if key is not None:
                    self.aval_keys[key] = rec
        self.avals[id(aval)] = rec
        return rec

    def bind(self, var: Any) -> VarRecord:
        if isinstance(var, DropVar) or id(var) in self.unused:
            return VarRecord("_", self.aval(var.aval))
        name = self.suggested.pop(id(var), None) if self.suggested else None
        rec = VarRecord(name or self.next_name(), self.aval(var.aval))
        self.vars[id(var)] = rec
        return rec

    def atom(self, atom: Any) -> VarRecord | LiteralRecord:
        rec = self.vars.get(id(atom))
        if rec is not None:
            return rec
        if type(atom) is Literal:
            return self.literal(atom)
        return self.bind(atom)  # a free variable: name it where first seen

    def literal(self, atom: Any) -> LiteralRecord:
        """``1.0:f32[]``, or ``[...]`` for an array, as JAX prints it (Literal.pretty_print)."""
        val = atom.val
        shape = getattr(val, "shape", ())
        if shape:
            text = "[...]"
        elif type(val) in (float, int, bool):
            text = str(val)
        elif isinstance(val, (np.ndarray, np.generic)):
            text = str(val.item())
        else:  # e.g. jax's TypedInt / TypedFloat
            text = str(np.asarray(val).item())
        aval = self.aval(atom.aval)
        key = (text, id(aval))
        rec = self.literals.get(key)
        if rec is None:
            rec = self.literals[key] = LiteralRecord(text, aval, self.typed_literals)
        # An array JAX inlined as a literal is a captured constant; so is a scalar we know the origin of.
        if shape or self.const_origins:
            origin = self.origin(val)
            if shape or origin != "unknown":
                nbytes = getattr(val, "nbytes", None) or aval.nbytes or 0
                self.literal_consts.append(ConstRecord(text, aval, int(nbytes), origin, literal=True))
        return rec

    def origin(self, value: Any) -> str:
        """Where a constant came from, following numpy views back to the user's array."""
        origins = self.const_origins
        if not origins:
            return "unknown"
        for hop in range(4):
            found = origins.get(id(value))
            if found is not None:
                # JAX wraps a user's numpy array in a view (literals.TypedNdArray): that is the array itself.
                return found if hop <= 1 else f"part of {found}"
            value = getattr(value, "base", None)
            if value is None:
                break
        return "unknown"

    def effect_names(self, effects: Any) -> tuple[str, ...]:
        if not effects:
            return ()
        names = []
        for eff in effects:
            name = self.effects.get(id(eff))
            if name is None:
                name = str(eff)
                if " object at 0x" in name:
                    name = type(eff).__name__
                self.effects[id(eff)] = name
            names.append(name)
        return tuple(sorted(names))

    # -- locations

    def eqn_origin(self, source_info: Any) -> Origin:
        """(the user's line, the innermost library line, the library call) of an equation.

        Inside a nested jaxpr, frames past the one where JAX traced a jit's body belong to the
        jit's first caller, not to this equation (JAX reuses that jaxpr for later callers): the
        enclosing equation's origin stands in for them.
        """
        tb = getattr(source_info, "traceback", None)
        site = self.call_site
        if tb is None:
            return site or _NO_ORIGIN
        key = id(tb)
        found = self.tracebacks.get(key)
        if found is None:
            found = self.tracebacks[key] = self.classify(tb)
        user, inner, outer, outside_jit = found
        if site is not None and (user is None or outside_jit):
            if inner is None:
                return site
            return (site[0], inner, site[2] or outer)
        return (user, inner, outer)

    def classify(self, tb: Any) -> tuple[Location | None, Location | None, Location | None, bool]:
        """(user frame, innermost library frame, outermost library frame before it, crossed a jit boundary)."""
        try:
            codes, lastis = tb.raw_frames()
        except Exception:  # noqa: BLE001 - a missing location must never break tracing
            codes, lastis = [], []
        kinds = self.code_kinds
        inner = outer = named = None
        outside_jit = False
        # Innermost first. Keyed by id(): hashing a code object hashes its contents, and there are ~10 per equation.
        for i, code in enumerate(codes):
            kind = kinds.get(id(code))
            if kind is None:
                kind = kinds[id(code)] = self.code_kind(code)
            if kind == _USER:
                return self.code_location(code, lastis[i]), inner, named or outer, outside_jit
            if kind == _JIT_BOUNDARY:
                outside_jit = True
            elif kind == _LIBRARY and not outside_jit:
                outer = self.code_location(code, lastis[i])
                inner = inner or outer
                # The library call is named by its outermost function that is not a decorator's
                # wrapper (``Optimizer.update``, not ``_check_grads_arg_passed.<locals>._check_grads_wrapper``).
                if not _is_wrapper(outer.function):
                    named = outer
        return None, inner, named or outer, outside_jit

    def code_kind(self, code: Any) -> int:
        fname = code.co_filename
        if not _SOURCE_INFO.is_user_filename(fname) or fname.startswith(_JITSCOPE_DIR):
            if (os.path.basename(fname), code.co_name) in JIT_TRACE_FRAMES:
                return _JIT_BOUNDARY
            return _LIBRARY if any(part in fname for part in _JAX_LIBRARIES) else _SKIP
        if self.is_user_file(fname):
            return _USER
        # A decorator's wrapper in the standard library (contextlib, functools) or a generated
        # ``<string>`` method is nobody's line worth showing.
        return _SKIP if is_stdlib_file(fname) else _LIBRARY

    def code_location(self, code: Any, lasti: int) -> Location:
        loc = self.code_locations.get((id(code), lasti))
        if loc is None:
            frame = _SOURCE_INFO.raw_frame_to_frame(code, lasti)
            loc = Location(frame.file_name, frame.start_line, frame.function_name, frame.start_column)
            self.code_locations[(id(code), lasti)] = loc
        return loc

    # -- jaxprs

    def jaxpr(self, jaxpr: Any, consts: Any = None) -> JaxprRecord:
        bind, atom = self.bind, self.atom
        constvars = tuple([bind(v) for v in jaxpr.constvars])
        invars = tuple([bind(v) for v in jaxpr.invars])
        const_recs: list[ConstRecord] = []
        for i, var in enumerate(constvars):
            if consts is not None and i < len(consts):
                value = consts[i]
                try:
                    nbytes = getattr(value, "nbytes", None)
                except NotImplementedError:  # a typed PRNG key array has no byte size before JAX 0.5
                    nbytes = None
                const_recs.append(
                    ConstRecord(var.name, var.aval, int(nbytes or var.aval.nbytes or 0), self.origin(value))
                )
            else:
                const_recs.append(ConstRecord(var.name, var.aval, var.aval.nbytes or 0))
        outer_literal_consts, self.literal_consts = self.literal_consts, []
        eqns = []
        for eqn in jaxpr.eqns:
            primitive = eqn.primitive.name
            invar_recs = tuple([atom(v) for v in eqn.invars])
            outvar_recs = tuple([bind(v) for v in eqn.outvars])
            # Inside a jit traced once for an earlier caller (jax.nn.relu's inner jit), the frames
            # past the jit boundary are that caller's: the equation takes its enclosing call's origin.
            origin = self.eqn_origin(eqn.source_info)
            params: tuple[tuple[str, str], ...] = ()
            subs: tuple[tuple[str, JaxprRecord], ...] = ()
            if eqn.params:
                if primitive in self.same_names_inside:
                    self.suggest_names(eqn, invar_recs, outvar_recs)
                outer_call_site, self.call_site = self.call_site, origin
                params, subs = self.params(primitive, eqn.params)
                self.call_site = outer_call_site
            effects = self.effect_names(eqn.effects) if eqn.effects else ()
            user, library, call = origin
            eqns.append(EqnRecord(primitive, outvar_recs, invar_recs, params, subs, user, effects, library,
                                  call if library is not None else None))
        outvars = tuple([atom(v) for v in jaxpr.outvars])
        const_recs += self.literal_consts
        self.literal_consts = outer_literal_consts
        return JaxprRecord(
            constvars,
            invars,
            outvars,
            tuple(eqns),
            self.effect_names(jaxpr.effects),
            tuple(const_recs),
            self.shared.get(id(jaxpr), ""),
        )

    def suggest_names(self, eqn: Any, invars: tuple[Any, ...], outvars: tuple[VarRecord, ...]) -> None:
        """Name a jit's inner inputs and outputs after the call's, as JAX's printer does
        (``pjit._pjit_pp_rule``), so ``a`` outside is ``a`` inside."""
        inner = inner_jaxpr(eqn.params.get("jaxpr"))
        if inner is None or id(inner) in self.shared or id(inner) in self.done:
            return
        for for_vars, like in ((inner.invars, invars), (inner.outvars, outvars)):
            if len(for_vars) != len(like):
                continue
            used: set[str] = set()
            for for_v, like_v in zip(for_vars, like, strict=True):
                name = getattr(like_v, "name", None)
                if (
                    type(like_v) is VarRecord
                    and name not in used
                    and name != "_"
                    and not isinstance(for_v, Literal)
                    and id(for_v) not in self.vars
                    and id(for_v) not in self.suggested
                ):
                    used.add(name)  # type: ignore[arg-type]
                    self.suggested[id(for_v)] = name  # type: ignore[assignment]

    def sub(self, closed_or_open: Any) -> JaxprRecord:
        inner = inner_jaxpr(closed_or_open)
        rec = self.done.get(id(inner))
        if rec is None:
            consts = closed_or_open.consts if isinstance(closed_or_open, ClosedJaxpr) else None
            call_site = self.call_site
            if id(inner) in self.shared:
                self.call_site = None  # used from several places: no single call site to inherit
            rec = self.jaxpr(inner, consts)
            self.call_site = call_site
            self.done[id(inner)] = rec
        return rec

    def params(
        self, primitive: str, params: dict[str, Any]
    ) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, JaxprRecord], ...]]:
        texts: list[tuple[str, str]] = []
        subs: list[tuple[str, JaxprRecord]] = []
        for key, value in shown_params(primitive, params, self.pp_rules):
            jaxprs = jaxprs_in(value)
            if jaxprs is None:
                texts.append((key, format_param(value)))
            elif type(value) is tuple:
                subs.extend((f"{key}[{i}]", self.sub(j)) for i, j in enumerate(jaxprs))
            else:
                subs.append((key, self.sub(jaxprs[0])))
        return tuple(texts), tuple(subs)


def _is_wrapper(qualname: str) -> bool:
    """A decorator's inner function: ``deco.<locals>.wrapper``, ``_check_grads_wrapper``, ``inner``."""
    name = qualname.rsplit(".", 1)[-1].lower()
    return "<locals>" in qualname and ("wrap" in name or name in ("inner", "decorated", "_f", "f"))


_DTYPE_NAMES: dict[Any, str] = {}


def _short_dtype_name(dtype: Any) -> str:
    """f32, bf16, i32 ...: JAX's short names (dtypes.short_dtype_name), cached per dtype."""
    name = _DTYPE_NAMES.get(dtype)
    if name is None:
        name = dtype_name(dtype)  # float0 is a NumPy dtype NumPy calls "void"
        if isinstance(dtype, np.dtype) and name != "float0":
            name = name.replace("float", "f").replace("uint", "u").replace("int", "i").replace("complex", "c")
        _DTYPE_NAMES[dtype] = name
    return name


def jaxpr_to_record(closed_jaxpr: Any, *, const_origins: dict[int, str] | None = None,
                    is_user_file: IsUserFile = default_is_user_file) -> JaxprRecord:
    """Convert a ``ClosedJaxpr`` (or an open ``Jaxpr``) into a JAX-free ``JaxprRecord``.

    ``const_origins`` maps ``id(array)`` of arrays the traced function closed over to a
    description ("closure variable `w` in model.py:12"); captured constants not in it
    get the origin "unknown". ``is_user_file`` tells the user's files (``tracing.project``):
    each equation's ``location`` is its nearest frame in them, ``library``/``library_call``
    the frames of other non-JAX code between.
    """
    inner = inner_jaxpr(closed_jaxpr)
    shared = shared_jaxprs(inner)
    walker = _Walker(
        const_origins or {}, {key: name for key, (name, _) in shared.items()}, unused_outputs(inner), is_user_file
    )
    # Shared jaxprs first, in the order they are printed, so names run a, b, c... down the page.
    for _, sub in shared.values():
        walker.sub(sub)
    consts = closed_jaxpr.consts if isinstance(closed_jaxpr, ClosedJaxpr) else None
    return walker.jaxpr(inner, consts)
