"""Checks on the numbers every entry point takes (CLI options and API keywords alike): one error line each."""

from __future__ import annotations

#: Limits on numbers that set how long a command runs (issue 25: `--budget inf` never ended).
MAX_BUDGET_S = 3600.0
MAX_COUNT = 1_000_000


def check_seconds(option: str, value: float | None, *, zero_ok: bool = False) -> None:
    """A finite number of seconds, positive (or zero where allowed), at most an hour; else one error line."""
    import math

    from jitscope.errors import UsageError

    if value is None:
        return
    low_ok = value >= 0 if zero_ok else value > 0
    if not math.isfinite(value) or not low_ok or value > MAX_BUDGET_S:
        least = "0" if zero_ok else "more than 0"
        raise UsageError(f"{option} {value:g} is out of range", hint=f"give seconds, {least} and at most {MAX_BUDGET_S:g}")


def check_count(option: str, value: int, *, limit: int = MAX_COUNT) -> None:
    from jitscope.errors import UsageError

    if not 1 <= value <= limit:
        raise UsageError(f"{option} {value} is out of range", hint=f"give 1 to {limit:,}")


def split_codes(values: list[str] | tuple[str, ...] | None) -> tuple[str, ...] | None:
    """``["JS1,JS2", "JS301"]`` -> ``("JS1", "JS2", "JS301")`` (rule codes or prefixes, as --select takes)."""
    return None if values is None else tuple(c.strip() for v in values for c in v.split(",") if c.strip())


def check_distributed(distributed: bool, processes: int | None) -> None:
    """``--distributed`` joins a job that is already launched; ``--processes`` launches one: not both."""
    if distributed and processes is not None:
        from jitscope.errors import UsageError

        raise UsageError("--distributed and --processes cannot be combined",
                         hint="--processes N launches N local processes itself; --distributed runs inside each "
                         "process of a job you launched (srun, mpirun)")
