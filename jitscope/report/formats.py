"""Report format names and the ``--out FILE`` suffixes that pick them (standard library only).

Kept apart from ``cli/options.py`` (typer) so that ``jitscope run``'s own parser
(``cli/run_command.py``), which starts the user's program before typer is imported, reads the
same names and the same rules.

What ``--out FILE`` without ``--format`` means, on every command:

- a suffix naming a format the command writes picks it (``report.html``);
- a suffix naming a format the command does not write (``.sarif`` on anything but lint) is an
  error naming the formats it does write;
- any other suffix, or none: ``trace`` writes its stage folder there, ``run`` writes JSON (what
  ``--out`` always wrote), ``bench``, ``lint`` and ``profile`` stop with an error asking for a suffix or
  ``--format`` (``resolve_format`` below).
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path

#: Formats every report command writes; lint adds sarif and github.
REPORT_FORMATS: tuple[str, ...] = ("text", "json", "markdown", "html")
#: ``--out FILE`` picks the format from the suffix when ``--format`` is not given.
SUFFIX_FORMATS: dict[str, str] = {
    ".txt": "text", ".text": "text", ".json": "json", ".md": "markdown", ".markdown": "markdown",
    ".html": "html", ".htm": "html", ".sarif": "sarif",
}


def suffixes_of(formats: tuple[str, ...]) -> str:
    """``.txt, .json, .md or .html``: the first suffix of each format that has one."""
    firsts = list(dict.fromkeys(suffix for suffix, fmt in SUFFIX_FORMATS.items() if fmt in formats
                                and suffix in (".txt", ".json", ".md", ".html", ".sarif")))
    return ", ".join(firsts[:-1]) + f" or {firsts[-1]}" if len(firsts) > 1 else "".join(firsts)


def format_of_suffix(path: str, supported: tuple[str, ...] = REPORT_FORMATS) -> str | None:
    """The format a file name's suffix names (``report.html`` -> html), or None for no or an unknown
    suffix; a ``UsageError`` when the suffix names a format outside ``supported``."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    stem, dot, suffix = name.rpartition(".")
    if not dot or not stem:
        return None
    fmt = SUFFIX_FORMATS.get("." + suffix.lower())
    if fmt is not None and fmt not in supported:
        from jitscope.errors import UsageError

        raise UsageError(f"--out {path} asks for {fmt}, which this command does not write",
                         hint=f"its formats are {', '.join(supported)}: name the file {suffixes_of(supported)}, "
                         "or pass --format")
    return fmt


def resolve_format(fmt: Enum | str | None, out: Path | None, choices: tuple[str, ...] = REPORT_FORMATS) -> str:
    """The format asked for: ``--format``, else the ``--out`` file's suffix, else text on stdout.

    An ``--out`` whose suffix names no format the command writes is an error."""
    if fmt is not None:
        return fmt.value if isinstance(fmt, Enum) else fmt
    if out is None:
        return "text"
    named = format_of_suffix(str(out), choices)
    if named is None:
        from jitscope.errors import UsageError

        raise UsageError(f"cannot tell the format from the suffix of --out {out}",
                         hint=f"name it {suffixes_of(choices)}, or pass --format {'|'.join(choices)}")
    return named


def is_report_file(out: Path | None) -> bool:
    """True when ``--out`` names a report file (a format's suffix) rather than a folder."""
    return out is not None and out.suffix.lower() in SUFFIX_FORMATS
