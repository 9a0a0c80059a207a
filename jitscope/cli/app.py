"""The ``jitscope`` command.

Each command lives in its own module with a ``register(app)`` function. Command
modules import jax only inside the command body, so ``jitscope --help`` and
``jitscope CMD --help`` never pay for importing jax.
"""

from __future__ import annotations

import importlib
import os
import sys

import typer

from jitscope import __version__
from jitscope.errors import EXIT_USAGE, JitscopeError

#: Exit code for a bug in jitscope itself (distinct from usage errors and findings).
EXIT_INTERNAL = 3

#: Command modules under ``jitscope.cli``, in the order ``--help`` lists them.
COMMAND_MODULES: tuple[str, ...] = ("trace", "bench", "lint", "run", "rule")

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


_help_width = piped_help_width()
app = typer.Typer(
    name="jitscope",
    help="See what jax.jit really does to your code: jaxpr, StableHLO, HLO, timing and lint.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None if _help_width else "rich",
    context_settings={
        "help_option_names": ["-h", "--help"],
        **({"terminal_width": _help_width, "max_content_width": _help_width} if _help_width else {}),
    },
)


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"jitscope {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version_callback, is_eager=True, help="Show the version and exit."
    ),
) -> None:
    """See what jax.jit really does to your code."""


for _name in COMMAND_MODULES:
    _module = importlib.import_module(f"jitscope.cli.{_name}")
    _module.register(app)


def report_error(err: JitscopeError) -> None:
    """Print a JitscopeError as one line on stderr (plus its detail, if any)."""
    from rich.markup import escape

    from jitscope.render.console import make_console

    console = make_console(stderr=True)
    # The message quotes the user's text (paths, specs like f32[8]): escaped so rich keeps its brackets.
    console.print(f"[jitscope.bad]error:[/] {escape(err.one_line())}", markup=True, highlight=False)
    if err.detail:
        console.print(err.detail, markup=False, highlight=False)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: run the app, turning JitscopeError into one line and an exit code."""
    try:
        app(args=argv, prog_name="jitscope")
    except JitscopeError as err:
        report_error(err)
        sys.exit(err.exit_code)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    except OSError as exc:
        if exc.filename is None or os.environ.get("JITSCOPE_DEBUG"):
            _internal_error(exc)
        # A file the user named (--out, --save, --profile-html, ...) cannot be read or written.
        print(f"error: {exc.strerror or exc}: {exc.filename} (check the path and its permissions)", file=sys.stderr)
        sys.exit(EXIT_USAGE)
    except Exception as exc:  # noqa: BLE001 - a jitscope bug: one line unless debugging
        _internal_error(exc)


def _internal_error(exc: Exception) -> None:
    """A bug in jitscope: one line and exit code 3, or the traceback with JITSCOPE_DEBUG=1."""
    if os.environ.get("JITSCOPE_DEBUG"):
        raise exc
    print(
        f"error: jitscope internal error: {type(exc).__name__}: {exc} "
        "(this is a bug in jitscope: rerun with JITSCOPE_DEBUG=1 for the traceback and report it)",
        file=sys.stderr,
    )
    sys.exit(EXIT_INTERNAL)
