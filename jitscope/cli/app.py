"""The ``jitscope`` command: the console-script entry point.

The typer app lives in ``cli.commands`` (``app`` here is that one, imported on first use).
``main`` hands ``jitscope run ...`` to ``cli/run_command.py`` before importing typer, click and
rich: the user's program should start as soon as it would under ``python`` (see
``cli/run_command.py``); ``jitscope trace ...`` goes to ``cli/trace_command.py`` likewise, so that
showing a small function costs about what JAX's own work costs; ``jitscope --version`` prints
``jitscope.__version__`` without typer. Every other command line, and any line those do not parse,
goes through typer, and so does every shell-completion request (``COMPLETE_VAR`` set), whatever
its line.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
from typing import Any

from jitscope.cli.fast_args import COMPLETE_VAR, version_text
from jitscope.errors import EXIT_USAGE, JitscopeError

#: Exit code for a bug in jitscope itself (distinct from usage errors and findings).
EXIT_INTERNAL = 3


def __getattr__(name: str) -> Any:
    """``app``, ``COMMAND_MODULES``, ``piped_help_width``...: the typer side, imported when asked for."""
    if name.startswith("__"):
        raise AttributeError(name)
    from jitscope.cli import commands

    return getattr(commands, name)


def report_error(err: JitscopeError) -> None:
    """Print a JitscopeError as one line on stderr (plus its detail, if any)."""
    from rich.markup import escape

    from jitscope.report.writers.console import make_console

    console = make_console(stderr=True)
    # The message quotes the user's text (paths, specs like f32[8]): escaped so rich keeps its brackets.
    console.print(f"[jitscope.bad]error:[/] {escape(err.one_line())}", markup=True, highlight=False)
    if err.detail:
        console.print(err.detail, markup=False, highlight=False)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: run the app, turning JitscopeError into one line and an exit code."""
    import jitscope.outputs  # noqa: F401 - records the starting directory before any user code can chdir
    from jitscope.stdout import standard_streams_open

    standard_streams_open()  # stdout or stderr closed at start (>&-): os.devnull, not a crash

    try:
        _main(argv)
        _exit_if_interrupted()
    except SystemExit as exc:
        _exit_if_interrupted()
        if "jitscope.run.capture" in sys.modules:  # --from-run stopped a program that left threads running
            from jitscope.run.capture import exit_now_if_program_threads_left

            code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
            exit_now_if_program_threads_left(code)
        raise


def _exit_if_interrupted() -> None:
    """Ctrl-C that JAX swallowed (a KeyboardInterrupt in its GC callback is only printed): still exit 130."""
    faults = sys.modules.get("jitscope.faults")
    if faults is not None and faults.INTERRUPTED.is_set():
        faults.end_interrupted()


def _main(argv: list[str] | None) -> None:
    args = sys.argv[1:] if argv is None else argv
    fast = not os.environ.get(COMPLETE_VAR)
    if fast and args == ["--version"]:
        print(version_text())
        return
    if fast and args[:1] not in (["run"], ["doctor"], ["--help"], ["-h"], []) and argv is None:
        from jitscope.faults import exit_soon_after_interrupt

        exit_soon_after_interrupt()  # Ctrl-C ends every command within a second (run's and doctor's: the program's)
    try:
        if fast and args[:1] == ["run"]:
            from jitscope.cli.run_command import main_fast

            code = main_fast(args[1:])
            if code is not None:
                sys.exit(code)
        if fast and args[:1] == ["trace"]:
            from jitscope.cli.trace_command import main_fast as trace_fast

            if trace_fast(args[1:]):
                sys.exit(0)  # as typer ends a command (main's SystemExit handling relies on it)
        from jitscope.cli.commands import app_for

        # A completion request's words are in the environment, not on the line: it gets every command.
        app_for(args if fast else ())(args=argv, prog_name="jitscope")
    except JitscopeError as err:
        with contextlib.suppress(OSError):  # stderr itself full or closed: the exit code still says it
            report_error(err)
        sys.exit(err.exit_code)
    except KeyboardInterrupt:
        faults = sys.modules.get("jitscope.faults")
        if faults is not None:
            faults.end_interrupted()
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    except OSError as exc:
        if exc.filename is None and exc.errno in _STREAM_ERRNOS and not os.environ.get("JITSCOPE_DEBUG"):
            _stream_failed(exc)
        if exc.filename is None or os.environ.get("JITSCOPE_DEBUG"):
            _internal_error(exc)
        # A file the user named (--out, --save, --profile-html, ...) cannot be read or written.
        print(f"error: {exc.strerror or exc}: {exc.filename} (check the path and its permissions)", file=sys.stderr)
        sys.exit(EXIT_USAGE)
    except Exception as exc:  # noqa: BLE001 - a jitscope bug: one line unless debugging
        _internal_error(exc)


#: Writing the report to stdout (or a line to stderr) failed for a reason outside jitscope: a full disk
#: behind a redirect, a disk quota, a closed pipe, an I/O error of the terminal.
_STREAM_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EPIPE, errno.EIO, errno.EFBIG})


def _stream_failed(exc: OSError) -> None:
    """stdout could not take the report: one line on stderr (if stderr can take it), exit 2, and no second
    error from Python flushing stdout again at exit."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    if exc.errno != errno.EPIPE:  # a reader that stopped reading (| head) needs no message
        with contextlib.suppress(OSError, ValueError):
            print(f"error: cannot write the output: {exc.strerror or exc} (free some space, or write it elsewhere "
                  "with --out)", file=sys.stderr, flush=True)
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stderr.fileno())
    sys.exit(EXIT_USAGE)


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
