"""Errors that jitscope reports to the user as one clear line.

Every error a user can cause (bad target, bad spec, failing user code) is a
``JitscopeError``: the CLI prints ``error: <message>`` (plus an optional hint and,
for errors raised by the user's own code, their traceback trimmed to their frames)
and exits with ``exit_code``. Anything else that escapes is a jitscope bug.
"""

from __future__ import annotations

#: Exit codes, shared by every command.
EXIT_OK = 0
EXIT_FINDINGS = 1  # lint findings / bench regression / user code failed
EXIT_USAGE = 2  # bad command line, target or spec


class JitscopeError(Exception):
    """Base class: a problem the user can fix, reported without a jitscope traceback."""

    exit_code: int = EXIT_USAGE

    def __init__(self, message: str, *, hint: str | None = None, detail: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        #: One short sentence saying what to do about it.
        self.hint = hint
        #: Extra text printed below the message (e.g. the user's trimmed traceback).
        self.detail = detail

    def one_line(self) -> str:
        """The message and hint as the single line the CLI prints."""
        return f"{self.message} ({self.hint})" if self.hint else self.message


class UsageError(JitscopeError):
    """Bad command-line usage not caught by the argument parser."""


class BadValueError(UsageError, ValueError):
    """An option or keyword argument with a value it cannot take (out of range, not one of its choices, an unknown
    rule code): the same one line from the CLI and the Python API (``api/checks.py``), and a ``ValueError``."""


class BadTypeError(UsageError, TypeError):
    """A keyword argument of the Python API of the wrong type, refused where it enters jitscope with a line naming
    the parameter and the type it takes; a ``TypeError``."""


class TargetError(JitscopeError):
    """The target ``module:function`` could not be found or is not usable."""


class SpecError(JitscopeError):
    """An argument spec (``--shapes``, ``--static``, ``--arg``) could not be parsed."""


class ConfigError(JitscopeError):
    """``[tool.jitscope]`` in pyproject.toml is malformed."""


class UserCodeError(JitscopeError):
    """The user's own code raised while jitscope imported, traced or ran it."""

    exit_code = EXIT_FINDINGS


class TraceError(UserCodeError):
    """Tracing failed in a way jitscope can explain (concretization, bad static arg, ...)."""


class CompileError(UserCodeError):
    """XLA lowering or compilation failed."""


class ResourceError(JitscopeError):
    """A request would exceed what the machine can do (e.g. inputs too large for memory)."""

    exit_code = EXIT_FINDINGS


class DeviceMemoryError(ResourceError):
    """The accelerator ran out of memory (often: another process holds it, or JAX preallocated it)."""

    exit_code = EXIT_USAGE
