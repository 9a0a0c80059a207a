"""``%load_ext jitscope`` and the ``%jitscope`` magics, in a real Jupyter kernel (nbclient + ipykernel).

A notebook is built and executed as Jupyter would run it; the checks read the cells' outputs: the
HTML report (in its own frame) and the text beside it, the ``-o`` result object, and the one-line
``UsageError`` for a magic with a mistake in it. Skipped without the ``notebook`` extra.
"""

from __future__ import annotations

import html
import types

import pytest

pytestmark = pytest.mark.notebook

SETUP = """\
import jax, jax.numpy as jnp

@jax.jit
def f(x, w):
    return jnp.tanh(x @ w).sum()

x = jnp.ones((8, 16)); w = jnp.ones((16, 4))"""


@pytest.fixture(scope="module")
def executed() -> list[list[dict]]:
    nbformat = pytest.importorskip("nbformat", reason="the `notebook` extra runs these tests")
    nbclient = pytest.importorskip("nbclient", reason="the `notebook` extra runs these tests")
    pytest.importorskip("ipykernel", reason="the `notebook` extra runs these tests")
    cells = [
        "%load_ext jitscope",
        SETUP,
        "%jitscope trace f(x, w)",
        "%jitscope bench --budget 0.02 --min-rounds 3 f(x, w)",
        "%%jitscope run\nfor n in (4, 8, 8):\n    f(jnp.ones((n, 16)), w)",
        "r = %jitscope -o trace --stages jaxpr f(x, w)\nprint(type(r).__name__, r.calls[0].equations)",
        "%jitscope trace f(x, w",
        "%jitscope trace f(x, not_defined)",
        "%jitscope trace --depht 1 f(x, w)",
        "%%jitscope run\nfor n in (:\n    pass",
        "%jitscope run f(jnp.ones((3, 16)), w)",
        "%jitscope memory f(x, w)",
        "def noisy(key, x):\n    return jax.random.normal(key, x.shape) + x",
        "%jitscope trace --stages jaxpr noisy(jax.random.key(0), x)",
        "%%jitscope doctor --fresh\nfor n in range(1, 7):\n    f(jnp.ones((n, 16)), w)",
        "d = %jitscope -o doctor f(x, w)\nprint(type(d).__name__, [c.target for c in d.record.calls])",
    ]
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    client = nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3", allow_errors=True)
    client.execute()
    return [cell.outputs for cell in notebook.cells]


def _html(outputs: list[dict]) -> str:
    (shown,) = [o for o in outputs if o["output_type"] == "display_data"]
    return shown["data"]["text/html"]


def _text(outputs: list[dict]) -> str:
    return "".join(o.get("text", "") for o in outputs if o["output_type"] == "stream") + "".join(
        o["data"].get("text/plain", "") for o in outputs if o["output_type"] in ("display_data", "execute_result"))


def _report(frame: str) -> str:
    assert frame.startswith('<iframe class="jitscope-report"'), frame[:200]
    return html.unescape(frame.split('srcdoc="', 1)[1].split('"', 1)[0])


def test_load_ext_and_setup_run_cleanly(executed):
    assert executed[0] == [] and executed[1] == []


def test_trace_magic_shows_the_html_report(executed):
    page = _report(_html(executed[2]))
    assert page.startswith("<!DOCTYPE html>") and "stablehlo.dot_general" in page and "tanh" in page
    assert "dot_general" in _text(executed[2])  # text/plain beside it, for frontends without HTML


def test_bench_magic_takes_options(executed):
    page = _report(_html(executed[3]))
    assert "first call (cold)" in page and "cached calls" in page


def test_run_cell_magic_explains_the_recompile(executed):
    text = _text(executed[4])
    assert "2 compiles of 1 jitted function (1 recompile)" in text
    assert "x: shape (4, 16) -> (8, 16)" in text
    assert "jitscope run: cell" in _report(_html(executed[4]))


def test_o_returns_the_result_object(executed):
    assert _text(executed[5]).strip() == "TraceResult 3"


@pytest.mark.parametrize(("cell", "message"), [
    (6, "UsageError: jitscope: 'f(x, w' is not valid Python: '(' was never closed"),
    (7, "UsageError: jitscope: evaluating 'not_defined' raised NameError: name 'not_defined' is not defined"),
    (8, "UsageError: jitscope: %jitscope trace has no option --depht"),
    (9, "UsageError: jitscope: the cell is not valid Python"),
])
def test_a_mistake_in_the_magic_is_one_line(executed, cell, message):
    outputs = executed[cell]
    assert not any(o["output_type"] == "error" for o in outputs)  # no traceback
    text = _text(outputs).strip()
    assert text.startswith(message) and len(text.splitlines()) == 1, text


def test_run_line_magic_watches_one_statement(executed):
    assert "1 compile of 1 jitted function (0 recompiles)" in " ".join(_text(executed[10]).split())


def test_options_parse_without_a_kernel():
    from jitscope.errors import UsageError
    from jitscope.notebook import _parse_options

    assert _parse_options("bench", "--budget 0.5 --eager --static n,m f(x)") == (
        {"budget": 0.5, "eager": True, "static_argnames": ["n", "m"]}, "f(x)")
    assert _parse_options("trace", "--stages=jaxpr,hlo --no-effects g(a, b=2)") == (
        {"stages": "jaxpr,hlo", "effects": False}, "g(a, b=2)")
    with pytest.raises(UsageError, match="--budget 'soon' is not a valid value"):
        _parse_options("bench", "--budget soon f(x)")
    with pytest.raises(UsageError, match="--eager takes no value"):
        _parse_options("bench", "--eager=1 f(x)")


def test_a_magic_argument_that_clashes_with_an_option_is_refused():
    pytest.importorskip("IPython")
    from jitscope.errors import UsageError
    from jitscope.notebook import run_magic

    shell = types.SimpleNamespace(user_ns={"g": lambda x, budget: x, "x": 1})
    with pytest.raises(UsageError, match="budget= is both an option and an argument"):
        run_magic(shell, "bench --budget 0.1 g(x, budget=2)", None)
    with pytest.raises(UsageError, match="not a cell magic"):
        run_magic(shell, "trace", "g(x)")
    with pytest.raises(UsageError, match="unknown command 'trcae'"):
        run_magic(shell, "trcae g(x)", None)


def test_a_bad_option_value_is_named_as_the_option():
    """The API's check, with the line the CLI prints for the same value (issue 30)."""
    pytest.importorskip("IPython")
    from jitscope.errors import BadValueError
    from jitscope.notebook import run_magic

    shell = types.SimpleNamespace(user_ns={"g": lambda x: x, "x": 1.0})
    with pytest.raises(BadValueError, match=r"^--min-rounds 0 is out of range$"):
        run_magic(shell, "bench --min-rounds 0 g(x)", None)
    with pytest.raises(BadValueError, match=r"^--fail-on 'fatal' is not one of info, warning, error$"):
        run_magic(shell, "lint --fail-on fatal .", None)
    with pytest.raises(BadValueError, match=r"^--fail-over: -5 is not a positive size$"):
        run_magic(shell, "memory --fail-over -5 g(x)", None)


def test_memory_magic_shows_the_peak(executed):
    page = _report(_html(executed[11]))
    assert page.startswith("<!DOCTYPE html>") and "jitscope memory" in page
    assert "peak" in _text(executed[11])


def test_trace_magic_takes_a_typed_prng_key(executed):
    """``jax.random.key(0)`` made the magic fail: "Cannot interpret 'key<fry>' as a data type" (issue 29)."""
    text = _text(executed[13])
    assert "noisy(key<fry>[], f32[8,16])" in text and "error" not in text
    assert "jitscope trace" in _report(_html(executed[13]))


def test_doctor_cell_magic_ranks_what_the_cell_hit(executed):
    page = _report(_html(executed[14]))
    assert "jitscope doctor" in page and "what to fix first" in page
    assert "compiled again 5 times for 6 shapes of x" in page  # --fresh: what earlier cells compiled counts too


def test_doctor_line_magic_on_a_jitted_call_doctors_that_function(executed):
    """``%jitscope doctor f(x, w)`` with a jitted ``f`` is ``jitscope.doctor(f, x, w)``: bench's calls, not a
    one-statement run."""
    text = _text(executed[15])
    assert text.startswith("DoctorResult [") and (":f']" in text or "'f']" in text) and "error" not in text.lower()
