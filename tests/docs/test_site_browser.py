"""The built docs site in a real browser (headless Chromium, as tests/report/test_browser.py drives it).

Runs when ``JITSCOPE_DOCS_HTML`` names a built site (``.ci/run`` builds it with ``sphinx-build`` and sets
it); skipped otherwise, and without chromium.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
import time
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.report.browser import Browser, find_chromium

SITE = os.environ.get("JITSCOPE_DOCS_HTML", "")
pytestmark = pytest.mark.skipif(not SITE, reason="JITSCOPE_DOCS_HTML does not name a built docs site")


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    """The site served over HTTP on localhost, as a reader's browser gets it (the theme fetches files)."""
    folder = Path(SITE)
    assert (folder / "index.html").is_file(), f"JITSCOPE_DOCS_HTML={SITE} has no index.html: build the site first"
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


#: What the theme logs as an error on a first visit (no light/dark choice stored yet): not a fault of the page.
_THEME_FIRST_VISIT = "Got invalid theme mode"


def _open(browser: Browser, url: str) -> None:
    browser.errors.clear()
    browser.call("Page.navigate", url=url)
    browser.wait_for("Page.loadEventFired")


def _errors(browser: Browser) -> list[str]:
    return [e for e in browser.errors if not e.startswith(_THEME_FIRST_VISIT)]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    executable = find_chromium()
    if executable is None:
        pytest.skip("chromium not found: install Debian's `chromium` package (.ci/run does)")
    pytest.importorskip("websocket", reason="websocket-client (in the `test` extra) drives chromium")
    instance = Browser.start(executable)
    yield instance
    instance.close()


def _wait_for(browser: Browser, expression: str, timeout: float = 30) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = browser.evaluate(expression)
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {expression}")


def test_the_landing_page_renders_and_answers_the_first_question(browser: Browser, site: str) -> None:
    _open(browser, site + "index.html")
    assert _errors(browser) == []
    assert browser.evaluate("document.querySelector('h1').textContent").startswith("jitscope")
    # The reader finds "why does my step recompile" on the first screen, one click away.
    link = browser.evaluate("[...document.querySelectorAll('article a')].find(a => "
                            "/Why does my step recompile/.test(a.textContent)).getAttribute('href')")
    assert link == "guides/recompiles.html"
    assert browser.evaluate("document.querySelector('article a').getBoundingClientRect().top") < 1000
    # The side bar lists the four parts of the site.
    captions = browser.evaluate("[...document.querySelectorAll('.caption-text')].map(c => c.textContent)")
    assert captions[:4] == ["Getting started", "How-to guides", "Reference", "Explanation"]


def test_search_finds_recompile(browser: Browser, site: str) -> None:
    _open(browser, site + "search.html?q=recompile")
    # Sphinx searches in JavaScript after the page loads: wait for its results.
    _wait_for(browser, "/found/.test(document.querySelector('#search-results .search-summary')?.textContent)")
    hrefs = browser.evaluate("[...document.querySelectorAll('#search-results li a')].map(a => a.getAttribute('href'))")
    assert any("guides/recompiles.html" in str(h) for h in hrefs), hrefs  # type: ignore[union-attr]
    assert _errors(browser) == []


def test_a_command_page_lists_its_options(browser: Browser, site: str) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "docs" / "_ext"))
    from jitscope_docs.cli_pages import root_command

    _open(browser, site + "reference/cli/trace.html")
    assert _errors(browser) == []
    headings = browser.evaluate("[...document.querySelectorAll('article h3')].map(h => h.textContent)")
    options = [p.opts[0] for p in root_command().commands["trace"].params
               if p.param_type_name == "option" and not p.hidden]
    assert len(options) > 10
    for option in options:
        assert any(h.startswith(option) for h in headings), (option, headings)
