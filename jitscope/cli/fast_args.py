"""A command line parsed with the standard library, for the commands that start without typer.

Importing typer (and its vendored click) and building the command costs about 20 ms before any
work starts: a quarter of what ``jitscope trace`` adds to the JAX work it shows, and the start of
every ``jitscope run``. ``parse`` reads the plain cases of a command's options from a table
(``Options``) and gives up (None) on anything else: ``--help``, a misspelt option, a value out
of range, ``-sVALUE`` spellings; typer then parses the same line and explains the problem, as for
every other command. Each command's tests check that this parser and its typer command agree.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from jitscope import __version__

#: Set (to anything) to parse every command line with typer (and print every report through rich: see
#: ``report/writers/plain_text.py``), as before the fast paths: for debugging and tests.
ESCAPE_HATCH = "JITSCOPE_NO_FAST_PATH"


#: Click's shell-completion protocol (typer's ``--install-completion`` scripts): the shell runs
#: ``jitscope`` with this set and the words typed so far in ``COMP_WORDS`` or ``_TYPER_COMPLETE_ARGS``.
#: Only typer can answer it, so no fast path takes a line while it is set (``cli/app.py``).
COMPLETE_VAR = "_JITSCOPE_COMPLETE"


def version_text() -> str:
    """What ``jitscope --version`` prints, on the fast path and through typer: the version written once, in
    ``jitscope/__init__.py``."""
    return f"jitscope {__version__}"


def enabled() -> bool:
    """Whether a command line may be parsed here (the escape hatch unset)."""
    return not os.environ.get(ESCAPE_HATCH)


#: Turns an option's text into its value, or None when typer should report the text as invalid.
Convert = Callable[[str], object]


@dataclass(frozen=True)
class Options:
    """A command's options, by every spelling."""

    #: Options that take a value: spelling -> (field, convert).
    valued: Mapping[str, tuple[str, Convert]]
    #: Flags: spelling -> (field, value set).
    flags: Mapping[str, tuple[str, object]] = field(default_factory=dict)
    #: Fields an option fills by repeating (a list, in the order given).
    repeated: frozenset[str] = frozenset()
    #: Spellings after whose value every argument is positional (``run -m MODULE ARGS``).
    last: frozenset[str] = frozenset()
    #: Options may follow positional arguments (click's default); False: the first positional ends them.
    interspersed: bool = True


def parse(args: Sequence[str], options: Options) -> tuple[dict[str, object], list[str]] | None:
    """``args`` as (the options' fields, the positional arguments); None when typer should parse them."""
    values: dict[str, object] = {}
    positional: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--":
            positional += args[index + 1:]
            break
        if not arg.startswith("-") or arg == "-":
            if not options.interspersed:
                positional += args[index:]
                break
            positional.append(arg)
            index += 1
            continue
        name, eq, inline = arg.partition("=")
        if name in options.flags and not eq:
            flag_field, value = options.flags[name]
            values[flag_field] = value
            index += 1
            continue
        if name not in options.valued:
            return None  # --help, -h, a typo, -sVALUE: typer explains
        if eq:
            raw, index = inline, index + 1
        elif index + 1 < len(args):
            raw, index = args[index + 1], index + 2
        else:
            return None
        valued_field, convert = options.valued[name]
        parsed = convert(raw)
        if parsed is None:
            return None
        if valued_field in options.repeated:
            values.setdefault(valued_field, [])
            values[valued_field].append(parsed)  # type: ignore[attr-defined]
        else:
            values[valued_field] = parsed
        if name in options.last:
            positional += args[index:]
            break
    return values, positional


def number(least: float | None = None, kind: Callable[[str], float] = float) -> Convert:
    """A number of ``kind`` (float, int), at least ``least``; None (typer explains) for anything else."""
    def convert(raw: str) -> float | None:
        try:
            value = kind(raw)
        except ValueError:
            return None
        return value if least is None or value >= least else None
    return convert


def integer(least: int | None = None) -> Convert:
    """An int, at least ``least``."""
    return number(least, int)


def choice(names: Sequence[str]) -> Convert:
    """One of ``names``, exactly (typer's choices are case-sensitive)."""
    return lambda raw: raw if raw in names else None


def text(raw: str) -> str:
    return raw


def path(raw: str) -> Path:
    return Path(raw)
