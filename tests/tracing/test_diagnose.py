from __future__ import annotations

from pathlib import Path

import pytest

from jitscope.jaxcompat.jit import JitOptions
from jitscope.load.specs import build_argset, parse_shapes
from jitscope.load.target import load_targets
from jitscope.tracing.diagnose import diagnose, settings_in_call
from jitscope.tracing.session import trace_target

TARGETS = Path(__file__).resolve().parents[1] / "targets"


def _fix(target: str, shapes: str, statics: list[str] | None = None) -> str:
    (handle,) = load_targets(f"diagnose_cases.py:{target}", cwd=TARGETS)
    diag = trace_target(handle, build_argset(shapes, statics), watch_effects=False).record.diagnostic
    assert diag is not None
    return diag.fix


def test_pytree_leaf_is_data_named_by_its_parameter():
    fix = _fix("branch_on_leaf", "[{'ln': f32[3], 'w': f32[3,3]}], f32[3], 2.0")
    assert fix == (
        "Python needs a concrete value here but `params` is traced data: "
        "use jnp.where / jax.lax.cond / jax.lax.select instead of a Python `if`"
    )


def test_array_argument_is_data_and_python_scalar_is_a_setting():
    from tests.conftest import EXAMPLES

    (handle,) = load_targets("static_args.py:conditional_double", cwd=EXAMPLES)
    diag = trace_target(handle, build_argset("f32[], 0.0", None), watch_effects=False).record.diagnostic
    assert diag is not None and diag.fix == (
        "Python needs a concrete value here but `x` is traced data: use jnp.where / jax.lax.cond / "
        "jax.lax.select instead of a Python `if`; `threshold` is a Python value in the call; if it is a "
        "setting, mark it static (--static threshold=0.0, or static_argnames in jax.jit)"
    )


def test_python_int_used_as_a_shape_is_suggested_static_with_its_value():
    fix = _fix("zeros_of", "f32[], 3")
    assert fix.startswith("Python needs a concrete value here: `n` is a Python value in the call")
    assert "(--static n=3, or static_argnames in jax.jit)" in fix


def test_string_argument_is_suggested_static():
    fix = _fix("by_mode", "f32[], 'double'")
    assert fix == "`mode` is a str, which JAX cannot trace: mark it static (--static mode='double', or static_argnames in jax.jit)"


def test_unhashable_static_is_one_line_with_the_type():
    (handle,) = load_targets("diagnose_cases.py:by_mode", cwd=TARGETS)
    diag = trace_target(handle, build_argset("f32[2]", ["mode=[1, 2]"]), watch_effects=False).record.diagnostic
    assert diag is not None and diag.kind == "unhashable_static"
    assert diag.message == (
        "ValueError: a static argument is not hashable: got a list, [1, 2] (TypeError: unhashable type: 'list')"
    )
    assert diag.fix.startswith("static arguments must be hashable (this one is a list): pass a tuple")


@pytest.mark.parametrize(
    ("args", "kwargs", "expected"),
    [
        ((parse_shapes("f32[3]")[0], 0.0, True, "relu"), {}, {"b": 0.0, "c": True, "d": "relu"}),
        (([1.0], {"k": 1}), {"e": 3}, {"e": 3}),
    ],
)
def test_settings_are_python_scalars_at_the_top_level(args, kwargs, expected):
    assert settings_in_call(["a", "b", "c", "d"], args, kwargs) == expected


def test_without_call_values_both_fixes_are_named_on_top_level_names():
    class Fake(Exception):
        pass

    exc = Fake("This concrete value was not available in Python because it depends on the values of the "
               "arguments params[0]['ln'] and x.")
    fix = diagnose(exc, JitOptions()).fix
    assert "`params` or `x` is traced" in fix and "--static params=VALUE --static x=VALUE" in fix
