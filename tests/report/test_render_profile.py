from __future__ import annotations

import io

from rich.console import Console

from jitscope.report.writers.call_trees import show_profiles
from jitscope.report.writers.theme import THEME


class FakeProfiler:
    def __init__(self, name: str) -> None:
        self.name = name

    def output_html(self) -> str:
        return f"<html>{self.name}</html>"

    def output_text(self, unicode: bool, color: bool) -> str:
        assert not color  # a non-terminal console gets no escape codes
        return f"tree of {self.name}\n"


def _console() -> Console:
    return Console(file=io.StringIO(), width=60, color_system=None, theme=THEME)


def test_call_trees_with_subject_and_note():
    console = _console()
    show_profiles([("f(f32[2])", FakeProfiler("a"))], html=None, console=console,
                  subject="the cold call of", note="an extra cold call")
    lines = console.file.getvalue().splitlines()
    assert lines[0].startswith("profile of the cold call of f(f32[2]) (an extra cold call) ─")
    assert lines[1] == "tree of a"


def test_html_files_are_numbered_after_the_first(tmp_path):
    console = _console()
    html = tmp_path / "p.html"
    show_profiles([("f", FakeProfiler("a")), ("g", FakeProfiler("b"))], html=html, console=console)
    assert html.read_text() == "<html>a</html>"
    assert (tmp_path / "p-2.html").read_text() == "<html>b</html>"
    assert "profile of tracing g written to" in console.file.getvalue()
