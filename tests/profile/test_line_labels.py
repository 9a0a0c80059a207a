"""How a source line is named in profile's and memory's tables."""

from __future__ import annotations

import pytest

from jitscope.model.common import Location
from jitscope.report.views.profile import short_location


@pytest.mark.parametrize(("file", "home", "label"), [
    ("/work/proj/model.py", "/work/proj/model.py", "18"),
    ("/work/proj/layers.py", "/work/proj/model.py", "layers.py:18"),
    ("/venv/lib/python3.11/site-packages/flax/nnx/compilation.py", "/work/proj/model.py", "flax/nnx/compilation.py:18"),
    ("/usr/lib/python3/dist-packages/jax/_src/nn/functions.py", "", "jax/_src/nn/functions.py:18"),
    ("C:\\venv\\Lib\\site-packages\\optax\\_src\\alias.py", "", "optax/_src/alias.py:18"),
])
def test_a_library_line_keeps_its_package_path(file: str, home: str, label: str) -> None:
    assert short_location(Location(file, 18, "f"), home) == label
