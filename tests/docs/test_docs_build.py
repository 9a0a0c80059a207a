"""The docs build fails on what would mislead a reader: a broken cross-reference or a missing page (with
the file and line), and an example command that fails (never rendered as an error on the page).

Runs Sphinx on a two-page project with the site's own ``docs/conf.py``; skipped without the ``docs``
extra (``pip install ".[docs]"``).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

CONF = Path(__file__).resolve().parents[2] / "docs" / "conf.py"

pytest.importorskip("sphinx", reason="the docs extra (pip install '.[docs]') builds the site")
pytest.importorskip("myst_parser", reason="the docs extra (pip install '.[docs]') builds the site")
pytest.importorskip("sphinxcontrib.programoutput", reason="the docs extra (pip install '.[docs]') builds the site")


def _build(src: Path, pages: dict[str, str]) -> subprocess.CompletedProcess[str]:
    src.mkdir()
    # The site's configuration, less the generated reference pages (not needed here, and slower).
    (src / "conf.py").write_text(f"__file__ = {str(CONF)!r}\nexec(compile(open(__file__).read(), __file__, 'exec'))\n"
                                 "extensions.remove('jitscope_docs')\n", encoding="utf-8")
    for name, text in pages.items():
        (src / name).write_text(text, encoding="utf-8")
    return subprocess.run([sys.executable, "-m", "sphinx", "-W", "-n", "--keep-going", "-q", "-b", "html",
                           str(src), str(src.parent / "html")], capture_output=True, text=True, timeout=300,
                          check=False)


def test_broken_references_and_failing_examples_fail_the_build_with_file_and_line(tmp_path: Path) -> None:
    proc = _build(tmp_path / "src", {
        "index.md": "# Home\n\nSee [a page that is gone](gone.md).\n\n```{toctree}\nother\n```\n",
        "other.md": "# Other\n\nText.\n\nThe API: {py:func}`jitscope.no_such_function`, {py:exc}`jitscope.errors.UsageError`.\n\n"
                    "```{command-output} jitscope trace no_such_file.py:f\n```\n\n"
                    "```{command-output} jitscope rule JS101\n```\n\n"
                    "```{eval-rst}\n.. autoexception:: jitscope.errors.UsageError\n```\n",
    })
    assert proc.returncode != 0
    err = proc.stderr
    assert f"{tmp_path / 'src' / 'index.md'}:3: WARNING" in err and "gone" in err, err
    assert f"{tmp_path / 'src' / 'other.md'}:5: WARNING" in err and "jitscope.no_such_function" in err, err
    assert (f"{tmp_path / 'src' / 'other.md'}:7: WARNING: example command `jitscope trace no_such_file.py:f` "
            "exited 2, not 0: error: file not found: no_such_file.py") in err, err
    assert err.count("WARNING") == 3, err  # what resolves (a page, the API, a command that works) is no warning
    assert "print-in-traced-code" in (tmp_path / "html" / "other.html").read_text(encoding="utf-8")
