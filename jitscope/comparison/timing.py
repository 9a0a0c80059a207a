"""``jitscope diff --bench``: the cached-call time of both sides, measured in one run, alternating.

Each round runs ``jitscope bench --format json`` once for the old side and once for the new one, each
in a fresh process of its own (two versions of a module cannot share an interpreter), so whatever
else the machine does hits both sides alike: A B A B ... The verdict compares the two sides' medians
over rounds and calls a difference only when it is larger than the noise: every round's new/old
ratio must lie on the same side of 1, and the difference must exceed the spread of each side's own
rounds (max/min of its per-round medians). Otherwise the report says "within the noise", with the
figures, rather than a guess (verdict "same").
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Sequence

from jitscope.comparison.sides import Side, run_side
from jitscope.errors import UsageError
from jitscope.model.common import from_jsonable
from jitscope.model.diff import BenchComparison, BenchSide

#: Rounds of A B, and the seconds of timed calls each ``jitscope bench`` process gets.
DEFAULT_ROUNDS = 3
DEFAULT_BUDGET = 0.3


def bench_sides(old: Side, new: Side, flags: Sequence[str], *, rounds: int = DEFAULT_ROUNDS,
                budget: float = DEFAULT_BUDGET,
                progress: Callable[[str], None] | None = None) -> tuple[BenchComparison, ...]:
    """Alternate ``jitscope bench`` on the two sides ``rounds`` times; one comparison per benchmarked call."""
    from jitscope.model.bench import BenchReport

    if rounds < 2:
        raise UsageError(f"--bench-rounds {rounds}: at least 2 rounds are needed to tell a change from noise")
    per_side: dict[str, list[BenchReport]] = {"old": [], "new": []}
    bench_flags = [*flags, "--format", "json", "--budget", str(budget), "--no-dispatch"]
    for i in range(rounds):
        for key, side in (("old", old), ("new", new)):
            if progress is not None:
                progress(f"timing {side.label}, round {i + 1} of {rounds}")
            stdout = run_side(side, "bench", bench_flags)
            try:
                data = json.loads(stdout)
            except json.JSONDecodeError:
                raise UsageError(f"{side.label}: jitscope bench wrote no JSON report") from None
            try:
                per_side[key].append(from_jsonable(BenchReport, data))
            except ValueError as exc:  # FieldError: the side's jitscope is another version?
                raise UsageError(f"{side.label}: jitscope bench wrote a report this jitscope cannot read ({exc})",
                                 hint="install the same jitscope version in both environments") from None
    return compare_timings(per_side["old"], per_side["new"])


def compare_timings(old: Sequence[object], new: Sequence[object]) -> tuple[BenchComparison, ...]:
    """Pair the rows (call for call) of the rounds' bench reports and judge each pair (pure)."""
    out = []
    rows = min(len(getattr(old[0], "rows", ())), len(getattr(new[0], "rows", ()))) if old and new else 0
    for index in range(rows):
        old_medians = [r.rows[index].cached.blocked.median for r in old]  # type: ignore[attr-defined]
        new_medians = [r.rows[index].cached.blocked.median for r in new]  # type: ignore[attr-defined]
        old_cold = [r.rows[index].cold.median.total for r in old]  # type: ignore[attr-defined]
        new_cold = [r.rows[index].cold.median.total for r in new]  # type: ignore[attr-defined]
        out.append(judge(old[0].rows[index].call,  # type: ignore[attr-defined]
                         BenchSide(tuple(old_medians), tuple(old_cold)), BenchSide(tuple(new_medians), tuple(new_cold))))
    return tuple(out)


def judge(call: str, old: BenchSide, new: BenchSide) -> BenchComparison:
    """Faster, slower or within the noise: a verdict only when every round agrees and the change is larger
    than either side's spread between rounds."""
    old_median, new_median = statistics.median(old.cached), statistics.median(new.cached)
    change = (new_median - old_median) / old_median if old_median > 0 else 0.0
    ratios = [n / o for o, n in zip(old.cached, new.cached, strict=True) if o > 0]
    spread = max(_spread(old.cached), _spread(new.cached))
    agree = all(r > 1 for r in ratios) or all(r < 1 for r in ratios)
    if agree and abs(change) > spread:
        verdict = "slower" if change > 0 else "faster"
    else:
        verdict = "same"
    return BenchComparison(call=call, old=old, new=new, change=change, noise=spread, verdict=verdict)


def _spread(values: Sequence[float]) -> float:
    """How far one side's rounds disagree with each other: max/min - 1."""
    low = min(values)
    return max(values) / low - 1 if low > 0 else 0.0
