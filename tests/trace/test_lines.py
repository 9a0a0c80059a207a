"""The jaxpr by line of the user's code (tracing/lines.py) and XLA's costs split over those lines
(profiling/line_costs.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from jitscope.model.common import Location
from jitscope.model.jaxpr import AvalRecord, EqnRecord, JaxprRecord, VarRecord
from jitscope.tracing.lines import source_lines
from tests.trace.conftest import LAYERED, load_layered

F32 = AvalRecord((4,), "f32")


def _v(name: str) -> VarRecord:
    return VarRecord(name, F32)


def _user(line: int) -> Location:
    return Location("/proj/model.py", line, "f")


def test_lines_count_nested_and_library_equations_at_the_users_line():
    lib = Location("/venv/site-packages/optax/transform.py", 300, "update_fn")
    call = Location("/venv/site-packages/optax/alias.py", 10, "adam.<locals>.update")
    a, b, c, d = (_v(n) for n in "abcd")
    shared = JaxprRecord((), (a,), (b,), (EqnRecord("neg", (b,), (a,)),), shared_name="_where")  # no line of its own
    record = JaxprRecord((), (a,), (d,), (
        EqnRecord("mul", (b,), (a, a), location=_user(3)),
        EqnRecord("sqrt", (c,), (b,), location=_user(4), library=lib, library_call=call),
        EqnRecord("div", (d,), (c, b), location=_user(4), library=lib, library_call=call),
        EqnRecord("jit", (d,), (c,), subjaxprs=(("jaxpr", shared),), location=_user(5)),
        EqnRecord("jit", (d,), (c,), subjaxprs=(("jaxpr", shared),), location=_user(5)),
    ))
    rows = {row.location.line if row.location else None: row for row in source_lines(record)}
    assert set(rows) == {3, 4, 5}  # the shared jaxpr's equation counts at the line that runs it, per use
    assert (rows[4].eqns, rows[4].library_eqns, rows[4].calls) == (2, 2, ("optax adam.update",))
    assert rows[5].eqns == 4 and dict(rows[5].primitives) == {"jit": 2, "neg": 2}
    assert [row.location.line for row in source_lines(record) if row.location] == [5, 4, 3]  # most equations first


@pytest.fixture(scope="module")
def compiled_forward():
    import jax
    import jax.numpy as jnp

    from jitscope.jaxcompat.jaxpr import jaxpr_to_record
    from jitscope.jaxcompat.stages import cost_record

    model = load_layered()
    params = {"w": jnp.ones((64, 32)), "b": jnp.ones(32)}
    traced = jax.jit(model.forward).trace(params, jnp.ones((16, 64)))
    compiled = traced.lower().compile()
    record = jaxpr_to_record(traced.jaxpr, is_user_file=lambda f: Path(f).name == "model.py")
    return record, compiled.as_text(), cost_record(compiled)


def test_costs_go_to_the_users_line_that_called_the_library(compiled_forward):
    from jitscope.profiling.line_costs import line_costs

    record, hlo, cost = compiled_forward
    costs = line_costs(hlo, record, lambda f: Path(f).name == "model.py", cost.flops, cost.bytes_accessed)
    assert sum(f for f, _ in costs.values()) == pytest.approx(cost.flops, rel=1e-6)
    assert sum(b for _, b in costs.values()) == pytest.approx(cost.bytes_accessed, rel=1e-6)
    by_line = {key[1]: flops for key, (flops, _) in costs.items() if key is not None}
    # The matmul (2 x 16 x 64 x 32 FLOPs) is dense()'s, called from model.py:8.
    assert by_line[8] >= 2 * 16 * 64 * 32 * 0.99
    rows = source_lines(record, costs)
    assert rows[0].location is not None and rows[0].location.line == 8


def test_one_frame_metadata_is_placed_through_the_jaxpr(compiled_forward):
    """Older XLA keeps only the innermost frame, a library line: the jaxpr says which user line called it."""
    from jitscope.profiling.line_costs import line_costs

    record, hlo, cost = compiled_forward
    if "stack_frame_id" not in hlo:
        pytest.skip("this XLA writes one source line per instruction already")
    layers = str(LAYERED / "layers.py")
    one_frame = re.sub(r"stack_frame_id=\d+", f'source_file="{layers}" source_line=8', hlo)
    costs = line_costs(one_frame, record, lambda f: Path(f).name == "model.py", cost.flops, cost.bytes_accessed)
    assert max(costs, key=lambda k: costs[k][0]) == (str(LAYERED / "model.py"), 8)
