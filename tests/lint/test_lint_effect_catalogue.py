"""The side-effect catalogue drives the static rules: every catalogued call in traced code is flagged
by the rule whose ``effect_kinds`` hold its kind, and pure neighbours are not."""

from __future__ import annotations

import pytest

from jitscope.linter import lint_source
from jitscope.linter.analysis.taint_calls import MUTATORS
from jitscope.linter.registry import RULES
from jitscope.model.effect_catalogue import CATALOGUE, MUTATING_METHODS, effect_of_call
from jitscope.model.effects import EffectKind

_RULE_FOR: dict[EffectKind, str] = {kind: rule.code for rule in RULES for kind in rule.effect_kinds}

_CALLS = [
    pytest.param(entry.module, name, _RULE_FOR[entry.kind], id=f"{entry.module}.{name}")
    for entry in CATALOGUE
    if entry.linted and entry.module not in ("builtins", "sys.stdout", "sys.stderr")
    for name in entry.names
    if "." not in name or entry.module in ("datetime", "tqdm")
]


def _traced_call(module: str, name: str) -> str:
    return f"import jax\nimport {module}\n@jax.jit\ndef f(x):\n    {module}.{name}()\n    return x\n"


@pytest.mark.parametrize(("module", "name", "code"), _CALLS)
def test_catalogued_call_flagged_by_its_rule(module: str, name: str, code: str) -> None:
    codes = [f.code for f in lint_source(_traced_call(module, name), "m.py")]
    assert codes == [code]


def test_every_effect_kind_has_a_rule() -> None:
    assert set(_RULE_FOR) == set(EffectKind)


@pytest.mark.parametrize(
    ("qualified", "kind"),
    [
        ("os.remove", EffectKind.OS),
        ("os.path.join", None),
        ("os.getpid", None),
        ("os.environ.get", None),
        ("os.urandom", EffectKind.RANDOMNESS),
        ("requests.Session.get", EffectKind.NETWORK),
        ("numpy.random.rand", EffectKind.RANDOMNESS),
        ("numpy.sin", None),
        ("time.sleep", None),
        ("warnings.warn", None),  # the tracer reports it; in traced library code it is deliberate
        ("urllib.parse.quote", None),
    ],
)
def test_effect_of_call(qualified: str, kind: EffectKind | None) -> None:
    assert effect_of_call(qualified) is kind


def test_one_list_of_mutating_methods() -> None:
    """The static rules and the tracer's effect monitor read the same list of in-place methods."""
    assert MUTATORS is MUTATING_METHODS
    assert {"append", "popleft", "put", "difference_update"} <= MUTATING_METHODS
