"""The run observer in-process: real jax.jit calls, the causes it computes, and no hooks left behind."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import pytest

from jitscope.jaxcompat.compile_hooks import installed
from jitscope.model.run import USER
from jitscope.run.observer import RunObserver
from jitscope.run.summary import Gates, check_gates, summarize
from tests.targets.static_objects import ComparedByIdentity, EqualByValue


def _observe(body, effects: bool = False):
    observer = RunObserver(effects=effects)
    with installed(observer) as status:
        assert status.call_hook and status.trace_hook, status.missing
        body()
    return [e for e in observer.finish() if e.kind == USER]


def _causes(event):
    return [str(c) for c in event.causes]


def test_cached_calls_make_no_events_and_each_recompile_has_every_cause():
    @functools.partial(jax.jit, static_argnames="training")
    def step(params, x, lr, training=True):
        return params["w"] * x * lr

    def body():
        p = {"w": jnp.ones(3)}
        for _ in range(5):
            step(p, jnp.ones(3), 0.1)
        step({"w": jnp.ones(4)}, jnp.ones(4), 0.1)
        step(p, jnp.ones(3), jnp.float32(0.1))
        step(p, jnp.ones(3), 0.1, training=False)
        step({"w": jnp.ones(3), "b": 1.0}, jnp.ones(3), 0.1)

    events = _observe(body)
    assert [e.number for e in events] == [1, 2, 3, 4, 5]
    assert all(e.compiled and e.traced and e.function.endswith("step") for e in events)
    assert events[0].signature == "params['w']: f32[3], x: f32[3], lr: ~f32[]"
    assert _causes(events[1]) == ["params['w']: shape (3,) -> (4,)", "x: shape (3,) -> (4,)"]
    assert _causes(events[2]) == ["lr: weak_type True -> False"]
    assert _causes(events[3]) == ["training: passed (absent) -> by keyword",
                                  "training (static): value (absent) -> False"]
    assert _causes(events[4]) == ["params: pytree structure {'w': *} -> {'b': *, 'w': *}"]
    assert all(e.nearest == (1,) for e in events[1:])
    assert events[1].call_site is not None and events[1].call_site.file.endswith("test_run_observer.py")


def test_static_value_change_shows_both_values():
    @functools.partial(jax.jit, static_argnums=1)
    def f(x, n):
        return x * n

    events = _observe(lambda: [f(jnp.ones(2), n) for n in (2, 2, 3)])
    assert len(events) == 2
    assert _causes(events[1]) == ["n (static): value 2 -> 3"]


def test_jit_built_in_a_loop_is_a_new_function_object_and_ties_are_reported():
    def body():
        for _ in range(3):
            jax.jit(lambda x: x + 1)(jnp.ones(2))

    events = _observe(body)
    assert [e.number for e in events] == [1, 2, 3]
    assert _causes(events[1]) == ["function: object #1 -> #2"]
    assert events[2].nearest == (1, 2)  # both earlier keys differ in the same one component: say so


def test_closure_value_change():
    def make(scale):
        return jax.jit(lambda x: x * scale)

    events = _observe(lambda: [make(s)(jnp.ones(2)) for s in (2.0, 3.0)])
    assert "function: closure (scale=2.0) -> (scale=3.0)" in _causes(events[1])


def test_methods_partial_grad_vmap_and_config_x64():
    class Model:
        def __init__(self, k):
            self.k = k

        @functools.partial(jax.jit, static_argnums=0)
        def apply(self, x):
            return x * self.k

        def __hash__(self):
            return hash(self.k)

        def __eq__(self, other):
            return isinstance(other, Model) and other.k == self.k

    g = jax.jit(jax.grad(lambda x: jnp.sum(x**2)))
    v = jax.jit(jax.vmap(lambda x: x * 2))

    def body():
        Model(1).apply(jnp.ones(2))
        Model(2).apply(jnp.ones(2))
        g(jnp.ones(3))
        v(jnp.ones((2, 3)))
        v(jnp.ones((4, 3)))

    events = _observe(body)
    apply = [e for e in events if e.function.endswith("Model.apply")]
    assert len(apply) == 2 and any(c.component == "self (static): value" for c in apply[1].causes)
    vmapped = [e for e in events if e.number == 2 and e is not apply[1]]
    assert vmapped and _causes(vmapped[0]) == ["x: shape (2, 3) -> (4, 3)"]


def test_effects_seen_while_tracing():
    @jax.jit
    def noisy(x):
        print("tracing noisy")
        return x + 1

    events = _observe(lambda: noisy(jnp.ones(2)), effects=True)
    assert [e.detail for e in events[0].effects] == ["print()"]


def test_a_failing_trace_is_recorded_and_the_error_reaches_the_program():
    @jax.jit
    def bad(x):
        if x > 0:
            return x
        return -x

    def body():
        with pytest.raises(jax.errors.TracerBoolConversionError):
            bad(jnp.float32(1.0))

    events = _observe(body)
    assert events[0].error is not None and events[0].error.startswith("TracerBoolConversionError")
    assert not events[0].compiled


def test_hooks_are_removed_afterwards():
    from jax._src import pjit

    before = pjit._infer_params
    with installed(RunObserver()):
        assert pjit._infer_params is not before
    assert pjit._infer_params is before


def test_summary_orders_worst_first_and_gates():
    @jax.jit
    def once(x):
        return x

    @jax.jit
    def often(x):
        return x

    events = _observe(lambda: [once(jnp.ones(1)), *(often(jnp.ones(n)) for n in (1, 2, 3))])
    functions = summarize(events)
    assert [f.function.rsplit(".", 1)[-1] for f in functions] == ["often", "once"]
    assert functions[0].compiles == 3 and functions[0].causes == (("x: shape", 2),)
    assert check_gates(Gates(max_compiles=3), functions) == ()
    (line,) = check_gates(Gates(max_compiles=2), functions)
    assert "often compiled 3 times (--max-compiles 2)" in line
    assert check_gates(Gates(fail_on_recompile=True), functions)[0].startswith("recompiles:")




def test_static_objects_are_keyed_by_equality_not_repr():
    @functools.partial(jax.jit, static_argnums=1)
    def f(x, cfg):
        return x * 2

    def body():
        f(jnp.ones(2), EqualByValue(1))
        f(jnp.ones(2), EqualByValue(1))  # equal: a cache hit, no event
        f(jnp.ones(3), EqualByValue(1))  # only the shape changed: the static value is not a cause
        one = ComparedByIdentity()
        f(jnp.ones(2), one)
        f(jnp.ones(2), one)
        f(jnp.ones(2), ComparedByIdentity())  # a new identity-compared object: a new key

    events = _observe(body)
    assert [e.number for e in events] == [1, 2, 3, 4]
    assert _causes(events[1]) == ["x: shape (2,) -> (3,)"]
    assert _causes(events[3]) == [
        ("cfg (static): value: a new object of class ComparedByIdentity with identity equality on every call: "
        "give it __eq__/__hash__ or reuse one instance")
    ]


def test_none_then_array_is_a_structure_change_and_float64_numpy_is_float32_without_x64():
    import numpy as np

    @jax.jit
    def f(x, y=None):
        return x

    def body():
        f(jnp.ones(2), None)
        f(jnp.ones(2), jnp.ones(2))
        f(np.ones(2, np.float64))
        f(np.ones(2, np.float32))  # JAX sees f32 both times: no compile
        f(np.ones(3, np.float32))  # a new shape, and only that: f64 was keyed as the f32 JAX traced

    events = _observe(body)
    assert [e.number for e in events] == [1, 2, 3, 4]
    assert _causes(events[1]) == ["y: pytree structure None -> *"]
    assert _causes(events[3]) == ["x: shape (2,) -> (3,)"]


def test_positional_names_reads_plain_functions_as_inspect_does():
    """The fast path for plain functions (every compile asks) answers what ``inspect.signature`` does."""
    import inspect

    from jitscope.run.keys import positional_names

    def plain(a, b, /, c, d=1, *rest, e, **kw):
        return a

    def target(x, y):
        return x

    @functools.wraps(target)
    def wrapped(*args, **kwargs):  # inspect follows __wrapped__ to target's parameters
        return target(*args, **kwargs)

    def signed(p, q):
        return p

    signed.__signature__ = inspect.Signature([inspect.Parameter("z", inspect.Parameter.POSITIONAL_OR_KEYWORD)])
    assert positional_names(plain) == ("a", "b", "c", "d")
    assert positional_names(lambda u, *v, w: u) == ("u",)
    assert positional_names(wrapped) == ("x", "y")
    assert positional_names(signed) == ("z",)
    assert positional_names(functools.partial(target, 1)) == ("y",)


def test_display_path_follows_the_working_directory(tmp_path, monkeypatch):
    """Call sites are shown relative to the current directory, also after the program changes it (cached per cwd)."""
    from jitscope.userframes import display_path

    source = tmp_path / "pkg" / "model.py"
    monkeypatch.chdir(tmp_path)
    assert display_path(str(source)) == "pkg/model.py"
    monkeypatch.chdir(tmp_path / "..")
    assert display_path(str(source)) == f"{tmp_path.name}/pkg/model.py"
    (tmp_path / "other").mkdir()
    monkeypatch.chdir(tmp_path / "other")
    assert display_path(str(source)) == str(source)  # outside the working directory: the full path


def test_display_path_after_the_working_directory_was_removed(tmp_path, monkeypatch):
    """A program that removes its working directory: paths are shown relative to where jitscope started."""
    from jitscope import outputs
    from jitscope.userframes import display_path

    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.setattr(outputs, "START_DIR", str(tmp_path))
    monkeypatch.chdir(gone)
    gone.rmdir()
    assert display_path(str(tmp_path / "pkg" / "model.py")) == "pkg/model.py"
    assert display_path("model.py") == "model.py"  # relative, nothing to resolve it against: as given
