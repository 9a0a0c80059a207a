"""``jitscope run`` against JAX's own record of the same run, on small real programs (issue 23).

Each program in tests/targets/run_oracle/ is written as its library's users write it. It runs once
under ``jitscope run`` with ``JAX_LOG_COMPILES=1``, so JAX's compile log and jitscope's JSON log
describe the same process. Exact agreement is the test: every backend compile JAX logs is one
compiled event in jitscope's log under the name JAX gives it, and the reverse; the user's functions
are counted as the user's, never as internal compiles; the summary's counts add up; every
recompile is compared with a compile that is in the log; and the causes agree with the argument
types JAX logged for each compile.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.run.oracle import OracleRun, run_with_oracle

pytestmark = pytest.mark.models

ORACLE = Path(__file__).resolve().parents[1] / "targets" / "run_oracle"

#: program -> (libraries it needs, {the user's jitted function: compiles it must make})
PROGRAMS: dict[str, tuple[tuple[str, ...], dict[str, int]]] = {
    "linen_trainstate": (("flax", "optax"), {"step": 2}),
    "nnx_optimizer": (("flax", "optax"), {"train_step": 2, "evaluate": 1}),
    "equinox_filter_jit": (("equinox", "optax"), {"step": 2}),
    "haiku_transform": (("haiku", "optax"), {"update": 1}),
    "optax_schedule": (("optax",), {"step": 1, "scaled": 2}),
    "worker_thread": ((), {"preprocess": 2, "train_step": 2}),
    "nested_transforms": ((), {"model": 2}),
    "eval_shape_module": ((), {"step": 2}),
}

_runs: dict[str, OracleRun] = {}


def oracle_run(name: str, tmp_path_factory: pytest.TempPathFactory) -> OracleRun:
    libraries, _ = PROGRAMS[name]
    for library in libraries:
        pytest.importorskip(library, reason=f"{library} is not installed (pip install -e '.[test-models]')")
    if name not in _runs:
        _runs[name] = run_with_oracle(ORACLE / f"{name}.py", tmp_path_factory.mktemp(name))
    run = _runs[name]
    assert run.returncode == 0, run.stderr[-3000:]
    assert sum(run.jax_compiles.values()) > 0, "JAX logged no compile: is JAX_LOG_COMPILES honoured?"
    return run


@pytest.fixture(params=sorted(PROGRAMS))
def run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, OracleRun]:
    return request.param, oracle_run(request.param, tmp_path_factory)


def test_every_compile_jax_logs_is_one_compile_in_jitscope_log(run: tuple[str, OracleRun]) -> None:
    name, result = run
    assert result.jitscope_compiles() == result.jax_compiles, (
        f"{name}: only in jitscope's log: {dict(result.jitscope_compiles() - result.jax_compiles)}; "
        f"only in JAX's: {dict(result.jax_compiles - result.jitscope_compiles())}")
    assert not [e for e in result.events if e["kind"] == "unattributed"], "a compile JAX named was left unattributed"


def test_the_users_functions_are_counted_as_the_users(run: tuple[str, OracleRun]) -> None:
    name, result = run
    functions = {f["function"].rsplit(".", 1)[-1]: f for f in result.report["functions"]}
    for function, compiles in PROGRAMS[name][1].items():
        assert function in functions, f"{name}: {function} missing from {sorted(functions)}"
        summary = functions[function]
        assert summary["kind"] == "jit", f"{name}: {function} listed as {summary['kind']}"
        assert summary["compiles"] == compiles == result.jax_compiles[function], (
            f"{name}: {function}: jitscope {summary['compiles']}, JAX {result.jax_compiles[function]}, "
            f"program made {compiles}")


def test_summary_counts_add_up_and_recompiles_refer_to_logged_compiles(run: tuple[str, OracleRun]) -> None:
    _, result = run
    events = result.events
    for summary in result.report["functions"]:
        mine = [e for e in events if e["function"] == summary["function"] and e["defined_at"] == summary["defined_at"]]
        assert summary["events"] == len(mine)
        assert summary["compiles"] == sum(e["compiled"] for e in mine)
    numbers: dict[tuple[str, str], set[int]] = {}
    for event in events:
        key = (event["function"], str(event["defined_at"]))
        for label in event["nearest"]:
            assert label in numbers.get(key, set()), f"event {event['index']} is compared with {label}, not in the log"
        numbers.setdefault(key, set()).add(event["number"])
    headline = next(line for line in result.stderr.splitlines() if line.startswith("jitscope run:"))
    user = [f for f in result.report["functions"] if f["kind"] == "jit"]
    compiles = sum(f["compiles"] for f in user)
    assert f"; {compiles} compiles of " in headline
    recompiles = sum(max(f["compiles"] - 1, 0) for f in user)
    assert f"({recompiles} recompile{'s' * (recompiles != 1)}" in headline
    user = [f for f in result.report["functions"] if f["kind"] == "jit"]
    assert sum(f["compiles"] for f in user) == sum(result.jax_compiles[n] for n in
                                                    {f["function"].rsplit(".", 1)[-1] for f in user})
    # The summary's internal compiles are what JAX compiled besides the user's functions, not every trace.
    internal = sum(result.jax_compiles.values()) - compiles
    line = [line for line in result.stderr.splitlines() if line.startswith("internal compiles (")]
    if internal:
        assert line and line[0].split(": ")[1].startswith(f"{internal} in "), (line, internal)
    else:
        assert not line, line


def test_a_function_only_traced_is_no_compile_and_no_recompile(tmp_path_factory: pytest.TempPathFactory) -> None:
    """`jax.eval_shape` three times at module level: JAX compiled nothing for it. Before, the summary listed
    it as 3 compiles with 2 recompiles ("jit of a new function object")."""
    result = oracle_run("eval_shape_module", tmp_path_factory)
    (lam,) = [f for f in result.report["functions"] if f["function"].endswith("<lambda>")]
    assert lam["compiles"] == 0 and lam["events"] == 3
    assert "<lambda>" not in result.jax_compiles
    headline = next(line for line in result.stderr.splitlines() if line.startswith("jitscope run:"))
    assert "2 compiles of 1 jitted function (1 recompile; traced, never compiled: <listcomp>.<lambda>)" in headline \
        or "2 compiles of 1 jitted function (1 recompile; traced, never compiled: <lambda>)" in headline
    assert "<lambda>: " not in result.stderr  # no recompile lines for it
    assert re.search(r"<lambda>\s+\S+\s+0, traced 3x", result.stderr), result.stderr


_AVALS = re.compile(r"ShapedArray\(([a-z0-9]+\[[0-9,]*\])")


def test_causes_agree_with_the_types_jax_logged(run: tuple[str, OracleRun]) -> None:
    """A recompile blamed on a shape has that shape in JAX's logged types, and one JAX logged with
    identical types is blamed on no shape or dtype (a static value, a weak type, a new object)."""
    name, result = run
    for function in PROGRAMS[name][1]:
        logged = result.jax_lowering_types.get(function, [])
        compiled = [e for e in result.events if e["compiled"] and e["function"].rsplit(".", 1)[-1] == function]
        assert len(logged) == len(compiled), f"{name}: {function}: {len(logged)} lowerings logged"
        for event, types in zip(compiled, logged, strict=True):
            if event["number"] == 1 or not event["nearest"]:
                continue
            before = logged[[e["number"] for e in compiled].index(event["nearest"][0])]
            for cause in event["causes"]:
                if cause["component"].endswith(": shape"):
                    after_dims = cause["after"].strip("()").replace(" ", "").rstrip(",")
                    assert any(t.endswith(f"[{after_dims}]") for t in _AVALS.findall(types)), (cause, types)
            same_types = sorted(_AVALS.findall(types)) == sorted(_AVALS.findall(before))
            shape_or_dtype = [c for c in event["causes"] if c["component"].endswith((": shape", ": dtype"))]
            assert not (same_types and shape_or_dtype), (event["causes"], types)
            assert event["causes"] or event["same_key_as"], f"{name}: recompile {event['number']} of {function} has no cause"


def test_a_static_argument_change_on_linen_is_the_second_compile_not_a_lost_first(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """The issue's program: the first compile used to be lost (its lowering traced a PRNG helper)."""
    result = oracle_run("linen_trainstate", tmp_path_factory)
    step = [e for e in result.events if e["function"] == "step"]
    assert [(e["number"], e["traced"], e["compiled"]) for e in step] == [(1, True, True), (2, True, True)]
    assert [c["component"] for c in step[1]["causes"]] == ["train (static): value"]
    assert step[1]["nearest"] == [1]
