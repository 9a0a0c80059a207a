"""Link keys that tie one computation together across its forms: source line, jaxpr, StableHLO, HLO.

XLA keeps, for each compiled instruction, ``metadata={op_name="jit(f)/jvp(jit(relu))/max" ...}``
(and, with some JAX versions, ``source_file=... source_line=...``). The op_name path names the
primitive and the ``jit`` scopes it ran in, wrapped in transformations (``jvp(...)``,
``transpose(...)``) and control flow (``while/body``). ``op_key`` reduces such a path to the
``jit`` scopes and the primitive (``jit(relu)/max``), which is also what a jaxpr equation
nested in ``jit[name=relu]`` gives (``eqn_key``). Equations and instructions with equal keys
(and, where both are known, equal source lines) are linked. It is a heuristic: two ``add``
equations on one line link to both ``add`` instructions.
"""

from __future__ import annotations

import os
import re

from jitscope.model.common import Location
from jitscope.profiling.hlo import instruction_metadata

_WRAPPED = re.compile(r"([\w-]*)\((.*)\)$")
_MLIR_OP = re.compile(r"(?:=\s*|^\s*)(?:\"?)(stablehlo|chlo|mhlo)\.([a-z_]+)")
_MLIR_FUNC = re.compile(r"func\.func\s+(?:public|private)?\s*@([\w.$-]+)")

#: jaxpr primitive names whose StableHLO op has another name.
STABLEHLO_NAMES: dict[str, str] = {
    "max": "maximum",
    "min": "minimum",
    "sub": "subtract",
    "mul": "multiply",
    "div": "divide",
    "neg": "negate",
    "exp": "exponential",
    "pow": "power",
    "rem": "remainder",
    "lt": "compare",
    "le": "compare",
    "gt": "compare",
    "ge": "compare",
    "eq": "compare",
    "ne": "compare",
    "select_n": "select",
    "reduce_sum": "reduce",
    "reduce_max": "reduce",
    "reduce_min": "reduce",
    "argmax": "reduce",
    "integer_pow": "multiply",
    "convert_element_type": "convert",
    "squeeze": "reshape",
    "expand_dims": "reshape",
    "add_any": "add",
    "scatter-add": "scatter",
    "logistic": "logistic",
}


def src_key(file: str, line: int) -> str:
    """``mlp.py:28``: a source line, by file name (HLO metadata and jaxprs spell paths differently)."""
    return f"{os.path.basename(file)}:{line}"


def location_key(location: Location | None) -> str:
    return "" if location is None else src_key(location.file, location.line)


def _unwrap(component: str) -> str:
    """``transpose(jvp(jit(relu)))`` -> ``jit(relu)``; ``jvp()`` -> ``""``; ``max`` -> ``max``."""
    while True:
        match = _WRAPPED.match(component)
        if match is None or match.group(1) in ("jit", "pjit"):
            return component
        component = match.group(2)


def _scope_name(component: str) -> str:
    """``jit(transpose(jvp(log_softmax)))`` -> ``jit(log_softmax)``."""
    inner = component[component.index("(") + 1 : -1]
    return f"jit({_unwrap(inner) or inner})"


def op_key(op_name: str) -> str:
    """``jit(f)/transpose(jvp(jit(log_softmax)))/div`` -> ``jit(log_softmax)/div``; ``""`` for none."""
    parts = op_name.split("/")
    if parts and parts[0].startswith(("jit(", "pjit(")):
        parts = parts[1:]
    # JAX before 0.5 adds its module's own scope after the function's: jit(f)/jit(main)/jit(relu)/max.
    while parts[:1] in (["jit(main)"], ["pjit(main)"]):
        parts = parts[1:]
    scopes: list[str] = []
    primitive = ""
    for i, part in enumerate(parts):
        component = _unwrap(part)
        if component.startswith(("jit(", "pjit(")):
            scopes.append(_scope_name(component))
        elif i == len(parts) - 1:
            primitive = component
    return "/".join([*scopes, primitive] if primitive else scopes)


def eqn_key(scope: tuple[str, ...], primitive: str, params: tuple[tuple[str, str], ...] = ()) -> str:
    """The key of an equation in ``scope``: ``jit(relu)/max``; a ``jit`` equation is its own scope."""
    if primitive in ("jit", "pjit", "closed_call"):
        name = dict(params).get("name", "")
        if name:
            return "/".join([*scope, _scope_name(f"jit({name})")])
    return "/".join([*scope, primitive])


def scope_of(primitive: str, params: tuple[tuple[str, str], ...]) -> tuple[str, ...]:
    """What a ``jit[name=relu]`` equation adds to the scope of the equations nested in it."""
    if primitive not in ("jit", "pjit", "closed_call"):
        return ()
    name = dict(params).get("name", "")
    return (_scope_name(f"jit({name})"),) if name else ()


def hlo_line_links(line: str) -> tuple[str, str]:
    """(op key, source key) of one line of HLO text; empty strings where it has none.

    The line is read by the one HLO reader (``profiling/hlo.py``); the source key comes from
    ``source_file``/``source_line`` metadata, where XLA writes them.
    """
    found = instruction_metadata(line) if "metadata=" in line else None
    if found is None:
        return "", ""
    op_name, _, source = found
    return op_key(op_name) if op_name else "", location_key(source)


def stablehlo_line_links(line: str, func: str, top: str) -> tuple[str, str]:
    """(op key, "") of one StableHLO line inside ``func`` (``@main`` is the top-level function ``top``).

    StableHLO has no op_name paths here; the op is matched by name in its function's scope
    (``@relu`` is ``jit(relu)``), through ``STABLEHLO_NAMES``.
    """
    match = _MLIR_OP.search(line)
    if match is None:
        return "", ""
    scope = "" if func in ("main", top) else f"jit({func})/"
    return f"{scope}~{match.group(2)}", ""


def stablehlo_func(line: str) -> str | None:
    """The function a ``func.func`` line opens, or None."""
    match = _MLIR_FUNC.search(line)
    return match.group(1) if match else None


def stablehlo_key(key: str) -> str:
    """The StableHLO form of an equation key: ``jit(relu)/max`` -> ``jit(relu)/~maximum``."""
    scope, _, primitive = key.rpartition("/")
    name = STABLEHLO_NAMES.get(primitive, primitive)
    return f"{scope}/~{name}" if scope else f"~{name}"
