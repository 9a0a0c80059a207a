"""``jitscope diff TARGET --base-env PYTHON``: the old side traced by another interpreter.

The comparison across two JAX versions runs where a second environment is named by
``JITSCOPE_TEST_BASE_PYTHON`` (CI builds several: e.g. the JAX 0.4.38 one); without it, only the
one-line errors are checked.
"""

from __future__ import annotations

import json
import os
import sys

import pytest

from tests.conftest import EXAMPLES, run_cli


def test_an_interpreter_that_is_missing_or_cannot_run_jitscope_is_one_line() -> None:
    result = run_cli("diff", "diff_old.py:predict", "--base-env", "/nonexistent/bin/python", cwd=EXAMPLES)
    assert result.returncode == 2
    expected = ("error: old (/nonexistent/bin/python): no Python at /nonexistent/bin/python (--base-env takes a "
                "python executable, e.g. ../old-venv/bin/python)")
    assert result.stderr.strip().splitlines() == [expected]


def test_the_same_interpreter_as_base_env_is_no_change() -> None:
    result = run_cli("diff", "diff_old.py:predict", "--base-env", sys.executable, "-f", "json", cwd=EXAMPLES)
    assert result.returncode == 0, result.stderr
    (call,) = json.loads(result.stdout)["calls"]
    assert call["changes"] == [] and call["hlo"] == [] and call["old"]["label"] == sys.executable


@pytest.mark.skipif(not os.environ.get("JITSCOPE_TEST_BASE_PYTHON"), reason="JITSCOPE_TEST_BASE_PYTHON names no "
                    "second environment")
def test_another_jax_on_the_old_side() -> None:
    other = os.environ["JITSCOPE_TEST_BASE_PYTHON"]
    result = run_cli("diff", "diff_old.py:predict", "--base-env", other, "-f", "json", cwd=EXAMPLES)
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    (call,) = doc["calls"]
    old_jax, new_jax = call["old"]["environment"]["jax"], call["new"]["environment"]["jax"]
    assert call["changes"] == []  # the same code: the jaxprs compute the same on both sides
    if old_jax != new_jax:
        assert f"jax: {old_jax} on the old side, {new_jax} on the new" in doc["notes"]
