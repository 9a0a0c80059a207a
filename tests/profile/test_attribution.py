"""Real captures on CPU: device time lands on the right source lines."""

from __future__ import annotations

from pathlib import Path

from jitscope.model.profile import ProfileReport, ProfileRow


def _row(report: ProfileReport, name: str) -> ProfileRow:
    return next(r for r in report.rows if r.target.endswith(f":{name}"))


def _source_line(row: ProfileRow, text: str) -> int:
    lines = Path(row.function.file).read_text(encoding="utf-8").splitlines()
    return next(i + 1 for i, line in enumerate(lines) if text in line)


def test_the_matmul_line_ranks_first(profiled: ProfileReport) -> None:
    assert not profiled.failures
    row = _row(profiled, "hotspot")
    top = row.lines[0]
    assert top.location.line == _source_line(row, "a @ w")
    assert "dot_general" in top.primitives
    assert top.share > 0.5
    assert top.flops == 2 * 256 * 512 * 512  # estimated from the HLO shapes, per call
    assert top.flops_per_second and top.flops_per_second > 0
    assert row.events_from == "CPU thunks"


def test_every_line_with_work_is_named(profiled: ProfileReport) -> None:
    # Whether XLA fuses the elementwise lines with the matmul or not, each gets its own share.
    row = _row(profiled, "hotspot")
    named = {line.location.line for line in row.lines}
    for text in ("x * 2.0", "a @ w", "jnp.maximum(b", "c - 3.0"):
        assert _source_line(row, text) in named
    assert all(line.in_function for line in row.lines)
    assert abs(sum(line.share for line in row.lines) - 1.0) < 1e-6
    for op in row.ops:
        assert op.lines, op.name  # every op came from some line
        assert abs(sum(part.share for part in op.lines) - 1.0) < 1e-6


def test_a_nested_helper_is_listed_at_its_call_line(profiled: ProfileReport) -> None:
    row = _row(profiled, "nested")
    call_line = _source_line(row, "z = helper(y)")
    by_line = {line.location.line: line for line in row.lines}
    assert call_line in by_line
    assert all(line.in_function for line in row.lines)
    nested = {n.location.function: n for n in by_line[call_line].nested}
    if nested:  # the helpers' own lines are kept (XLA's stack frames, or the bytecode's calls on older XLA)
        assert {"helper", "scale"} <= set(nested)
        assert nested["scale"].stack[0].function == "scale"
        assert nested["scale"].stack[-1].line == call_line


def test_a_lambda_on_a_line_is_that_line(profiled: ProfileReport) -> None:
    # The scan's body is a lambda on the scan's own line: one record for the line, the helper nested in it.
    row = _row(profiled, "scanned")
    scan_line = _source_line(row, "jax.lax.scan(")
    numbers = [line.location.line for line in row.lines if line.in_function]
    assert len(numbers) == len(set(numbers)) and scan_line in numbers
    top = next(line for line in row.lines if line.location.line == scan_line)
    assert top.location.function == "scanned"
    # The body's work is found whether XLA runs the loop as thunks of its own or inside one call thunk.
    assert {"mul", "exp"} <= set(top.primitives)
    if top.nested:
        assert {n.location.function for n in top.nested} <= {"helper", "scale"}


def test_parts_reconcile_with_the_measured_time(profiled: ProfileReport) -> None:
    for row in profiled.rows:
        rec = row.reconciliation
        assert rec.measured > 0 and rec.lines > 0
        parts = rec.lines + rec.no_source + rec.idle + rec.copies + rec.host
        assert abs(parts - rec.total) < 1e-12
        assert rec.reconciles == (abs(rec.difference) <= rec.tolerance)
