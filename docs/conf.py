"""Sphinx configuration: the jitscope documentation (MyST Markdown, sphinx-book-theme).

Build: ``pip install ".[docs]"`` then ``sphinx-build -W -n --keep-going -b html docs docs/_build/html``.
Output shown on a page is produced while the site builds, by running jitscope on the bundled
examples (sphinxcontrib-programoutput's ``{command-output}``: a command that exits with a code its
directive does not name is a warning, so ``-W`` fails the build). The reference pages under
``reference/cli``, ``reference/rules`` and ``reference/schemas.md`` are generated from jitscope
itself by ``_ext/jitscope_docs``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
# The checkout being documented, not whatever jitscope is installed: for autodoc, the generated pages
# and the commands {command-output} runs (they inherit this environment).
sys.path[:0] = [str(ROOT), str(DOCS / "_ext")]
os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
# Output as a pipe gets it, whatever terminal runs the build: plain text, 100 columns.
os.environ.update({"NO_COLOR": "1", "COLUMNS": "100", "JAX_PLATFORMS": "cpu"})
os.environ.pop("FORCE_COLOR", None)

import jitscope  # noqa: E402

project = "jitscope"
author = "the jitscope authors"
copyright = "2026, the jitscope authors"
release = version = jitscope.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinxcontrib.programoutput",
    "jitscope_docs.examples",  # a failing example command fails the build at its page and line
    "jitscope_docs",
]
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
root_doc = "index"

myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3
suppress_warnings: list[str] = []

# The API reference: signatures from the code, types as written there.
autodoc_typehints = "description"
autodoc_typehints_format = "short"
autodoc_member_order = "bysource"

# Nitpicky cross-references (-n): every reference must resolve, except to types of Python, JAX and numpy,
# whose inventories would need the network (the build does not fetch intersphinx inventories).
nitpick_ignore_regex = [
    (r"py:.*", r"(typing|collections\.abc|pathlib|os|types|contextlib|enum|io|concurrent\.futures)\..*"),
    (r"py:.*", r"(jax|jaxlib|numpy|np|rich|IPython)(\..*)?"),
    (r"py:class", r"(Any|Callable|Iterator|Sequence|Mapping|Path|PathLike|Literal|ArrayLike|Self)"),
    (r"py:class", r"(str|int|float|bool|bytes|dict|list|tuple|set|None|object|type)"),
    # jitscope's records: the JSON schemas page lists every field of each (they are data, not API).
    (r"py:class", r"(jitscope\.[\w.]+\.)?(\w+Report|\w+Record|\w+Stats|LineMemory|GateResult|Document|BenchAPIResult|Finding|R)"),
]

programoutput_use_ansi = False

html_theme = "sphinx_book_theme"
html_title = f"jitscope {version}"
html_static_path = [str(DOCS / "_static")]
html_favicon = str(DOCS / "_static" / "favicon.svg")
html_theme_options = {
    "show_toc_level": 2,
    "home_page_in_toc": True,
    "use_download_button": False,
}
html_last_updated_fmt = None
