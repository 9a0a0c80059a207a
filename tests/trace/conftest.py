from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from tests.conftest import ROOT

LAYERED = ROOT / "tests" / "targets" / "models" / "layered"


def load_layered() -> ModuleType:
    """tests/targets/models/layered/model.py (the user's code), which imports layers.py (the "library")."""
    sys.path.insert(0, str(LAYERED))
    try:
        spec = importlib.util.spec_from_file_location("layered_model", LAYERED / "model.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(LAYERED))
    return module
