"""The engine on fixture projects: file discovery, excludes, per-file ignores, cross-module helpers,
the process pool, and selection."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

from jitscope.config import LintConfig, load_config
from jitscope.errors import UsageError
from jitscope.linter import lint_paths
from jitscope.linter.files import collect_files, matches

TARGETS = Path(__file__).resolve().parents[1] / "targets"
BUGGY = TARGETS / "lint_buggy"
CLEAN = TARGETS / "lint_clean"


def _found(report) -> set[tuple[str, int, str]]:  # type: ignore[no-untyped-def]
    return {(Path(f.file).as_posix().split("lint_buggy/")[-1], f.line, f.code) for f in report.findings}


def test_clean_project_is_clean() -> None:
    report = lint_paths([CLEAN], LintConfig(), root=CLEAN, jobs=1)
    assert report.findings == ()
    assert report.files_checked == 2 and report.lines_checked > 50
    assert not report.failed


def test_buggy_project_with_its_config(tmp_path: Path) -> None:
    project = tmp_path / "lint_buggy"
    shutil.copytree(BUGGY, project)
    (project / "broken.py").write_text("def broken(:\n    pass\n")
    cfg = load_config(project)
    report = lint_paths([project], cfg.lint, root=cfg.root, jobs=1)
    assert _found(report) == {
        ("broken.py", 1, "JS000"),
        ("pkg/helpers.py", 7, "JS201"),  # reached only through pkg.model.step (another module)
        ("pkg/helpers.py", 13, "JS101"),
        ("pkg/model.py", 16, "JS107"),
        ("pkg/model.py", 17, "JS106"),
        ("pkg/model.py", 23, "JS304"),
    }
    # pkg/legacy is excluded, scripts/* ignores JS101, the JS203 line carries an ignore comment
    assert report.fail_on == "error" and report.failed


def test_pool_gives_the_same_findings_as_one_process(tmp_path: Path) -> None:
    project = tmp_path / "many"
    for i in range(30):  # enough files for the process pool to start
        pkg = project / f"p{i}"
        shutil.copytree(BUGGY / "pkg", pkg / "pkg")
    serial = lint_paths([project], LintConfig(), root=project, jobs=1)
    pooled = lint_paths([project], LintConfig(), root=project, jobs=2)
    assert serial.findings == pooled.findings
    assert serial.files_checked == pooled.files_checked == 30 * 5
    assert sum(f.code == "JS201" for f in pooled.findings) == 30  # each copy resolves its own helpers


def test_select_ignore_and_prefixes() -> None:
    only = lint_paths(
        [BUGGY], LintConfig(select=("JS1",), ignore=("JS107",), exclude=("pkg/legacy",)), root=BUGGY, jobs=1
    )
    assert {f.code for f in only.findings} == {"JS101", "JS106"}
    by_name = lint_paths([BUGGY], LintConfig(select=("tracer-leak",)), root=BUGGY, jobs=1)
    assert {f.code for f in by_name.findings} == {"JS107"}
    with pytest.raises(UsageError, match="unknown rule 'JS9'"):
        lint_paths([BUGGY], LintConfig(select=("JS9",)), root=BUGGY, jobs=1)


def test_missing_path_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        lint_paths([tmp_path / "nope"], LintConfig(), root=tmp_path)


def test_default_excluded_dirs_only_below_the_given_path(tmp_path: Path) -> None:
    (tmp_path / "venv" / "lib").mkdir(parents=True)
    (tmp_path / "venv" / "lib" / "x.py").write_text("x = 1\n")
    (tmp_path / "a.py").write_text("x = 1\n")
    assert [r.display for r in collect_files([tmp_path], tmp_path).files] == [str(tmp_path / "a.py")]
    inside = collect_files([tmp_path / "venv"], tmp_path).files  # given explicitly: linted
    assert len(inside) == 1


@pytest.mark.parametrize(
    ("rel", "pattern", "hit"),
    [
        ("pkg/legacy/old.py", "pkg/legacy/", True),
        ("pkg/legacy/old.py", "legacy", True),
        ("scripts/run.py", "scripts/*", True),
        ("pkg/model.py", "*.py", True),
        ("pkg/model.py", "tests", False),
        ("pkg/model.py", "pkg/m*.py", True),
    ],
)
def test_exclude_patterns(rel: str, pattern: str, hit: bool) -> None:
    assert matches(rel, pattern) is hit


def test_recall_on_a_buggy_training_script() -> None:
    """Every rule that can be checked statically fires on the line marked for it, and nowhere else."""
    target = TARGETS / "lint_recall" / "train.py"
    report = lint_paths([target], LintConfig(), root=target.parent, jobs=1)
    expected = set()
    for number, line in enumerate(target.read_text().splitlines(), start=1):
        if "# JS" in line:
            for code in line.split("#", 1)[1].replace(",", " ").split():
                if code.startswith("JS"):
                    expected.add((number, code))
    assert {(f.line, f.code) for f in report.findings} == expected


def test_installed_jax_source_lints_without_internal_errors() -> None:
    """The robustness bar from the issue: all of jax's own source, no crash, no internal error."""
    spec = importlib.util.find_spec("jax")
    assert spec is not None and spec.submodule_search_locations
    source = Path(next(iter(spec.submodule_search_locations)))
    report = lint_paths([source], LintConfig(), root=source, jobs=2)
    assert report.files_checked > 300
    internal = [f for f in report.findings if f.code == "JS000" and "internal error" in f.message]
    assert internal == []
