"""Console factory: rich on a terminal, plain text when piped or with NO_COLOR.

rich already drops colour when the stream is not a terminal and honours NO_COLOR;
what we add is a wide, non-wrapping console for piped output so IR text is never
folded at 80 columns, and stderr consoles for progress and diagnostics so stdout
stays clean for ``--format json``.
"""

from __future__ import annotations

import os
import sys
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

#: Width of rules and tables when output is not a terminal; IR lines are never folded (soft wrap).
PIPE_WIDTH = 100


def may_be_terminal(stream: IO[str] | None) -> bool:
    """Whether rich could take ``stream`` for a terminal: False only when it surely would not (not a tty, and no
    FORCE_COLOR or TTY_COMPATIBLE=1 saying otherwise), so that piped output need not import rich to ask
    (rich's console costs about 20 ms of imports)."""
    if os.environ.get("FORCE_COLOR") or os.environ.get("TTY_COMPATIBLE") == "1":
        return True
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (OSError, ValueError):  # a closed stream
        return False


def make_console(*, stderr: bool = False, file: IO[str] | None = None, width: int | None = None) -> Console:
    """A themed console on stdout (default), stderr or ``file``."""
    from rich.console import Console

    from jitscope.report.writers.theme import THEME

    stream = file if file is not None else (sys.stderr if stderr else sys.stdout)
    is_tty = bool(getattr(stream, "isatty", lambda: False)())
    no_color = "NO_COLOR" in os.environ or not is_tty
    force_term = os.environ.get("FORCE_COLOR") not in (None, "")
    return Console(
        file=stream,
        theme=THEME,
        width=width if width is not None else (None if is_tty else PIPE_WIDTH),
        no_color=no_color and not force_term,
        color_system=None if (no_color and not force_term) else "auto",
        highlight=False,
        soft_wrap=not is_tty,
        emoji=False,
        force_jupyter=False if file is not None else None,  # into a file: never a notebook's display
    )


def plain_console(file: IO[str], width: int = 100) -> Console:
    """A colourless console with a fixed width, for tests and for writing files."""
    from rich.console import Console

    from jitscope.report.writers.theme import THEME

    # force_jupyter: in a notebook rich would send the text to the cell's output instead of ``file``
    return Console(file=file, theme=THEME, width=width, color_system=None, highlight=False, emoji=False,
                   force_jupyter=False)
