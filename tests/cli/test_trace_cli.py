from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import EXAMPLES, ROOT, run_cli


def test_help_does_not_import_jax():
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from jitscope.cli.app import app\n"
        "for args in (['--help'], ['trace', '--help']):\n"
        "    result = CliRunner().invoke(app, args)\n"
        "    assert result.exit_code == 0, result.output\n"
        "print('jax' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "False"


def test_trace_text_shows_every_stage():
    result = run_cli("trace", "tracing_peek.py:f", cwd=EXAMPLES)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for heading in ("what the function saw", "printed while tracing", "jaxpr", "StableHLO", "HLO (optimised)",
                    "cost analysis (XLA)", "memory analysis (XLA)"):
        assert heading in out
    assert "dot_general" in out and "stablehlo.dot_general" in out and "ENTRY" in out
    assert "\x1b[" not in out  # plain text when piped


def test_trace_jaxpr_only_json(tmp_path):
    result = run_cli("trace", "static_args.py:jitted_where", "--stages", "jaxpr", "--format", "json",
                     cwd=EXAMPLES)
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["kind"] == "jitscope.trace" and doc["schema_version"] == "1.6"
    assert len(doc["traces"]) == 4  # the module's call sequence, every call a full record
    first = doc["traces"][0]
    assert first["call"] == "f32[], threshold=0.0"
    assert first["stages"]["stablehlo"] is None and first["stages"]["compile_seconds"] is None
    assert first["jaxpr"]["eqns"]
    assert [(t["call_index"], t["cache_hit_of"]) for t in doc["traces"]] == [(1, None), (2, 1), (3, None), (4, 3)]
    assert doc["traces"][1]["jaxpr"] == first["jaxpr"]
    assert doc["environment"]["backend"] == _default_backend()


def _default_backend() -> str:
    import jax

    return jax.default_backend()


def test_trace_call_sequence_shows_cache_hits_as_one_line():
    result = run_cli("trace", "jit_sin.py:fsin", "-s", "f32[3]", "-s", "f32[4]", "-s", "f32[3]", "--stages", "jaxpr",
                     cwd=EXAMPLES)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert [line for line in lines if line.startswith("call ")] == [
        "call 1: fsin(f32[3])",
        "call 2: fsin(f32[4])",
        "call 3: cache hit (same key as call 1): fsin(f32[3])",
    ]
    assert result.stdout.count("what the function saw") == 2


def test_failed_call_is_not_a_cache_for_the_next():
    result = run_cli("trace", "static_args.py:conditional_double", "-s", "f32[], 0.0", "-s", "f32[], 0.0",
                     "--stages", "jaxpr", "--format", "json", cwd=EXAMPLES)
    assert result.returncode == 1
    assert [t["cache_hit_of"] for t in json.loads(result.stdout)["traces"]] == [None, None]


def test_trace_out_dir_writes_each_stage(tmp_path):
    result = run_cli("trace", "scan_rnn.py:rnn", "--out", str(tmp_path), "--format", "json", cwd=EXAMPLES)
    assert result.returncode == 0, result.stderr
    files = sorted(p.name for p in (tmp_path / "rnn").iterdir())
    assert files == ["call.txt", "cost.json", "hlo.txt", "jaxpr.txt", "memory.json", "stablehlo.mlir"]
    assert "scan[" in (tmp_path / "rnn" / "jaxpr.txt").read_text()
    assert json.loads((tmp_path / "report.json").read_text())["traces"][0]["target"] == "scan_rnn.py:rnn"


def test_trace_failure_is_explained_with_exit_1():
    result = run_cli("trace", "static_args.py:conditional_double", "--shapes", "f32[], 0.0", cwd=EXAMPLES)
    assert result.returncode == 1
    assert "tracing failed" in result.stdout and "if x > threshold:" in result.stdout
    assert "Traceback (most recent call last)" not in result.stdout + result.stderr
    assert result.stderr == (
        "error: static_args.py:conditional_double(f32[], 0.0) failed while tracing: TracerBoolConversionError: "
        "Attempted boolean conversion of traced array with shape bool[]. (explained in the report on stdout)\n"
    )
    result = run_cli("trace", "static_args.py:conditional_double", "-s", "f32[], 0.0", "-s", "f32[3], 1",
                     "--stages", "jaxpr", "--format", "json", cwd=EXAMPLES)
    assert result.returncode == 1 and len(json.loads(result.stdout)["traces"]) == 2
    assert result.stderr.startswith("error: 2 of 2 calls failed while tracing (conditional_double(f32[], 0.0), "
                                    "conditional_double(f32[3], 1)); the first: TracerBoolConversionError")
    assert len(result.stderr.splitlines()) == 1


def test_bad_inputs_are_one_line_with_exit_2():
    cases = [
        (("trace", "nope.py:f"), "error: file not found: nope.py"),
        (("trace", "mlp.py:train_stp"), "did you mean 'train_step'"),
        (("trace", "mlp.py:predict", "--shapes", "f32[8,"), "bad --shapes at column 7"),
        (("trace", "mlp.py:predict", "--stages", "jaxpr,asm"), "unknown stage(s) asm"),
        (("trace", "no_such_module:f"), "no module named 'no_such_module'"),
        (("trace", "tracing_peek.py:jax"), "is a module, not a function"),
        (("trace", "mlp.py:predict", "--shapes", "f32[3]"), "missing a required argument: 'x'"),
        (("trace", "mlp.py:predict", "--shapes", "f32[3], f32[3], f32[3]"), "too many positional arguments"),
        (("bench", "mlp.py:predict", "--shapes", "f32[3]"), "arguments do not fit mlp.py:predict(params, x)"),
        (("lint", "mlp.py", "--trace", "mlp.py:predict", "-s", "f32[3]"), "missing a required argument"),
    ]
    for args, expected in cases:
        result = run_cli(*args, cwd=EXAMPLES)
        assert result.returncode == 2, (args, result.stderr)
        assert expected in result.stderr, (args, result.stderr)
        assert "Traceback" not in result.stderr
        assert result.stdout == ""


def test_missing_arguments_says_how_to_pass_them(tmp_path):
    (tmp_path / "m.py").write_text("def f(x, y):\n    return x + y\n")
    result = run_cli("trace", "m.py:f", cwd=tmp_path)
    assert result.returncode == 2
    assert "no arguments for m.py:f: it takes (x, y)" in result.stderr and "--shapes" in result.stderr


def test_python_m_and_version():
    result = run_cli("--version")
    assert result.returncode == 0 and result.stdout.startswith("jitscope ")


def test_unwritable_output_path_is_one_line_with_exit_2(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    result = run_cli("trace", "jit_sin.py:fsin", "--stages", "jaxpr", "--out", str(blocker / "sub"), cwd=EXAMPLES)
    assert result.returncode == 2
    assert result.stderr.startswith("error: ") and "check the path and its permissions" in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
    result = run_cli("trace", "jit_sin.py:fsin", "--stages", "jaxpr", "--depth", "-1", cwd=EXAMPLES)
    assert result.returncode == 2
