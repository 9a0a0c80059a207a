"""``jitscope run`` end to end, in-process (the program runs in this interpreter, as it does for users)."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from jitscope.cli.app import main
from jitscope.model.run import RUN_SCHEMA_VERSION

ROOT = Path(__file__).resolve().parents[2]

PROGRAM = """
import sys
import jax, jax.numpy as jnp

@jax.jit
def f(x):
    return x * 2

for n in (3, 3, 4):
    f(jnp.ones(n))
print("program stdout", sys.argv[1:], __name__)
{tail}
"""


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str], *options: str, tail: str = "",
         args: tuple[str, ...] = ()) -> tuple[int, str, str]:
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent(PROGRAM.format(tail=tail)))
    with pytest.raises(SystemExit) as exit_info:
        main(["run", *options, str(script), *args])
    out, err = capsys.readouterr()
    code = exit_info.value.code
    return (code if isinstance(code, int) else 1), out, err


def test_program_runs_as_main_with_its_argv_and_stdout_and_recompile_is_explained(tmp_path, capsys):
    code, out, err = _run(tmp_path, capsys, args=("--lr", "0.1"))
    assert code == 0
    assert out == "program stdout ['--lr', '0.1'] __main__\n"  # stdout is the program's alone
    line = next(x for x in err.splitlines() if x.startswith("jitscope: compile 2 of f ("))
    assert "prog.py:5) from " in line and "prog.py:10 [trace " in line
    assert ": x: shape (3,) -> (4,) (vs compile 1)" in err
    assert "2 compiles of 1 jitted function (1 recompile)" in err


def test_exit_code_exception_and_interrupt_pass_through_after_the_summary(tmp_path, capsys):
    code, _, err = _run(tmp_path, capsys, tail="sys.exit(7)")
    assert code == 7 and "exited 7" in err
    code, _, err = _run(tmp_path, capsys, tail="raise ValueError('boom')")
    assert code == 1
    traceback = err[err.index("Traceback"):err.index("ValueError: boom")]
    assert 'prog.py", line 12, in <module>' in traceback and "runpy" not in traceback and "jitscope" not in traceback
    assert err.index("ValueError: boom") < err.index("jitscope run: ")  # summary after the traceback
    code, _, err = _run(tmp_path, capsys, tail="raise KeyboardInterrupt")
    assert code == 130 and "KeyboardInterrupt" in err and "interrupted (Ctrl-C)" in err


def test_gates_fail_with_one_line_and_exit_1(tmp_path, capsys):
    code, _, err = _run(tmp_path, capsys, "--max-compiles", "1", "--log", "none")
    assert code == 1
    assert err.strip().splitlines()[-1] == "error: jitscope run: f compiled 2 times (--max-compiles 1)"
    code, _, err = _run(tmp_path, capsys, "--fail-on-recompile", "--log", "none", tail="sys.exit(3)")
    assert code == 1 and "recompiles: f (1) (--fail-on-recompile)" in err
    code, _, _ = _run(tmp_path, capsys, "--max-compiles", "2", "--log", "none", tail="sys.exit(3)")
    assert code == 3  # no gate failed: the program's own exit code


def test_json_log_to_a_file(tmp_path, capsys):
    log = tmp_path / "log.json"
    code, _, _ = _run(tmp_path, capsys, "--out", str(log), "--log", "none")
    data = json.loads(log.read_text())
    assert code == 0 and data["kind"] == "jitscope.run" and data["schema_version"] == RUN_SCHEMA_VERSION
    mine = [e for e in data["events"] if e["kind"] == "jit"]
    assert [e["number"] for e in mine] == [1, 2]
    assert mine[1]["causes"] == [{"component": "x: shape", "before": "(3,)", "after": "(4,)"}]
    from jitscope.model.common import from_jsonable
    from jitscope.model.run import RunRecord

    record = from_jsonable(RunRecord, data)
    assert record.events[-1].causes[0].component == "x: shape"


def test_module_mode_and_missing_targets(tmp_path, capsys, monkeypatch):
    (tmp_path / "pkgmod.py").write_text("import sys\nprint('module', sys.argv[1:], __name__)\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "-m", "pkgmod", "a", "--b"])
    out, _ = capsys.readouterr()
    assert exit_info.value.code == 0 and out == "module ['a', '--b'] __main__\n"
    with pytest.raises(SystemExit) as exit_info:
        main(["run", str(tmp_path / "missing.py")])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.startswith("error: no such file:")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX paths")
def test_example_train_loop_finds_all_four_causes(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "--no-effects", "--log", "none", str(ROOT / "examples" / "train_loop.py")])
    err = capsys.readouterr().err
    assert exit_info.value.code == 0
    for cause in ("x: shape (64, 16) -> (8, 16)", "training (static): value (absent) -> False",
                  "lr: weak_type True -> False", "function: object #1 -> #2"):
        assert cause in err, cause


def test_module_mode_whose_package_init_raises_is_the_programs_failure(tmp_path, capsys, monkeypatch):
    """``python -m pkg.mod`` shows the traceback of pkg/__init__.py and exits 1; so does jitscope run (was exit 3)."""
    package = tmp_path / "brokenpkg"
    package.mkdir()
    (package / "__init__.py").write_text("print('init ran')\nraise RuntimeError('boom in init')\n")
    (package / "mod.py").write_text("print('mod ran')\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "--log", "none", "-m", "brokenpkg.mod"])
    out, err = capsys.readouterr()
    assert exit_info.value.code == 1, err
    assert out.count("init ran") == 1 and "mod ran" not in out  # __init__ ran once, as under python
    assert "RuntimeError: boom in init" in err and "brokenpkg/__init__.py" in err and "internal error" not in err
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "-m", "brokenpkg.nothere"])
    assert exit_info.value.code == 2 and "no module named 'brokenpkg.nothere'" in capsys.readouterr().err
