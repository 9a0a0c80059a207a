"""Back ends on small hand-made view models: exact Markdown, well-formed self-contained HTML."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from jitscope.report.views.document import (
    Chart,
    CodeLine,
    CodeListing,
    Column,
    Document,
    KeyValues,
    Note,
    Paragraph,
    Section,
    Series,
    Table,
    pieces,
)
from jitscope.report.writers.html import render_html
from jitscope.report.writers.markdown import render_markdown
from jitscope.report.writers.terminal import render_plain

DOC = Document("jitscope demo", "trace", (
    Section("m.py:f", (
        Paragraph((("call: ", "jitscope.muted"), ("f(f32[2])", ""))),
        Note("f64 specs become f32", "warning", "warning"),
        Section("cost", (KeyValues((("flops", "2 G"),)),), "XLA"),
        Section("table", (Table((Column("name"), Column("n", "right")), (("a|b", "1"), (pieces("x*", "jaxpr.var"), "22"))),)),
        Section("jaxpr", (CodeListing((
            CodeLine(pieces("{ lambda ; a:f32[2]. let")),
            CodeLine((("b", "jaxpr.var"), (" = sin a", "")), note="# m.py:3", src="m.py:3", ops=("sin", "~sine")),
            CodeLine(pieces("  in (b,) }")),
        ), "jaxpr"),), gap=True),
    ), level=1, id="t1"),
), meta=(("jax", "0.10.2"),))


def test_plain_text_reads_like_the_terminal() -> None:
    text = render_plain(DOC, width=40)
    assert [line.rstrip() for line in text.splitlines()] == [
        "jitscope demo ━━━━━━━━━━━━━━━━━━━━━━━━━━",
        "m.py:f ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━",
        "call: f(f32[2])",
        "warning: f64 specs become f32",
        "",
        "cost  XLA ──────────────────────────────",
        "flops  2 G",
        "",
        "table ──────────────────────────────────",
        "name   n",
        "a|b    1",
        "x*    22",
        "",
        "jaxpr ──────────────────────────────────",
        "",
        "{ lambda ; a:f32[2]. let",
        "b = sin a  # m.py:3",
        "  in (b,) }",
    ]


def test_plain_text_shows_title_and_subtitle_but_not_twice() -> None:
    """The title is the first line (the subtitle under it); a page that already says it stands alone."""
    doc = Document("jitscope demo", "bench", (Paragraph(pieces("body")),), subtitle="3 calls on cpu")
    assert render_plain(doc, width=30).splitlines() == ["jitscope demo " + "━" * 16, "3 calls on cpu", "body"]
    one_page = Document("jitscope trace: m.py:f", "trace", (Section("m.py:f", (), level=1),))
    assert render_plain(one_page, width=30).splitlines()[0].startswith("m.py:f ━")
    assert render_plain(Document("", "lint", (Paragraph(pieces("All checks passed")),))) == "All checks passed\n"


def test_a_title_too_long_for_the_line_is_wrapped_whole_above_its_rule() -> None:
    """A call with a model and an optimizer makes a long page title: every word of it is shown."""
    title = "train.py:train_step(GPT(110,529 params, 432 KiB), Optimizer(78 arrays, 864 KiB), i32[8,33])"
    lines = render_plain(Document("", "memory", (Section(title, (Paragraph(pieces("body")),), level=1),)),
                         width=60).splitlines()
    assert "…" not in "".join(lines)
    assert " ".join(line.rstrip() for line in lines[:2]) == title
    assert lines[2] == "━" * 60 and lines[3] == "body"


def test_code_frame_carets_and_groups() -> None:
    """A finding's frame: the marked line's span underlined with carets; an untitled section is a group."""
    frame = CodeListing((CodeLine(pieces("x = 1"), number=9), CodeLine(pieces("if x > y:"), number=10, mark=True,
                                                                       underline=(3, 8))), "python", indent=1)
    doc = Document("", "lint", (Section("", (Paragraph(pieces("m.py:10:4: JS201")), frame)),
                                Paragraph(pieces("Found 1 finding"))))
    assert render_plain(doc).splitlines() == ["m.py:10:4: JS201", "    9 │ x = 1", " > 10 │ if x > y:",
                                              "      │    ^^^^^", "", "Found 1 finding"]
    assert "<u>x &gt; y</u>" in render_html(doc)
    assert "   │    ^^^^^" in render_markdown(doc)


def test_markdown_escapes_and_tables() -> None:
    md = render_markdown(DOC)
    assert md.startswith("# jitscope demo\n\n## m.py:f\n\ncall: f(f32[2])\n\n> **warning:** f64 specs become f32\n")
    assert "### cost — *XLA*\n\n|   |   |\n| --- | ---: |\n| flops | 2 G |" in md
    assert "| a\\|b | 1 |\n| x\\* | 22 |" in md
    assert "```text\n{ lambda ; a:f32[2]. let\nb = sin a  # m.py:3\n  in (b,) }\n```" in md
    assert md.endswith("<sub>jax 0.10.2</sub>\n")


class _Checker(HTMLParser):
    """Tags balance (void elements aside) and nothing is fetched from elsewhere."""

    VOID = frozenset({"meta", "br", "rect", "circle", "line", "link", "img"})

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("src", "href") and value and not value.startswith("#"):
                self.errors.append(f"external {name}={value}")
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        pass

    def handle_endtag(self, tag: str) -> None:
        if tag in self.VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes <{self.stack[-1] if self.stack else None}>")
        else:
            self.stack.pop()


def check_html(html: str) -> None:
    checker = _Checker()
    checker.feed(html)
    assert checker.errors == [] and checker.stack == []
    assert "@import" not in html and "url(" not in html


def test_html_is_self_contained_and_links_lines() -> None:
    html = render_html(DOC)
    check_html(html)
    assert html.startswith("<!DOCTYPE html>\n<html lang=\"en\">")
    assert '<div class="l" data-src="m.py:3" data-ops="sin ~sine"><span class="v">b</span> = sin a' in html
    assert '<section class="page" id="t1"><h2>m.py:f</h2>' in html
    assert "<td>a|b</td>" in html and "<dt>jax</dt><dd>0.10.2</dd>" in html
    assert "prefers-color-scheme:dark" in html and "@media print" in html


def test_charts_are_inline_svg() -> None:
    chart = Chart("loglog", "scaling", (Series("run", ((1e3, 1e-5), (1e4, 1e-4), (1e5, 1e-3))),),
                  x_label="input bytes", x_unit="bytes", y_unit="seconds", fits=(("run", 1.0, -8.0),))
    html = render_html(Document("c", "bench", (chart,)))
    check_html(html)
    svg = re.search(r"<svg .*?</svg>", html)
    assert svg is not None and svg.group().count("<circle") == 3 and "run (slope 1.00)" in svg.group()
    assert "<title>run: 100 µs at 9.77 KiB</title>" in svg.group()


def test_markdown_escapes_only_what_github_would_read_as_markup() -> None:
    from jitscope.report.writers.markdown import escape_md

    kept = ["a > b", "x <= y", "a * b", "jit_sin", "a[i] = v", "AT&T", "~/.cache", "$HOME", "1.5 s", "#1", "-x",
            "C:\\path", "use `x.at[i].set(v)` or `a*b`"]
    assert [escape_md(text) for text in kept] == kept
    assert escape_md("a|b") == "a|b" and escape_md("a|b", cell=True) == "a\\|b"
    assert [escape_md(text) for text in ("> q", "# h", "- item", "1. one", "---", "x\n> y")] == [
        "\\> q", "\\# h", "\\- item", "1\\. one", "\\---", "x\n\\> y"]  # only where a block would start
    assert [escape_md(text) for text in ("2*3*4", "_private", "<div>", "[x](y)", "&amp;", "~a~", "$a$", "a\\*")] == [
        "2\\*3\\*4", "\\_private", "\\<div>", "\\[x](y)", "\\&amp;", "\\~a\\~", "\\$a\\$", "a\\\\\\*"]
    assert escape_md("decorated with @jax.jit") == "decorated with `@jax.jit`"  # no one is mentioned
    assert escape_md("# title", line_start=False) == "# title"
