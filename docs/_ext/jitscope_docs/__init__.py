"""Sphinx extension: the reference pages generated from jitscope itself.

At ``builder-inited`` it writes ``reference/cli/*.md`` (one page per command, from the typer app's
click parameters), ``reference/rules/*.md`` (one page per lint rule, from the registry) and
``reference/schemas.md`` (from the JSON records), each only when its text changed, so an incremental
build rebuilds what changed. Those files are generated: ``.gitignore`` lists them, nobody edits them.
``jitscope_docs.examples`` (loaded with it) fails the build at the page and line of an example
command that fails. It also checks that ``reference/config.md`` names every ``[tool.jitscope.lint]`` key ``config.py``
accepts. The page text comes from the modules beside this one, which import no Sphinx (the tests
call them directly).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jitscope_docs.cli_pages import cli_pages
from jitscope_docs.config_keys import undocumented_lint_keys
from jitscope_docs.rule_pages import rule_pages
from jitscope_docs.schema_page import schema_pages

#: Folders and files under docs/ that this extension writes (``.gitignore`` lists the same).
GENERATED = ("reference/cli", "reference/rules", "reference/schemas.md")


def generated_pages() -> dict[str, str]:
    """Every generated page: its path under docs/ -> its Markdown text."""
    return {**cli_pages(), **rule_pages(), **schema_pages()}


def write_pages(srcdir: Path, pages: dict[str, str]) -> list[str]:
    """Write ``pages`` under ``srcdir`` (unchanged files are left alone); remove stale generated pages."""
    written = []
    for rel, text in pages.items():
        path = srcdir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            written.append(rel)
    for folder in (g for g in GENERATED if not g.endswith(".md")):
        for stale in (srcdir / folder).glob("*.md"):
            if stale.relative_to(srcdir).as_posix() not in pages:
                stale.unlink()
    return written


def _on_builder_inited(app: Any) -> None:
    from sphinx.util import logging

    srcdir = Path(app.srcdir)
    write_pages(srcdir, generated_pages())
    config_page = srcdir / "reference" / "config.md"
    for key in undocumented_lint_keys(config_page.read_text(encoding="utf-8")):
        logging.getLogger(__name__).warning(
            f"[tool.jitscope.lint] key {key!r} (jitscope/config.py) is not documented",
            location=(str(config_page), 1), type="jitscope", subtype="config")


def setup(app: Any) -> dict[str, Any]:
    app.connect("builder-inited", _on_builder_inited)
    app.setup_extension("jitscope_docs.examples")
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
