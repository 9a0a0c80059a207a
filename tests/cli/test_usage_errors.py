"""typer's usage errors (a value out of min/max, a bad int, a bad choice, an unknown option or command) are one
``error:`` line and exit 2, like every other jitscope error (issue 30); a command given nothing shows its help."""

from __future__ import annotations

import pytest

from jitscope.cli.app import main


@pytest.mark.parametrize(("args", "line"), [
    (["trace", "m.py:f", "--devices", "0"],
     "error: invalid value for '--devices': 0 is not in the range x>=1 (jitscope trace -h lists the options)"),
    (["bench", "m.py:f", "--min-rounds", "abc"],
     "error: invalid value for '--min-rounds': 'abc' is not a valid int (jitscope bench -h lists the options)"),
    (["run", "--max-compiles", "0", "prog.py"],
     "error: invalid value for '--max-compiles': 0 is not in the range x>=1 (jitscope run -h lists the options)"),
    # checked by the command with the Python API's check (api/checks.py), one line all the same
    (["diff", "m.py:f", "--bench-rounds", "1"], "error: --bench-rounds 1 is out of range (give 2 to 100)"),
    (["trace", "m.py:f", "--locations", "bogus"], "error: --locations 'bogus' is not one of full, user, none"),
    (["trace", "m.py:f", "--ot", "x"], "error: no such option: --ot (Possible options: --format, --from, --out)"),
    (["nosuch"], "error: no such command 'nosuch' (jitscope -h lists the options)"),
], ids=["min", "int", "run-fast-parser-gives-up", "min-2", "choice", "unknown-option", "unknown-command"])
def test_a_usage_error_is_one_line_and_exit_2(args, line, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    out, err = capsys.readouterr()
    assert exit_info.value.code == 2
    assert (out, err.splitlines()) == ("", [line])


def test_a_command_given_nothing_still_shows_its_help(capsys):
    with pytest.raises(SystemExit):
        main(["trace"])
    out, err = capsys.readouterr()
    assert (out + err).startswith("Usage: jitscope trace") and "error:" not in out + err
