"""Checks on what every entry point takes, CLI options and Python keywords alike: one error line each.

The CLI and the Python API call the same checks, so a bad value reads the same from both; only the spelling of
the parameter differs (``--min-rounds`` on the command line, ``min_rounds`` in Python: see ``spelled``). A value
out of range, not one of its choices or naming no lint rule is a ``BadValueError`` (a ``ValueError``); a Python
argument of the wrong type is a ``BadTypeError`` (a ``TypeError``) raised here, where it enters jitscope, never
from deep inside. Both are ``UsageError`` s: the CLI prints them as one ``error:`` line, exit 2.

Imports nothing heavy: the CLI imports this module on every start.
"""

from __future__ import annotations

import math
import os
from collections.abc import Collection, Sequence
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jitscope.errors import BadTypeError

#: Limits on numbers that set how long a command runs (issue 25: `--budget inf` never ended).
MAX_BUDGET_S = 3600.0
MAX_COUNT = 1_000_000
#: ``profile --calls``, ``bench --cold-runs``, ``diff --bench-rounds``: each costs a call (or a process) apiece.
MAX_CALLS = 100_000
MAX_COLD_RUNS = 1_000
MAX_BENCH_ROUNDS = 100
#: ``lint --jobs``: worker processes.
MAX_JOBS = 1_024


def spelled(name: str, cli: bool) -> str:
    """A parameter as the user wrote it: ``min_rounds`` in Python, ``--min-rounds`` on the command line."""
    return "--" + name.replace("_", "-") if cli else name


# -- types (Python only: the command line's parser has already made its values the right type) ---------------


def type_error(name: str, value: object, expected: str) -> BadTypeError:
    from jitscope.errors import BadTypeError

    return BadTypeError(f"{name} must be {expected}, not {type(value).__name__}")


def check_callable(name: str, value: object) -> None:
    if not callable(value):
        raise type_error(name, value, "a callable (the function to inspect)")


def check_int(name: str, value: object) -> None:
    """A whole number, any (``seed``)."""
    if not _is_int(value):
        raise type_error(name, value, "an int")


def check_flag(name: str, value: object) -> None:
    """``True`` or ``False`` (a string such as ``"no"`` would be true)."""
    if not isinstance(value, bool):
        raise type_error(name, value, "True or False")


def check_text(name: str, value: object, *, none_ok: bool = True) -> None:
    if not (isinstance(value, str) or (none_ok and value is None)):
        raise type_error(name, value, "a str" + (" or None" if none_ok else ""))


def check_path(name: str, value: object, *, none_ok: bool = True) -> None:
    """A path: a ``str`` or an ``os.PathLike`` (``pathlib.Path``)."""
    if not (isinstance(value, (str, os.PathLike)) or (none_ok and value is None)):
        raise type_error(name, value, "a path (str or pathlib.Path)" + (" or None" if none_ok else ""))


def text_list(name: str, value: object, *, paths: bool = False) -> tuple[str, ...] | None:
    """One string or a sequence of them (``select="JS101"`` is one code, not five letters); None stays None."""
    single = (str, os.PathLike) if paths else (str,)
    if value is None:
        return None
    if isinstance(value, single):
        return (os.fspath(value),)
    if isinstance(value, Sequence) and all(isinstance(v, single) for v in value):
        return tuple(os.fspath(v) for v in value)
    what = "a path or a sequence of paths" if paths else "a str or a sequence of str"
    bad = next((v for v in value if not isinstance(v, single)), value) if isinstance(value, Sequence) else value
    raise type_error(name, bad, what)


def int_list(name: str, value: object) -> tuple[int, ...] | None:
    """One int or a sequence of ints (``static_argnums``); None stays None."""
    if value is None:
        return None
    if _is_int(value):
        return (int(value),)  # type: ignore[call-overload]
    if isinstance(value, Sequence) and not isinstance(value, str) and all(_is_int(v) for v in value):
        return tuple(int(v) for v in value)
    raise type_error(name, value, "an int or a sequence of int")


def _is_int(value: object) -> bool:
    return isinstance(value, Integral) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool)


# -- values ---------------------------------------------------------------------------------------------------


def check_seconds(option: str, value: float | None, *, zero_ok: bool = False) -> None:
    """A finite number of seconds, positive (or zero where allowed), at most an hour; else one error line."""
    from jitscope.errors import BadValueError

    if value is None:
        return
    if not _is_number(value):
        raise type_error(option, value, "a number of seconds (float)")
    low_ok = value >= 0 if zero_ok else value > 0
    if not math.isfinite(value) or not low_ok or value > MAX_BUDGET_S:
        least = "0" if zero_ok else "more than 0"
        raise BadValueError(f"{option} {value:g} is out of range",
                            hint=f"give seconds, {least} and at most {MAX_BUDGET_S:g}")


def check_count(option: str, value: int | None, *, limit: int = MAX_COUNT, least: int = 1) -> None:
    """A whole number from ``least`` to ``limit`` (None: not given); else one error line."""
    from jitscope.errors import BadValueError

    if value is None:
        return
    if not _is_int(value):
        raise type_error(option, value, "an int")
    if not least <= value <= limit:
        raise BadValueError(f"{option} {value} is out of range", hint=f"give {least} to {limit:,}")


def check_choice(option: str, value: object, choices: Collection[str], *, none_ok: bool = True) -> None:
    """One of ``choices`` (in their order in the message)."""
    from jitscope.errors import BadValueError

    check_text(option, value, none_ok=none_ok)
    if value is not None and value not in choices:
        raise BadValueError(f"{option} {value!r} is not one of {', '.join(choices)}")


def format_of(fmt: str | None, out: Any, choices: Sequence[str] | None = None) -> str:
    """``--format`` (one of ``choices``: the four every command writes by default), else what ``--out``'s suffix
    names, else text."""
    from jitscope.report.formats import REPORT_FORMATS, resolve_format

    names = tuple(choices or REPORT_FORMATS)
    check_choice("--format", fmt, names)
    return resolve_format(fmt, out, names)


def check_bytes(option: str, value: object) -> int | None:
    """``fail_over``: bytes as a number, or a size as text (``512MiB``, ``12GiB``, ``2GB``); positive, finite."""
    from jitscope.buffers.gate import parse_bytes

    if value is None:
        return None
    if isinstance(value, str):
        return parse_bytes(value, option)
    if not _is_number(value):
        raise type_error(option, value, "a number of bytes or a size such as '12GiB' (str)")
    if abs(value) > 2**64:  # a huge int: past any limit (and past what str() of an int may print)
        value = math.inf if value > 0 else -math.inf
    return parse_bytes(repr(value) if isinstance(value, float) else str(value), option)


def check_codes(option: str, value: object) -> tuple[str, ...] | None:
    """Rule codes, prefixes or names (``select``/``ignore``): one string (comma-separated, as ``--select`` takes
    them) or a sequence; each must name a rule."""
    codes = split_codes(text_list(option, value))
    if codes:
        from jitscope.linter.engine import unknown_rule
        from jitscope.linter.registry import expand

        try:
            expand(codes)
        except KeyError as err:
            raise unknown_rule(str(err.args[0]), option) from None
    return codes


def split_codes(values: Sequence[str] | None) -> tuple[str, ...] | None:
    """``["JS1,JS2", "JS301"]`` -> ``("JS1", "JS2", "JS301")`` (rule codes or prefixes, as --select takes)."""
    return None if values is None else tuple(c.strip() for v in values for c in v.split(",") if c.strip())


# -- each command's numbers, with their limits in one place ---------------------------------------------------


def check_bench(budget: Any, min_rounds: Any, cold_runs: Any, max_warmup: Any = None, *, cli: bool) -> None:
    check_seconds(spelled("budget", cli), budget)
    check_seconds(spelled("max_warmup", cli), max_warmup, zero_ok=True)
    check_count(spelled("min_rounds", cli), min_rounds)
    check_count(spelled("cold_runs", cli), cold_runs, limit=MAX_COLD_RUNS)


def check_profile(calls: Any, budget: Any, *, cli: bool) -> None:
    check_count(spelled("calls", cli), calls, limit=MAX_CALLS)
    check_seconds(spelled("budget", cli), budget)


def check_diff_bench(bench_rounds: Any, bench_budget: Any, *, cli: bool) -> None:
    """At least 2 rounds: one cannot tell a change from noise."""
    check_count(spelled("bench_rounds", cli), bench_rounds, least=2, limit=MAX_BENCH_ROUNDS)
    check_seconds(spelled("bench_budget", cli), bench_budget)


def check_lint(fail_on: Any, jobs: Any, *, cli: bool) -> None:
    from jitscope.model.lint import SEVERITIES

    check_choice(spelled("fail_on", cli), fail_on, SEVERITIES)
    check_count(spelled("jobs", cli), jobs, limit=MAX_JOBS)


def check_distributed(distributed: bool, processes: int | None) -> None:
    """``--distributed`` joins a job that is already launched; ``--processes`` launches one: not both."""
    if distributed and processes is not None:
        from jitscope.errors import UsageError

        raise UsageError("--distributed and --processes cannot be combined",
                         hint="--processes N launches N local processes itself; --distributed runs inside each "
                         "process of a job you launched (srun, mpirun)")
