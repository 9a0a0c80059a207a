"""``jitscope trace`` parsed without typer (``cli/trace_command.py``) agrees with the typer command
(``cli/trace.py``), covers every option it declares, and leaves anything unusual to typer."""

from __future__ import annotations

import pytest
import typer

from jitscope.cli import trace as cli_trace
from jitscope.cli.trace_command import _OPTIONS, TraceOptions, parse_trace_args

AGREE = [
    ["m.py:f"],
    ["m.py:f", "pkg.mod:g"],
    ["m.py:f", "--shapes", "f32[8,128], i32[8]"],
    ["-s", "f32[8]", "m.py:f", "-s", "f32[16]", "--shapes=f32[32]"],
    ["m.py:f", "--static", "n=3", "--static", "mode='x'", "--arg", "mask=bool[8]"],
    ["--stages", "jaxpr,stablehlo", "--depth", "0", "m.py:f"],
    ["m.py:f", "--locations", "user", "--fold-libraries"],
    ["m.py:f", "--locations=none", "--no-fold-libraries", "--no-effects"],
    ["m.py:f", "--no-locations", "--effects"],
    ["m.py:f", "-f", "json", "--out", "r.json"],
    ["m.py:f", "--format=markdown", "--out=report.md"],
    ["m.py:f", "--out", "stages"],
    ["m.py:f", "--x64", "--devices", "4", "--mesh", "data=2,model=2"],
    ["train.py:step", "--from-run", "--call", "3", "--continue", "--", "--epochs", "1"],
    ["train.py:step", "--from", "caps", "--compile", "2"],
    ["m.py:f", "--profile", "--profile-html", "p.html"],
    ["m.py:f", "--processes", "2", "--save", "runs/t.json", "--mesh", "data=2"],
    ["m.py:f", "--distributed", "--save", "t.json"],
    ["--", "m.py:f"],
    ["m.py:f", "--depth", "2", "--depth", "3"],  # the last one counts
]


def _typer_options(args: list[str], monkeypatch: pytest.MonkeyPatch) -> TraceOptions:
    seen: list[TraceOptions] = []
    monkeypatch.setattr(cli_trace, "trace_main", seen.append)
    with pytest.raises(SystemExit) as exit_:
        _app_with_trace()(["trace", *args], prog_name="jitscope")
    assert exit_.value.code in (0, None)
    assert len(seen) == 1
    return seen[0]


@pytest.mark.parametrize("args", AGREE, ids=" ".join)
def test_the_fast_parser_and_the_typer_command_agree(args, monkeypatch):
    assert parse_trace_args(args) == _typer_options(args, monkeypatch)


def test_every_option_typer_declares_is_parsed_alike():
    """A new option in cli/trace.py must be added to the fast parser's table (or typer's defaults would be
    silently skipped for it)."""
    command = typer.main.get_command(_app_with_trace()).commands["trace"]  # type: ignore[attr-defined]
    declared: dict[str, str] = {}
    for param in command.params:
        if param.param_type_name != "option" or param.name == "help":
            continue
        for spelling in (*param.opts, *param.secondary_opts):
            declared[spelling] = param.name
    fast = {spelling: field for spelling, (field, _) in {**_OPTIONS.valued, **_OPTIONS.flags}.items()}
    assert fast == declared


def _app_with_trace() -> typer.Typer:
    app = typer.Typer()
    cli_trace.register(app)
    app.command("other")(lambda: None)  # two commands, so "trace" is a subcommand as in jitscope
    return app


@pytest.mark.parametrize("args", [
    [], ["--help"], ["-h"], ["m.py:f", "--help"], ["m.py:f", "--stagse", "jaxpr"], ["m.py:f", "--depth", "-1"],
    ["m.py:f", "--depth", "deep"], ["m.py:f", "--locations", "all"], ["m.py:f", "--format", "xml"],
    ["m.py:f", "--devices", "0"], ["m.py:f", "--shapes"], ["-sf32[8]", "m.py:f"], ["--x64"],
])
def test_anything_unusual_is_left_to_typer(args):
    assert parse_trace_args(args) is None


def test_trace_starts_without_typer(cli, tmp_path):
    """The usual command line never imports typer (nor click): ~20 ms of a small trace's start-up."""
    probe = tmp_path / "probe.py"
    probe.write_text("import sys\n\ndef f(x):\n    return x + 1\n\nJITSCOPE_EXAMPLES = {'f': 'f32[3]'}\n\n"
                     "import atexit\natexit.register(lambda: print('typer loaded:', 'typer' in sys.modules, "
                     "file=sys.stderr))\n")
    result = cli("trace", f"{probe}:f", "--stages", "jaxpr")
    assert result.returncode == 0, result.stderr
    assert "typer loaded: False" in result.stderr
    assert "{ lambda ; a:f32[3]. let" in result.stdout


def test_an_unusual_line_still_gets_typers_error(cli):
    result = cli("trace", "examples/mlp.py:train_step", "--depth", "deep")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "error: invalid value for '--depth': 'deep' is not a valid int (jitscope trace -h lists the options)"]
