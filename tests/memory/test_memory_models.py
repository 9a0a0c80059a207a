"""jitscope memory on real (tiny) training steps: flax nnx and linen, equinox and haiku, with optax.

A model and an optimizer state as arguments, as their users write them: the peak is accounted for
exactly (lines + arguments + constants + values with no line), the lines listed are the user's, the
arguments are named as the user's own pytrees, and the whole step is measured (the update included).
"""

from __future__ import annotations

import json

import pytest

from jitscope.model.common import from_jsonable
from jitscope.model.memory import MemoryReport
from tests.conftest import run_cli
from tests.trace.test_models import MODELS, TARGETS


@pytest.fixture(scope="module", params=sorted(TARGETS))
def measured(request: pytest.FixtureRequest) -> tuple[str, MemoryReport]:
    target, needs = TARGETS[request.param]
    for module in needs:
        pytest.importorskip(module)
    result = run_cli("memory", str(MODELS / target), "--format", "json")
    assert result.returncode == 0, result.stderr
    return request.param, from_jsonable(MemoryReport, json.loads(result.stdout))


@pytest.mark.models
def test_the_peak_is_accounted_for_and_the_lines_are_the_users(measured: tuple[str, MemoryReport]) -> None:
    name, report = measured
    (row,) = report.rows
    peak = row.peak
    assert peak.bytes == peak.on_lines + peak.arguments + peak.constants + peak.no_source
    assert sum(line.bytes for line in row.lines) == peak.on_lines
    assert peak.arguments > 0 and row.lines
    model_file = str(MODELS / TARGETS[name][0].split(":")[0])
    assert any(line.location.file == model_file for line in row.lines), row.lines
    # Where XLA keeps whole Python stacks (JAX >= 0.5), library code is listed at the user's line that
    # called it; JAX 0.4.x keeps one frame per instruction, so a library's own line may head the list.
    ours = [line for line in row.lines if line.in_function]
    if ours:
        assert max(ours, key=lambda line: line.bytes).location.file == model_file


@pytest.mark.models
def test_arguments_are_named_as_the_users_pytrees(measured: tuple[str, MemoryReport]) -> None:
    """No ``dynamic[15]``: each donation candidate is named by the user's argument and its path."""
    name, report = measured
    (row,) = report.rows
    if name == "nnx_gpt":
        import inspect

        from flax import nnx

        if inspect.isfunction(nnx.jit(lambda: None)):
            pytest.skip("flax < 0.11: nnx.jit runs its own jit around the step (its arguments are its graph state)")
    names = [d.argument for d in row.donations]
    assert names, "a training step returns its new parameters: each matches an argument"
    assert not any(n.startswith("dynamic[") for n in names), names
