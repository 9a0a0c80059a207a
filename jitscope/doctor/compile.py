"""A first compile that dominates the run, opened by line: ``trace``'s compile-time counts on the run's call.

The function is traced again for its first recorded call (abstract values: nothing compiled, nothing
on the device), and the compile-time section's by-line counts (``profiling/compile_lines.py``) name the
line that makes most of the program, with how many copies of itself it made (a Python loop unrolled 300
times gives 300). Compile time grows with the program, so a line making most of it, many times over,
is what to change: ``lax.scan`` or ``lax.fori_loop`` compile one copy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from jitscope.doctor.measure import AbstractCall, Recorder, calls_for
from jitscope.model.common import Location
from jitscope.model.doctor import ESTIMATED, SLOW_COMPILE, Finding
from jitscope.userframes import display_path

#: A line making this share of the program's equations is what the compile time goes to.
DOMINANT_SHARE = 0.5


def open_slow_compiles(findings: Sequence[Finding], recorder: Recorder) -> list[Finding]:
    """``findings`` with each slow first compile pointed at the line that makes most of the program."""
    out = list(findings)
    for i, finding in enumerate(out):
        if finding.kind != SLOW_COMPILE:
            continue
        calls = calls_for(recorder, finding)
        if calls:
            out[i] = _opened(finding, calls[0])
    return out


def _opened(finding: Finding, call: AbstractCall) -> Finding:
    import jitscope
    from jitscope.profiling.compile_lines import compile_lines

    try:
        result = jitscope.trace(call.fun, *call.args, stages=("jaxpr",), effects=False,
                                static_argnums=call.static_argnums or None,
                                static_argnames=call.static_argnames or None, **call.kwargs)
        source = result.record.traces[0].source_lines
    except Exception:  # noqa: BLE001 - a call jitscope cannot trace again: the finding stays as the run saw it
        return finding
    lines = [line for line in compile_lines(source, {}) if line.location is not None]
    if not lines:
        return finding
    top = max(lines, key=lambda line: line.eqns)
    if top.eqn_share < DOMINANT_SHARE or top.location is None:
        return finding
    where = Location(display_path(top.location.file), top.location.line, top.location.function)
    share = f"{top.eqn_share:.0%} of the program ({top.eqns} equations)"
    if top.copies > 1:
        title = f"{finding.title}: a loop unrolled {top.copies} times makes {top.eqn_share:.0%} of the program"
        change = (f"write the loop at {where} with lax.scan (or lax.fori_loop): it compiles one copy, not "
                  f"{top.copies}; then jitscope trace --compile-profile shows what is left")
        gain = finding.cost_s * top.eqn_share * (1 - 1 / top.copies)
        return replace(finding, title=title, location=where, change=change, gain_s=round(gain, 6), gain=ESTIMATED,
                       gain_note=(f"compile time grows with the program: the line's {top.copies - 1} extra copies' "
                                  f"share of the first compile (rule of thumb; benchmarks/compile_scaling.py)"),
                       evidence=(*finding.evidence, f"{where}: {share}, {top.copies} copies"))
    return replace(finding, title=f"{finding.title}: one line makes {top.eqn_share:.0%} of the program", location=where,
                   evidence=(*finding.evidence, f"{where}: {share}"))
