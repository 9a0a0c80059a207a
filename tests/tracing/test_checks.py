from __future__ import annotations

from pathlib import Path

import pytest

from jitscope.api.commands.lint_trace import lint_targets as _lint_targets
from jitscope.load.calls import default_calls
from jitscope.load.target import load_targets

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(autouse=True)
def _in_examples(monkeypatch):
    monkeypatch.chdir(EXAMPLES)


def lint_targets(targets):
    return _lint_targets([(t, default_calls(t)) for t in targets])


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


def test_lint_cli_with_trace_merges_dynamic_findings(cli):
    result = cli("lint", "static_args.py", "--trace", "static_args.py:jitted_where", "--format", "json",
                 cwd=EXAMPLES)
    assert result.returncode == 1, result.stderr
    import json

    findings = json.loads(result.stdout)["findings"]
    dynamic = [f for f in findings if f["source"] == "dynamic"]
    assert [f["code"] for f in dynamic] == ["JS306"]
    assert "threshold (static): value 0.0 -> 10.0" in dynamic[0]["message"]


def test_lint_trace_targets_from_config_and_suppression(tmp_path, cli):
    (tmp_path / "pyproject.toml").write_text('[tool.jitscope.lint]\ntrace = ["helpers_user.py:step"]\n')
    (tmp_path / "chatty.py").write_text("def log(x):\n    print('value', x)\n    return x\n")
    (tmp_path / "helpers_user.py").write_text(
        "import jax\nfrom chatty import log\n\n\n@jax.jit\ndef step(x):\n    return log(x) * 2\n\n\n"
        "JITSCOPE_EXAMPLES = {'step': 'f32[3]'}\n"
    )
    result = cli("lint", "helpers_user.py", "--format", "json", cwd=tmp_path)
    import json

    findings = json.loads(result.stdout)["findings"]
    # the print is in a helper module static analysis was not asked to lint: only tracing sees it
    assert [(f["code"], f["file"], f["line"], f["source"]) for f in findings] == [
        ("JS101", "chatty.py", 2, "dynamic")
    ]
    (tmp_path / "chatty.py").write_text("def log(x):\n    print('value', x)  # jitscope: ignore[JS101]\n    return x\n")
    result = cli("lint", "helpers_user.py", "--format", "json", cwd=tmp_path)
    assert result.returncode == 0 and json.loads(result.stdout)["findings"] == []


def test_call_sequence_from_repeated_shapes_and_examples_from_config(tmp_path, cli):
    import json

    (tmp_path / "m.py").write_text("import jax\n\n\n@jax.jit\ndef f(x, n):\n    return x * n\n")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.jitscope.examples]\n"m.py:f" = [{shapes = "f32[3], 2.0"}, {shapes = "f32[3], 3.0"}]\n'
    )
    # from the config table: two Python floats share one weak-typed cache entry, so no recompile
    result = cli("lint", "m.py", "--trace", "m.py:f", "--format", "json", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    # from repeated --shapes: each call that recompiles is its own finding, with all causes
    result = cli("lint", "m.py", "--trace", "m.py:f", "--format", "json", "-s", "f32[3], 2.0", "-s",
                 "f32[3], f32[]", "-s", "f16[3], f32[]", cwd=tmp_path)
    messages = [f["message"] for f in json.loads(result.stdout)["findings"]]
    assert len(messages) == 2
    assert "call 2 of 3" in messages[0] and "n: weak_type True -> False" in messages[0]
    assert "call 3 of 3" in messages[1] and "x: dtype f32 -> f16" in messages[1]
    trace = cli("trace", "m.py:f", "--stages", "jaxpr", "--format", "json", cwd=tmp_path)
    assert [t["call"] for t in json.loads(trace.stdout)["traces"]] == ["f32[3], 2.0", "f32[3], 3.0"]


def _sequence_target(tmp_path, examples: str):
    (tmp_path / "seq.py").write_text(
        "import jax\nimport numpy as np\n\n\n@jax.jit\ndef f(x):\n    return x * 2\n\n\n"
        f"JITSCOPE_EXAMPLES = {{'f': {examples}}}\n"
    )
    return load_targets("seq.py:f", cwd=tmp_path)


def test_float64_then_float32_numpy_is_one_compile_without_x64(tmp_path):
    import jax

    assert not jax.config.read("jax_enable_x64")
    targets = _sequence_target(tmp_path, "[{'args': (np.ones(2),)}, {'args': (np.ones(2, np.float32),)}]")
    assert [f for f in lint_targets(targets) if f.code == "JS306"] == []


def test_a_predicted_recompile_the_body_did_not_run_for_is_not_reported(tmp_path, monkeypatch):
    from jitscope.api.commands import lint_trace as checks

    targets = _sequence_target(tmp_path, "['f32[2]', 'f16[2]']")
    assert [f.code for f in lint_targets(targets)] == ["JS306"]  # the body ran again: reported
    monkeypatch.setattr(checks, "observe_sequence", lambda target, calls: [True, False])
    assert lint_targets(targets) == []  # tracing says cache hit: the prediction yields


def test_a_recompile_with_an_identical_key_says_so(tmp_path, monkeypatch):
    from jitscope.api.commands import lint_trace as checks

    targets = _sequence_target(tmp_path, "['f32[2]', 'f32[2]']")
    assert lint_targets(targets) == []
    monkeypatch.setattr(checks, "observe_sequence", lambda target, calls: [True, True])
    (js306,) = lint_targets(targets)
    assert "recompiled f with a key identical to call 1's: JAX evicted the entry, or the key has a component " \
           "jitscope does not model" in js306.message
