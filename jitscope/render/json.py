"""JSON output: every report is ``to_jsonable(record)`` with a schema version and a kind."""

from __future__ import annotations

import json
from typing import Any

from jitscope.model.common import to_jsonable


def dumps(record: Any) -> str:
    """A stable, indented JSON document for ``record`` (keys in field order, NaN as null)."""
    return json.dumps(to_jsonable(record), indent=2, allow_nan=False)
