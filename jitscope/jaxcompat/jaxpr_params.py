"""Which equation parameters to show, and how: JAX's pretty-printing rules as data.

Mirrors ``core.pp_eqn_rules`` (jit, custom_jvp/vjp, dot_general, ...), so the parameters
jitscope shows are the ones a user recognises from ``print(jax.make_jaxpr(f)(x))``.
Part of the JAX adapter: the rules name JAX's parameters, which change between releases.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

ParamRule = Callable[[dict[str, Any]], dict[str, Any]]

_ADDRESS = re.compile(r" at 0x([0-9a-fA-F]+)")


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
        "ctx_mesh": lambda v: v is None or bool(getattr(v, "empty", False)),
        "compiler_options_kvs": lambda v: not v,
        # JAX < 0.5: the mesh of the enclosing `with mesh:`, or None.
        "resource_env": lambda v: v is None or bool(getattr(getattr(v, "physical_mesh", None), "empty", False)),
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


_UNARY_WITH_ACCURACY = "cbrt cos exp exp2 expm1 log log1p logistic rsqrt sin sqrt tan tanh".split()  # noqa: SIM905

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


def shown_params(
    primitive: str, params: dict[str, Any], pp_rules: frozenset[str] | None = None
) -> list[tuple[str, Any]]:
    """The parameters worth showing, in JAX's order: ``name`` first, then sorted by key.

    ``pp_rules`` names the primitives this JAX prints with a custom rule; the others print
    every parameter (older JAX had rules for fewer primitives), so jitscope's rule applies
    only where JAX has one. None applies every rule.
    """
    rule = PARAM_RULES.get(primitive) if pp_rules is None or primitive in pp_rules else None
    shown = rule(params) if rule is not None else params
    keys = sorted(shown)
    if "name" in shown:  # so the equation is easy to scan
        keys.remove("name")
        keys.insert(0, "name")
    return [(key, shown[key]) for key in keys]
