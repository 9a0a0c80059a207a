"""How long ``jitscope diff`` itself takes (not the two compiles) on two ~10k-instruction modules.

Two versions of an unrolled network (``--layers`` layers of ``tanh(h @ w_i) * scale + bias``, the
new one with one extra matmul in the middle) are traced, lowered and compiled once each, in this
process, by jitscope's pipeline; then ``diff_reports`` (line alignment, primitive counts, HLO parse
and structural match, collectives, figures) is timed ``--repeat`` times on the two records, and the
view model rendered as text and Markdown. Prints the sizes and the median, min and max of each.

    python benchmarks/diff_speed.py            # goal: the diff under a second
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine import watch_machine


def make(layers: int, extra: int | None):  # type: ignore[no-untyped-def]
    import jax.numpy as jnp

    def net(h, ws, scale, bias):  # type: ignore[no-untyped-def]
        for i in range(layers):
            h = jnp.tanh(h @ ws[i]) * scale + bias
            if i == extra:
                h = h @ ws[i]
        return h.sum()

    return net


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=600)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="smoke run: 20 layers, 2 repeats")
    args = parser.parse_args()
    if args.quick:
        args.layers, args.repeat = 20, 2
    with watch_machine(uses_jax=True) as machine:
        run(args, machine)


def run(args: argparse.Namespace, machine: object) -> None:

    import jax
    import jax.numpy as jnp

    from jitscope.api.commands.diff import DiffResult
    from jitscope.api.commands.trace import run_trace
    from jitscope.api.targets import target_of
    from jitscope.comparison.compare import diff_reports

    spec = (jax.ShapeDtypeStruct((16, 64), jnp.float32), jax.ShapeDtypeStruct((args.layers, 64, 64), jnp.float32),
            jax.ShapeDtypeStruct((), jnp.float32), jax.ShapeDtypeStruct((64,), jnp.float32))
    reports = []
    started = time.perf_counter()
    for extra in (None, args.layers // 2):
        handle = target_of(make(args.layers, extra), spec, {}, None, None, abstract=True, shapes=None)
        report, _ = run_trace([handle], None, None, None, ("jaxpr", "stablehlo", "hlo", "cost", "memory"), False)
        reports.append(report)
    traced = time.perf_counter() - started
    old, new = reports
    sizes = []
    for report in (old, new):
        record = report.traces[0]
        hlo = record.stages.hlo if record.stages else ""
        sizes.append((sum(1 for line in (hlo or "").splitlines() if " = " in line and "(" in line),
                      record.summary.n_eqns_total if record.summary else 0))
    times, render = [], []
    result = None
    for _ in range(args.repeat):
        machine.sample()  # type: ignore[attr-defined]
        t0 = time.perf_counter()
        result = diff_reports(old, new, old_label="old", new_label="new")
        t1 = time.perf_counter()
        DiffResult(result).render("text")
        DiffResult(result).render("markdown")
        render.append(time.perf_counter() - t1)
        times.append(t1 - t0)
    assert result is not None
    call = result.calls[0]
    print(f"old: {sizes[0][0]:,} HLO instructions, {sizes[0][1]:,} jaxpr equations; "
          f"new: {sizes[1][0]:,} HLO instructions, {sizes[1][1]:,} jaxpr equations (traced and compiled in {traced:.1f} s)")
    print(f"found: {len(call.changes)} line change(s), {sum(h.count for h in call.hlo)} HLO instruction(s) added/removed, "
          f"{call.hlo_matched:,} matched")
    print(f"diff:   median {statistics.median(times):.3f} s (min {min(times):.3f}, max {max(times):.3f}, "
          f"{args.repeat} runs)")
    print(f"render: median {statistics.median(render):.3f} s (text and Markdown)")


if __name__ == "__main__":
    main()
