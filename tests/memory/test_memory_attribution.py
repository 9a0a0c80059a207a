"""Peaks known by construction: the ranked line, the live set, and the parts adding up to the peak."""

from __future__ import annotations

import pytest

from jitscope.buffers.advice import UNMARKED
from jitscope.model.memory import ARGUMENT

MiB = 2**20


def test_every_peak_is_its_parts(rows):
    for row in rows.values():
        peak = row.peak
        assert sum(b.bytes for b in peak.buffers) == peak.bytes
        assert sum(line.bytes for line in row.lines) == peak.on_lines
        assert peak.on_lines + peak.arguments + peak.constants + peak.no_source == peak.bytes
        assert [b.bytes for b in peak.buffers] == sorted((b.bytes for b in peak.buffers), reverse=True)
        assert row.totals.reconciles, row.totals.differences
        assert peak.bytes <= row.totals.reserved + row.totals.constants


def test_one_large_intermediate_is_ranked_at_its_line(rows):
    row = rows["big_intermediate"]
    top = row.peak.buffers[0]
    assert (top.shape, top.bytes, top.kind) == ("f32[2048,2048]", 16 * MiB, "temporary")
    assert top.location is not None and top.location.line == 9
    assert row.lines[0].location.line == 9 and row.lines[0].share > 0.95


def test_a_scans_carry_is_listed_at_the_scan(rows):
    row = rows["carried"]
    top = next(b for b in row.peak.buffers if b.kind != ARGUMENT)
    assert (top.shape, top.bytes) == ("f32[1024,1024]", 4 * MiB)
    assert top.location is not None and top.location.line in (15, 18)  # the body's line or the scan's
    assert row.lines[0].bytes >= 4 * MiB


def test_a_donated_argument_holds_the_output(rows):
    plain, donated = rows["update"], rows["donating_update"]
    assert plain.totals.reserved == 12 * MiB and plain.totals.aliased == 0
    assert [d.argument for d in plain.donations] == ["state"] and plain.donations[0].bytes == 4 * MiB
    assert donated.totals.aliased == 4 * MiB and donated.totals.reserved == 8 * MiB
    assert not donated.donations
    assert any(b.donated for b in donated.peak.buffers)


def test_residuals_of_a_gradient_are_found_by_line(rows):
    row = rows["grad_loss"]
    if UNMARKED in row.warnings:
        pytest.skip("this JAX's op names do not mark the backward pass")
    lines = {r.location.line: r for r in row.residuals}
    assert set(lines) == {30, 31}
    assert all(r.bytes == 8 * MiB and r.at_peak == 8 * MiB for r in lines.values())
    assert lines[30].policy == "dots_saveable" and "tanh" in lines[30].primitives
    residual = [b for b in row.peak.buffers if b.residual]
    assert sum(b.bytes for b in residual) == 16 * MiB
    assert sum(line.residual_bytes for line in row.lines) == 16 * MiB
    assert row.lines[0].location.line in (30, 31) and row.lines[0].bytes >= 8 * MiB


def test_a_helpers_buffer_is_listed_at_the_call_line(rows):
    row = rows["calls_helper"]
    line = next(line for line in row.lines if line.location.line == 47)
    assert [n.location.line for n in line.nested] == [43]


@pytest.mark.parametrize("name", ["big_intermediate", "grad_loss"])
def test_the_peak_names_where_it_happens(rows, name):
    row = rows[name]
    assert row.peak.instruction and 0 <= row.peak.position < row.peak.steps
    assert row.devices == 1 and row.backend == "cpu"
