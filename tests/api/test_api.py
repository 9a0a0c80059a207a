"""The Python API: ``jitscope.trace/bench/profile/lint/watch`` on real functions and arguments.

Each returns the record the CLI renders: the tests check the API against the CLI's own JSON for the
same call, and the renderings (JSON, text, Markdown, HTML for notebooks, rich) and ``save``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, ROOT, run_cli

jax = pytest.importorskip("jax")
jnp = jax.numpy

import jitscope
from jitscope.errors import JitscopeError, UsageError

sys.path.insert(0, str(EXAMPLES))
import mlp

sys.path.remove(str(EXAMPLES))


def _params() -> dict:
    return mlp.init_params(jax.random.key(0))


@jax.jit
def _small(x, w):
    return jnp.tanh(x @ w).sum()


def _strip_times(value):
    """The record without what differs from run to run (timings, paths of temporary files)."""
    if isinstance(value, dict):
        return {k: _strip_times(v) for k, v in value.items()
                if not (k.endswith(("seconds", "_s")) or k in ("environment", "how", "source_roots"))}
    if isinstance(value, list):
        return [_strip_times(v) for v in value]
    return value


def test_import_is_light_and_the_api_is_listed():
    code = ("import sys, jitscope; assert 'jax' not in sys.modules and 'rich' not in sys.modules; "
            "f = jitscope.trace; assert 'jax' not in sys.modules; print(sorted(jitscope.__all__))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    names = set(eval(out))
    assert {"trace", "bench", "profile", "lint", "watch", "TraceResult", "BenchResult"} <= names
    assert all(callable(getattr(jitscope, n)) for n in ("trace", "bench", "profile", "lint", "watch"))
    assert (ROOT / "jitscope" / "py.typed").is_file()


def test_the_cli_start_does_not_load_the_api():
    code = ("import sys, runpy; sys.argv = ['jitscope', '--help']\n"
            "try:\n    runpy.run_module('jitscope', run_name='__main__')\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith(('jitscope.api.', 'jax'))), file=sys.stderr)")
    err = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stderr
    assert err.strip().splitlines()[-1] == "['jitscope.api.checks']"


def test_trace_returns_the_record_the_cli_renders():
    params, x = _params(), jnp.ones((128, 784))
    result = jitscope.trace(mlp.predict, params, x)
    cli = run_cli("trace", "mlp.py:predict", "--format", "json", cwd=EXAMPLES)
    assert cli.returncode == 0, cli.stderr
    api_record, cli_record = json.loads(result.to_json()), json.loads(cli.stdout)
    assert api_record["kind"] == cli_record["kind"] == "jitscope.trace"
    assert api_record["schema_version"] == cli_record["schema_version"]
    (api_call,), (cli_call,) = api_record["traces"], cli_record["traces"]
    for key in ("call", "seen", "jaxpr", "summary", "arguments"):
        assert _strip_times(api_call[key]) == _strip_times(cli_call[key]), key
    assert api_call["stages"]["stablehlo"] == cli_call["stages"]["stablehlo"]
    assert api_call["target"] == "mlp.py:predict"


def test_trace_fields_a_script_needs():
    result = jitscope.trace(_small, jnp.ones((8, 16)), jnp.ones((16, 4)))
    (call,) = result.calls
    assert not call.failed and call.diagnostic is None
    assert "dot_general" in call.jaxpr_text and "tanh" in call.jaxpr_text and "test_api.py:" in call.jaxpr_text
    assert "stablehlo.dot_general" in call.stablehlo_text and "HloModule" in call.hlo_text
    assert call.equations == 3
    assert "f32[8,16], f32[16,4]" in repr(result)
    only_jaxpr = jitscope.trace(_small, jnp.ones((2, 16)), jnp.ones((16, 4)), stages="jaxpr")
    assert only_jaxpr.calls[0].stablehlo_text is None and only_jaxpr.calls[0].hlo_text is None


def test_trace_allocates_nothing_for_abstract_arguments_and_takes_shapes():
    spec = jax.ShapeDtypeStruct((4096, 4096), jnp.float32)  # 64 MiB if anything were allocated
    result = jitscope.trace(_small, spec, jax.ShapeDtypeStruct((4096, 2), jnp.float32))
    assert result.calls[0].call == "f32[4096,4096], f32[4096,2]"
    by_text = jitscope.trace(_small, shapes="f32[3,5], f32[5,2]")
    assert by_text.calls[0].call == "f32[3,5], f32[5,2]"
    two = jitscope.trace(_small, shapes=["f32[3,5], f32[5,2]", "f32[4,5], f32[5,2]"])
    assert [c.call for c in two.calls] == ["f32[3,5], f32[5,2]", "f32[4,5], f32[5,2]"]


def test_trace_of_a_bare_function_keeps_python_values_static_unless_told():
    def scaled(x, n):
        for _ in range(n):  # a Python loop on n: n must be static
            x = x * 2
        return x

    result = jitscope.trace(scaled, jnp.ones(3), 3)
    assert not result.calls[0].failed
    assert result.calls[0].jaxpr_text.count(" mul ") == 3
    traced = jitscope.trace(scaled, jnp.ones(3), 3, static_argnames=())  # jax.jit's rule: n is traced
    assert traced.calls[0].failed and traced.calls[0].diagnostic.kind != ""


def test_a_failure_in_the_users_code_is_in_the_result_not_raised():
    def broken(x):
        if x.sum() > 0:  # a traced value in a Python if
            return x
        return -x

    result = jitscope.trace(jax.jit(broken), jnp.ones(3))
    assert result.calls[0].failed
    assert "test_api.py" in result.calls[0].diagnostic.traceback or result.calls[0].diagnostic.location
    assert "failed" in repr(result)


def test_bad_options_are_one_clear_error():
    with pytest.raises(UsageError, match=r"stages: unknown stage\(s\) hlo2"):
        jitscope.trace(_small, jnp.ones((1, 2)), jnp.ones((2, 1)), stages=["hlo2"])
    with pytest.raises(UsageError, match="budget"):
        jitscope.bench(_small, jnp.ones((1, 2)), jnp.ones((2, 1)), budget=float("inf"))
    with pytest.raises(UsageError, match="not both"):
        jitscope.trace(_small, jnp.ones((1, 2)), shapes="f32[1,2], f32[2,1]")
    with pytest.raises(UsageError, match="function to inspect"):
        jitscope.trace(3)  # type: ignore[arg-type]


def test_save_picks_the_format_from_the_suffix(tmp_path: Path):
    result = jitscope.trace(_small, jnp.ones((8, 16)), jnp.ones((16, 4)))
    assert json.loads(result.save(tmp_path / "r.json").read_text())["kind"] == "jitscope.trace"
    assert result.save(tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")
    assert result.save(tmp_path / "r.md").read_text().startswith("# jitscope trace: test_api.py:\\_small")
    assert "dot_general" in result.save(tmp_path / "r.txt").read_text()
    with pytest.raises(UsageError, match="cannot tell the format"):
        result.save(tmp_path / "r.out")
    with pytest.raises(UsageError, match="sarif"):
        result.save(tmp_path / "r.sarif")
    assert not (tmp_path / "r.out").exists()
    with pytest.raises(JitscopeError, match="a path ending in / names a folder"):  # issue 30: not written as r.json
        result.save(f"{tmp_path}/r2.json/")
    assert not (tmp_path / "r2.json").exists()


def test_a_large_report_is_shown_in_a_notebook_without_its_ir_and_saved_whole(tmp_path: Path, monkeypatch):
    """A notebook keeps what a cell shows: a model's report was a 4.3 MB frame in the .ipynb. Past the limit
    the frame holds the report without its long listings, and links the whole report, saved beside it."""
    import jitscope.api.results as results

    result = jitscope.trace(_small, jnp.ones((8, 16)), jnp.ones((16, 4)))
    monkeypatch.chdir(tmp_path)  # the notebook's folder (paths in the report are shown from it)
    whole = result.render("html")
    monkeypatch.setattr(results, "INLINE_HTML_BYTES", len(whole) - 1)
    monkeypatch.setattr(results, "INLINE_LISTING_LINES", 3)
    shown = result._repr_html_()
    note, frame = shown.split("<iframe", 1)
    assert "are left out of the notebook; the whole report:" in note
    (saved,) = (tmp_path / "jitscope-reports").iterdir()
    assert saved.read_text() == whole and f'href="jitscope-reports/{saved.name}"' in note
    assert len(frame) < len(html_escaped(whole))
    assert "stablehlo.dot_general" not in frame and "listing of" in frame  # the IR: a note of its length
    assert "what the function saw" in frame  # the rest of the report stays

    (tmp_path / "jitscope-reports").chmod(0o500)  # a folder it cannot write: says how to save it instead
    monkeypatch.setattr(results, "_save_beside_notebook", lambda title, page: None)
    assert '<code>result.save("report.html")</code>' in result._repr_html_().split("<iframe", 1)[0]


def html_escaped(text: str) -> str:
    import html

    return html.escape(text, quote=True)


def test_notebook_and_terminal_renderings():
    result = jitscope.trace(_small, jnp.ones((8, 16)), jnp.ones((16, 4)))
    html = result._repr_html_()
    assert html.startswith('<iframe class="jitscope-report"') and "srcdoc=" in html
    assert "&lt;!DOCTYPE html&gt;" in html and "stablehlo.dot_general" in html  # the whole report, escaped
    assert "<script" not in html.split("srcdoc=", 1)[1]  # nothing of it runs in the notebook's page
    from rich.console import Console

    console = Console(record=True, width=100, color_system=None)
    console.print(result)
    assert "dot_general" in console.export_text()

    class Printer:
        def __init__(self) -> None:
            self.out = ""

        def text(self, s: str) -> None:
            self.out += s

    printer = Printer()
    result._repr_pretty_(printer, False)
    assert printer.out.startswith("test_api.py:_small") and "dot_general" in printer.out


def test_bench_times_real_arrays_and_matches_the_cli_schema(tmp_path: Path):
    x, w = jnp.ones((64, 64)), jnp.ones((64, 8))
    result = jitscope.bench(_small, x, w, budget=0.02, min_rounds=3, save=tmp_path / "base.json")
    assert 0 < result.cached.median_s < result.cold.total_s
    assert result.cold.compile_s is None or result.cold.compile_s > 0
    assert result.cached.rounds >= 3 and result.rows[0].call == "f32[64,64], f32[64,8]"
    saved = json.loads((tmp_path / "base.json").read_text())
    assert saved["kind"] == "jitscope.bench" and saved["rows"][0]["call"] == "f32[64,64], f32[64,8]"
    again = jitscope.bench(_small, x, w, budget=0.02, min_rounds=3, compare=tmp_path / "base.json")
    assert again.record.comparison is not None
    assert "first call (cold)" in again.render("text")


def test_bench_leaves_donated_arguments_usable():
    params = _params()
    x, labels = jnp.ones((128, 784)), jnp.zeros((128,), jnp.int32)
    result = jitscope.bench(mlp.train_step, params, x, labels, budget=0.02, min_rounds=3)
    assert result.record.rows[0].cached.fresh_inputs  # donated: a fresh copy for every call
    assert float(params["layer0"]["b"].sum()) == 0.0  # the caller's arrays were not donated away


def test_profile_lines_point_at_the_users_code():
    params, x = _params(), jnp.ones((128, 784))
    result = jitscope.profile(mlp.predict, params, x, calls=3, budget=0.02)
    assert result.lines, result.render("text")
    assert {Path(line.location.file).name for line in result.lines} == {"mlp.py"}
    assert result.lines[0].location.line == 28  # the matmuls
    assert result.to_dict()["kind"] == "jitscope.profile"


def test_lint_matches_the_cli(tmp_path: Path):
    result = jitscope.lint(EXAMPLES / "impure.py")
    cli = run_cli("lint", "examples/impure.py", "--format", "json")
    assert [(f.code, f.line) for f in result.findings] == [
        (f["code"], f["line"]) for f in json.loads(cli.stdout)["findings"]]
    assert result.failed and result.findings
    assert json.loads(result.save(tmp_path / "lint.sarif").read_text())["version"] == "2.1.0"
    only = jitscope.lint([EXAMPLES / "impure.py"], select=["JS101"])
    assert {f.code for f in only.findings} == {"JS101"}


def test_lint_fix_applies_the_safe_fixes_and_reports_what_remains(tmp_path: Path):
    source = ("import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\ndef f(x):\n    buf = jnp.zeros(4)\n"
              "    buf[1] = x[0]\n    print('x is', x)\n    return buf\n")
    path = tmp_path / "step.py"
    path.write_text(source)
    before = jitscope.lint(path, select=["JS101", "JS204"])
    assert sorted(f.code for f in before.findings) == ["JS101", "JS204"] and before.fixed == 0
    after = jitscope.lint(path, select=["JS101", "JS204"], fix=True)
    assert after.fixed == 2 and after.findings == ()
    fixed = path.read_text()
    assert "buf = buf.at[1].set(x[0])" in fixed and "jax.debug.print" in fixed


def test_watch_counts_the_blocks_compiles_with_causes():
    @jax.jit
    def step(x):
        return x * 2

    with jitscope.watch("loop") as w:
        for n in (4, 8, 8):
            step(jnp.ones(n))
        assert w.compiles == 2  # live, inside the block
    report = w.report
    assert report is not None and report.compiles == 2 and report.count("step") == 2
    (summary,) = [f for f in report.functions if f.function.endswith("step")]
    assert summary.compiles == 2 and any("shape" in cause for cause, _ in summary.causes)
    assert report.record.program == "loop" and report.record.outcome == "finished"
    assert "1 recompile" in report.render("text")


def test_watch_keeps_its_report_when_the_block_raises():
    @jax.jit
    def step(x):
        return x + 1

    with pytest.raises(ValueError, match="stop"), jitscope.watch() as w:
        step(jnp.ones(2))
        raise ValueError("stop")
    assert w.report is not None and w.report.compiles == 1 and w.report.record.outcome == "raised ValueError"


def test_watch_fresh_counts_what_was_already_compiled():
    @jax.jit
    def step(x):
        return x - 1

    step(jnp.ones(5))
    with jitscope.watch() as warm:
        step(jnp.ones(5))
    with jitscope.watch(fresh=True) as fresh:
        step(jnp.ones(5))
    assert warm.report is not None and fresh.report is not None
    assert (warm.report.compiles, fresh.report.compiles) == (0, 1)


@pytest.mark.models
def test_trace_and_bench_on_a_flax_nnx_model_and_optimizer():
    pytest.importorskip("flax.nnx")
    pytest.importorskip("optax")
    sys.path.insert(0, str(EXAMPLES))
    try:
        import gpt_nnx
    finally:
        sys.path.remove(str(EXAMPLES))
    import numpy as np
    from flax import nnx

    model = gpt_nnx.GPT(nnx.Rngs(0))
    optimizer = gpt_nnx.make_optimizer(model)
    batch = jax.random.randint(jax.random.key(1), (8, gpt_nnx.CONTEXT + 1), 0, gpt_nnx.VOCAB)
    before = [np.asarray(leaf) for leaf in jax.tree.leaves(nnx.state(model))]
    result = jitscope.trace(gpt_nnx.train_step, model, optimizer, batch)
    (call,) = result.calls
    assert not call.failed, call.diagnostic
    assert call.call.startswith("GPT(") and "Optimizer(" in call.call  # summarised, not the model's repr
    assert "gpt_nnx.py:" in call.jaxpr_text
    timing = jitscope.bench(gpt_nnx.train_step, model, optimizer, batch, budget=0.05, min_rounds=3)
    assert timing.cached.median_s > 0
    # nnx.jit writes the update into the model and optimizer instead of returning it: what is timed is the
    # whole step (backward pass and optimizer update), not the forward pass XLA would keep without them
    assert call.cost is not None and timing.rows[0].cost is not None
    if hasattr(nnx.Module, "__jax_flatten__") or jax.tree_util.tree_leaves(model):  # modules are pytrees here
        assert timing.rows[0].cost.flops == pytest.approx(call.cost.flops, rel=0.01)
    after = [np.asarray(leaf) for leaf in jax.tree.leaves(nnx.state(model))]
    assert all(np.array_equal(a, b) for a, b in zip(before, after, strict=True))  # the user's model untouched


def _keys_step():
    sys.path.insert(0, str(ROOT / "tests" / "targets" / "keys"))
    try:
        import keys_step
    finally:
        sys.path.remove(str(ROOT / "tests" / "targets" / "keys"))
    return keys_step


def test_typed_keys_and_extended_dtypes_through_every_deep_command():
    """``jax.random.key(0)`` (dtype key<fry>), rbg keys, float0, bf16, float8 and int4 arguments: each
    command exited 3 with "Cannot interpret 'key<fry>' as a data type" before issue 29."""
    module = _keys_step()
    key, x = jax.random.key(0), jnp.zeros((4, 3))
    traced = jitscope.trace(module.step, key, x)
    assert traced.calls[0].call == "key<fry>[], f32[4,3]" and not traced.calls[0].failed
    mixed = jitscope.trace(module.mixed, *module.mixed_args())
    assert mixed.calls[0].call == "key<rbg>[3], float0[2], bf16[4], float8_e4m3fn[4], int4[8]"
    assert not mixed.calls[0].failed, mixed.calls[0].diagnostic
    timing = jitscope.bench(module.mixed, *module.mixed_args(), budget=0.02, min_rounds=3)
    assert timing.cached.median_s > 0 and not timing.record.failures
    assert jitscope.profile(module.step, key, x, calls=2, budget=0.02).lines
    assert jitscope.memory(module.step, key, x).peak_bytes > 0
    from_shapes = jitscope.trace(module.step, shapes="key<urbg>[], f32[4,3]")
    assert from_shapes.calls[0].call == "key<urbg>[], f32[4,3]"


@pytest.mark.models
def test_a_flax_nnx_model_holding_rngs_and_a_linen_train_state_with_a_dropout_key():
    nnx = pytest.importorskip("flax.nnx")
    optax = pytest.importorskip("optax")
    import flax.linen as nn
    from flax.training import train_state

    class Noisy(nnx.Module):
        def __init__(self, rngs):
            self.linear, self.dropout = nnx.Linear(3, 4, rngs=rngs), nnx.Dropout(0.5, rngs=rngs)
            self.rngs = rngs  # typed keys inside the model

        def __call__(self, x):
            return self.dropout(self.linear(x)) + jax.random.normal(self.rngs(), (4,))

    @nnx.jit
    def nnx_step(model, x):
        return model(x).sum()

    model = Noisy(nnx.Rngs(0))
    traced = jitscope.trace(nnx_step, model, jnp.ones((2, 3)))
    assert not traced.calls[0].failed, traced.calls[0].diagnostic

    class State(train_state.TrainState):
        key: jax.Array

    dense = nn.Dense(4)
    params = dense.init(jax.random.key(0), jnp.ones((2, 3)))["params"]
    state = State.create(apply_fn=dense.apply, params=params, tx=optax.sgd(0.1), key=jax.random.key(2))

    def train_step(state, x, dropout_key):
        def loss(p):
            y = state.apply_fn({"params": p}, x)
            return (y * jax.random.bernoulli(dropout_key, 0.5, y.shape)).sum()
        return state.apply_gradients(grads=jax.grad(loss)(state.params))

    traced = jitscope.trace(train_step, state, jnp.ones((2, 3)), jax.random.key(1))
    assert not traced.calls[0].failed and traced.calls[0].call.endswith("f32[2,3], key<fry>[]")
    timing = jitscope.bench(train_step, state, jnp.ones((2, 3)), jax.random.key(1), budget=0.02, min_rounds=3)
    assert timing.cached.median_s > 0 and not timing.record.failures
