"""Plain text into Markdown that MyST renders as that text."""

from __future__ import annotations

import re

_SPECIAL = re.compile(r"([\\*_\[\]<>|{}#~$])")


def escape(text: str) -> str:
    """``text`` with Markdown's special characters escaped (backticks kept: help text quotes code in them)."""
    return _SPECIAL.sub(r"\\\1", text) if text.count("`") % 2 == 0 else _SPECIAL.sub(r"\\\1", text.replace("`", "'"))


def code(text: str) -> str:
    """``text`` as inline code, whatever backticks it holds."""
    fence = "``" if "`" in text else "`"
    return f"{fence} {text} {fence}" if fence == "``" else f"`{text}`"
