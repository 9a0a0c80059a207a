"""The HTML reports in a real browser: headless Chromium through the DevTools protocol.

Each report is made by the CLI, opened in Chromium, and checked: the rendered DOM, no
console errors, the cross-highlighting after a scripted click, static content with
JavaScript off, and dark mode. ``JITSCOPE_SCREENSHOTS=docs`` also saves a screenshot of
each report kind there. Skipped, with the reason, without ``chromium`` (Debian's package;
``.ci/run`` installs it) or ``websocket-client`` (the ``test`` extra).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, run_cli
from tests.report.browser import Browser, find_chromium

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")

HIGHLIGHTED = """[...document.querySelectorAll('.l.hl,.l.sel')].map(l => l.closest('.code').dataset.lang + ': ' +
  l.textContent.replace(/\\s+/g, ' ').trim())"""


def _click(selector_js: str) -> str:
    return f"(() => {{ const el = {selector_js}; el.click(); return {HIGHLIGHTED}; }})()"


def _line(lang: str, text: str) -> str:
    return (f"[...document.querySelectorAll('[data-lang={lang}] .l')]"
            f".find(l => l.textContent.includes({text!r}))")


def _line_matching(lang: str, pattern: str) -> str:
    """The first line of a listing matching a JS regex: jaxpr variable names and XLA instruction
    names differ between JAX versions, the structure does not."""
    return (f"[...document.querySelectorAll('[data-lang={lang}] .l')]"
            f".find(l => /{pattern}/.test(l.textContent))")


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    executable = find_chromium()
    if executable is None:
        pytest.skip("chromium not found: install Debian's `chromium` package (.ci/run does) to test the HTML "
                    "reports in a browser")
    pytest.importorskip("websocket", reason="websocket-client (in the `test` extra) drives chromium")
    instance = Browser.start(executable)
    yield instance
    instance.close()


def _screenshot(browser: Browser, name: str) -> None:
    folder = os.environ.get("JITSCOPE_SCREENSHOTS")
    if folder:
        browser.emulate()
        browser.evaluate("window.scrollTo(0, 0)")
        browser.screenshot(Path(folder) / f"report-{name}.png")


@pytest.fixture(scope="module")
def trace_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("trace") / "trace.html"
    result = run_cli("trace", "mlp.py:predict", "--out", str(path), cwd=EXAMPLES)
    assert result.returncode == 0, result.stderr
    return path


def test_trace_report_renders_without_console_errors(browser: Browser, trace_report: Path) -> None:
    browser.emulate()
    browser.open(trace_report)
    assert browser.errors == []
    assert browser.evaluate("document.title") == "jitscope trace: mlp.py:predict"
    assert browser.evaluate("[...document.querySelectorAll('.code')].map(c => c.dataset.lang)") == [
        "python", "jaxpr", "stablehlo", "hlo"]
    # Source beside the IR: the source panel and the jaxpr start on the same row.
    assert browser.evaluate("(() => { const [s, j] = ['[data-lang=python]', '[data-lang=jaxpr]'].map("
                            "q => document.querySelector(q).getBoundingClientRect()); "
                            "return s.right <= j.left && Math.abs(s.top - j.top) < 80; })()")
    assert browser.evaluate("document.querySelector('h3').textContent").startswith("what the function saw")
    _screenshot(browser, "trace")


def test_clicking_an_equation_highlights_its_source_line_and_hlo(browser: Browser, trace_report: Path) -> None:
    browser.open(trace_report)
    shown = browser.evaluate(_click(_line_matching("jaxpr", r"= max \w+ 0\.0")))
    assert "python: 30 h = jax.nn.relu(h)" in shown
    assert [s for s in shown if s.startswith("jaxpr")] == [
        next(s for s in shown if s.startswith("jaxpr") and " = max " in s and "# mlp.py:30" in s)
    ]
    assert any(s.startswith("stablehlo: ") and "stablehlo.maximum" in s for s in shown)
    assert any(s.startswith("hlo: ") and " = f32[128,512]{1,0} maximum(" in s for s in shown)
    assert not any("dot(" in s for s in shown)
    assert browser.evaluate("document.querySelectorAll('.l.sel').length") == 1
    assert browser.errors == []


def test_clicking_hlo_or_source_goes_back(browser: Browser, trace_report: Path) -> None:
    browser.open(trace_report)
    shown = browser.evaluate(_click(_line_matching("hlo", r"%\S+ = f32\[128,512\]\S* dot\(")))
    assert [s for s in shown if s.startswith("python")] == ["python: 28 h = h @ layer[\"w\"] + layer[\"b\"]"]
    jaxpr = [s for s in shown if s.startswith("jaxpr")]
    assert len(jaxpr) == 2 and all(" = dot_general[ " in s and s.endswith("# mlp.py:28") for s in jaxpr)
    shown = browser.evaluate(_click(_line("python", "jax.nn.relu")))
    jaxpr = [s for s in shown if s.startswith("jaxpr")]
    # custom_jvp_call, jit, and the max inside jax.nn.relu (annotated with the chain that reached it)
    assert len(jaxpr) == 3 and all("# mlp.py:30" in s for s in jaxpr)
    assert any(" = max " in s and "# mlp.py:30 <- jax/" in s for s in jaxpr)
    assert any(s.startswith("hlo:") and "maximum(" in s for s in shown)
    assert browser.errors == []


def test_nested_jaxprs_fold_and_static_content_needs_no_script(browser: Browser, trace_report: Path) -> None:
    browser.emulate(javascript=False)
    browser.open(trace_report)
    assert browser.evaluate("document.querySelectorAll('[data-lang=jaxpr] details.fold').length") == 2
    assert "stablehlo.dot_general" in browser.evaluate("document.querySelector('[data-lang=stablehlo]').innerText")
    # library jaxprs (here jax.nn.relu's) start folded; their equations are in the page all the same
    assert " = max " in browser.evaluate("document.querySelector('[data-lang=jaxpr]').textContent")
    assert browser.evaluate("(() => { const d = document.querySelector('[data-lang=jaxpr] details.fold');"
                            "const before = d.open; d.querySelector('summary').click(); return d.open !== before; })()")
    browser.emulate(dark=True)
    browser.open(trace_report)
    assert browser.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(13, 17, 23)"
    browser.emulate()


def test_bench_report_draws_its_charts(browser: Browser, tmp_path: Path) -> None:
    path = tmp_path / "bench.html"
    result = run_cli("bench", "bench_workloads.py:small", "-s", "f32[8]", "-s", "f32[4096]", "-s", "f32[65536]",
                     "--budget", "0.02", "--min-rounds", "8", "--no-dispatch", "--out", str(path), cwd=EXAMPLES)
    assert result.returncode == 0, result.stderr
    browser.emulate()
    browser.open(path)
    assert browser.errors == []
    assert browser.evaluate("[...document.querySelectorAll('h3')].map(h => h.firstChild.textContent.trim())") == [
        "first call (cold)", "cached calls", "what it means", "scaling"]
    charts = browser.evaluate("[...document.querySelectorAll('svg.chart')].map(s => [s.getAttribute('aria-label'), "
                              "s.getBoundingClientRect().width > 300, s.querySelectorAll('rect,circle').length])")
    assert [c[0] for c in charts] == [
        "where the first call's time goes", "small(f32[8]): per-call time of each round",
        "small(f32[4096]): per-call time of each round", "small(f32[65536]): per-call time of each round",
        "small: time against input size (log-log)"]
    assert all(visible and marks >= 3 for _, visible, marks in charts)
    assert "slope" in browser.evaluate("document.querySelector('svg[aria-label*=log-log]').textContent")
    _screenshot(browser, "bench")


def test_lint_report_groups_findings_by_file(browser: Browser, tmp_path: Path) -> None:
    path = tmp_path / "lint.html"
    result = run_cli("lint", "examples/impure.py", "examples/static_args.py", "--out", str(path))
    assert result.returncode == 1, result.stderr  # findings
    browser.emulate()
    browser.open(path)
    assert browser.errors == []
    assert browser.evaluate("[...document.querySelectorAll('section.page > h2')].map(h => h.firstChild.textContent.trim())"
                            ) == ["examples/impure.py", "examples/static_args.py"]
    # an index of the files, as tlparse's: every link lands on its file's section
    assert browser.evaluate("[...document.querySelectorAll('nav.toc a')].map(a => document.getElementById("
                            "decodeURIComponent(a.hash.slice(1))).querySelector('h2').firstChild.textContent.trim())"
                            ) == ["examples/impure.py", "examples/static_args.py"]
    # the flagged code underlined (a wavy line in the finding's colour)
    assert browser.evaluate("getComputedStyle(document.querySelector('.code u')).textDecorationStyle") == "wavy"
    marked = browser.evaluate("[...document.querySelectorAll('section.page .l.mark')].length")
    assert marked == browser.evaluate("document.querySelectorAll('section.page .code').length") > 0
    rules = browser.evaluate("[...document.querySelectorAll('#rules details.sec')].map(d => [d.id, d.open])")
    assert ["rule-JS101", False] in rules
    assert browser.evaluate("(() => { const d = document.querySelector('#rule-JS101'); d.querySelector('summary')"
                            ".click(); return d.open && d.innerText.includes('What it does'); })()")
    _screenshot(browser, "lint")


def test_run_report_draws_the_compile_timeline(browser: Browser, tmp_path: Path) -> None:
    path = tmp_path / "run.html"
    result = run_cli("run", "--no-effects", "--log", "none", "--out", str(path), "examples/train_loop.py")
    assert result.returncode == 0, result.stderr
    browser.emulate()
    browser.open(path)
    assert browser.errors == []
    assert browser.evaluate("document.title") == "jitscope run: examples/train_loop.py"
    assert browser.evaluate("[...document.querySelectorAll('h3')].map(h => h.firstChild.textContent.trim())") == [
        "functions", "step: 5 recompiles", "main.<locals>.<lambda>: 2 recompiles", "internal compiles"]
    timeline = "document.querySelector('svg[aria-label^=\"compile timeline\"]')"
    assert browser.evaluate(f"{timeline}.getBoundingClientRect().width") > 600
    lanes = browser.evaluate(f"[...{timeline}.querySelectorAll('text[text-anchor=end]')].map(t => t.firstChild.textContent)")
    assert lanes[:3] == ["step", "main.<locals>.<lambda>", "internal compiles"]
    # 9 compiles of the user's functions, 7 of them recompiles (outlined, labelled with what changed)
    assert browser.evaluate(f"{timeline}.querySelectorAll('g.span').length") > 9
    assert browser.evaluate(f"{timeline}.querySelectorAll('g.span.mark').length") == 7
    labels = browser.evaluate(f"[...{timeline}.querySelectorAll('text.relab')].map(t => t.textContent)")
    assert "compile 2: x: shape, y: shape" in labels and "compile 2: function: object" in labels
    # every bar is on the chart, inside its lane's row
    assert browser.evaluate(f"""(() => {{ const box = {timeline}.getBoundingClientRect();
        return [...{timeline}.querySelectorAll('g.span rect')].every(r => {{ const b = r.getBoundingClientRect();
        return b.left >= box.left && b.right <= box.right + 1 && b.width > 0; }}); }})()""")
    tooltips = browser.evaluate(f"[...{timeline}.querySelectorAll('g.span.mark > title')].map(t => t.textContent)")
    assert any(t.startswith("compile 4 from examples/train_loop.py:67: lr: weak_type True -> False (vs compile 1)\n"
                            "trace ") for t in tooltips), tooltips
    _screenshot(browser, "run")


def test_run_report_needs_no_script_and_follows_dark_mode(browser: Browser, tmp_path: Path) -> None:
    path = tmp_path / "run.html"
    result = run_cli("run", "--no-effects", "--log", "none", "--out", str(path), "examples/train_loop_fixed.py")
    assert result.returncode == 0, result.stderr
    browser.emulate(javascript=False, dark=True)
    browser.open(path)
    assert browser.errors == []
    assert browser.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(13, 17, 23)"
    assert browser.evaluate("document.querySelectorAll('svg g.span.mark').length") == 0
    assert browser.evaluate("document.querySelector('#internal').open") is False
    assert browser.evaluate("[...document.querySelectorAll('h3')].map(h => h.firstChild.textContent.trim())") == [
        "functions", "internal compiles"]
    browser.emulate()


@pytest.fixture(scope="module")
def profile_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("profile") / "profile.html"
    result = run_cli("profile", "profile_hotspot.py:layer", "--calls", "8", "--budget", "0.05", "--out", str(path),
                     cwd=EXAMPLES)
    assert result.returncode == 0, result.stderr
    return path


def test_profile_report_shows_the_hot_line_and_folds_helpers(browser: Browser, profile_report: Path) -> None:
    browser.emulate()
    browser.open(profile_report)
    assert browser.errors == []
    assert browser.evaluate("[...document.querySelectorAll('h3')].map(h => h.firstChild.textContent.trim())") == [
        "top source lines", "source", "top HLO ops", "where a call's time goes"]
    # the matmul's line is the marked (hottest) line of the listing, with the longest heat bar
    hot = browser.evaluate("[...document.querySelectorAll('#profile-source .l.mark')].map(l => l.dataset.src)")
    assert hot == ["profile_hotspot.py:18"]
    assert browser.evaluate("document.querySelector('#profile-source .l.mark').textContent").strip().endswith(
        "y = h @ w")
    bars = browser.evaluate("""[...document.querySelectorAll('#profile-source > .l')].map(l => {
        const bar = l.querySelector('span:nth-child(2)'); return bar ? bar.getBoundingClientRect().width : 0; })""")
    assert max(bars) > 0
    # the helper's lines sit folded under the call line (return normalize(y)), and fold away
    fold = "document.querySelector('#profile-source details.fold')"
    assert browser.evaluate(f"{fold}.querySelector('summary .l').dataset.src") == "profile_hotspot.py:20"
    helper = browser.evaluate(f"[...{fold}.querySelectorAll(':scope > .l')].map(l => l.dataset.src)")
    assert helper == ["profile_hotspot.py:11", "profile_hotspot.py:12"]
    assert browser.evaluate(f"(() => {{ const d = {fold}; d.querySelector('summary').click(); "
                            "return [d.open, d.querySelector(':scope > .l').checkVisibility()]; })()"
                            ) == [False, False]
    _screenshot(browser, "profile")


def _bench_page(folder: Path) -> Path:
    """A bench report from fixed records with every section (eager, cold process, scaling, comparison, warnings)."""
    import dataclasses

    from jitscope.report.views.bench import bench_document
    from jitscope.report.writers.html import render_html
    from jitscope.timing.compare import compare
    from jitscope.timing.scaling import scaling_records
    from tests.bench.conftest import report, row
    from tests.bench.test_bench_render import full_row

    rows = [full_row(row, "f32[1024,1024], f32[1024,1024]"), row(call="f32[8]", input_bytes=32, median=1e-3)]
    current = dataclasses.replace(report(*rows), scaling=scaling_records(rows))
    current = dataclasses.replace(current, comparison=compare(current, report(*rows), threshold=0.1,
                                                                         baseline_name="base.json"))
    path = folder / "bench.html"
    path.write_text(render_html(bench_document(current)), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def every_report(tmp_path_factory: pytest.TempPathFactory, trace_report: Path,
                 profile_report: Path) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("kinds")
    lint, run = folder / "lint.html", folder / "run.html"
    assert run_cli("lint", "examples/impure.py", "--out", str(lint)).returncode == 1  # findings
    result = run_cli("run", "--no-effects", "--log", "none", "--out", str(run), "examples/train_loop.py")
    assert result.returncode == 0, result.stderr
    return {"trace": trace_report, "bench": _bench_page(folder), "lint": lint, "run": run, "profile": profile_report}


#: Something folded (closed ``<details>``) in each report kind, which print must show anyway.
FOLDED = {"trace": None, "bench": None, "lint": "#rule-JS101 pre", "run": "#internal table", "profile": None}


@pytest.mark.parametrize("kind", ["trace", "bench", "lint", "run", "profile"])
def test_every_report_reads_in_light_dark_and_print(browser: Browser, every_report: dict[str, Path], kind: str) -> None:
    """No console errors in any mode; dark follows the system; print is light, unboxed and unfolded."""
    page = every_report[kind]
    colours = "[getComputedStyle(document.body).backgroundColor, getComputedStyle(document.body).color]"
    browser.emulate()
    browser.open(page)
    assert browser.errors == []
    assert browser.evaluate(colours) == ["rgb(255, 255, 255)", "rgb(31, 35, 40)"]
    browser.emulate(dark=True)
    browser.open(page)
    assert browser.errors == []
    assert browser.evaluate(colours) == ["rgb(13, 17, 23)", "rgb(230, 237, 243)"]
    folded = FOLDED[kind]
    for javascript in (True, False):
        browser.emulate(dark=True, media="print", javascript=javascript)  # a dark desktop prints on white paper
        browser.open(page)
        assert browser.errors == []
        assert browser.evaluate(colours) == ["rgb(255, 255, 255)", "rgb(31, 35, 40)"]
        assert browser.evaluate("[...document.querySelectorAll('.code')].every(c => getComputedStyle(c).maxHeight "
                                "=== 'none')")
        if folded is not None:
            assert browser.evaluate(f"document.querySelector('{folded}').getBoundingClientRect().height") > 0
    assert browser.pdf().startswith(b"%PDF")
    assert browser.errors == []
    browser.emulate()
