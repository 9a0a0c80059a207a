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

import itertools
import os
import re
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from jax._src import source_info_util
from jax.extend import core as jex_core

from jitscope.model.common import Location
from jitscope.model.jaxpr import (
    AvalRecord,
    ConstRecord,
    EqnRecord,
    JaxprRecord,
    LiteralRecord,
    VarRecord,
)

ClosedJaxpr = jex_core.ClosedJaxpr
Jaxpr = jex_core.Jaxpr
Literal = jex_core.Literal
DropVar = jex_core.DropVar

#: jitscope's own frames (its tracer calls the user's function) are never "the user's line".
_JITSCOPE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_ADDRESS = re.compile(r" at 0x([0-9a-fA-F]+)")

ParamRule = Callable[[dict[str, Any]], dict[str, Any]]


# ---------------------------------------------------------------- parameter tables
# Mirrors JAX's own pretty-printing rules (core.pp_eqn_rules), so the parameters
# shown are the ones a user recognises from ``print(jax.make_jaxpr(f)(x))``.


def _drop_none(*names: str) -> ParamRule:
    def rule(params: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in params.items() if not (k in names and v is None)}

    return rule


def _jit_params(params: dict[str, Any]) -> dict[str, Any]:
    out = dict(params)
    out.pop("inline", None)
    defaults: dict[str, Callable[[Any], bool]] = {
        "donated_invars": lambda v: not any(v),
        "in_shardings": lambda v: all(type(s).__name__ == "UnspecifiedValue" for s in v),
        "out_shardings": lambda v: all(type(s).__name__ == "UnspecifiedValue" for s in v),
        "in_layouts": lambda v: all(x is None for x in v),
        "out_layouts": lambda v: all(x is None for x in v),
        "keep_unused": lambda v: not v,
        "ctx_mesh": lambda v: bool(getattr(v, "empty", False)),
        "compiler_options_kvs": lambda v: not v,
    }
    for key, is_default in defaults.items():
        if key in out and is_default(out[key]):
            del out[key]
    return out


def _func_name(obj: Any) -> Any:
    debug_info = getattr(obj, "debug_info", None)
    return getattr(debug_info, "func_name", obj)


def _custom_call_params(params: dict[str, Any]) -> dict[str, Any]:
    out = dict(params)
    if not out.get("num_consts"):
        out.pop("num_consts", None)
    out.pop("out_trees", None)
    for old, new in (("jvp_jaxpr_fun", "jvp"), ("fwd_jaxpr_thunk", "fwd"), ("bwd", "bwd")):
        if old in out:
            out[new] = _func_name(out.pop(old))
    call_jaxpr = out.get("call_jaxpr")
    if call_jaxpr is not None:
        jaxpr = getattr(call_jaxpr, "jaxpr", call_jaxpr)
        out["name"] = _func_name(jaxpr)
    return out


def _dot_general_params(params: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in params.items() if v is not None and k != "out_sharding"}
    dims = out.get("dimension_numbers")
    try:
        (lc, rc), (lb, rb) = dims  # type: ignore[misc]
        out["dimension_numbers"] = ((list(lc), list(rc)), (list(lb), list(rb)))
    except (TypeError, ValueError):
        pass
    return out


def _broadcast_in_dim_params(params: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in params.items() if k not in ("shape", "sharding")}
    if not out.get("broadcast_dimensions", True):
        del out["broadcast_dimensions"]
    return out


def _drop(*names: str) -> ParamRule:
    def rule(params: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in params.items() if k not in names}

    return rule


_UNARY_WITH_ACCURACY = [
    "cbrt",
    "cos",
    "exp",
    "exp2",
    "expm1",
    "log",
    "log1p",
    "logistic",
    "rsqrt",
    "sin",
    "sqrt",
    "tan",
    "tanh",
]

#: primitive name -> which parameters to show (the rest of the table is "all of them").
PARAM_RULES: dict[str, ParamRule] = {
    "jit": _jit_params,
    "pjit": _jit_params,
    "custom_jvp_call": _custom_call_params,
    "custom_vjp_call": _custom_call_params,
    "dot_general": _dot_general_params,
    "broadcast_in_dim": _broadcast_in_dim_params,
    "convert_element_type": _drop("sharding"),
    "mul": _drop_none("out_dtype"),
    **{name: _drop_none("accuracy") for name in _UNARY_WITH_ACCURACY},
}


def format_param(value: Any) -> str:
    """A parameter value as JAX prints it, with memory addresses masked (stable output)."""
    if isinstance(value, frozenset):
        return f"frozenset({{{', '.join(repr(e) for e in sorted(value))}}})"
    text = str(value)
    if " at 0x" in text:
        text = _ADDRESS.sub(lambda m: " at 0x" + "X" * len(m.group(1)), text)
    return text


def _jaxprs_in(value: Any) -> tuple[Any, ...] | None:
    """The jaxprs a parameter holds: (j,) for one, a tuple for a tuple of them, None for neither."""
    if isinstance(value, (ClosedJaxpr, Jaxpr)):
        return (value,)
    if type(value) is tuple and value and all(isinstance(v, (ClosedJaxpr, Jaxpr)) for v in value):
        return value
    return None


def _inner(jaxpr: Any) -> Any:
    return jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr


def _var_names(taken: set[str]) -> Iterator[str]:
    """a, b, ..., z, ba, bb, ...: JAX's naming (core._encode_digits_alphabetic)."""
    for i in itertools.count():
        s = ""
        n = i
        while not s or n:
            n, r = divmod(n, 26)
            s = chr(97 + r) + s
        if s not in taken:
            yield s


# ---------------------------------------------------------------- the walker


class _Walker:
    def __init__(self, const_origins: dict[int, str], shared: dict[int, str]) -> None:
        self.const_origins = const_origins
        #: id(inner Jaxpr) -> name, for jaxprs used at several places (printed once, as JAX does).
        self.shared = shared
        self.next_name = _var_names(set(shared.values())).__next__
        self.vars: dict[int, VarRecord] = {}
        self.avals: dict[int, AvalRecord] = {}
        self.aval_keys: dict[tuple[Any, ...], AvalRecord] = {}
        self.tracebacks: dict[int, Location | None] = {}
        self.code_locations: dict[tuple[Any, int], Location] = {}
        self.user_files: dict[str, bool] = {}
        self.effects: dict[int, str] = {}
        self.done: dict[int, JaxprRecord] = {}

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
            key = (shape, dtype, aval.weak_type, getattr(aval, "sharding", None))
            rec = self.aval_keys.get(key)
            if rec is None:
                dims = tuple(d if type(d) is int else str(d) for d in shape)
                short = _short_dtype_name(dtype)
                text = aval.str_short(short_dtypes=True)
                plain = f"{short}[{','.join(map(str, dims))}]"
                rec = AvalRecord(dims, short, bool(aval.weak_type), "" if text == plain else text)
                self.aval_keys[key] = rec
        self.avals[id(aval)] = rec
        return rec

    def bind(self, var: Any) -> VarRecord:
        if isinstance(var, DropVar):
            return VarRecord("_", self.aval(var.aval))
        rec = VarRecord(self.next_name(), self.aval(var.aval))
        self.vars[id(var)] = rec
        return rec

    def atom(self, atom: Any) -> VarRecord | LiteralRecord:
        rec = self.vars.get(id(atom))
        if rec is not None:
            return rec
        if isinstance(atom, Literal):
            val = atom.val
            text = str(np.asarray(val).item()) if not np.shape(val) else "[...]"
            return LiteralRecord(text, self.aval(atom.aval))
        return self.bind(atom)  # a free variable: name it where first seen

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

    def literal_const(self, atom: Any, rec: LiteralRecord) -> ConstRecord | None:
        """An array JAX inlined as a literal counts as a captured constant if it is one."""
        origin = self.origin(atom.val)
        if origin == "unknown" and not np.shape(atom.val):
            return None  # a plain scalar such as the 1 in `x + 1`
        nbytes = getattr(atom.val, "nbytes", None)
        return ConstRecord(rec.value, rec.aval, int(nbytes or rec.aval.nbytes or 0), origin, literal=True)

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

    def location(self, source_info: Any) -> Location | None:
        tb = getattr(source_info, "traceback", None)
        if tb is None:
            return None
        key = id(tb)
        if key in self.tracebacks:
            return self.tracebacks[key]
        loc = None
        try:
            codes, lastis = tb.raw_frames()
        except Exception:  # noqa: BLE001 - a missing location must never break tracing
            codes, lastis = [], []
        # Innermost first, like source_info_util.user_frame, but skipping jitscope's own frames.
        for code, lasti in zip(codes, lastis, strict=False):
            fname = code.co_filename
            is_user = self.user_files.get(fname)
            if is_user is None:
                is_user = source_info_util.is_user_filename(fname) and not fname.startswith(_JITSCOPE_DIR)
                self.user_files[fname] = is_user
            if is_user:
                loc = self.code_location(code, lasti)
                break
        self.tracebacks[key] = loc
        return loc

    def code_location(self, code: Any, lasti: int) -> Location:
        loc = self.code_locations.get((code, lasti))
        if loc is None:
            frame = source_info_util.raw_frame_to_frame(code, lasti)
            loc = Location(frame.file_name, frame.start_line, frame.function_name, frame.start_column)
            self.code_locations[(code, lasti)] = loc
        return loc

    # -- jaxprs

    def jaxpr(self, jaxpr: Any, consts: Any = None) -> JaxprRecord:
        constvars = tuple(self.bind(v) for v in jaxpr.constvars)
        invars = tuple(self.bind(v) for v in jaxpr.invars)
        const_recs: list[ConstRecord] = []
        for i, var in enumerate(constvars):
            if consts is not None and i < len(consts):
                value = consts[i]
                nbytes = getattr(value, "nbytes", None)
                const_recs.append(
                    ConstRecord(var.name, var.aval, int(nbytes or var.aval.nbytes or 0), self.origin(value))
                )
            else:
                const_recs.append(ConstRecord(var.name, var.aval, var.aval.nbytes or 0))
        eqns = []
        atom = self.atom
        for eqn in jaxpr.eqns:
            invar_recs = tuple(atom(v) for v in eqn.invars)
            outvar_recs = tuple(self.bind(v) for v in eqn.outvars)
            params: tuple[tuple[str, str], ...] = ()
            subs: tuple[tuple[str, JaxprRecord], ...] = ()
            if eqn.params:
                params, subs = self.params(eqn.primitive.name, eqn.params)
            for v, rec in zip(eqn.invars, invar_recs, strict=False):
                if type(rec) is LiteralRecord:
                    const = self.literal_const(v, rec)
                    if const is not None:
                        const_recs.append(const)
            eqns.append(
                EqnRecord(
                    eqn.primitive.name,
                    outvar_recs,
                    invar_recs,
                    params,
                    subs,
                    self.location(eqn.source_info),
                    self.effect_names(eqn.effects),
                )
            )
        return JaxprRecord(
            constvars,
            invars,
            tuple(atom(v) for v in jaxpr.outvars),
            tuple(eqns),
            self.effect_names(jaxpr.effects),
            tuple(const_recs),
            self.shared.get(id(jaxpr), ""),
        )

    def sub(self, closed_or_open: Any) -> JaxprRecord:
        inner = _inner(closed_or_open)
        rec = self.done.get(id(inner))
        if rec is None:
            consts = closed_or_open.consts if isinstance(closed_or_open, ClosedJaxpr) else None
            rec = self.jaxpr(inner, consts)
            self.done[id(inner)] = rec
        return rec

    def params(
        self, primitive: str, params: dict[str, Any]
    ) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, JaxprRecord], ...]]:
        rule = PARAM_RULES.get(primitive)
        shown = rule(params) if rule is not None else params
        keys = sorted(shown)
        if "name" in shown:  # JAX puts name= first so the equation is easy to scan
            keys.remove("name")
            keys.insert(0, "name")
        texts: list[tuple[str, str]] = []
        subs: list[tuple[str, JaxprRecord]] = []
        for key in keys:
            value = shown[key]
            jaxprs = _jaxprs_in(value)
            if jaxprs is None:
                texts.append((key, format_param(value)))
            elif type(value) is tuple:
                subs.extend((f"{key}[{i}]", self.sub(j)) for i, j in enumerate(jaxprs))
            else:
                subs.append((key, self.sub(jaxprs[0])))
        return tuple(texts), tuple(subs)


_DTYPE_NAMES: dict[Any, str] = {}


def _short_dtype_name(dtype: Any) -> str:
    """f32, bf16, i32 ...: JAX's short names (dtypes.short_dtype_name), cached per dtype."""
    name = _DTYPE_NAMES.get(dtype)
    if name is None:
        name = getattr(dtype, "name", str(dtype))
        if isinstance(dtype, np.dtype):
            name = name.replace("float", "f").replace("uint", "u").replace("int", "i").replace("complex", "c")
        _DTYPE_NAMES[dtype] = name
    return name


def _shared_jaxprs(root: Any) -> dict[int, str]:
    """Name the jaxprs used at more than one place, so they are printed once (JAX's `let f = ... in`).

    A jaxpr reached through an equation with a ``name`` parameter (a jit call) takes that name.
    """
    refs: dict[int, int] = {}
    names: dict[int, str] = {}
    stack = [root]
    while stack:
        jaxpr = stack.pop()
        for eqn in jaxpr.eqns:
            params = eqn.params
            if not params:
                continue
            for value in params.values():
                found = _jaxprs_in(value)
                if found is None:
                    continue
                for sub in found:
                    inner = _inner(sub)
                    key = id(inner)
                    if key in refs:
                        refs[key] += 1
                        continue
                    refs[key] = 1
                    name = params.get("name")
                    names[key] = name.strip("<>") if isinstance(name, str) and name.strip("<>") else "jaxpr"
                    stack.append(inner)
    shared: dict[int, str] = {}
    used: dict[str, int] = {}
    for key, count in refs.items():
        if count < 2:
            continue
        base = names[key]
        n = used.get(base, 0)
        used[base] = n + 1
        shared[key] = base if n == 0 else f"{base}{n}"
    return shared


def jaxpr_to_record(closed_jaxpr: Any, *, const_origins: dict[int, str] | None = None) -> JaxprRecord:
    """Convert a ``ClosedJaxpr`` (or an open ``Jaxpr``) into a JAX-free ``JaxprRecord``.

    ``const_origins`` maps ``id(array)`` of arrays the traced function closed over to a
    description ("closure variable `w` in model.py:12"); captured constants not in it
    get the origin "unknown".
    """
    inner = _inner(closed_jaxpr)
    walker = _Walker(const_origins or {}, _shared_jaxprs(inner))
    consts = closed_jaxpr.consts if isinstance(closed_jaxpr, ClosedJaxpr) else None
    return walker.jaxpr(inner, consts)
