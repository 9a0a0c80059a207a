"""``reference/config.md`` against ``jitscope/config.py``: every accepted lint key must be documented."""

from __future__ import annotations


def undocumented_lint_keys(page: str) -> list[str]:
    """The ``[tool.jitscope.lint]`` keys config.py accepts that ``page`` never names (as `key`)."""
    from jitscope.config import _LINT_KEYS

    return [key for key in _LINT_KEYS if f"`{key}`" not in page and f"\n{key} =" not in page]
