from __future__ import annotations

from pathlib import Path

import pytest

from jitscope.load.target import load_targets
from jitscope.tracing.checks import lint_targets

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(autouse=True)
def _in_examples(monkeypatch):
    monkeypatch.chdir(EXAMPLES)


def _lines(source: str, needle: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if needle in line)


def test_impure_step_effects_and_hidden_state():
    findings = lint_targets(load_targets("impure.py:noisy_step"))
    src = (EXAMPLES / "impure.py").read_text()
    got = {(f.code, f.line) for f in findings}
    assert ("JS101", _lines(src, "print(")) in got
    assert ("JS101", _lines(src, "logger.warning")) in got
    assert ("JS103", _lines(src, "STEP_COUNT += 1")) in got
    assert ("JS104", _lines(src, "HISTORY.append")) in got
    assert ("JS106", _lines(src, "time.time()")) in got
    assert ("JS106", _lines(src, "np.random.normal()")) in got
    # the host random number differs between two traces, so the jaxprs differ
    assert ("JS105", _lines(src, "def noisy_step")) in got
    assert all(f.source == "dynamic" and f.file == "impure.py" and f.function == "noisy_step" for f in findings)


def test_trace_failure_becomes_js201_once_per_line():
    findings = lint_targets(load_targets("static_args.py:*"))
    js201 = [f for f in findings if f.code == "JS201"]
    assert len(js201) == 1 and "if x > threshold" in (EXAMPLES / "static_args.py").read_text().splitlines()[
        js201[0].line - 1]


def test_recompilation_in_call_sequence_names_the_cause():
    findings = lint_targets(load_targets("static_args.py:jitted_where"))
    (js306,) = [f for f in findings if f.code == "JS306"]
    assert "call 3 of 4" in js306.message and "confirmed" in js306.message
    assert "threshold (static): value 0.0 -> 10.0" in js306.message


def test_pure_function_is_clean():
    assert lint_targets(load_targets("mlp.py:train_step")) == []
