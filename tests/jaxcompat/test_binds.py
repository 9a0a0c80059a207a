"""The effect monitor's profile hook is off inside binds of JAX's own primitives (jaxcompat/binds.py), and
on wherever the user's code can run: their own primitive's rules, a custom_jvp rule, the frames between."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from typing import Any

import jax
import jax.numpy as jnp
import pytest
from jax._src import core
from jax.extend.core import Primitive

from jitscope.effects.monitor import watch_effects
from jitscope.jaxcompat.binds import hook_off_in_binds
from jitscope.model.effects import EffectKind

F32 = jax.ShapeDtypeStruct((4,), jnp.float32)


def shouting_abstract_eval(x: Any) -> Any:
    print("abstract eval of the user's own primitive")
    return x


def calls_jax_and_own_primitives() -> Any:
    """A function applying sin, mul and a primitive of the user's: a new one each time, since JAX caches
    abstract evaluations (a second trace would not run the user's rule again)."""
    shout_p = Primitive("shout")
    shout_p.def_abstract_eval(shouting_abstract_eval)

    def step(x: Any) -> Any:
        return shout_p.bind(jnp.sin(x) * 2.0)

    return step


@pytest.fixture
def recorded() -> Iterator[list[str]]:
    """Every function the hook saw called, while ``hook_off_in_binds`` is on for it."""
    seen: list[str] = []

    def hook(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            seen.append(f"{frame.f_code.co_filename}:{frame.f_code.co_name}")

    previous = sys.getprofile()
    sys.setprofile(hook)
    try:
        with hook_off_in_binds(hook):
            yield seen
    finally:
        sys.setprofile(previous)


def test_jax_primitives_bind_unwatched_and_the_users_rules_watched(recorded: list[str]) -> None:
    jax.make_jaxpr(calls_jax_and_own_primitives())(F32)
    names = [name.rsplit(":", 1)[1] for name in recorded]
    assert "step" in names
    assert "shouting_abstract_eval" in names  # the user's rule: the hook stays on
    # JAX's own abstract evaluation of sin and mul ran with the hook off: no frame of their shape rules
    assert not [name for name in recorded if name.endswith(("unop_dtype_rule", ":_naryop_dtype_rule", ":standard_abstract_eval"))]


def test_the_gate_is_taken_out_when_the_last_watch_ends() -> None:
    original = core.Primitive.bind
    with hook_off_in_binds(print), hook_off_in_binds(len):
        assert core.Primitive.bind is not original
    assert core.Primitive.bind is original


def test_another_threads_binds_keep_their_own_hook() -> None:
    """A thread whose profile hook is not a watch's is not touched (sys.setprofile is per thread)."""
    seen: list[str] = []

    def other_hook(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            seen.append(frame.f_code.co_name)

    def other_thread() -> None:
        sys.setprofile(other_hook)
        try:
            jax.make_jaxpr(lambda x: jnp.sin(x) * 2.0)(F32)
        finally:
            sys.setprofile(None)

    with hook_off_in_binds(print):
        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join()
    assert "standard_abstract_eval" in seen or "bind_with_trace" in seen


def test_a_users_primitive_that_prints_at_trace_time_is_still_an_effect() -> None:
    step = calls_jax_and_own_primitives()
    with watch_effects(step.__code__, backend="profile") as watch:
        jax.make_jaxpr(step)(F32)
    effects = watch.record().effects
    assert [e.kind for e in effects] == [EffectKind.PRINT], effects
    assert effects[0].location.function == "shouting_abstract_eval"
