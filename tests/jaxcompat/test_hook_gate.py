"""The effect monitor's profile hook is off inside JAX's own binds and nested jits (jaxcompat/hook_gate.py),
and on wherever the user's code can run: their own primitive's rules, a function of theirs given to a jitted
function of JAX's, the frames between."""

from __future__ import annotations

import functools
import sys
import threading
from collections.abc import Iterator
from typing import Any

import jax
import jax.numpy as jnp
import pytest
from jax._src import core
from jax._src.numpy import util as jnp_util
from jax.extend.core import Primitive

from jitscope.effects.monitor import watch_effects
from jitscope.jaxcompat import hook_gate
from jitscope.jaxcompat.hook_gate import hook_off_inside_jax
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
    """Every function the hook saw called (file:name), while ``hook_off_inside_jax`` is on for it."""
    seen: list[str] = []

    def hook(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            seen.append(f"{frame.f_code.co_filename}:{frame.f_code.co_name}")

    previous = sys.getprofile()
    sys.setprofile(hook)
    try:
        with hook_off_inside_jax(hook):
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
    # nor did the Python path of jnp.sin's and `*`'s own jits (jitted functions of JAX's, given arrays): only
    # the outer one's, make_jaxpr's jit of the user's step (where make_jaxpr jits)
    assert len([name for name in recorded if name.endswith(":_infer_params_cached")]) <= 1


def test_a_jitted_function_of_jax_keeps_the_hook_when_given_something_of_the_users() -> None:
    """The gate of a nested jit, called as JAX calls it: (fun, jit info, args, kwargs)."""
    hooks: list[object] = []
    gated = hook_gate._gated_infer(lambda fun, ji, args, kwargs: hooks.append(sys.getprofile()),
                                   hook_gate._plain_values())
    jax_function = jnp_util.promote_dtypes  # a plain function defined in JAX
    users_function = calls_jax_and_own_primitives

    def hook(frame: Any, event: str, arg: Any) -> None:
        pass

    sys.setprofile(hook)
    try:
        with hook_off_inside_jax(hook):
            gated(jax_function, None, (jnp.ones(3), 2.0, (1, 2), "same", jnp.float32.dtype), {"axis": 0})
            gated(jax_function, None, (jnp.ones(3), print), {})  # a function: JAX may call it
            gated(jax_function, None, (jnp.ones(3),), {"fun": print})
            gated(jax_function, None, ([jnp.ones(3), {"a": 1}],), {})  # a pytree: its flatten may be the user's
            gated(users_function, None, (jnp.ones(3),), {})  # the user's own jitted function
    finally:
        sys.setprofile(None)
    assert hooks == [None, hook, hook, hook, hook]


def test_the_gate_is_taken_out_when_the_last_watch_ends() -> None:
    from jax._src import pjit

    original, original_infer = core.Primitive.bind, pjit._infer_params
    with hook_off_inside_jax(print), hook_off_inside_jax(len):
        assert core.Primitive.bind is not original and pjit._infer_params is not original_infer
    assert core.Primitive.bind is original and pjit._infer_params is original_infer


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

    with hook_off_inside_jax(print):
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


def test_equations_made_through_the_gates_keep_the_users_line() -> None:
    """JAX puts an equation on the innermost frame outside JAX: the gates' wrappers are hidden as JAX's own
    frames are (else every equation traced under a watch would be on hook_gate.py, in the HLO's metadata too)."""
    def hook(frame: Any, event: str, arg: Any) -> None:
        pass

    def step(x: Any) -> Any:
        return jnp.sin(x) * 2.0

    sys.setprofile(hook)
    try:
        with hook_off_inside_jax(hook):
            module = jax.jit(step).lower(F32).compiler_ir("stablehlo")
            lowered = module.operation.get_asm(enable_debug_info=True)  # every JAX (0.4.38 has no as_text's)
    finally:
        sys.setprofile(None)
    assert "jaxcompat/hook_gate.py" not in lowered and "test_hook_gate.py" in lowered


@jax.custom_vjp
def _scaled_sin(x: Any) -> Any:
    return jnp.sin(x)


def _scaled_sin_fwd(x: Any) -> Any:
    return jnp.sin(x), jnp.cos(x)


def _scaled_sin_bwd(residual: Any, cotangent: Any) -> Any:
    print("the user's backward rule, run while JAX transposes")
    return (residual * cotangent,)


_scaled_sin.defvjp(_scaled_sin_fwd, _scaled_sin_bwd)


class _ArrayLike:
    """An object of the user's that JAX reads through ``__jax_array__``: that method runs while ``x * it``
    is traced."""

    def __jax_array__(self) -> Any:
        print("the user's __jax_array__")
        return jnp.ones(4)


def test_operators_gradients_and_descriptions_run_unwatched(recorded: list[str]) -> None:
    """A tracer's operators and methods, a gradient's transposes, and what describes a tracer or a function
    for an error message or debug info: JAX's own work, hook off."""
    def loss(x: Any) -> Any:
        y = (x * 2.0 + 1.0)[1:].reshape((3, 1))
        hasattr(y, "sharding")  # builds the tracer's origin (the jaxpr walked) on JAX versions that raise
        return jnp.sum(jnp.tanh(y) ** 2)

    def step(x: Any) -> Any:
        return jax.grad(loss)(x)

    jax.make_jaxpr(step)(F32)
    names = [name.rsplit(":", 1)[1] for name in recorded]
    assert "step" in names and "loss" in names
    # the operators' forwarding to jax.numpy (array_methods.py), the transposes (ad.py's backward pass), the
    # tracer's origin (find_progenitors) and the function's signature (inspect) ran with the hook off
    for file, function in [("array_methods.py", "op"), ("array_methods.py", "meth"), ("ad.py", "backward_pass3"),
                           ("ad.py", "backward_pass"), ("partial_eval.py", "find_progenitors"),
                           ("inspect.py", "signature")]:
        assert not [name for name in recorded if name.endswith(f"{file}:{function}")], (file, function)


def test_what_can_run_the_users_code_keeps_the_hook(recorded: list[str]) -> None:
    """A custom_vjp's backward rule runs inside the transposes, and ``__jax_array__`` inside an operator:
    both are the user's, so those stay watched."""
    def step(x: Any) -> Any:
        return jax.grad(lambda x: jnp.sum(_scaled_sin(x) * _ArrayLike()))(x)

    jax.make_jaxpr(step)(F32)
    names = [name.rsplit(":", 1)[1] for name in recorded]
    assert "_scaled_sin_bwd" in names and "__jax_array__" in names


def test_effects_in_the_users_backward_rule_and_jax_array_are_found() -> None:
    def step(x: Any) -> Any:
        return jax.grad(lambda x: jnp.sum(_scaled_sin(x) * _ArrayLike()))(x)

    with watch_effects(step.__code__, backend="profile") as watch:
        jax.make_jaxpr(step)(F32)
    effects = watch.record().effects
    assert sorted(e.location.function for e in effects if e.kind is EffectKind.PRINT) == [
        "_ArrayLike.__jax_array__", "_scaled_sin_bwd"], effects


class _Shouting:
    """A callable object of the user's whose ``__repr__`` prints: JAX names it by ``str()`` for its debug info."""

    def __call__(self, x: Any) -> Any:
        return x * 2.0

    def __repr__(self) -> str:
        print("the user's __repr__")
        return "Shouting()"


def test_a_print_in_the_users_repr_is_found_and_a_functions_name_is_not_watched(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Describing a function for debug info is JAX's own work, hook off, unless it runs a ``__repr__`` the user
    wrote (JAX 0.10 and 0.12 name a callable object by its ``str()``, 0.4.38 does not): that print runs on every
    trace, and is reported exactly when JAX runs it."""
    def fresh_step() -> Any:  # a new function each time: JAX would reuse the first one's trace
        def step(x: Any) -> Any:
            return jax.jit(_Shouting())(x)

        return step

    jax.make_jaxpr(fresh_step())(F32)
    jax_runs_it = "the user's __repr__" in capsys.readouterr().out
    step = fresh_step()
    with watch_effects(step.__code__, backend="profile") as watch:
        jax.make_jaxpr(step)(F32)
    effects = watch.record().effects
    found = "_Shouting.__repr__" in [e.location.function for e in effects if e.kind is EffectKind.PRINT]
    assert found == jax_runs_it, effects
    assert hook_gate._no_users_repr((step,), {}) and hook_gate._no_users_repr((functools.partial(step, 1),), {})
    assert jax_runs_it or jax.__version_info__ < (0, 10), "JAX 0.10+ names a callable object by str()"
    assert hook_gate._no_users_repr((object(),), {}) and not hook_gate._no_users_repr((_Shouting(),), {})


def test_every_gate_is_taken_out() -> None:
    from jax._src import api_util, pjit
    from jax._src.interpreters import ad, partial_eval

    def attributes() -> list[Any]:
        return [core.Primitive.bind, pjit._infer_params, vars(core.Tracer)["__mul__"], vars(core.Tracer)["reshape"],
                vars(partial_eval.DynamicJaxprTracer)["_origin_msg"], api_util.fun_signature,
                getattr(ad, "backward_pass3", None), ad.backward_pass]

    before = attributes()
    with hook_off_inside_jax(print):
        assert all(now is not then for now, then in zip(attributes(), before) if then is not None)
    assert attributes() == before
