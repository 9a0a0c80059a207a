"""Every lint rule, in code order, and rule selection (``--select``/``--ignore``)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from jitscope.linter.rule import Rule
from jitscope.linter.rules.js000_unparsable_file import UnparsableFile
from jitscope.linter.rules.js001_trace_failed import TraceFailed
from jitscope.linter.rules.js101_print_in_traced_code import PrintInTracedCode
from jitscope.linter.rules.js102_io_in_traced_code import IoInTracedCode
from jitscope.linter.rules.js103_global_write_in_traced_code import GlobalWriteInTracedCode
from jitscope.linter.rules.js104_mutation_in_traced_code import MutationInTracedCode
from jitscope.linter.rules.js105_mutable_global_read import MutableGlobalRead
from jitscope.linter.rules.js106_host_randomness_in_traced_code import HostRandomnessInTracedCode
from jitscope.linter.rules.js107_tracer_leak import TracerLeak
from jitscope.linter.rules.js201_traced_control_flow import TracedControlFlow
from jitscope.linter.rules.js202_traced_value_concretization import Concretization
from jitscope.linter.rules.js203_numpy_on_traced_value import NumpyOnTracedValue
from jitscope.linter.rules.js204_in_place_array_update import InPlaceArrayUpdate
from jitscope.linter.rules.js301_unhashable_static_argument import UnhashableStaticArgument
from jitscope.linter.rules.js302_many_static_values import ManyStaticValues
from jitscope.linter.rules.js303_jit_in_loop import JitInLoop
from jitscope.linter.rules.js304_varying_shape_in_loop import VaryingShapeInLoop
from jitscope.linter.rules.js305_static_argnums_mismatch import StaticArgnumsMismatch
from jitscope.linter.rules.js306_dynamic_recompilation import DynamicRecompilation
from jitscope.linter.rules.js307_captured_constant import CapturedConstant
from jitscope.model.lint import RuleInfo

#: All rules, sorted by code. Codes and names are a stable contract: never renumber.
RULES: tuple[type[Rule], ...] = (
    UnparsableFile,
    TraceFailed,
    PrintInTracedCode,
    IoInTracedCode,
    GlobalWriteInTracedCode,
    MutationInTracedCode,
    MutableGlobalRead,
    HostRandomnessInTracedCode,
    TracerLeak,
    TracedControlFlow,
    Concretization,
    NumpyOnTracedValue,
    InPlaceArrayUpdate,
    UnhashableStaticArgument,
    ManyStaticValues,
    JitInLoop,
    VaryingShapeInLoop,
    StaticArgnumsMismatch,
    DynamicRecompilation,
    CapturedConstant,
)

_BY_CODE: dict[str, type[Rule]] = {rule.code: rule for rule in RULES}
_BY_NAME: dict[str, type[Rule]] = {rule.name: rule for rule in RULES}
ALL_CODES: frozenset[str] = frozenset(_BY_CODE)


def rule_infos() -> tuple[RuleInfo, ...]:
    return tuple(rule.info() for rule in RULES)


def find_rule(key: str) -> type[Rule] | None:
    """A rule by code (``JS101``, any case) or by name (``print-in-traced-code``)."""
    key = key.strip()
    return _BY_CODE.get(key.upper()) or _BY_NAME.get(key.lower())


def suggest(key: str) -> str | None:
    """The closest code or name to an unknown ``key``, for "did you mean" messages."""
    key = key.strip()
    candidates = [*_BY_CODE, *_BY_NAME]
    matches = difflib.get_close_matches(
        key.upper(), list(_BY_CODE), n=1, cutoff=0.6
    ) or difflib.get_close_matches(key.lower(), candidates, n=1, cutoff=0.5)
    return matches[0] if matches else None


def expand(selectors: Iterable[str]) -> frozenset[str]:
    """Codes named by selectors: ``ALL``, a code, a code prefix (``JS1``), or a rule name.

    Raises ``KeyError`` (with the selector) for a selector that matches no rule.
    """
    out: set[str] = set()
    for raw in selectors:
        sel = raw.strip()
        if not sel:
            continue
        if sel.upper() == "ALL":
            out.update(ALL_CODES)
            continue
        rule = find_rule(sel)
        if rule is not None:
            out.add(rule.code)
            continue
        matched = (
            {code for code in ALL_CODES if code.startswith(sel.upper())}
            if sel.upper().startswith("JS")
            else set()
        )
        if not matched:
            raise KeyError(sel)
        out.update(matched)
    return frozenset(out)


def enabled_codes(select: Iterable[str] | None, ignore: Iterable[str] = ()) -> frozenset[str]:
    """Codes to report: ``select`` (default: all) minus ``ignore``."""
    chosen = ALL_CODES if select is None else expand(select)
    return chosen - expand(ignore)


def static_rules(codes: Iterable[str] | None = None) -> tuple[Rule, ...]:
    """Instances of the statically checkable rules (optionally only ``codes``)."""
    wanted = ALL_CODES if codes is None else frozenset(codes)
    return tuple(
        rule() for rule in RULES if rule.code in wanted and not rule.dynamic_only and rule.code != "JS000"
    )
