"""Piped text without rich (``report/writers/plain_text.py``): byte for byte what the piped console prints.

Every document here is rendered both ways: ``render_piped`` and rich printing ``render_rich`` on the console
``make_console()`` makes for a stream that is not a terminal. Where ``render_piped`` answers, it must be
exact; where it cannot be sure, it says None. Real reports must take the fast path, or the ~25 ms it saves
``jitscope trace > file`` would vanish without a sound. A different rich release that lays out text
otherwise fails here first.
"""

from __future__ import annotations

import io
import os
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from jitscope.report.views.document import (
    Block,
    Chart,
    CodeLine,
    CodeListing,
    Column,
    Document,
    Fit,
    KeyValues,
    Note,
    Panels,
    Paragraph,
    Section,
    Series,
    Span,
    Table,
    pieces,
)
from jitscope.report.writers import plain_text
from jitscope.report.writers.console import make_console
from jitscope.report.writers.plain_layout import NARROW
from jitscope.report.writers.plain_text import render_piped
from jitscope.report.writers.terminal import render_rich
from tests.conftest import EXAMPLES, ROOT, STYLE_ENV


def rich_piped(document: Document) -> str:
    """What ``jitscope ... > file`` printed before plain_text.py: the piped console (``make_console`` on a
    stream that is no terminal: 100 columns, soft wrap, no colour)."""
    buffer = io.StringIO()
    make_console(file=buffer).print(render_rich(document))
    return buffer.getvalue()


def assert_exact(document: Document, *, fast: bool = True) -> None:
    """``render_piped`` equals rich's output (``fast``: and does not fall back)."""
    text = render_piped(document)
    if fast:
        assert text is not None, "falls back to rich (see plain_text.py for what it does not reproduce)"
    if text is not None:
        assert text == rich_piped(document)


# -- real reports ---------------------------------------------------------------------------------------------

STAGES = ("jaxpr", "stablehlo", "hlo", "cost", "memory")


def _module(path: Path) -> Any:
    sys.path.insert(0, str(path.parent))
    try:
        return __import__(path.stem)
    finally:
        sys.path.remove(str(path.parent))


def _trace(target: str, shapes: list[str] | None = None, **options: object) -> Document:
    from jitscope.api.commands.trace import run_trace
    from jitscope.api.results import TraceResult

    report, _ = run_trace([target], shapes, None, None, STAGES)
    return TraceResult(report, stages=STAGES, **options).document("text")  # type: ignore[arg-type]


def _reports() -> dict[str, Callable[[], Document]]:
    import jitscope

    def example(name: str) -> Any:
        return _module(EXAMPLES / f"{name}.py")

    def api(command: Callable[..., Any], module: str, name: str, **options: Any) -> Callable[[], Document]:
        """``jitscope.COMMAND`` on an example with its JITSCOPE_EXAMPLES shapes."""
        def document() -> Document:
            found = example(module)
            return command(getattr(found, name), shapes=found.JITSCOPE_EXAMPLES[name], **options).document("text")
        return document

    cases = f"{ROOT}/tests/targets/diagnose_cases.py"
    return {
        **{f"trace {t}": (lambda t=t: _trace(f"{EXAMPLES}/{t}")) for t in (
            "mlp.py:train_step", "mlp.py:predict", "impure.py:noisy_step", "jit_sin.py:fsin", "scan_rnn.py:rnn",
            "static_args.py:*", "tracing_peek.py:f", "transformer.py:encode", "memory_peak.py:train_step")},
        "trace matmul": lambda: _trace(f"{ROOT}/benchmarks/targets/matmul.py:matmul"),
        "trace mlp folded": lambda: _trace(f"{EXAMPLES}/mlp.py:train_step", locations="user", depth=1, fold=True),
        "trace failing": lambda: _trace(f"{cases}:zeros_of", ["f32[4], i32[]"]),
        "trace failing branch": lambda: _trace(f"{cases}:branch_on_leaf", ["{'w': f32[4]}, f32[4], f32[]"]),
        "bench": api(jitscope.bench, "bench_workloads", "small", budget=0.05, min_rounds=2),
        "profile": api(jitscope.profile, "profile_hotspot", "layer", calls=3, budget=0.05),
        "memory": api(jitscope.memory, "memory_peak", "train_step", try_remat=True),
        "diff": lambda: jitscope.diff(example("diff_old").predict, example("diff_new").predict,
                                      shapes=example("diff_old").JITSCOPE_EXAMPLES["predict"]).document("text"),
        "lint": lambda: jitscope.lint(EXAMPLES).document("text"),
        "lint buggy": lambda: jitscope.lint(ROOT / "tests/targets/lint_buggy").document("text"),
    }


REPORTS = _reports()


@pytest.mark.parametrize("name", sorted(REPORTS))
def test_real_reports_are_exact_and_fast(name: str) -> None:
    assert_exact(REPORTS[name]())


# -- hand-made and random documents ----------------------------------------------------------------------------


def _doc(*blocks: Block, title: str = "", subtitle: str = "") -> Document:
    return Document(title, "trace", blocks, subtitle=subtitle)


@pytest.mark.parametrize("size", range(88, 106))
def test_rule_titles_around_the_width(size: int) -> None:
    """Titles that fit, that leave the rule 1 or 2 cells, that rich cuts with "…"; page titles that wrap."""
    title = ("jaxpr by line of your code " * 5)[:size]
    assert_exact(_doc(Section(title, (Paragraph(pieces("x")),), note="")))
    assert_exact(_doc(Section(title[:40], (), note=title[40:] or "n")))
    assert_exact(_doc(Section(title, (Paragraph(pieces("x")),), level=1)))
    assert_exact(_doc(Paragraph(pieces("body")), title=title, subtitle=title + " " + title))


@pytest.mark.parametrize("text", [
    "word " * 40, "a" * 99 + " b", "a" * 100 + " b", "a" * 101 + " b", "x " + "a" * 250 + " y",
    "  indented prose that goes on " * 6, "two  spaces  between " * 10, "end with spaces" + " " * 120,
    "one\ntwo\n\nthree " * 20, "", "\n", "trailing newline\n", "×≈→ µs … ⋮ ↳ −" * 12,
])
def test_wrapped_prose_and_preformatted_text(text: str) -> None:
    for block in (Paragraph(pieces(text), wrap=True), Paragraph(pieces(text), preformatted=True),
                  Paragraph(pieces(text), preformatted=True, wrap=True), Paragraph(pieces(text)),
                  Note(text, "warning", "warning", wrap=True), Note(text, "error")):
        assert_exact(_doc(block))


def _wide_table(columns: int, cell: int, seed: int) -> Table:
    rng = random.Random(seed)
    words = ["ab", "c", "longer_word", "x" * cell, "1.5 MiB", "f32[8192,1024]", "memory_peak.py:8"]
    cols = tuple(Column(f"col {i}", "right" if i % 3 == 1 else "left") for i in range(columns))
    rows = tuple(tuple(" ".join(rng.choice(words) for _ in range(rng.randint(0, 4))) for _ in cols)
                 for _ in range(5))
    return Table(cols, rows, title="a wide table")


@pytest.mark.parametrize(("columns", "cell"), [(2, 120), (3, 60), (6, 30), (9, 15), (14, 8), (40, 4), (1, 150)])
def test_tables_wider_than_the_console_are_narrowed_as_rich_does(columns: int, cell: int) -> None:
    for seed in range(5):
        assert_exact(_doc(_wide_table(columns, cell, seed)))


def test_small_tables_and_key_values() -> None:
    assert_exact(_doc(Table((), ())))  # no columns: one blank line
    assert_exact(_doc(Table((Column("a"), Column("b", "right")), ())))  # the header alone
    assert_exact(_doc(Table((Column("a"),), (), show_header=False), Paragraph(pieces("after"))))  # nothing
    assert_exact(_doc(Table((Column("a"), Column("b")), (("1",), ("", ""), ("two\nlines", "x")))))
    assert_exact(_doc(Table((Column("n", "right"),), (("  padded  ",), ("",)))))
    assert_exact(_doc(KeyValues((("flops", "268 M"), ("bytes accessed", "3 MiB"), ("", "")))))
    assert_exact(_doc(Table((Column("styled"),), ((pieces("x*", "jaxpr.var") + pieces(" y"),),))))


def test_listings_charts_panels_and_fit() -> None:
    lines = (CodeLine(pieces("x = 1" + " " * 130 + "# long"), number=9, note="# m.py:3"),
             CodeLine(pieces("if x > y:"), number=10, mark=True, underline=(3, 8)))
    assert_exact(_doc(CodeListing(lines, "python", indent=2)))
    assert_exact(_doc(CodeListing((), "hlo", raw="HloModule m\n\n  %x = f32[] parameter(0)\t# a tab\n")))
    assert_exact(_doc(CodeListing((), "text", raw="")))
    timeline = Chart("timeline", "compiles", (Series("trace", ()), Series("compile", ())), categories=("f", "g"),
                     spans=(Span(0, 0.5, (0.1, 0.2), label="first"), Span(1, 0.1, (0.3, 0.0), title="why: shapes"),
                            Span(0, 0.9, (0.1, 0.0), quiet=True)))
    assert_exact(_doc(timeline, Chart("bars", "nothing in text", ())))
    wide, narrow = _wide_table(6, 30, 0), _wide_table(2, 5, 0)
    assert_exact(_doc(Fit((Section("s", (wide,)),), (narrow,)), Panels((narrow, Paragraph(pieces("p"))))))
    assert_exact(_doc(Fit((narrow,), (wide,))))


@pytest.mark.parametrize("document", [
    _doc(Table((Column("[bold]name"),), (("x",),))),  # a column's name is read as markup
    _doc(Table((Column("漢字"),), (("x",),))),  # two cells wide
    _doc(Section("e\u0301", ())),  # a combining mark
    _doc(Paragraph(pieces("a\tb"))),  # rich expands tabs
    _doc(Note("carriage\rreturn")),  # and strips control codes
    _doc(Fit((Table((Column("a"),), (), show_header=False),), ())),  # rich measures it as the whole width
    _doc(Chart("loglog", "scaling", ())),
], ids=["markup", "wide", "combining", "tab", "control", "empty-fit", "loglog"])
def test_what_it_cannot_be_sure_of_falls_back(document: Document) -> None:
    assert render_piped(document) is None
    rich_piped(document)  # which rich prints


def test_text_rich_prints_unmeasured_may_hold_any_character() -> None:
    assert_exact(_doc(Paragraph(pieces("漢字 🎉 and e\u0301")), CodeListing((), "text", raw="漢字\t🎉\n")))


def _random_document(rng: random.Random) -> Document:
    alphabet = "abcdefgh     xyz.,:;-_()/'0123456789…→≈×µé│─⋮↳−█\xa0"

    def text(size: int) -> str:
        return "".join(rng.choice(alphabet + "\n" * (size > 20)) for _ in range(rng.randint(0, size)))

    def block(depth: int) -> Block:
        kind = rng.randrange(7 if depth < 2 else 4)
        if kind == 0:
            n = rng.choice([1, 2, 3, 5, 9, 20])
            cols = tuple(Column(text(12), rng.choice(["left", "right"])) for _ in range(n))
            rows = tuple(tuple(text(rng.choice([3, 10, 40, 130])) for _ in range(rng.randint(max(n - 1, 0), n)))
                         for _ in range(rng.randint(0, 5)))
            return Table(cols, rows, show_header=rng.random() < 0.7, title=text(20))
        if kind == 1:
            return Paragraph(pieces(text(300)), preformatted=rng.random() < 0.3, wrap=rng.random() < 0.6)
        if kind == 2:
            return KeyValues(tuple((text(30), text(15)) for _ in range(rng.randint(0, 4))))
        if kind == 3:
            return Note(text(200), "info", rng.choice(["", "fix"]), wrap=rng.random() < 0.7)
        if kind == 4:
            return Section(text(120).replace("\n", " ") or "s", tuple(block(depth + 1) for _ in range(3)),
                           note=text(30).replace("\n", " "), level=rng.choice([1, 2]), gap=rng.random() < 0.5)
        if kind == 5:
            return Fit(tuple(block(depth + 1) for _ in range(2)), tuple(block(depth + 1) for _ in range(2)))
        return Panels(tuple(block(depth + 1) for _ in range(2)))

    return _doc(*(block(0) for _ in range(rng.randint(1, 4))), title=text(110).replace("\n", " "),
                subtitle=text(150))


def test_random_documents() -> None:
    answered = 0
    for seed in range(300):
        document = _random_document(random.Random(seed))
        assert_exact(document, fast=False)
        answered += render_piped(document) is not None
    assert answered > 280  # the generator exercises the layout, not the fall-back


def test_every_narrow_character_is_one_cell_for_rich() -> None:
    from rich.cells import cell_len

    assert [hex(ord(c)) for c in sorted(NARROW) if cell_len(c) != 1] == []


# -- when it is used -------------------------------------------------------------------------------------------


class _Pipe(io.StringIO):
    """stdout redirected to a file: no terminal, UTF-8."""

    encoding = "utf-8"  # type: ignore[assignment]


def test_piped_stdout_only_when_rich_would_print_plain_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdout", _Pipe())
    assert plain_text.piped_stdout()
    for name, value in (("FORCE_COLOR", "1"), ("TTY_COMPATIBLE", "1"), (plain_text.ESCAPE_HATCH, "1")):
        with monkeypatch.context() as env:
            env.setenv(name, value)
            assert not plain_text.piped_stdout(), name
    with monkeypatch.context() as ipython:  # rich would ask IPython whether this is a notebook
        ipython.setattr("builtins.get_ipython", lambda: None, raising=False)
        assert not plain_text.piped_stdout()
    latin = _Pipe()
    latin.encoding = "latin-1"  # type: ignore[misc]
    monkeypatch.setattr(sys, "stdout", latin)
    assert not plain_text.piped_stdout()  # rich draws rules in "-"
    monkeypatch.setattr(sys, "stdout", type("Tty", (_Pipe,), {"isatty": lambda self: True})())
    assert not plain_text.piped_stdout()


def test_write_result_prints_the_same_bytes_with_and_without_rich(monkeypatch: pytest.MonkeyPatch) -> None:
    """The command's last step, in-process (two processes differ in timings and in XLA's stack frame ids):
    one trace result of examples/mlp.py:train_step written through both paths."""
    from jitscope.api.commands.trace import run_trace
    from jitscope.api.results import TraceResult
    from jitscope.report.writers.destination import write_result

    report, _ = run_trace([f"{EXAMPLES}/mlp.py:train_step"], None, None, None, STAGES)
    result = TraceResult(report, stages=STAGES)
    printed = []
    for hatch in ("", "1"):
        monkeypatch.setenv(plain_text.ESCAPE_HATCH, hatch)
        monkeypatch.setattr(sys, "stdout", _Pipe())
        assert plain_text.piped_stdout() == (not hatch)
        write_result(result, "text", None)
        printed.append(sys.stdout.getvalue())
    assert printed[0] == printed[1] == rich_piped(result.document("text"))
    assert printed[0].startswith(f"{EXAMPLES}/mlp.py:train_step ━") and len(printed[0]) > 10_000


def test_a_text_report_file_is_what_the_pipe_shows_ir_lines_whole(monkeypatch: pytest.MonkeyPatch,
                                                                   tmp_path: Path) -> None:
    """``--out FILE.txt`` and ``result.render("text")``/``save`` write the bytes ``> file`` does: an HLO line
    longer than the width stays one line (they were folded at 100 columns before), with or without rich."""
    from jitscope.api.commands.trace import run_trace
    from jitscope.api.results import TraceResult
    from jitscope.report.writers.destination import write_result

    report, _ = run_trace([f"{EXAMPLES}/mlp.py:train_step"], None, None, None, STAGES)
    result = TraceResult(report, stages=STAGES)
    monkeypatch.setattr(sys, "stdout", _Pipe())
    write_result(result, "text", None)
    piped = sys.stdout.getvalue()
    write_result(result, "text", tmp_path / "report.txt")
    assert (tmp_path / "report.txt").read_text() == piped == result.render("text")
    hlo_module = next(line for line in piped.splitlines() if line.startswith("HloModule "))
    assert len(hlo_module) > 100 and hlo_module == report.traces[0].stages.hlo.splitlines()[0]
    monkeypatch.setenv(plain_text.ESCAPE_HATCH, "1")
    assert result.render("text") == piped


def test_jitscope_trace_piped_imports_no_rich() -> None:
    """``jitscope trace examples/mlp.py:train_step > file`` loads no rich module (``JITSCOPE_NO_FAST_PATH=1``
    still prints through rich)."""
    code = ("import sys, atexit, runpy\n"
            "atexit.register(lambda: print(sorted(m for m in sys.modules if m.split('.')[0] == 'rich'), "
            "file=sys.stderr))\n"
            "sys.argv = ['jitscope', 'trace', 'mlp.py:train_step']\n"
            "runpy.run_module('jitscope', run_name='__main__')\n")
    env = {k: v for k, v in os.environ.items() if k not in (*STYLE_ENV, plain_text.ESCAPE_HATCH)}
    runs = [subprocess.run([sys.executable, "-c", code], cwd=EXAMPLES, capture_output=True, text=True, timeout=300,
                           check=False, env={**env, "JAX_PLATFORMS": "cpu", **extra})
            for extra in ({}, {plain_text.ESCAPE_HATCH: "1"})]
    assert [run.returncode for run in runs] == [0, 0], runs[0].stderr[-2000:] + runs[1].stderr[-2000:]
    assert runs[0].stderr.strip().splitlines()[-1] == "[]"
    assert "'rich.console'" in runs[1].stderr.strip().splitlines()[-1]
    assert runs[0].stdout.splitlines()[0] == runs[1].stdout.splitlines()[0]
    assert runs[0].stdout.startswith("mlp.py:train_step ━") and len(runs[0].stdout) > 10_000
