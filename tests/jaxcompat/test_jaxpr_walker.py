"""jaxpr_to_record on real jaxprs: primitives, nesting, locations, constants, effects."""

from __future__ import annotations

import inspect
import json
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P

from jitscope.jaxcompat.features import printer_style
from jitscope.jaxcompat.jaxpr import format_param, jaxpr_to_record
from jitscope.model.jaxpr import EqnRecord, JaxprRecord, LiteralRecord, VarRecord, summarize
from jitscope.report.views.jaxpr import render_jaxpr_text


def primitive_of(fn: Any, *args: Any) -> str:
    """The name this JAX gives the first primitive of ``fn`` (``jit`` was ``pjit`` before JAX 0.7)."""
    return str(jax.make_jaxpr(fn)(*args).eqns[0].primitive.name)


def literal(text: str, aval: str) -> str:
    """A literal as this JAX prints it: ``1.0:f32[]``, or ``1.0`` on older JAX."""
    return f"{text}:{aval}" if printer_style().typed_literals else text


JIT = primitive_of(jax.jit(lambda x: x), 1.0)


def line_of(fn: Any, marker: str) -> int:
    """The line number of the first line of ``fn`` containing ``marker``."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, text in enumerate(lines) if marker in text)


def seed(x: Any, y: Any) -> Any:
    return jnp.dot(x + 1, y + 1)  # seed-line


def test_seed_example_gives_add_add_dot_general() -> None:
    record = jaxpr_to_record(jax.make_jaxpr(seed)(jnp.zeros(2), jnp.zeros(2)))
    assert [e.primitive for e in record.eqns] == ["add", "add", "dot_general"]
    assert [str(v) for v in record.invars] == ["a", "b"]
    assert [str(v.aval) for v in record.invars] == ["f32[2]", "f32[2]"]
    first = record.eqns[0]
    assert isinstance(first.invars[1], LiteralRecord)
    assert str(first.invars[1]) == literal("1.0", "f32[]")
    assert [str(v) for v in first.outvars] == ["c"]
    # The second add's operand is the var bound by the first equation, as the same object.
    assert record.eqns[2].invars[0] is first.outvars[0]
    assert dict(record.eqns[2].params)["dimension_numbers"] == "(([0], [0]), ([], []))"
    assert str(record.outvars[0].aval) == "f32[]"


def test_locations_point_at_the_users_line() -> None:
    record = jaxpr_to_record(jax.make_jaxpr(seed)(jnp.zeros(2), jnp.zeros(2)))
    expected = line_of(seed, "seed-line")
    for eqn in record.eqns:
        assert eqn.location is not None
        assert eqn.location.file == __file__
        assert eqn.location.line == expected
        assert eqn.location.function == "seed"


@jax.jit
def _inner_block(x: Any) -> Any:
    return jnp.sin(x) * 2.0  # block-line


def nested(x: Any) -> Any:
    def body(carry: Any, xs: Any) -> tuple[Any, Any]:
        return _inner_block(carry) + xs, carry  # scan-body-line

    s, ys = jax.lax.scan(body, x, jnp.stack([x, x]))
    c = jax.lax.cond(s[0] > 0, lambda z: z + 1, lambda z: z - 1, s)
    w = jax.lax.while_loop(lambda v: v[0] < 10, lambda v: v + 1, c)

    @jax.custom_jvp
    def g(z: Any) -> Any:
        return jnp.exp(z)

    g.defjvp(lambda p, t: (g(p[0]), t[0]))

    @jax.custom_vjp
    def h(z: Any) -> Any:
        return jnp.cos(z)

    h.defvjp(lambda z: (jnp.cos(z), z), lambda r, t: (-t * jnp.sin(r),))
    r = jax.checkpoint(lambda z: jnp.tanh(z) * 3)(w)
    return g(r) + h(r) + _inner_block(r) + ys.sum()


def _subjaxpr(eqn: EqnRecord, key: str) -> JaxprRecord:
    return dict(eqn.subjaxprs)[key]


def test_nested_jaxprs_are_walked_and_counted() -> None:
    record = jaxpr_to_record(jax.make_jaxpr(nested)(jnp.zeros(3)))
    by_prim = {e.primitive: e for e in record.eqns}
    assert [k for k, _ in by_prim["scan"].subjaxprs] == ["jaxpr"]
    assert [k for k, _ in by_prim["cond"].subjaxprs] == ["branches[0]", "branches[1]"]
    assert [k for k, _ in by_prim["while"].subjaxprs] == ["body_jaxpr", "cond_jaxpr"]
    assert [k for k, _ in by_prim["custom_jvp_call"].subjaxprs] == ["call_jaxpr"]
    # JAX < 0.6 named it custom_vjp_call_jaxpr, with its body in fun_jaxpr.
    vjp = by_prim.get("custom_vjp_call") or by_prim["custom_vjp_call_jaxpr"]
    assert [k for k, _ in vjp.subjaxprs] in (["call_jaxpr"], ["fun_jaxpr"])
    assert [k for k, _ in by_prim["remat2"].subjaxprs] == ["jaxpr"]
    # Parameters follow JAX's pretty-printer: name= first, then sorted, jaxprs kept apart;
    # a JAX without a printing rule for custom_jvp_call/custom_vjp_call shows every parameter.
    if "custom_jvp_call" in printer_style().pp_rules:
        assert by_prim["custom_jvp_call"].params[0] == ("name", "g")
    else:
        assert "jvp_jaxpr_thunk" in dict(by_prim["custom_jvp_call"].params) or "jvp_jaxpr_fun" in dict(
            by_prim["custom_jvp_call"].params
        )
    if "custom_vjp_call" in printer_style().pp_rules:
        assert dict(vjp.params)["fwd"] == "<lambda>"
    assert dict(by_prim["scan"].params)["length"] == "2"

    # jit inside the scan body: depth 2.
    scan_body = _subjaxpr(by_prim["scan"], "jaxpr")
    assert [e.primitive for e in scan_body.eqns] == [JIT, "add"]
    block = _subjaxpr(scan_body.eqns[0], "jaxpr")
    assert [e.primitive for e in block.eqns] == ["sin", "mul"]
    loc = block.eqns[0].location
    assert (
        loc is not None and loc.line == line_of(_inner_block, "block-line") and loc.function == "_inner_block"
    )
    body_loc = scan_body.eqns[0].location
    assert body_loc is not None and body_loc.line == line_of(nested, "scan-body-line")

    summary = summarize(record)
    counts = dict(summary.primitive_counts)
    assert counts[JIT] == 2
    assert counts["sin"] == 2  # once per jit call site of the shared block
    assert counts["exp"] == 1 and counts["cos"] == 1 and counts["tanh"] == 1
    assert summary.max_depth == 2
    assert summary.n_eqns == len(record.eqns)
    nested_total = sum(len(sub.eqns) for e in record.eqns for _, sub in e.subjaxprs) + len(
        block.eqns
    )  # the block inside the scan body is one level deeper
    assert summary.n_eqns_total == len(record.eqns) + nested_total
    assert summary.n_eqns_total == sum(n for _, n in summary.primitive_counts)


def test_a_jaxpr_used_twice_is_shared_and_named() -> None:
    record = jaxpr_to_record(jax.make_jaxpr(lambda x: _inner_block(_inner_block(x)))(jnp.zeros(3)))
    first, second = record.eqns
    assert first.primitive == second.primitive == JIT
    assert _subjaxpr(first, "jaxpr") is _subjaxpr(second, "jaxpr")
    assert _subjaxpr(first, "jaxpr").shared_name == "_inner_block"
    # A jaxpr used once is not shared.
    once = jaxpr_to_record(jax.make_jaxpr(_inner_block)(jnp.zeros(3)))
    assert _subjaxpr(once.eqns[0], "jaxpr").shared_name == ""


W = jnp.arange(3.0)
W_NP = np.arange(3.0, dtype=np.float32) + 1
SCALE = np.array(2.0, np.float32)


def captures(x: Any) -> Any:
    return (x + W) * W_NP * SCALE + jnp.asarray(np.ones(3, np.float32)).sum()


def test_constants_get_shape_bytes_and_origin() -> None:
    origins = {
        id(W): "global `W` in test_jaxpr_walker.py",
        id(W_NP): "global `W_NP`",
        id(SCALE): "global `SCALE`",
    }
    record = jaxpr_to_record(jax.make_jaxpr(captures)(jnp.zeros(3)), const_origins=origins)
    consts = {c.origin: c for c in summarize(record).constants}
    assert set(consts) == {"global `W` in test_jaxpr_walker.py", "global `W_NP`", "global `SCALE`", "unknown"}
    w = consts["global `W` in test_jaxpr_walker.py"]
    assert (str(w.aval), w.nbytes, w.literal) == ("f32[3]", 12, False)
    # JAX wraps numpy arrays in a view; the origin is still found.
    assert consts["global `W_NP`"].nbytes == 12
    # A 0-d numpy array becomes a literal in the equation: still a captured constant.
    scale = consts["global `SCALE`"]
    assert scale.literal and scale.name == "2.0" and str(scale.aval) == "f32[]" and scale.nbytes == 4
    assert consts["unknown"].aval.shape == (3,)
    assert [c.name for c in record.consts if not c.literal] == [v.name for v in record.constvars]
    assert summarize(record).const_bytes == 12 + 12 + 4 + 12


def test_without_origins_constants_are_unknown() -> None:
    record = jaxpr_to_record(jax.make_jaxpr(captures)(jnp.zeros(3)))
    assert {c.origin for c in summarize(record).constants} == {"unknown"}
    # Plain scalars such as the 1 in `x + 1` are not captured constants.
    plain = jaxpr_to_record(jax.make_jaxpr(seed)(jnp.zeros(2), jnp.zeros(2)))
    assert summarize(plain).constants == ()


def test_effects_are_named() -> None:
    def noisy(x: Any) -> Any:
        jax.debug.print("x={}", x)
        return x * 2

    record = jaxpr_to_record(jax.make_jaxpr(noisy)(jnp.zeros(2)))
    assert record.effects == ("Debug",)
    assert record.eqns[0].primitive == primitive_of(lambda x: jax.debug.print("{}", x), 1.0)
    assert record.eqns[0].effects == ("Debug",)
    assert summarize(record).effects == ("Debug",)


def test_dropped_outputs_and_open_jaxprs() -> None:
    def loss(x: Any) -> Any:
        return jnp.sum(jax.checkpoint(jnp.sin)(x))

    closed = jax.make_jaxpr(jax.grad(loss))(jnp.ones(3))
    record = jaxpr_to_record(closed.jaxpr)  # an open Jaxpr works too
    names = [v.name for e in record.eqns for v in e.outvars]
    assert "_" in names
    assert all(isinstance(v, VarRecord) for v in record.invars)


def test_shard_map_and_annotated_avals() -> None:
    try:
        shard_map = jax.shard_map
    except AttributeError:  # JAX < 0.7
        from jax.experimental.shard_map import shard_map
    mesh = Mesh(np.array(jax.devices()[:1]), ("x",))

    def f(x: Any) -> Any:
        return shard_map(lambda a: a * 2, mesh=mesh, in_specs=P("x"), out_specs=P("x"))(x)

    closed = jax.make_jaxpr(f)(jnp.zeros(4))
    record = jaxpr_to_record(closed)
    (eqn,) = record.eqns
    assert eqn.primitive == "shard_map"
    inner = _subjaxpr(eqn, "jaxpr")
    assert [e.primitive for e in inner.eqns][-1] == "mul"
    aval = inner.invars[0].aval
    # JAX's own text (varying manual axes, JAX >= 0.7) is kept when dtype[shape] does not say it all.
    live = closed.jaxpr.eqns[0].params["jaxpr"]
    assert str(aval) == getattr(live, "jaxpr", live).invars[0].aval.str_short(short_dtypes=True)
    assert aval.shape == (4,) and aval.dtype == "f32"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (frozenset({"b", "a"}), "frozenset({'a', 'b'})"),
        ((1, 2), "(1, 2)"),
        (object.__new__(type("Thing", (), {})), None),
    ],
)
def test_format_param(value: object, text: str | None) -> None:
    out = format_param(value)
    if text is not None:
        assert out == text
    else:
        assert " at 0xX" in out and "0x0" not in out.lower().replace("0xx", "")


def test_json_round_trip_of_a_real_record() -> None:
    from jitscope.model.common import from_jsonable, to_jsonable
    from jitscope.model.jaxpr import JaxprSummary

    origins = {id(W): "global `W`", id(SCALE): "global `SCALE`"}
    record = jaxpr_to_record(
        jax.make_jaxpr(lambda x: nested(captures(x)))(jnp.zeros(3)), const_origins=origins
    )
    data = json.loads(json.dumps(to_jsonable(record)))
    back = from_jsonable(JaxprRecord, data)
    assert back == record
    assert isinstance(back.eqns[0].invars[0], (VarRecord, LiteralRecord))
    assert any(isinstance(a, LiteralRecord) for e in back.eqns for a in e.invars)
    assert back.eqns[0].location == record.eqns[0].location
    summary = summarize(record)
    assert from_jsonable(JaxprSummary, json.loads(json.dumps(to_jsonable(summary)))) == summary
    assert summarize(back) == summary


def _fidelity_cases() -> list[tuple[str, Any, tuple[Any, ...]]]:
    def softmax_norm(x: Any) -> Any:
        return jnp.linalg.norm(jax.nn.softmax(x @ x.T))

    def mixed(x: Any, y: Any) -> Any:
        z = jnp.sin(x) @ jnp.ones((3, 3)) + W
        q = jnp.where(z > 0, z, y).astype(jnp.int32)
        return q.reshape(3, 1), jnp.cumsum(x), jax.nn.relu(y)[::2], jnp.broadcast_to(x, (2, 3))

    return [
        ("seed", seed, (jnp.zeros(2), jnp.zeros(2))),
        ("one-liner", lambda x: x + 1, (1.0,)),
        ("nested", nested, (jnp.zeros(3),)),
        ("shared jit", lambda x: _inner_block(_inner_block(x)), (jnp.zeros(3),)),
        ("grad of remat", jax.grad(lambda y: jnp.sum(jax.checkpoint(jnp.sin)(y))), (jnp.ones(3),)),
        ("softmax norm", softmax_norm, (jnp.ones((4, 5)),)),
        ("mixed", mixed, (jnp.zeros(3), jnp.zeros(3))),
    ]


@pytest.mark.parametrize(("name", "fn", "args"), _fidelity_cases(), ids=[c[0] for c in _fidelity_cases()])
def test_text_without_locations_matches_str_jaxpr(name: str, fn: Any, args: tuple[Any, ...]) -> None:
    """Users recognise the layout: without locations and header it is JAX's own text."""
    closed = jax.make_jaxpr(fn)(*args)
    text = render_jaxpr_text(jaxpr_to_record(closed), locations=False, header=False)
    assert text == as_jitscope_prints(str(closed)) + "\n"


def as_jitscope_prints(jax_text: str) -> str:
    """JAX's text with the two things jitscope deliberately prints differently: memory addresses
    masked (parameters JAX < 0.6 printed raw, e.g. ``jvp_jaxpr_thunk=<function ... at 0x7f..>``)
    and no trailing space after an equation without operands (``iota[...] ``)."""
    masked = format_param(jax_text) if " at 0x" in jax_text else jax_text
    return "\n".join(line.rstrip(" ") for line in masked.split("\n"))


def uses_relu(x: Any) -> Any:
    return jax.nn.relu(x) * 2  # relu-line


def test_equations_deep_in_library_code_get_the_users_call_site() -> None:
    # JAX keeps only the innermost frames, so inside jax.nn.relu's own jit the user's frame is
    # cut off; the equation is attributed to the user's line that called relu.
    record = jaxpr_to_record(jax.make_jaxpr(uses_relu)(jnp.ones(3)))
    relu = record.eqns[0]
    assert relu.primitive == "custom_jvp_call"
    inner_jit = _subjaxpr(relu, "call_jaxpr").eqns[0]
    deepest = _subjaxpr(inner_jit, "jaxpr").eqns[0]
    assert deepest.primitive == "max"
    expected = line_of(uses_relu, "relu-line")
    for eqn in (relu, inner_jit, deepest):
        assert eqn.location is not None and eqn.location.line == expected


def test_refs_keys_and_typed_literals_keep_jaxs_text() -> None:
    def with_ref(x: Any) -> Any:
        ref = jax.new_ref(x)
        ref[...] = x * 2
        return ref[...]

    if hasattr(jax, "new_ref"):  # JAX >= 0.7
        record = jaxpr_to_record(jax.make_jaxpr(with_ref)(jnp.ones(3)))
        # A Ref and a plain array of the same shape and dtype must not share a record.
        assert str(record.eqns[0].outvars[0].aval) == "Ref{f32[3]}"
        assert str(record.eqns[1].outvars[0].aval) == "f32[3]"

    key = jaxpr_to_record(jax.make_jaxpr(lambda k: jax.random.normal(k, (3,)))(jax.random.key(0)))
    assert str(key.invars[0].aval) == "key<fry>[]"

    loop = jaxpr_to_record(jax.make_jaxpr(lambda x: jax.lax.fori_loop(0, 3, lambda i, c: c + i, x))(1.0))
    (scan,) = loop.eqns
    assert [str(a) for a in scan.invars] == [literal("0", "i32[]"), "a"]
