"""Per-test compile baselines: ``--jitscope-save FILE`` and ``--jitscope-compare FILE``.

A baseline holds, per test node id, how many times the test's jitted functions compiled
(per function too) and the seconds spent tracing, lowering and compiling them. A test
regresses when it compiles more often than in the baseline (any increase: counts are exact
once tests are isolated), or when its compile time grew by more than the threshold *and*
by at least a minimum number of seconds, so a 3 ms compile that takes 5 ms on a noisy CI
runner does not fail the build. Tests in only one of the two runs never fail. Pure: no jax,
no pytest.
"""

from __future__ import annotations

import json
import math
import platform
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from jitscope.errors import UsageError
from jitscope.model.common import to_jsonable
from jitscope.units import plural

BASELINE_KIND = "jitscope.pytest-compiles"
#: Version of the baseline document; bump the major number on a breaking change.
BASELINE_SCHEMA_VERSION = "1.0"
#: Defaults of --jitscope-compare-threshold and --jitscope-compare-min-seconds.
DEFAULT_THRESHOLD = 0.25
DEFAULT_MIN_SECONDS = 0.1


@dataclass(frozen=True, slots=True)
class TestCompiles:
    """One test's compiles during its call."""

    __test__ = False  # not a test class

    nodeid: str
    compiles: int
    compile_s: float  # trace + lower + compile of the test's own jitted functions
    functions: dict[str, int] = field(default_factory=dict)  # function -> compiles


@dataclass(frozen=True, slots=True)
class CompileBaseline:
    """The document ``--jitscope-save`` writes."""

    tests: tuple[TestCompiles, ...]
    environment: dict[str, str] = field(default_factory=dict)  # python, jax and jaxlib versions
    isolated: bool = True  # whether JAX's caches were cleared before each test (counts independent of order)
    schema_version: str = BASELINE_SCHEMA_VERSION
    kind: str = BASELINE_KIND


@dataclass(frozen=True, slots=True)
class Regression:
    nodeid: str
    reasons: tuple[str, ...]  # "compiles 1 -> 3 (step 1 -> 3)", "compile time 0.2 s -> 0.5 s (+150%)"


@dataclass(frozen=True, slots=True)
class BaselineComparison:
    baseline: str  # the file's name, as given
    threshold: float
    min_seconds: float
    compared: int  # tests in both runs
    regressions: tuple[Regression, ...]
    new: int  # tests only in this run
    missing: int  # tests only in the baseline
    notes: tuple[str, ...] = ()
    examples: tuple[str, ...] = ()  # a test id of this run and one of the baseline, when none matched

    @property
    def matched_nothing(self) -> bool:
        """Both runs have tests and not one is in both: nothing was checked, which must not pass as a success."""
        return self.compared == 0 and self.new > 0 and self.missing > 0


def environment() -> dict[str, str]:
    """Versions that change what compiles (read from package metadata: jax is not imported)."""
    from importlib import metadata

    env = {"python": platform.python_version()}
    for package in ("jax", "jaxlib"):
        try:
            env[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            pass
    return env


def make_baseline(tests: Sequence[TestCompiles], *, isolated: bool) -> CompileBaseline:
    """The document for ``tests``, sorted by node id (the same file whatever order xdist reported them in)."""
    return CompileBaseline(tuple(sorted(tests, key=lambda t: t.nodeid)), environment(), isolated)


def save_baseline(path: Path, baseline: CompileBaseline) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    from jitscope.outputs import write_atomic

    write_atomic(path, json.dumps(to_jsonable(baseline), indent=2, allow_nan=False) + "\n")


def load_baseline(path: Path, shown: Path | None = None) -> CompileBaseline:
    """Read a ``--jitscope-save`` document; a ``UsageError`` (one line, naming it as ``shown``) for anything else."""
    where = path if shown is None else shown
    from jitscope.inputs import read_json, read_record, require

    what = "--jitscope-compare baseline"
    data = read_json(path, what, shown=where)
    if not isinstance(data, dict) or data.get("kind") != BASELINE_KIND:
        raise UsageError(f"{what} {where} is not a jitscope compile baseline",
                         hint="write one with pytest --jitscope-save FILE")
    major = str(data.get("schema_version", "")).split(".")[0]
    if major != BASELINE_SCHEMA_VERSION.split(".")[0]:
        raise UsageError(f"{what} {where} has schema {data.get('schema_version')}, "
                         f"this jitscope reads {BASELINE_SCHEMA_VERSION}", hint="save a new baseline")
    baseline = read_record(CompileBaseline, data, what, where)
    for at, test in enumerate(baseline.tests):  # counts and times the gate compares: a negative one never fails
        require(test.compiles >= 0, what, where, f"tests[{at}].compiles", f"is {test.compiles}, expected a count")
        require(test.compile_s >= 0, what, where, f"tests[{at}].compile_s", f"is {test.compile_s}, expected seconds")
        for name, count in test.functions.items():
            require(count >= 0, what, where, f"tests[{at}].functions[{name!r}]", f"is {count}, expected a count")
    return baseline


def parse_fraction(text: str, option: str) -> float:
    """``"25%"`` or ``"0.25"`` -> 0.25, for ``option``; non-negative."""
    raw = text.strip()
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        raise UsageError(f"bad {option} {text!r}", hint="use a percentage like 25%") from None
    if not value >= 0:
        raise UsageError(f"{option} must not be negative, got {text!r}")
    if not math.isfinite(value):  # 1e400% is infinity: a gate nothing could fail
        raise UsageError(f"{option} must be a finite number, got {text!r}")
    return value


def parse_seconds(text: str, option: str) -> float:
    """``"0.1"``, ``"0.1s"`` or ``"100ms"`` -> seconds, for ``option``; non-negative."""
    raw = text.strip().lower()
    scale = 1e-3 if raw.endswith("ms") else 1.0
    number = raw[:-2] if raw.endswith("ms") else raw.removesuffix("s")
    try:
        value = float(number) * scale
    except ValueError:
        raise UsageError(f"bad {option} {text!r}", hint="use seconds, like 0.1 or 100ms") from None
    if not value >= 0:
        raise UsageError(f"{option} must not be negative, got {text!r}")
    if not math.isfinite(value):
        raise UsageError(f"{option} must be a finite number, got {text!r}")
    return value


def _fmt_s(seconds: float) -> str:
    from jitscope.units import fmt_duration

    return fmt_duration(seconds)


def _regression(test: TestCompiles, base: TestCompiles, threshold: float, min_seconds: float) -> tuple[str, ...]:
    reasons = []
    if test.compiles > base.compiles:
        grown = [f"{name} {base.functions.get(name, 0)} -> {count}" for name, count in sorted(test.functions.items())
                 if count > base.functions.get(name, 0)]
        detail = f" ({', '.join(grown)})" if grown else ""
        reasons.append(f"compiles {base.compiles} -> {test.compiles}{detail}")
    delta = test.compile_s - base.compile_s
    if delta > threshold * base.compile_s and delta >= min_seconds:
        change = f" (+{delta / base.compile_s:.0%})" if base.compile_s > 0 else ""
        reasons.append(f"compile time {_fmt_s(base.compile_s)} -> {_fmt_s(test.compile_s)}{change}")
    return tuple(reasons)


def _tails(nodeid: str) -> list[str]:
    """``nodeid`` without 1, 2, ... of its leading folders: ``proj/tests/t.py::a`` -> ``tests/t.py::a``,
    ``t.py::a``."""
    path, sep, rest = nodeid.partition("::")
    parts = path.split("/")
    return ["/".join(parts[i:]) + sep + rest for i in range(1, len(parts))]


def _by_tail(longer: Sequence[str], shorter: Sequence[str]) -> dict[str, str]:
    """Each id of ``longer`` -> the id of ``shorter`` that it is with leading folders removed (the longest such);
    an id of ``shorter`` that two of ``longer`` would take is left to neither."""
    targets = set(shorter)
    wanted = {}
    for nodeid in longer:
        tail = next((t for t in _tails(nodeid) if t in targets), None)
        if tail is not None:
            wanted[nodeid] = tail
    takers = Counter(wanted.values())
    return {nodeid: tail for nodeid, tail in wanted.items() if takers[tail] == 1}


def match_tests(current: Sequence[str], baseline: Sequence[str]) -> dict[str, str]:
    """Each test id of ``current`` -> the same test's id in ``baseline``.

    Node ids are relative to pytest's rootdir, which moves with the paths on the command line: pytest
    chooses it before any plugin's options are known, so ``--jitscope-compare ../out/base.json`` (the space
    form) counts the baseline's folder as a test path, and ``tests/t.py::a`` becomes ``proj/tests/t.py::a``.
    Equal ids match first; then an id matches the one on the other side that is it without its leading
    folders (this run's rootdir above the baseline's, or below it).
    """
    matched = {nodeid: nodeid for nodeid in set(current) & set(baseline)}
    rest_current = [c for c in current if c not in matched]
    rest_baseline = [b for b in baseline if b not in matched]
    matched.update(_by_tail(rest_current, rest_baseline))
    taken = set(matched.values())
    below = _by_tail([b for b in rest_baseline if b not in taken], [c for c in rest_current if c not in matched])
    matched.update({c: b for b, c in below.items()})
    return matched


def compare_baseline(current: CompileBaseline, baseline: CompileBaseline, *, threshold: float = DEFAULT_THRESHOLD,
                     min_seconds: float = DEFAULT_MIN_SECONDS, name: str = "") -> BaselineComparison:
    """Which tests of ``current`` compile more often, or for longer, than in ``baseline`` (tests matched by
    ``match_tests``: the same test under another rootdir is still the same test)."""
    old = {t.nodeid: t for t in baseline.tests}
    new = {t.nodeid: t for t in current.tests}
    pairs = match_tests(list(new), list(old))
    regressions = []
    for nodeid, test in new.items():
        base = old.get(pairs.get(nodeid, ""))
        reasons = _regression(test, base, threshold, min_seconds) if base is not None else ()
        if reasons:
            regressions.append(Regression(nodeid, reasons))
    notes = []
    moved = sum(1 for a, b in pairs.items() if a != b)
    if moved:
        notes.append(f"{plural(moved, 'test id')} differed from the baseline's by leading folders (pytest's rootdir "
                     "moved) and were matched by the rest of their path")
    for key in ("jax", "jaxlib", "python"):
        was, now = baseline.environment.get(key), current.environment.get(key)
        if was and now and was != now:
            notes.append(f"the baseline was taken with {key} {was}, this run has {now}")
    if baseline.isolated != current.isolated:
        notes.append("the baseline was taken with JAX's caches " + ("cleared" if baseline.isolated else "kept")
                     + " before each test, this run " + ("clears" if current.isolated else "keeps") + " them")
    return BaselineComparison(
        baseline=name, threshold=threshold, min_seconds=min_seconds, compared=len(pairs),
        regressions=tuple(regressions), new=len(new) - len(pairs), missing=len(old) - len(pairs),
        notes=tuple(notes), examples=(min(new), min(old)) if new and old and not pairs else (),
    )


def render_comparison(comparison: BaselineComparison) -> list[str]:
    """The lines the terminal summary prints."""
    rule = (f"more compiles, or compile time +{comparison.threshold:.0%} and at least "
            f"{_fmt_s(comparison.min_seconds)}")
    head = (f"{comparison.compared} tests compared with {comparison.baseline} ({rule}): "
            f"{len(comparison.regressions)} regressed")
    extra = [f"{n} {what}" for n, what in ((comparison.new, "new"), (comparison.missing, "not run")) if n]
    lines = [head + (f"; {', '.join(extra)}" if extra else "")]
    if comparison.matched_nothing:
        ours, theirs = comparison.examples or ("?", "?")
        lines.append(f"FAILED: no test of this run is in the baseline (this run has {ours}, the baseline "
                     f"{theirs}): nothing was compared, so the run fails; save the baseline from the same tests "
                     "(pytest --jitscope-save FILE)")
    for regression in comparison.regressions:
        lines.append(f"REGRESSION {regression.nodeid}: {'; '.join(regression.reasons)}")
    lines += [f"note: {note}" for note in comparison.notes]
    return lines
