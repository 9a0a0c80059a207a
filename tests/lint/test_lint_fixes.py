"""`jitscope lint --fix`: each safe fix applied to a snippet, re-linted, and run before and after.

"Safe" (README, jitscope/linter/fixes.py): where the original code does what it says, read eagerly
with NumPy's semantics, the fixed code computes the same, and it also runs under jax.jit. The runtime
tests check exactly that: JS204's original runs with `jnp` bound to NumPy (mutable arrays), JS201's
eagerly with real JAX (a Python `if` on a concrete array works; so does its gradient), JS101's eagerly
(what `print` shows); the fixed code runs under jax.jit and must give the same values (and text).
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from jitscope.linter import lint_source
from jitscope.linter.fixes import apply_edits, apply_fixes, fixes_for
from jitscope.model.lint import Edit, Finding


def _fix_all(source: str, code: str) -> str:
    """Apply every fix of ``code`` in ``source``, round after round, as --fix does."""
    for _ in range(10):
        fixes = [f.fix for f in lint_source(source, "example.py", select=[code]) if f.fix is not None]
        source, applied = apply_fixes(source, fixes)
        if not applied:
            break
    return source


def _findings(source: str, code: str) -> list[Finding]:
    return lint_source(source, "example.py", select=[code])


def _load(source: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": "snippet"}
    exec(compile(source, "snippet.py", "exec"), namespace)  # noqa: S102 - our own snippets
    return namespace


# -- JS204: x[i] = v -> x = x.at[i].set(v) --------------------------------------------------------

JS204_CASES = [
    (
        ("import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\ndef f(x):\n    buf = jnp.zeros(4)\n"
        "    buf[1] = x[0]\n    buf[2] += x[1]  # keep this comment\n    buf[3] -= (x[2] +\n               1.0)\n"
        "    for i in range(2):\n        buf[i] *= 2.0\n    return buf\n"),
        ("import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\ndef f(x):\n    buf = jnp.zeros(4)\n"
        "    buf = buf.at[1].set(x[0])\n    buf = buf.at[2].add(x[1])  # keep this comment\n"
        "    buf = buf.at[3].subtract((x[2] +\n               1.0))\n"
        "    for i in range(2):\n        buf = buf.at[i].multiply(2.0)\n    return buf\n"),
        [np.array([1.0, 2.0, 3.0], np.float32)],
    ),
    (
        ("import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\ndef g(u, v):\n    u[0, :] = v\n    u[1:, 0] += 1\n"
        "    return u * 2\n"),
        ("import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\ndef g(u, v):\n    u = u.at[0, :].set(v)\n"
        "    u = u.at[1:, 0].add(1)\n    return u * 2\n"),
        [np.arange(6.0, dtype=np.float32).reshape(2, 3), np.array([7.0, 8.0, 9.0], np.float32)],
    ),
    (
        ("import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\ndef h(x):\n    out = x * 1\n    out[...,  -1] = 0, \n"
        "    return out\n"),
        None,  # `out[..., -1] = ...`: Ellipsis alone would be a ref write; with an axis it is an array update
        [np.ones((2, 2), np.float32)],
    ),
]


@pytest.mark.parametrize(("before", "expected", "inputs"), JS204_CASES)
def test_js204_fix_rewrites_to_at_and_computes_what_numpy_would(
    before: str, expected: str | None, inputs: list[np.ndarray]
) -> None:
    assert _findings(before, "JS204")
    after = _fix_all(before, "JS204")
    if expected is not None:
        assert after == expected
    assert _findings(after, "JS204") == []
    import jax

    name = next(line.split("(")[0][4:] for line in before.splitlines() if line.startswith("def "))
    numpy_reading = _load(_strip(before, {"@jax.jit\n": "", "import jax.numpy as jnp": "import numpy as jnp"}))[name]
    want = numpy_reading(*[a.copy() for a in inputs])
    got = jax.jit(_load(after.replace("@jax.jit\n", ""))[name])(*inputs)
    np.testing.assert_allclose(np.asarray(got), want)


JS204_UNSAFE = [
    ("def f(x):\n    y = x\n    y[0] = 1.0\n    return x\n", "may share its memory"),
    ("def f(x):\n    y = x[1:]\n    x[0] = 1.0\n    return y\n", "may also be held elsewhere"),
    ("def f(x, i):\n    x[i] = 1.0\n    return x\n", "the index `i` is traced"),
    ("def f(x):\n    x[[0, 0]] += 1.0\n    return x\n", "is a list"),
    ("def f(x):\n    keep = []\n    keep.append(x)\n    x[0] = 1.0\n    return x, keep\n", "keep.append(x)"),
    ("def f(x):\n    x[0] /= 2.0\n    return x\n", "only =, +=, -= and *="),
    ("def f(x):\n    x[0] = x[1] = 0.0\n    return x\n", "several targets"),
    ("def f(x):\n    g = lambda: x[0]\n    x[0] = 1.0\n    return g()\n", "nested function"),
]


@pytest.mark.parametrize(("body", "why"), JS204_UNSAFE)
def test_js204_unsafe_shapes_get_no_fix_and_say_why(body: str, why: str) -> None:
    source = "import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\n" + body
    findings = _findings(source, "JS204")
    assert findings and all(f.fix is None for f in findings)
    assert any(why in f.suggestion and "no automatic fix" in f.suggestion for f in findings), findings


def test_js204_helper_argument_gets_no_fix() -> None:
    # A helper may also run eagerly on a NumPy array whose caller sees the update: rebinding would lose it.
    source = ("import jax\n\n\ndef fill(u, v):\n    u[0, :] = v\n\n\n@jax.jit\ndef f(x, v):\n"
              "    fill(x, v)\n    return x\n")
    (finding,) = _findings(source, "JS204")
    assert finding.fix is None and "argument of a helper" in finding.suggestion


# -- JS201: if on a traced value -> jnp.where ---------------------------------------------------------

JS201_CASES = [
    (
        ("import jax\n\n\n@jax.jit\ndef f(x, y):\n    if x.sum() > 0:\n        a = x + y\n    else:\n        a = x - y\n"
        "    return a\n"),
        ("import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\ndef f(x, y):\n"
        "    a = jnp.where(x.sum() > 0, x + y, x - y)\n    return a\n"),
    ),
    (
        ("import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\ndef f(x, y):\n    if x.sum() > y.sum():\n"
        "        return x * 2.0\n    return x * 3.0\n"),
        ("import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\ndef f(x, y):\n"
        "    return jnp.where(x.sum() > y.sum(), x * 2.0, x * 3.0)\n"),
    ),
    (
        '"""Doc."""\nimport jax\n\n\n@jax.jit\ndef f(x, y):\n    return -x if x.sum() < 0 else x\n',
        ('"""Doc."""\nimport jax\nimport jax.numpy as jnp\n\n\n@jax.jit\ndef f(x, y):\n'
        "    return jnp.where(x.sum() < 0, -x, x)\n"),
    ),
    (
        ("import jax\nimport jax.numpy as np\n\n\n@jax.jit\ndef f(x, y):\n    if (x.sum()\n            > 1):\n"
        "        return x\n    else:\n        return -x\n"),
        ("import jax\nimport jax.numpy as np\n\n\n@jax.jit\ndef f(x, y):\n    return np.where(x.sum()\n"
        "            > 1, x, -x)\n"),
    ),
]


@pytest.mark.parametrize(("before", "expected"), JS201_CASES)
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_js201_fix_uses_jnp_where_with_the_same_values_and_gradients(before: str, expected: str, sign: float) -> None:
    import jax
    import jax.numpy as jnp

    assert _findings(before, "JS201")
    after = _fix_all(before, "JS201")
    assert after == expected
    assert _findings(after, "JS201") == []
    x = jnp.array([0.5, 1.5, -0.25], jnp.float32) * sign
    y = jnp.array([2.0, -1.0, 0.5], jnp.float32)
    eager: Callable[..., Any] = _load(before.replace("@jax.jit\n", ""))["f"]
    fixed = jax.jit(_load(after.replace("@jax.jit\n", ""))["f"])
    np.testing.assert_array_equal(np.asarray(fixed(x, y)), np.asarray(eager(x, y)))
    loss = lambda fn: lambda a, b: fn(a, b).sum()
    np.testing.assert_array_equal(np.asarray(jax.grad(loss(fixed))(x, y)), np.asarray(jax.grad(loss(eager))(x, y)))


JS201_UNSAFE = [
    ("def relu(x):\n    if x > 0:\n        return x\n    return 0.0\n", "may differ in shape or dtype"),
    ("def f(x):\n    if x.sum() > 0:\n        a = x * 2\n    else:\n        a = x\n    return a\n", "may differ"),
    ("def f(x):\n    if x.sum() > 0:\n        a = jnp.log(x)\n    else:\n        a = x\n    return a\n",
     "calls a function"),
    ("def f(x):\n    if x.sum() > 0:\n        a = 1.0 / x\n    else:\n        a = x / 1.0\n    return a\n", "divides"),
    ("def f(x):\n    if x.sum() > 0:  # why\n        a = x\n    else:\n        a = -x\n    return a\n", "comment"),
    ("def f(x):\n    if x.sum() > 0:\n        a = x\n    return x\n", "no else branch"),
    ("def f(x, n):\n    if x.sum() > 0 and n:\n        a = x\n    else:\n        a = -x\n    return a\n",
     "several tests"),
    (("def f(x):\n    if x.sum() > 0:\n        a = x\n        b = x\n    else:\n        a = -x\n        b = x\n"
     "    return a + b\n"), "more than one statement"),
]


@pytest.mark.parametrize(("body", "why"), JS201_UNSAFE)
def test_js201_unsafe_shapes_get_no_fix_and_say_why(body: str, why: str) -> None:
    source = "import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\n" + body
    findings = _findings(source, "JS201")
    assert findings and all(f.fix is None for f in findings)
    assert any(why in f.suggestion for f in findings), [f.suggestion for f in findings]


def test_js201_while_and_assert_have_no_fix_and_no_note() -> None:
    source = "import jax\n\n\n@jax.jit\ndef f(x):\n    assert x.sum() > 0\n    return x\n"
    (finding,) = _findings(source, "JS201")
    assert finding.fix is None and "no automatic fix" not in finding.suggestion


def test_js201_jnp_bound_to_something_else_gets_no_fix() -> None:
    source = ("import jax\n\njnp = None\n\n\n@jax.jit\ndef f(x):\n    return x if x.sum() > 0 else -x\n")
    (finding,) = _findings(source, "JS201")
    assert finding.fix is None and "`jnp` names something else" in finding.suggestion


# -- JS101: print -> jax.debug.print ----------------------------------------------------------------

JS101_CASES = [
    (
        ("import jax\n\n\n@jax.jit\ndef f(x):\n    print(\"x =\", x, 'total {sum}:', f\"{x.sum():.3f} {{}}\")\n"
        "    return x * 2\n"),
        ("import jax\n\n\n@jax.jit\ndef f(x):\n"
        "    jax.debug.print(\"x = {!s} total {{sum}}: {:.3f} {{}}\", x, x.sum())\n    return x * 2\n"),
    ),
    (
        ("from jax import jit\n\n\n@jit\ndef f(x):\n    print(x[0], x.sum(), sep=' | ')\n    print(f'{x.max()!s}')\n"
        "    return x\n"),
        ("from jax import jit\nimport jax\n\n\n@jit\ndef f(x):\n"
        "    jax.debug.print(\"{!s} | {!s}\", x[0], x.sum(), ordered=True)\n"
        "    jax.debug.print(\"{!s}\", x.max(), ordered=True)\n    return x\n"),
    ),
]


@pytest.mark.parametrize(("before", "expected"), JS101_CASES)
def test_js101_fix_prints_what_the_function_printed_eagerly(before: str, expected: str) -> None:
    import jax
    import jax.numpy as jnp

    assert _findings(before, "JS101")
    after = _fix_all(before, "JS101")
    assert after == expected
    assert _findings(after, "JS101") == []
    x = jnp.array([1 / 3, 2.0, -1.5], jnp.float32)
    eager_out, jit_out = io.StringIO(), io.StringIO()
    undecorated = {"@jax.jit\n": "", "@jit\n": ""}
    with contextlib.redirect_stdout(eager_out):
        _load(_strip(before, undecorated))["f"](x)
    with contextlib.redirect_stdout(jit_out):
        jax.jit(_load(_strip(after, undecorated))["f"])(x)
        jax.effects_barrier()
    assert jit_out.getvalue() == eager_out.getvalue() != ""


def _strip(source: str, replace: dict[str, str]) -> str:
    for old, new in replace.items():
        source = source.replace(old, new)
    return source


JS101_UNSAFE = [
    ("def f(x, n):\n    print(n, x)\n    return x\n", "`n` is not a traced array"),
    ("def f(x):\n    print('tracing')\n    return x\n", "prints no traced value"),
    ("def f(x):\n    print(f'{x!r}')\n    return x\n", "repr"),
    ("def f(x):\n    print(x, end='')\n    return x\n", "print(end=...)"),
    ("def f(x):\n    print(*x)\n    return x\n", "*args"),
]


@pytest.mark.parametrize(("body", "why"), JS101_UNSAFE)
def test_js101_unsafe_shapes_get_no_fix_and_say_why(body: str, why: str) -> None:
    source = "import jax\nfrom functools import partial\n\n\n@partial(jax.jit, static_argnums=1)\n" + body
    if "n)" not in body:
        source = source.replace("@partial(jax.jit, static_argnums=1)", "@jax.jit")
    findings = _findings(source, "JS101")
    assert findings and all(f.fix is None for f in findings)
    assert any(why in f.suggestion for f in findings), [f.suggestion for f in findings]


def test_js101_logging_has_no_fix_and_no_note() -> None:
    source = ("import logging\nimport jax\nlog = logging.getLogger(__name__)\n\n\n@jax.jit\ndef f(x):\n"
              "    log.info('x=%s', x)\n    return x\n")
    (finding,) = _findings(source, "JS101")
    assert finding.fix is None and "no automatic fix" not in finding.suggestion


# -- the API the language server uses ---------------------------------------------------------------


def test_fixes_for_finds_the_fix_of_a_finding_in_changed_text() -> None:
    source = "import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\ndef f(x):\n    b = jnp.ones(2)\n    b[0] = x\n    return b\n"
    (finding,) = _findings(source, "JS204")
    (fix,) = fixes_for(finding, source)
    assert fix == finding.fix and fix.title == "Replace with `b = b.at[...].set(...)`"
    assert "b = b.at[0].set(x)" in apply_edits(source, fix.edits)
    assert fixes_for(finding, source.replace("b[0] = x", "b[1] = x")) == [
        f.fix for f in _findings(source.replace("b[0] = x", "b[1] = x"), "JS204")]
    assert fixes_for(finding, "x = 1\n") == []


def test_apply_edits_positions_newlines_and_overlaps() -> None:
    source = "a = 1\r\nbé = 2\r\n"
    # character columns (é is one), the text's own newline style
    assert apply_edits(source, [Edit(2, 4, 2, 5, "=="), Edit(1, 1, 1, 1, "x\n")]) == "x\r\na = 1\r\nbé == 2\r\n"
    with pytest.raises(ValueError, match="overlapping"):
        apply_edits(source, [Edit(1, 1, 1, 4, "b"), Edit(1, 3, 1, 5, "c")])
    with pytest.raises(ValueError, match="outside"):
        apply_edits(source, [Edit(7, 1, 7, 1, "c")])
    assert apply_edits(source, []) == source


def test_fixes_keep_a_bom_crlf_and_the_rest_of_the_file(tmp_path: Any) -> None:
    from jitscope.linter.fixing import fix_paths

    text = ("# -*- coding: utf-8 -*-\nimport jax\n\n\n@jax.jit\ndef f(x):  # café\n    print(f\"{x}\")  # shown\n"
            "    return x\n")
    path = tmp_path / "m.py"
    path.write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode())
    outcome = fix_paths([path], root=tmp_path, jobs=1)
    assert outcome.fixed == 1
    assert path.read_bytes() == b"\xef\xbb\xbf" + text.replace('print(f"{x}")', 'jax.debug.print("{}", x)').replace(
        "\n", "\r\n").encode()
    assert fix_paths([path], root=tmp_path, jobs=1).fixed == 0


def test_suppressed_findings_are_not_fixed(tmp_path: Any) -> None:
    from jitscope.linter.fixing import fix_paths

    text = "import jax\n\n\n@jax.jit\ndef f(x):\n    print(x)  # jitscope: ignore[JS101]\n    return x\n"
    (tmp_path / "m.py").write_text(text)
    assert fix_paths([tmp_path], root=tmp_path, jobs=1).fixed == 0
    assert (tmp_path / "m.py").read_text() == text



# -- the command line -------------------------------------------------------------------------------

_FIXABLE = "import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\ndef f(x):\n    b = jnp.zeros(2)\n    b[0] = x\n    print(x)\n    return b\n"
_UNFIXABLE = "import jax\n\n\n@jax.jit\ndef g(x):\n    if x > 0:\n        return x\n    return 0.0\n"


def test_diff_previews_writes_nothing_and_exits_1_when_there_is_something_to_fix(tmp_path: Any) -> None:
    from tests.conftest import run_cli

    (tmp_path / "a.py").write_text(_FIXABLE)
    (tmp_path / "b.py").write_text(_UNFIXABLE)
    stamps = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in tmp_path.iterdir()}
    result = run_cli("lint", "--diff", ".", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert result.stdout.startswith("--- a.py\n+++ a.py\n")
    assert result.stdout.endswith('-    b[0] = x\n-    print(x)\n+    b = b.at[0].set(x)\n'
                                  '+    jax.debug.print("{!s}", x)\n     return b\n')
    assert "b.py" not in result.stdout
    assert result.stderr.strip() == "would fix 2 findings in 1 file"
    assert {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in tmp_path.iterdir()} == stamps
    clean = run_cli("lint", "--diff", "b.py", cwd=tmp_path)
    assert (clean.returncode, clean.stdout) == (0, "")
    wrong = run_cli("lint", "--diff", "--format", "json", ".", cwd=tmp_path)
    assert wrong.returncode == 2 and wrong.stderr.strip().count("\n") == 0 and "--diff" in wrong.stderr


def test_fix_applies_reports_what_remains_and_a_second_run_changes_nothing(tmp_path: Any) -> None:
    from tests.conftest import run_cli

    (tmp_path / "a.py").write_text(_FIXABLE)
    (tmp_path / "b.py").write_text(_UNFIXABLE)
    first = run_cli("lint", "--fix", "--format", "json", ".", cwd=tmp_path)
    assert first.returncode == 1  # b.py's JS201 remains
    import json

    assert [(f["file"], f["code"]) for f in json.loads(first.stdout)["findings"]] == [("b.py", "JS201")]
    assert first.stderr.strip() == "fixed 2 findings, 1 remaining"
    fixed = (tmp_path / "a.py").read_text()
    assert "b = b.at[0].set(x)" in fixed and 'jax.debug.print("{!s}", x)' in fixed
    again = run_cli("lint", "--fix", ".", cwd=tmp_path)
    assert again.returncode == 1 and again.stderr.strip() == "fixed 0 findings, 1 remaining"
    assert (tmp_path / "a.py").read_text() == fixed
    only_a = run_cli("lint", "--fix", "a.py", cwd=tmp_path)
    assert only_a.returncode == 0 and "All checks passed" in only_a.stdout


def test_json_carries_the_fix_and_reads_back() -> None:
    import json

    from jitscope.api.results import LintResult
    from jitscope.model.common import from_jsonable
    from jitscope.model.lint import LintReport

    findings = _findings(_FIXABLE, "JS204") + _findings(_UNFIXABLE, "JS201")
    report = LintReport(tuple(findings), 2, 20, (), ())
    data = json.loads(LintResult(report).render("json"))
    fixable, unfixable = data["findings"]
    assert fixable["fix"]["title"] == "Replace with `b = b.at[...].set(...)`"
    assert fixable["fix"]["edits"] == [{"line": 8, "column": 5, "end_line": 8, "end_column": 13,
                                        "text": "b = b.at[0].set(x)"}]
    assert "fix" not in unfixable  # left out while None: documents without fixes are unchanged
    assert from_jsonable(LintReport, data).findings == report.findings



def test_fix_keeps_hard_links_every_link_sees_the_fix(tmp_path: Any) -> None:
    """A hard-linked file (a linked checkout, a deduplicated store) is fixed in place: same inode, every link."""
    from tests.conftest import run_cli

    (tmp_path / "a.py").write_text(_FIXABLE)
    (tmp_path / "elsewhere").mkdir()
    other = tmp_path / "elsewhere" / "a_link.txt"  # not linted itself: only a.py is fixed
    os.link(tmp_path / "a.py", other)
    inode = (tmp_path / "a.py").stat().st_ino
    result = run_cli("lint", "--fix", "a.py", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "a.py").stat().st_ino == inode and (tmp_path / "a.py").stat().st_nlink == 2
    assert other.read_text() == (tmp_path / "a.py").read_text() != _FIXABLE
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py", "elsewhere"]  # no temporary left
