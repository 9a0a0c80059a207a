"""``error`` only where a finding is certain; the same hazard is a ``warning`` where the analysis infers it."""

from __future__ import annotations

from tests.lint.helpers import lint


def _severities(source: str) -> dict[tuple[str, int], str]:
    return {(f.code, f.line): f.severity for f in lint(source)}


def test_effects_in_traced_code_are_errors_in_the_jitted_function_warnings_in_helpers() -> None:
    """A helper is traced code only by inference from a call site: it may also run eagerly."""
    found = _severities(
        """
        import jax, time, random
        STATE = 0
        LEAKED = []
        def helper(x):
            global STATE
            open("log.txt")
            STATE = 1
            t = time.time()
            LEAKED.append(x * 2)
            return x
        @jax.jit
        def f(x):
            global STATE
            open("log.txt")
            STATE = 1
            t = time.time()
            LEAKED.append(x * 2)
            return helper(x)
        """
    )
    assert found == {
        ("JS102", 7): "warning", ("JS103", 8): "warning", ("JS106", 9): "warning", ("JS107", 10): "warning",
        ("JS102", 15): "error", ("JS103", 16): "error", ("JS106", 17): "error", ("JS107", 18): "error",
    }


def test_unhashable_static_argument_is_an_error_only_for_a_literal_value() -> None:
    found = _severities(
        """
        import functools, jax
        @functools.partial(jax.jit, static_argnames="sizes")
        def f(x, sizes: list):
            return x
        def run(x):
            dims = []
            dims.append(2)
            f(x, sizes=[1, 2])
            f(x, sizes=dims)
        """
    )
    assert found == {("JS301", 4): "warning", ("JS301", 9): "error", ("JS301", 10): "warning"}


def test_static_argnums_mismatch_is_a_warning_when_another_decorator_wraps_the_function() -> None:
    found = _severities(
        """
        import functools, jax
        def logged(fn):
            @functools.wraps(fn)
            def inner(*args, **kwargs):
                return fn(*args, **kwargs)
            return inner
        @functools.partial(jax.jit, static_argnums=2)
        def f(x, n):
            return x
        @functools.partial(jax.jit, static_argnums=2)
        @logged
        def g(x, n):
            return x
        """
    )
    assert found == {("JS305", 8): "error", ("JS305", 11): "warning"}
