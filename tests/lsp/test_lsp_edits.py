"""The server's pure parts, without pygls: buffer linting under the project's configuration, the
suppression edit, and columns in the client's units."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from jitscope.linter.engine import lint_source
from jitscope.lsp.buffers import fix_buffer, lint_buffer
from jitscope.lsp.edits import (
    LineEdit,
    apply,
    from_client,
    newline_of,
    split_lines,
    suppression_edit,
    to_client,
)
from jitscope.model.lint import Finding


def _finding(source: str, code: str) -> Finding:
    [found] = [f for f in lint_source(source, "m.py") if f.code == code]
    return found


def _suppressed(source: str, edit: LineEdit) -> str:
    """``source`` with the edit made; the edit only added a comment (the syntax tree is the same)."""
    edited = "\n".join(apply(edit, split_lines(source)))
    assert ast.dump(ast.parse(edited)) == ast.dump(ast.parse(source))
    return edited


# -- columns ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("encoding", "units"), [("utf-16", [0, 1, 2, 4, 5]), ("utf-8", [0, 1, 3, 7, 8]),
                                                  ("utf-32", [0, 1, 2, 3, 4])])
def test_columns_count_the_clients_units(encoding: str, units: list[int]) -> None:
    line = "aé🙂b"  # 1, 2 (UTF-8), and 4 UTF-8 bytes or 2 UTF-16 units for the emoji
    assert [to_client(line, column, encoding) for column in range(5)] == units
    assert [from_client(line, unit, encoding) for unit in units] == list(range(5))
    assert from_client(line, 99, encoding) == 4  # past the end: the end


def test_lines_are_split_as_lsp_numbers_them() -> None:
    assert split_lines("a\r\nb\rc\nd\x0ce") == ["a", "b", "c", "d\x0ce"]
    assert [newline_of(t) for t in ("a\r\nb\n", "a\nb\r\n", "a\rb", "a")] == ["\r\n", "\n", "\r", "\n"]


# -- the suppression edit --------------------------------------------------------------------------

JITTED = "import jax\n@jax.jit\ndef f(x):\n{body}    return x\n"


def test_suppression_comment_goes_at_the_end_of_the_line_and_suppresses() -> None:
    source = JITTED.format(body="    print(x)   \n")
    edit = suppression_edit(_finding(source, "JS101"), source)
    assert edit == LineEdit(3, 12, 15, "  # jitscope: ignore[JS101]")  # the trailing blanks replaced
    assert "JS101" not in {f.code for f in lint_source(_suppressed(source, edit), "m.py")}


def test_an_existing_suppression_list_gets_the_code_added() -> None:
    source = JITTED.format(body="    if x > 0: print(x)  # jitscope: ignore[JS201]\n")
    edit = suppression_edit(_finding(source, "JS101"), source)
    assert edit is not None
    assert split_lines(_suppressed(source, edit))[3] == "    if x > 0: print(x)  # jitscope: ignore[JS201, JS101]"
    assert lint_source(_suppressed(source, edit), "m.py") == []


def test_other_comments_stay() -> None:
    source = JITTED.format(body="    print(x)  # noqa: T201\n")
    edit = suppression_edit(_finding(source, "JS101"), source)
    assert edit is not None
    assert split_lines(_suppressed(source, edit))[3] == "    print(x)  # noqa: T201  # jitscope: ignore[JS101]"


def test_a_first_line_that_cannot_take_a_comment_leaves_it_to_the_last() -> None:
    inside_string = JITTED.format(body='    print("""a\n    b""", x)\n')
    edit = suppression_edit(_finding(inside_string, "JS101"), inside_string)
    assert edit is not None and edit.line == 4  # not line 3, where it would be part of the string
    assert lint_source(_suppressed(inside_string, edit), "m.py") == []

    continued = JITTED.format(body="    print(x, \\\n          x)\n")
    edit = suppression_edit(_finding(continued, "JS101"), continued)
    assert edit is not None and edit.line == 4
    assert lint_source(_suppressed(continued, edit), "m.py") == []


def test_crlf_lines_keep_their_ends() -> None:
    source = JITTED.format(body="    print(x)\n").replace("\n", "\r\n")
    assert suppression_edit(_finding(source, "JS101"), source) == LineEdit(3, 12, 12, "  # jitscope: ignore[JS101]")


def test_implicitly_joined_strings_and_f_strings_are_strings_too() -> None:
    source = JITTED.format(body='    print(f"""{x}\n    """, "a"\n          "b")\n')
    edit = suppression_edit(_finding(source, "JS101"), source)
    assert edit is not None and edit.line == 5
    _suppressed(source, edit)


def test_no_edit_where_no_line_can_take_a_comment() -> None:
    # The call's first line ends inside a string, its last line with a backslash.
    source = JITTED.format(body='    y = print("""a\n    """) \\\n        or x\n')
    assert suppression_edit(_finding(source, "JS101"), source) is None
    # A file that does not parse has only its JS000, which no comment suppresses.
    assert suppression_edit(Finding("JS000", "unparsable-file", "syntax error", "error", "m.py", 1, 1, 1, 2),
                            "def f(:\n") is None


# -- linting a buffer ------------------------------------------------------------------------------


def _project(tmp_path: Path, lint_table: str) -> Path:
    (tmp_path / "pyproject.toml").write_text(f"[tool.jitscope.lint]\n{lint_table}\n")
    return tmp_path


HAZARDS = "import jax\n@jax.jit\ndef f(x):\n    if x > 0:\n        print(x)\n    return x\n"


def test_the_buffers_text_is_linted_not_the_file(tmp_path: Path) -> None:
    path = _project(tmp_path, "") / "m.py"
    path.write_text("import jax\n")
    assert [f.code for f in lint_buffer(path, HAZARDS).findings] == ["JS201", "JS101"]
    assert lint_buffer(tmp_path / "new.py", HAZARDS).findings  # not saved yet: linted all the same
    assert lint_buffer(None, HAZARDS, start=tmp_path).findings  # untitled


def test_the_configuration_applies_as_for_jitscope_lint(tmp_path: Path) -> None:
    _project(tmp_path, 'select = ["JS2"]\nexclude = ["gen/"]\n[tool.jitscope.lint.per-file-ignores]\n'
                       '"tests/*" = ["JS201"]\n')
    (tmp_path / "gen").mkdir()
    (tmp_path / "tests").mkdir()
    assert [f.code for f in lint_buffer(tmp_path / "m.py", HAZARDS).findings] == ["JS201"]
    assert lint_buffer(tmp_path / "tests" / "t.py", HAZARDS).findings == ()
    excluded = lint_buffer(tmp_path / "gen" / "g.py", HAZARDS)
    assert excluded.findings == () and excluded.skipped and "excluded by" in excluded.skipped


def test_installed_packages_are_not_linted(tmp_path: Path) -> None:
    site = tmp_path / "lib" / "python3.11" / "site-packages" / "pkg"
    assert lint_buffer(site / "mod.py", HAZARDS).skipped
    assert lint_buffer(tmp_path / ".venv" / "x.py", HAZARDS).skipped


def test_a_broken_configuration_is_one_line_and_nothing_is_linted(tmp_path: Path) -> None:
    _project(tmp_path, 'ignore = ["JS999"]')
    result = lint_buffer(tmp_path / "m.py", HAZARDS)
    assert result.findings == ()
    assert result.error is not None and "unknown rule 'JS999'" in result.error and "\n" not in result.error


def test_a_coding_cookie_is_honoured(tmp_path: Path) -> None:
    source = "# -*- coding: latin-1 -*-\n" + HAZARDS.replace("print(x)", "print('é', x)")
    [first, second] = lint_buffer(tmp_path / "m.py", source).findings
    assert (first.code, second.code) == ("JS201", "JS101")
    assert second.end_column == len("        print('é', x)") + 1


def test_relative_imports_resolve_as_in_the_package(tmp_path: Path) -> None:
    """The module is named from the __init__.py files above it, as jitscope lint names it."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "m.py").write_text(HAZARDS)
    text = textwrap.dedent("""\
        import jax
        from . import helpers

        @jax.jit
        def f(x):
            print(x)
            return x
    """)
    assert [f.code for f in lint_buffer(package / "m.py", text).findings] == ["JS101"]


def test_fix_buffer_applies_every_safe_fix_round_by_round(tmp_path: Path) -> None:
    """Two updates of one array overlap (both rewrite `y`): the second is applied in the next round."""
    _project(tmp_path, "")
    text = textwrap.dedent("""\
        import jax
        import jax.numpy as jnp


        @jax.jit
        def f(x):
            print("x =", x)
            y = jnp.zeros(3)
            y[0] = 1.0
            y[1] += 2.0
            return x + y
    """)
    findings = lint_buffer(tmp_path / "m.py", text).findings
    assert sorted(f.code for f in findings) == ["JS101", "JS204", "JS204"]
    fixed, applied = fix_buffer(tmp_path / "m.py", text, findings)
    assert applied == 3
    assert "    y = y.at[0].set(1.0)\n    y = y.at[1].add(2.0)\n" in fixed
    assert lint_buffer(tmp_path / "m.py", fixed).findings == ()
    assert fix_buffer(tmp_path / "m.py", fixed, ()) == (fixed, 0)
