"""``jitscope run`` as a process: its own argument parser (no typer before the program starts) agrees
with the typer command, and the program sees the process python would give it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import typer

from jitscope.cli import run as cli_run
from jitscope.cli import run_command as command
from jitscope.cli.run_command import RunOptions, parse_run_args
from jitscope.errors import UsageError
from tests.conftest import STYLE_ENV

AGREE = [
    ["train.py"],
    ["train.py", "--lr", "0.1", "-m", "x"],
    ["--log", "compiles", "train.py"],
    ["--log=none", "--no-effects", "train.py", "a"],
    ["--max-compiles", "3", "--fail-on-recompile", "--max-compile-time", "2.5", "train.py"],
    ["-f", "json", "--out", "log.json", "train.py"],
    ["--format=json", "--effects", "train.py"],
    ["-m", "pkg.mod", "--flag", "value"],
    ["--log", "none", "-m", "pkg.mod"],
    ["--", "train.py", "--log", "x"],
    ["--out", "report.html", "train.py"],
    ["-f", "markdown", "--log=none", "train.py"],
    ["--format=html", "--out=r.html", "-m", "pkg.mod"],
]


def _typer_options(args: list[str], monkeypatch: pytest.MonkeyPatch) -> RunOptions:
    seen: list[RunOptions] = []

    def fake_run_command(options: RunOptions) -> int:
        seen.append(options)
        return 0

    monkeypatch.setattr(cli_run, "run_command", fake_run_command)
    app = typer.Typer()
    cli_run.register(app)
    app.command("other")(lambda: None)  # two commands, so "run" is a subcommand as in jitscope
    with pytest.raises(SystemExit):
        app(["run", *args], prog_name="jitscope")
    assert len(seen) == 1
    return seen[0]


@pytest.mark.parametrize("args", AGREE, ids=" ".join)
def test_the_fast_parser_and_the_typer_command_agree(args, monkeypatch):
    assert parse_run_args(args) == _typer_options(args, monkeypatch)


@pytest.mark.parametrize("args", [
    [], ["--help"], ["-h"], ["--lgo", "none", "t.py"], ["--log", "loud", "t.py"], ["--max-compiles", "0", "t.py"],
    ["--max-compile-time", "soon", "t.py"], ["--log"], ["--format", "xml", "t.py"], ["--log", "none"],
])
def test_anything_unusual_is_left_to_typer(args):
    assert parse_run_args(args) is None


@pytest.mark.parametrize(("args", "fmt"), [
    (["t.py"], "text"), (["--out", "r.html", "t.py"], "html"), (["--out", "R.MD", "t.py"], "markdown"),
    (["--out", "log.json", "t.py"], "json"), (["--out", "run.log", "t.py"], "json"), (["--out", "runlog", "t.py"], "json"),
    (["-f", "text", "--out", "r.json", "t.py"], "text"), (["-f", "markdown", "t.py"], "markdown"),
])
def test_the_report_format_is_the_option_else_the_out_suffix_else_json_for_a_file(args, fmt):
    options = parse_run_args(args)
    assert options is not None and options.report_format() == fmt


def test_html_needs_a_file():
    options = parse_run_args(["-f", "html", "t.py"])
    assert options is not None
    with pytest.raises(UsageError, match="--format html writes a file"):
        options.report_format()


def _run(tmp_path: Path, *args: str, stdin: str = "", env: dict[str, str] | None = None,
         cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if k not in STYLE_ENV and not k.startswith(("JAX_", "XLA_"))}
    full_env.update({"NO_COLOR": "1", "COLUMNS": "100", **(env or {})})
    return subprocess.run([sys.executable, "-m", "jitscope", "run", *args], input=stdin, cwd=cwd or tmp_path,
                          env=full_env, capture_output=True, text=True, check=False, timeout=300)


def test_settings_made_before_import_jax_hold_and_stdin_is_the_programs(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent("""
        import os, sys
        print("before:", sorted(m for m in ("jax", "typer", "click", "rich") if m in sys.modules))
        os.environ["JAX_PLATFORMS"] = "cpu"
        os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=3"
        os.environ["JAX_ENABLE_X64"] = "1"
        import jax, jax.numpy as jnp
        print("devices:", jax.device_count(), jax.default_backend(), jnp.ones(2).dtype)
        print("stdin:", sys.stdin.read().strip())
        jax.jit(lambda x: x + 1)(jnp.ones(2))
    """))
    done = _run(tmp_path, "--log", "compiles", str(script), stdin="hello from stdin\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["before: []", "devices: 3 cpu float64", "stdin: hello from stdin"]
    assert "jitscope: compile 1 of <lambda>" in done.stderr and "x: f64[2]" in done.stderr


def test_module_run_and_the_summary_after_an_uncaught_exception(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "train.py").write_text(textwrap.dedent("""
        import sys
        import jax, jax.numpy as jnp

        @jax.jit
        def step(x):
            return x * 2

        step(jnp.ones(2))
        step(jnp.ones(3))
        print("argv", sys.argv[1:], __name__)
        raise RuntimeError("after two compiles")
    """))
    done = _run(tmp_path, "-m", "pkg.train", "--epochs", "2")
    assert done.returncode == 1
    assert done.stdout == "argv ['--epochs', '2'] __main__\n"
    err = done.stderr
    assert 'pkg/train.py", line 12, in <module>' in err and "runpy" not in err
    assert err.index("RuntimeError: after two compiles") < err.index("jitscope run: -m pkg.train raised RuntimeError")
    assert "2 compiles of 1 jitted function (1 recompile)" in err
    assert "x: shape (2,) -> (3,) (vs compile 1)" in err


def test_a_bad_option_is_one_line_from_typer_with_exit_2(tmp_path):
    done = _run(tmp_path, "--log", "loud", "prog.py")
    assert done.returncode == 2 and "loud" in done.stderr
    done = _run(tmp_path, "missing.py")
    assert done.returncode == 2 and done.stderr.strip().splitlines()[0].startswith("error: no such file: missing.py")


def test_the_fast_path_can_be_turned_off(monkeypatch):
    monkeypatch.setenv("JITSCOPE_NO_FAST_PATH", "1")
    assert command.main_fast(["prog.py"]) is None


def test_the_program_runs_with_the_collector_as_it_sets_it(tmp_path):
    """jitscope pauses the garbage collector for its own work only (run/collector.py)."""
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent("""
        import gc
        import jax, jax.numpy as jnp
        print("at start:", gc.isenabled())
        jax.jit(lambda x: x + 1)(jnp.ones(2))
        print("after a compile:", gc.isenabled())
        gc.disable()
        jax.jit(lambda x: x * 2)(jnp.ones(2))
        print("disabled by the program, after a compile:", gc.isenabled())
    """))
    done = _run(tmp_path, str(script))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["at start: True", "after a compile: True",
                                        "disabled by the program, after a compile: False"]


def test_collector_paused_nests_and_leaves_a_disabled_collector_disabled():
    import gc

    from jitscope.run.collector import collector_paused

    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
