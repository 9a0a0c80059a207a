"""Report format names and the ``--out FILE`` suffixes that pick them (standard library only).

Kept apart from ``cli/options.py`` (typer) so that ``jitscope run``'s own parser
(``run/command.py``), which starts the user's program before typer is imported, reads the
same names.
"""

from __future__ import annotations

#: Formats every report command writes; lint adds sarif and github.
REPORT_FORMATS: tuple[str, ...] = ("text", "json", "markdown", "html")
#: ``--out FILE`` picks the format from the suffix when ``--format`` is not given.
SUFFIX_FORMATS: dict[str, str] = {
    ".txt": "text", ".text": "text", ".json": "json", ".md": "markdown", ".markdown": "markdown",
    ".html": "html", ".htm": "html", ".sarif": "sarif",
}


def format_of_suffix(path: str) -> str | None:
    """The format a file name's suffix names (``report.html`` -> html), or None."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    stem, dot, suffix = name.rpartition(".")
    if not dot or not stem:
        return None
    return SUFFIX_FORMATS.get("." + suffix.lower())
