"""Every public function of the Python API refuses a bad argument where it enters jitscope (issue 30).

A wrong type is a ``BadTypeError`` (a ``TypeError``), a bad value a ``BadValueError`` (a ``ValueError``); both
are ``UsageError`` s whose one line names the parameter. Where the CLI has the option, it prints the same line
(``error: ...``, exit 2) with the parameter spelled as the option (``min_rounds`` -> ``--min-rounds``): the two
share one set of checks (``jitscope/api/checks.py``). Each case fails before anything is traced or run.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import jitscope
from jitscope.errors import BadTypeError, BadValueError, UsageError

pytest.importorskip("jax")


def _fn(x: Any) -> Any:
    return x


T, V = TypeError, ValueError

#: (public function, keyword arguments, exception, the parameter its message names)
CASES: list[tuple[str, dict[str, Any], type[Exception], str]] = [
    ("trace", {"stages": 3}, T, "stages"),
    ("trace", {"stages": ["jaxpr", 3]}, T, "stages"),
    ("trace", {"stages": "hlo2"}, V, "stages"),
    ("trace", {"stages": ""}, V, "stages"),
    ("trace", {"effects": "no"}, T, "effects"),
    ("trace", {"locations": "all"}, V, "locations"),
    ("trace", {"locations": None}, T, "locations"),
    ("trace", {"depth": -1}, V, "depth"),
    ("trace", {"depth": "1"}, T, "depth"),
    ("trace", {"depth": 1.5}, T, "depth"),
    ("trace", {"fold": "yes"}, T, "fold"),
    ("trace", {"static_argnums": "0"}, T, "static_argnums"),
    ("trace", {"static_argnums": [0, "1"]}, T, "static_argnums"),
    ("trace", {"static_argnames": 0}, T, "static_argnames"),
    ("trace", {"shapes": 3}, T, "shapes"),
    ("trace", {"fn": 3}, T, "fn"),
    ("bench", {"budget": "1"}, T, "budget"),
    ("bench", {"budget": math.inf}, V, "budget"),
    ("bench", {"budget": math.nan}, V, "budget"),
    ("bench", {"budget": 0}, V, "budget"),
    ("bench", {"min_rounds": 0}, V, "min_rounds"),
    ("bench", {"min_rounds": 1.5}, T, "min_rounds"),
    ("bench", {"min_rounds": True}, T, "min_rounds"),
    ("bench", {"cold_runs": 1001}, V, "cold_runs"),
    ("bench", {"eager": "yes"}, T, "eager"),
    ("bench", {"dispatch": None}, T, "dispatch"),
    ("bench", {"seed": "0"}, T, "seed"),
    ("bench", {"persistent_cache": 1}, T, "persistent_cache"),
    ("bench", {"save": 1}, T, "save"),
    ("bench", {"compare": 1}, T, "compare"),
    ("bench", {"static_argnames": ["a", 1]}, T, "static_argnames"),
    ("profile", {"calls": 0}, V, "calls"),
    ("profile", {"calls": 100_001}, V, "calls"),
    ("profile", {"calls": "3"}, T, "calls"),
    ("profile", {"budget": math.nan}, V, "budget"),
    ("profile", {"seed": 1.0}, T, "seed"),
    ("profile", {"trace_out": 3}, T, "trace_out"),
    ("memory", {"fail_over": -5}, V, "fail_over"),
    ("memory", {"fail_over": 0}, V, "fail_over"),
    ("memory", {"fail_over": "lots"}, V, "fail_over"),
    ("memory", {"fail_over": math.inf}, V, "fail_over"),
    ("memory", {"fail_over": "1e400"}, V, "fail_over"),
    ("memory", {"fail_over": 10**5000}, V, "fail_over"),
    ("memory", {"fail_over": [1]}, T, "fail_over"),
    ("memory", {"fail_over": True}, T, "fail_over"),
    ("memory", {"try_remat": "yes"}, T, "try_remat"),
    ("lint", {"paths": 5}, T, "paths"),
    ("lint", {"select": 5}, T, "select"),
    ("lint", {"select": "JS999"}, V, "select"),
    ("lint", {"select": ["JS101", "nope"]}, V, "select"),
    ("lint", {"ignore": "JS1,JS99"}, V, "ignore"),
    ("lint", {"exclude": 3}, T, "exclude"),
    ("lint", {"fail_on": "fatal"}, V, "fail_on"),
    ("lint", {"fail_on": 2}, T, "fail_on"),
    ("lint", {"jobs": 0}, V, "jobs"),
    ("lint", {"jobs": "2"}, T, "jobs"),
    ("lint", {"config": 3}, T, "config"),
    ("lint", {"fix": "yes"}, T, "fix"),
    ("diff", {"old_fn": 3}, T, "old_fn"),
    ("diff", {"new_fn": None}, T, "new_fn"),
    ("diff", {"fail_on": "bogus"}, V, "fail_on"),
    ("diff", {"fail_on": ""}, V, "fail_on"),
    ("diff", {"fail_on": 3}, T, "fail_on"),
    ("diff", {"memory": "yes"}, T, "memory"),
    ("diff", {"bench": 1}, T, "bench"),
    ("diff", {"bench_rounds": 1}, V, "bench_rounds"),
    ("diff", {"bench_rounds": 101}, V, "bench_rounds"),
    ("diff", {"bench_rounds": 2.0}, T, "bench_rounds"),
    ("diff", {"bench_budget": math.inf}, V, "bench_budget"),
    ("watch", {"name": 3}, T, "name"),
    ("watch", {"effects": "no"}, T, "effects"),
    ("watch", {"fresh": 1}, T, "fresh"),
    ("render", {"format": "xml"}, V, "format"),
    ("render", {"format": 3}, T, "format"),
    ("save", {"path": 3}, T, "path"),
    ("save", {"format": "pdf"}, V, "format"),
]


def _lint_result(tmp_path: Path) -> Any:
    (tmp_path / "ok.py").write_text("x = 1\n")
    return jitscope.lint(tmp_path / "ok.py")


def _call(function: str, kwargs: dict[str, Any], tmp_path: Path) -> Any:
    """``function`` called with one bad keyword and good everything else."""
    kwargs = dict(kwargs)
    if function in ("trace", "bench", "profile", "memory"):
        fn = kwargs.pop("fn", _fn)
        args = () if "shapes" in kwargs else (1.0,)
        return getattr(jitscope, function)(fn, *args, **kwargs)
    if function == "diff":
        return jitscope.diff(kwargs.pop("old_fn", _fn), kwargs.pop("new_fn", _fn), 1.0, **kwargs)
    if function == "lint":
        (tmp_path / "m.py").write_text("x = 1\n")
        return jitscope.lint(kwargs.pop("paths", tmp_path / "m.py"), **kwargs)
    if function == "watch":
        with jitscope.watch(**kwargs):
            return None
    result = _lint_result(tmp_path)
    if function == "render":
        return result.render(**kwargs)
    return result.save(kwargs.pop("path", tmp_path / "r.json"), **kwargs)


def _case_id(function: str, kwargs: dict[str, Any]) -> str:
    ((name, value),) = kwargs.items()
    shown = "huge" if isinstance(value, int) and abs(value) > 10**18 else repr(value)
    return f"{function}-{name}={shown}"


@pytest.mark.parametrize(("function", "kwargs", "kind", "parameter"), CASES, ids=[_case_id(*c[:2]) for c in CASES])
def test_a_bad_argument_is_refused_where_it_enters(function: str, kwargs: dict[str, Any], kind: type[Exception],
                                                   parameter: str, tmp_path: Path) -> None:
    with pytest.raises(kind) as caught:
        _call(function, kwargs, tmp_path)
    err = caught.value
    assert isinstance(err, UsageError)
    assert isinstance(err, BadTypeError if kind is T else BadValueError)
    line = err.one_line()
    assert parameter in line and "\n" not in line
    assert caught.traceback[-1].path.name in ("checks.py", "gate.py", "engine.py", "trace.py")  # at the boundary


#: (API call, the same bad value on the command line, the parameter)
CLI_CASES: list[tuple[str, dict[str, Any], tuple[str, ...], str]] = [
    ("lint", {"select": "JS999"}, ("lint", "{m}", "--select", "JS999"), "select"),
    ("lint", {"ignore": "js10x"}, ("lint", "{m}", "--ignore", "js10x"), "ignore"),
    ("lint", {"fail_on": "fatal"}, ("lint", "{m}", "--fail-on", "fatal"), "fail_on"),
    ("lint", {"jobs": 0}, ("lint", "{m}", "--jobs", "0"), "jobs"),
    ("memory", {"fail_over": -5}, ("memory", "{m}:f", "--fail-over", "-5"), "fail_over"),
    ("memory", {"fail_over": "1e400"}, ("memory", "{m}:f", "--fail-over", "1e400"), "fail_over"),
    ("bench", {"budget": math.inf}, ("bench", "{m}:f", "--budget", "inf"), "budget"),
    ("bench", {"min_rounds": 0}, ("bench", "{m}:f", "--min-rounds", "0"), "min_rounds"),
    ("bench", {"cold_runs": 5000}, ("bench", "{m}:f", "--cold-runs", "5000"), "cold_runs"),
    ("profile", {"calls": 0}, ("profile", "{m}:f", "--calls", "0"), "calls"),
    ("trace", {"depth": -1}, ("trace", "{m}:f", "--depth", "-1"), "depth"),
    ("trace", {"stages": "jaxpr,asm"}, ("trace", "{m}:f", "--stages", "jaxpr,asm"), "stages"),
    ("diff", {"fail_on": "bogus"}, ("diff", "{m}:f", "{m}:f", "--fail-on", "bogus"), "fail_on"),
    ("diff", {"bench_rounds": 1}, ("diff", "{m}:f", "{m}:f", "--bench-rounds", "1"), "bench_rounds"),
    ("trace", {"locations": "all"}, ("trace", "{m}:f", "--locations", "all"), "locations"),
    ("render", {"format": "xml"}, ("lint", "{m}", "--format", "xml"), "format"),  # a lint result: lint's formats
]


@pytest.mark.parametrize(("function", "kwargs", "argv", "parameter"), CLI_CASES,
                         ids=[" ".join(c[2][2:]) for c in CLI_CASES])
def test_the_cli_prints_the_same_line(function: str, kwargs: dict[str, Any], argv: tuple[str, ...],
                                      parameter: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from jitscope.api.checks import spelled
    from jitscope.cli.app import main

    with pytest.raises(UsageError) as caught:
        _call(function, kwargs, tmp_path)
    line = caught.value.one_line()
    assert line.startswith(parameter)
    (tmp_path / "m.py").write_text("def f(x):\n    return x\n")
    capsys.readouterr()
    with pytest.raises(SystemExit) as exited:
        main([a.format(m=tmp_path / "m.py") for a in argv])
    assert exited.value.code == 2
    assert capsys.readouterr().err.strip() == f"error: {spelled(parameter, True)}{line[len(parameter):]}"


def _lint_file(tmp_path: Path) -> Path:
    path = tmp_path / "step.py"
    path.write_text("import jax\n\n\n@jax.jit\ndef step(x):\n    print(x)\n    return x + 1 if x > 0 else x\n")
    return path


def test_one_rule_code_given_as_a_string_is_that_code(tmp_path: Path) -> None:
    path = _lint_file(tmp_path)
    every = {f.code for f in jitscope.lint(path).findings}
    assert "JS101" in every and len(every) > 1  # there is something for select to leave out
    assert {f.code for f in jitscope.lint(path, select="JS101").findings} == {"JS101"}
    assert {f.code for f in jitscope.lint(path, select="JS101, JS201").findings} == every & {"JS101", "JS201"}
    assert {f.code for f in jitscope.lint(path, ignore="JS101").findings} == every - {"JS101"}
    assert not jitscope.lint(path, exclude="step.py").findings


def test_a_watch_can_watch_one_block_after_another(tmp_path: Path) -> None:
    import jax
    import jax.numpy as jnp

    @jax.jit
    def double(x: Any) -> Any:
        return x * 2

    w = jitscope.watch("twice")
    with w as first:
        double(jnp.ones(3))
    assert first is w and w.report is not None and w.report.compiles == 1
    with w:
        double(jnp.ones(4))
        double(jnp.ones(4))
    assert w.report.compiles == 1 and w.compiles == 1  # the second block's: one new shape, then a cache hit
    with w, pytest.raises(UsageError, match="already watching"), w:
        pass
    assert w.report is not None


def test_numbers_within_range_are_taken(tmp_path: Path) -> None:
    """The checks refuse what they should, nothing more: the edges are accepted."""
    from jitscope.api.checks import check_bytes, check_codes, check_count, check_seconds

    check_seconds("budget", 3600)
    check_seconds("max_warmup", 0, zero_ok=True)
    check_count("depth", 0, least=0)
    assert check_bytes("fail_over", 1) == 1
    assert check_bytes("fail_over", 1e9) == 10**9
    assert check_bytes("fail_over", "12GiB") == 12 * 2**30
    assert check_codes("select", "ALL,js1") == ("ALL", "js1")
    assert check_codes("select", ("print-in-traced-code",)) == ("print-in-traced-code",)
    assert check_codes("select", None) is None
