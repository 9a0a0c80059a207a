"""The typer app behind ``jitscope``: every command, registered from its own module.

Each command lives in its own module with a ``register(app)`` function. Command
modules import jax only inside the command body, so ``jitscope --help`` and
``jitscope CMD --help`` never pay for importing jax. ``cli.app.main`` is the entry
point; it imports this module unless ``jitscope run`` can start without it, and builds
an app with just the command named on the line (``app_for``): ``jitscope trace`` does
not import the bench, lint, run and rule modules. ``app`` (every command) is built on
first use.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from collections.abc import Iterator, Sequence
from typing import Any

import typer
from typer.core import TyperGroup

from jitscope.cli.fast_args import version_text

#: Command modules under ``jitscope.cli``, in the order ``--help`` lists them.
COMMAND_MODULES: tuple[str, ...] = ("doctor", "trace", "bench", "profile", "memory", "diff", "lint", "run", "merge",
                                   "rule", "lsp")

#: Help width when stdout is not a terminal and COLUMNS is not set.
PIPED_HELP_WIDTH = 100


def piped_help_width() -> int | None:
    """The width for plain ``--help`` text when stdout is not a terminal; None on a terminal.

    Typer's rich help panels truncate long cells with an ellipsis and fall back to 80
    columns when piped, so ``jitscope trace --help > f`` lost text. Piped help is click's
    plain layout instead: complete, wrapped at COLUMNS (or 100).
    """
    if sys.stdout is not None and sys.stdout.isatty():
        return None
    columns = os.environ.get("COLUMNS", "")
    return int(columns) if columns.isdigit() and int(columns) >= 40 else PIPED_HELP_WIDTH


class _OneLineUsageErrors(TyperGroup):
    """click's usage errors (a value out of ``min``/``max``, not an int, not one of the choices, an unknown option,
    a missing argument) as one ``error:`` line, exit 2, like every other jitscope error, instead of click's
    usage line, hint and ``Error:`` line. Help for a command given no arguments is still help."""

    def make_context(self, *args: Any, **kwargs: Any) -> Any:
        with _one_line():
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx: Any) -> Any:  # parses the command's own options (its make_context) before it runs it
        with _one_line():
            return super().invoke(ctx)


def _usage_errors() -> tuple[type[Exception], ...]:
    """click's ``UsageError``: typer 0.28 parses with a copy of click of its own (``typer._click``)."""
    import typer.core

    modules = (getattr(typer.core, "_click", None), getattr(typer.core, "click", None))
    return tuple({module.exceptions.UsageError for module in modules if module is not None})


@contextlib.contextmanager
def _one_line() -> Iterator[None]:
    try:
        yield
    except _usage_errors() as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # a command given no arguments shows its help
            raise
        from jitscope.errors import UsageError

        text = " ".join(exc.format_message().split()).rstrip(".")
        if text[:1].isupper() and text[1:2].islower():  # "Invalid value ...": jitscope's lines start lower-case
            text = text[0].lower() + text[1:]
        ctx = getattr(exc, "ctx", None)
        where = ctx.command_path if ctx is not None else "jitscope"
        # "no such option: --ot (Possible options: --out)" says what to do already
        raise UsageError(text, hint=None if text.endswith(")") else f"{where} -h lists the options") from None


def build_app(commands: Sequence[str] = COMMAND_MODULES) -> typer.Typer:
    """The typer app with ``commands`` (names from COMMAND_MODULES) registered, in that order."""
    help_width = piped_help_width()
    app = typer.Typer(
        name="jitscope",
        cls=_OneLineUsageErrors,
        help="See what jax.jit really does to your code: jaxpr, StableHLO, HLO, timing and lint.",
        no_args_is_help=True,
        add_completion=True,  # --install-completion, --show-completion and the _JITSCOPE_COMPLETE protocol
        pretty_exceptions_enable=False,
        rich_markup_mode=None if help_width else "rich",
        context_settings={
            "help_option_names": ["-h", "--help"],
            **({"terminal_width": help_width, "max_content_width": help_width} if help_width else {}),
        },
    )
    # With a callback the app stays a group even when it holds one command: `jitscope trace ...` parses alike.
    app.callback()(_root)
    for name in commands:
        importlib.import_module(f"jitscope.cli.{name}").register(app)
    return app


def app_for(args: Sequence[str]) -> typer.Typer:
    """The app for one command line: only its command when the line starts with one, else every command."""
    first = args[0] if args else None
    return build_app((first,) if first in COMMAND_MODULES else COMMAND_MODULES)


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(version_text())
        raise typer.Exit()


def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version_callback, is_eager=True, help="Show the version and exit."
    ),
) -> None:
    """See what jax.jit really does to your code."""


def __getattr__(name: str) -> Any:
    """``app``: every command, built when first asked for (tests, ``typer.testing.CliRunner``)."""
    if name == "app":
        app = build_app()
        globals()["app"] = app
        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
