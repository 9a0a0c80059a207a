"""Every lint rule, in code order, and rule selection (``--select``/``--ignore``)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from jitscope.lint.rule import Rule
from jitscope.lint.rules.files import UnparsableFile
from jitscope.lint.rules.jit_usage import DynamicRecompilation, StaticArgnumsMismatch
from jitscope.lint.rules.loops import JitInLoop, VaryingShapeInLoop
from jitscope.lint.rules.mutation import GlobalWriteInTracedCode, MutationInTracedCode
from jitscope.lint.rules.recompilation import ManyStaticValues, UnhashableStaticArgument
from jitscope.lint.rules.side_effects import IoInTracedCode, PrintInTracedCode
from jitscope.lint.rules.state import HostRandomnessInTracedCode, MutableGlobalRead, TracerLeak
from jitscope.lint.rules.traced_values import (
    Concretization,
    InPlaceArrayUpdate,
    NumpyOnTracedValue,
    TracedControlFlow,
)
from jitscope.model.lint import RuleInfo

#: All rules, sorted by code. Codes and names are a stable contract: never renumber.
RULES: tuple[type[Rule], ...] = (
    UnparsableFile,
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
