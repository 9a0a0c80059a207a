"""`jitscope lint` and `jitscope rule` end to end, in a subprocess, as a user runs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from jitscope.linter.registry import RULES
from tests.conftest import ROOT, run_cli

TARGETS = ROOT / "tests" / "targets"
BUGGY = TARGETS / "lint_buggy"
CLEAN = TARGETS / "lint_clean"


def test_clean_project_exits_0() -> None:
    result = run_cli("lint", cwd=CLEAN)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().startswith("All checks passed: 2 files")
    assert result.stderr == ""


def test_findings_exit_1_with_code_frames() -> None:
    result = run_cli("lint", "--statistics", cwd=BUGGY)
    assert result.returncode == 1
    assert "pkg/model.py:17:16: JS106 [error]" in result.stdout
    assert " > 17 │     return x * time.time()  # JS106" in result.stdout
    assert "Found 5 findings (2 errors, 3 warnings) in 4 files" in result.stdout
    assert result.stderr == ""


def test_fail_on_threshold() -> None:
    warnings_only = run_cli("lint", "--select", "JS101,JS304", "--fail-on", "error", cwd=BUGGY)
    assert warnings_only.returncode == 0
    assert "JS304" in warnings_only.stdout
    assert run_cli("lint", "--select", "JS101", "--fail-on", "warning", cwd=BUGGY).returncode == 1


def test_json_sarif_github_on_stdout_only() -> None:
    as_json = run_cli("lint", "-f", "json", cwd=BUGGY)
    assert as_json.returncode == 1 and as_json.stderr == ""
    data = json.loads(as_json.stdout)
    assert data["summary"]["total"] == 5 and data["schema_version"]
    sarif = json.loads(run_cli("lint", "--format", "sarif", cwd=BUGGY).stdout)
    assert sarif["version"] == "2.1.0" and len(sarif["runs"][0]["results"]) == 5
    github = run_cli("lint", "--format", "github", cwd=BUGGY).stdout.splitlines()
    assert len(github) == 5 and all(line.startswith(("::error ", "::warning ")) for line in github)


def test_paths_and_cli_overrides() -> None:
    result = run_cli("lint", "pkg/model.py", "--ignore", "JS106", "--select", "JS1", cwd=BUGGY)
    assert result.returncode == 1
    assert (
        "JS107 [error]" in result.stdout
        and "JS106 [" not in result.stdout
        and "helpers.py" not in result.stdout
    )


def test_usage_errors_exit_2_with_one_line() -> None:
    for args in (("lint", "--select", "JS9"), ("lint", "no/such/path.py"), ("rule", "JS1O1")):
        result = run_cli(*args, cwd=CLEAN)
        assert result.returncode == 2, args
        assert result.stdout == ""
        assert len(result.stderr.strip().splitlines()) == 1
    assert "did you mean JS101" in run_cli("rule", "JS1O1").stderr


def test_malformed_config_exits_2(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.jitscope.lint]\nfail-on = 'sometimes'\n")
    (tmp_path / "a.py").write_text("x = 1\n")
    result = run_cli("lint", cwd=tmp_path)
    assert result.returncode == 2 and "fail-on" in result.stderr


def test_rule_list_and_docs() -> None:
    listing = run_cli("rule")
    assert listing.returncode == 0
    for code in ("JS000", "JS101", "JS204", "JS305", "JS306"):
        assert code in listing.stdout
    docs = run_cli("rule", "print-in-traced-code")
    assert docs.returncode == 0 and docs.stdout.startswith("JS101 print-in-traced-code")
    assert "## Use instead" in docs.stdout
    records = json.loads(run_cli("rule", "--format", "json").stdout)
    assert len(records) == len(RULES) and {"code", "name", "severity", "summary", "docs"} <= set(records[0])


def test_static_lint_and_help_never_import_jax() -> None:
    script = (
        "import sys\n"
        "from jitscope.cli.app import app\n"
        "for args in (['--help'], ['lint', '--help'], ['rule', '--help'], ['rule', 'JS101'],\n"
        "             ['lint', '-j', '2', '-f', 'json', sys.argv[1]]):\n"
        "    try:\n"
        "        app(args=args, prog_name='jitscope')\n"
        "    except SystemExit:\n"
        "        pass\n"
        "assert 'jax' not in sys.modules, 'jax was imported'\n"
        "tracer = [m for m in sys.modules if m.startswith(('jitscope.tracing', 'jitscope.load', 'jitscope.api.commands.lint_trace'))]\n"
        "assert not tracer, f'static lint imported the tracer: {tracer}'\n"
        "assert not any(m.startswith('tests.targets') or m == 'pkg' for m in sys.modules)\n"
        "print('ok', file=sys.stderr)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, str(BUGGY)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip().endswith("ok")


def test_static_only_never_imports_the_config_trace_targets(tmp_path: Path) -> None:
    cli = run_cli
    # What the pre-commit hook runs: a `trace = [...]` in the config must not import user code.
    (tmp_path / "pyproject.toml").write_text('[tool.jitscope.lint]\ntrace = ["m.py:f"]\n')
    (tmp_path / "m.py").write_text(
        "import pathlib\npathlib.Path('imported.marker').write_text('yes')\nimport jax\n\n\n@jax.jit\n"
        "def f(x):\n    print('tracing')\n    return x\n\n\nJITSCOPE_EXAMPLES = {'f': 'f32[3]'}\n"
    )
    traced = cli("lint", "m.py", "--format", "json", cwd=tmp_path)
    assert (tmp_path / "imported.marker").exists(), traced.stderr  # the config's trace = [...] ran
    (tmp_path / "imported.marker").unlink()
    static = cli("lint", "m.py", "--format", "json", "--static-only", cwd=tmp_path)
    assert not (tmp_path / "imported.marker").exists()
    findings = json.loads(static.stdout)["findings"]
    assert {f["source"] for f in findings} == {"static"} and [f["code"] for f in findings] == ["JS101"]
    both = cli("lint", "m.py", "--static-only", "--trace", "m.py:f", cwd=tmp_path)
    assert both.returncode == 2 and both.stderr.strip().count("\n") == 0
    assert "--static-only and --trace" in both.stderr


def test_pre_commit_hook_runs_the_static_linter_only() -> None:
    # In the entry, not in args: a user's `args: [--fix]` replaces the hook's args, never its entry.
    hooks = (ROOT / ".pre-commit-hooks.yaml").read_text()
    assert "entry: jitscope lint --static-only\n" in hooks
