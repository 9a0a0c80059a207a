"""Each equation's user line, library line and library call, from real JAX tracebacks (jaxcompat/jaxpr.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from jitscope.model.jaxpr import JaxprRecord
from tests.trace.conftest import load_layered


@pytest.fixture(scope="module")
def record() -> JaxprRecord:
    import jax
    import jax.numpy as jnp

    from jitscope.jaxcompat.jaxpr import jaxpr_to_record

    module = load_layered()
    params = {"w": jnp.ones((4, 3)), "b": jnp.ones(3)}
    closed = jax.make_jaxpr(module.forward)(params, jnp.ones((2, 4)))
    return jaxpr_to_record(closed, is_user_file=lambda f: Path(f).name == "model.py")


def _where(record: JaxprRecord, primitive: str) -> list[tuple[int | None, str | None, str | None]]:
    found = []
    stack = [record]
    while stack:
        jaxpr = stack.pop()
        for eqn in jaxpr.eqns:
            if eqn.primitive == primitive:
                found.append((eqn.location and eqn.location.line,
                              eqn.library and f"{Path(eqn.library.file).name}:{eqn.library.line}",
                              eqn.library_call and eqn.library_call.function))
            stack.extend(sub for _, sub in eqn.subjaxprs)
    return found


def test_library_equations_carry_the_user_line_that_called_them(record):
    # x @ w in dense (layers.py:8), called at model.py:8: the user's line first, then the library's.
    assert _where(record, "dot_general") == [(8, "layers.py:8", "dense")]
    # y + b two calls deep (dense -> _bias): the library line is the innermost, the call the outermost.
    adds = _where(record, "add")
    assert (8, "layers.py:13", "dense") in adds


def test_the_users_own_ops_have_no_library_line(record):
    assert _where(record, "tanh") == [(9, None, None)]
    assert (9, None, None) in _where(record, "mul")


def test_a_library_jit_is_placed_at_the_users_call(record):
    # normalise is a jit in the library: its inner equations were traced inside the jit, and take
    # the user line that called it (model.py:10) with their own library lines.
    divs = _where(record, "div")
    assert divs and all(line == 10 for line, _, _ in divs)
    assert any(lib is not None and lib.startswith("layers.py:") for _, lib, _ in divs)
