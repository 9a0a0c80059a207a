"""jaxcompat.features on the installed JAX: every lookup resolves, and a missing one is one clear error."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

from jitscope.errors import EXIT_USAGE, JitscopeError
from jitscope.jaxcompat import features
from jitscope.jaxcompat.jit import JitOptions, is_jitted, make_jit, unwrap_jit


def test_version_is_jaxs_own() -> None:
    assert features.jax_version() == jax.__version__


def test_every_lookup_resolves_on_the_installed_jax() -> None:
    features.check_supported()
    types = features.jaxpr_types()
    closed = jax.make_jaxpr(lambda x: x + 1.0)(1.0)
    assert isinstance(closed, types.closed_jaxpr)
    assert isinstance(closed.jaxpr, types.jaxpr)
    assert isinstance(closed.jaxpr.eqns[0].invars[1], types.literal)
    hooks = features.source_info_hooks()
    assert hooks.is_user_filename(__file__) and not hooks.is_user_filename(jax.__file__)
    style = features.printer_style()
    assert "dot_general" in style.pp_rules
    assert style.typed_literals == ("1.0:f32[]" in str(closed))
    assert set(features.dispatch_event_names()) <= {"trace", "lower", "compile"}


def test_private_classes_are_the_public_ones() -> None:
    """Where the private module is used for speed, it must hold the very classes jax.extend.core exports."""
    import jax.extend.core as public

    types = features.jaxpr_types()
    assert types.jaxpr is public.Jaxpr
    assert types.closed_jaxpr is getattr(public, "ClosedJaxpr", public.Jaxpr)
    assert types.literal is public.Literal
    if hasattr(public, "DropVar"):  # exported since JAX 0.5
        assert types.drop_var is public.DropVar


def test_tracers_are_recognised() -> None:
    seen: list[bool] = []

    def f(x: jax.Array) -> jax.Array:
        seen.append(isinstance(x, features.tracer_type()))
        return x

    jax.jit(f).trace(jnp.zeros(2))
    assert seen == [True] and not isinstance(jnp.zeros(2), features.tracer_type())


def test_jit_wrappers_are_unwrapped_with_their_options() -> None:
    def g(x: jax.Array, n: int) -> jax.Array:
        return x * n

    jitted = jax.jit(g, static_argnums=1, donate_argnums=0)
    assert is_jitted(jitted) and not is_jitted(g)
    found = unwrap_jit(jitted)
    assert found is not None
    fn, options = found
    assert fn is g
    # JAX normalises static_argnums=1 to the parameter name too.
    assert options == JitOptions(static_argnums=(1,), static_argnames=("n",), donate_argnums=(0,), from_user_jit=True)
    fresh = make_jit(g, options)
    fresh(jnp.ones(2), 3)
    assert features.jit_cache_size(fresh) in (1, None)


def test_a_missing_feature_is_one_line_with_exit_code_2(monkeypatch: pytest.MonkeyPatch) -> None:
    features.jaxpr_types.cache_clear()
    monkeypatch.setattr(features, "_core_modules", lambda: ("jitscope_no_such_module",))
    monkeypatch.setattr(features, "jax_version", lambda: "9.9.9")
    try:
        with pytest.raises(features.UnsupportedJaxError) as info:
            features.jaxpr_types()
    finally:
        features.jaxpr_types.cache_clear()
    err = info.value
    assert isinstance(err, JitscopeError) and err.exit_code == EXIT_USAGE
    assert err.one_line() == (
        f"unsupported JAX version 9.9.9: no Jaxpr class; jitscope supports jax >= {features.MIN_JAX} "
        f"(tested up to {features.TESTED_UP_TO})"
    )
    assert "\n" not in err.one_line()


def test_the_cli_prints_the_unsupported_version_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from jitscope.cli.app import main

    def missing() -> None:
        raise features.unsupported("jax.jit(f).trace is missing (the stages API)")

    monkeypatch.setattr(features, "check_supported", missing)
    with pytest.raises(SystemExit) as info:
        main(["trace", "tests/targets/bench_project/bench_targets.py:power", "--shapes", "f32[3]", "--static", "n=1"])
    assert info.value.code == EXIT_USAGE
    err = capsys.readouterr().err
    assert f"unsupported JAX version {jax.__version__}: jax.jit(f).trace is missing (the stages API)" in err


def test_the_declared_floor_is_the_one_pyproject_installs() -> None:
    # The error message's "jitscope supports jax >= X" and pyproject's `jax>=X` (which .ci/run
    # tests) must not drift apart.
    import re
    import tomllib
    from pathlib import Path

    pyproject = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    floors = [m.group(1) for d in pyproject["project"]["dependencies"] if (m := re.match(r"jax>=([\d.]+)$", d))]
    assert floors == [features.MIN_JAX]
