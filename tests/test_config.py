"""``[tool.jitscope]`` from pyproject.toml: discovery upward, raw sections, the parsed lint table."""

from __future__ import annotations

from pathlib import Path

import pytest

from jitscope.config import LintConfig, load_config, parse_lint_config
from jitscope.errors import ConfigError


def _project(tmp_path: Path, text: str) -> Path:
    (tmp_path / "pyproject.toml").write_text(text)
    sub = tmp_path / "src" / "pkg"
    sub.mkdir(parents=True)
    return sub


def test_nearest_pyproject_upward_with_all_sections(tmp_path: Path) -> None:
    start = _project(
        tmp_path,
        """
[tool.jitscope]
color = false

[tool.jitscope.lint]
select = ["JS1", "traced-control-flow"]
ignore = "JS105"
exclude = ["build/"]
extend-exclude = ["gen/*"]
fail-on = "error"

[tool.jitscope.lint.per-file-ignores]
"tests/*" = ["JS101", "JS102"]

[tool.jitscope.trace]
x64 = true

[tool.jitscope.bench]
rounds = 5
""",
    )
    cfg = load_config(start)
    assert cfg.path == tmp_path / "pyproject.toml"
    assert cfg.root == tmp_path
    assert cfg.lint == LintConfig(
        select=("JS1", "traced-control-flow"),
        ignore=("JS105",),
        per_file_ignores=(("tests/*", ("JS101", "JS102")),),
        exclude=("build/", "gen/*"),
        fail_on="error",
    )
    assert cfg.section("trace") == {"x64": True}
    assert cfg.section("bench")["rounds"] == 5
    assert cfg.section("missing") == {}
    assert cfg.raw["color"] is False


def test_pyproject_without_our_table_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.jitscope.lint]\nignore = ['JS101']\n")
    inner = tmp_path / "inner"
    inner.mkdir()
    (inner / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert load_config(inner).lint.ignore == ("JS101",)


def test_no_config_gives_defaults(tmp_path: Path) -> None:
    cfg = load_config(tmp_path)
    assert cfg.path is None and cfg.root == tmp_path.resolve()
    assert cfg.lint == LintConfig() and cfg.lint.fail_on == "warning"


def test_explicit_config_file(tmp_path: Path) -> None:
    other = tmp_path / "other.toml"
    other.write_text("[tool.jitscope.lint]\nfail-on = 'info'\n")
    assert load_config(tmp_path, other).lint.fail_on == "info"
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path, tmp_path / "missing.toml")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[tool.jitscope.lint\n", "invalid TOML"),
        ("[tool.jitscope.lint]\nselec = ['JS1']\n", "unknown key 'selec'.*did you mean 'select'"),
        ("[tool.jitscope.lint]\nselect = ['JS9']\n", r"unknown rule 'JS9' in \[tool.jitscope.lint\]"),
        ("[tool.jitscope.lint]\nignore = ['JS1O1']\n", "unknown rule 'JS1O1'.*did you mean JS101"),
        ("[tool.jitscope.lint]\nfail-on = 'fatal'\n", r"\[tool.jitscope.lint\] 'fail-on' must be one of"),
        ("[tool.jitscope.lint]\nexclude = 3\n", r"\[tool.jitscope.lint\] 'exclude' must be a list of strings"),
        ("[tool.jitscope.lint]\nper-file-ignores = ['x']\n", "per-file-ignores"),
        ("[tool.jitscope]\nlint = 3\n", r"\[tool.jitscope.lint\] must be a table"),
    ],
)
def test_malformed_config_is_a_config_error(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "pyproject.toml").write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_config(tmp_path)


def test_overrides_replace_select_and_extend_exclude() -> None:
    base = parse_lint_config({"select": ["JS1"], "exclude": ["a"], "fail_on": "error"})
    merged = base.with_overrides(select=("JS2",), exclude=("b",))
    assert merged.select == ("JS2",) and merged.exclude == ("a", "b") and merged.fail_on == "error"
    assert base.with_overrides(fail_on="info").fail_on == "info"


def test_config_error_line_names_the_file_and_the_table(tmp_path: Path) -> None:
    from tests.conftest import run_cli

    (tmp_path / "pyproject.toml").write_text("[tool.jitscope.lint]\nfoo = 1\n")
    (tmp_path / "a.py").write_text("x = 1\n")
    result = run_cli("lint", "a.py", cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == (
        f"error: {tmp_path.resolve() / 'pyproject.toml'}: unknown key 'foo' in [tool.jitscope.lint] "
        "(known keys: select, ignore, per-file-ignores, exclude, extend-exclude, fail-on, trace)\n"
    )
