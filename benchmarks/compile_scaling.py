"""Why the compile is slow, measured: ``trace --compile-profile`` on one unrolled loop among ordinary lines.

For ten unrolled lengths from 10 to 1,000 (``benchmarks/targets`` style: a program written to a scratch
file, so that it is the user's code):

1. the cold compile (trace + lower + XLA) grows with the length, and the share jitscope attributes to the
   loop's line stays above 80% (target);
2. the XLA phases jitscope reports add up to within 10% of the compile that bench's cold call measures
   for the same function (target): bench's cold call run under the capture, its XLA phases against JAX's
   own measurement of that compile, median of ``--rounds`` cold calls;
3. the capture's cost: XLA compiles of the same lowered program with and without the capture,
   alternating, ``--rounds`` each; the median ratio. Above 1.10, the capture is opt-in
   (``--compile-profile``), which it is.

    python benchmarks/compile_scaling.py [--rounds 3] [--lengths 10,20,50,...]
    python benchmarks/compile_scaling.py --quick     # three short lengths, one round
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from machine import watch_machine  # noqa: E402

LENGTHS = (10, 20, 50, 100, 150, 200, 300, 500, 700, 1000)
LOOP_LINE = 9

PROGRAM = textwrap.dedent("""\
    import jax
    import jax.numpy as jnp


    def layer(x, w, b):
        h = jnp.dot(x, w) + b
        h = jax.nn.gelu(h)
        for _ in range({n}):
            h = h * 0.9 + jnp.tanh(h)
        scale = jnp.sqrt(jnp.mean(h * h) + 1e-6)
        return jnp.sum(h / scale, axis=-1)
    """)
SHAPES = "f32[4,8], f32[8,8], f32[8]"


def _program(folder: Path, n: int) -> str:
    path = folder / f"unrolled_{n}.py"
    path.write_text(PROGRAM.format(n=n))
    return f"{path}:layer"


def _phases_vs_bench(target: str, rounds: int) -> tuple[float, float]:
    """Median over ``rounds`` cold compiles, each under the capture as ``--compile-profile`` runs it: the
    phases jitscope reports (XLA's, plus JAX's own work around them) / the compile as bench measures it in
    that same compile (JAX's ``backend_compile_duration`` monitoring event, bench's "compile" column); and
    the share of it that XLA's own events cover (the rest is JAX's work around XLA, one phase of its own)."""
    import jax

    from jitscope.jaxcompat.compile_profile import capture_compile
    from jitscope.jaxcompat.monitoring import watch_compilation
    from jitscope.load.abstract import to_abstract
    from jitscope.load.calls import calls_from_flags, load_all
    from jitscope.profiling.compile_phases import xla_phases

    (handle,) = load_all([target])
    (argset,) = calls_from_flags(handle, [SHAPES], None, None)
    args, kwargs = to_abstract(argset)
    ratios, covered = [], []
    for _ in range(rounds):
        jax.clear_caches()
        lowered = jax.jit(handle.fn).lower(*args, **kwargs)
        with watch_compilation(time.perf_counter) as watch, capture_compile() as capture:
            lowered.compile()
        phases = xla_phases(capture.events)
        measured = watch.phase("compile")
        if phases.found and measured and capture.seconds:
            ratios.append(max(capture.seconds, phases.seconds) / measured)
            covered.append(phases.seconds / measured)
    nan = float("nan")
    return (statistics.median(ratios), statistics.median(covered)) if ratios else (nan, nan)


def _capture_cost(target: str, rounds: int) -> float:
    """Median of (compile with the capture) / (compile without), alternating on fresh lowerings."""
    import jax

    from jitscope.jaxcompat.compile_profile import capture_compile
    from jitscope.load.calls import calls_from_flags, load_all
    from jitscope.load.abstract import to_abstract

    (handle,) = load_all([target])
    (argset,) = calls_from_flags(handle, [SHAPES], None, None)
    args, kwargs = to_abstract(argset)
    ratios, covered = [], []
    for _ in range(rounds):
        jax.clear_caches()
        lowered = jax.jit(handle.fn).lower(*args, **kwargs)
        start = time.perf_counter()
        lowered.compile()
        plain = time.perf_counter() - start
        jax.clear_caches()
        lowered = jax.jit(handle.fn).lower(*args, **kwargs)
        start = time.perf_counter()
        with capture_compile():
            lowered.compile()
        ratios.append((time.perf_counter() - start) / plain)
    return statistics.median(ratios)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--lengths", default=",".join(map(str, LENGTHS)))
    parser.add_argument("--quick", action="store_true")
    opts = parser.parse_args()
    lengths = (10, 50, 100) if opts.quick else tuple(int(n) for n in opts.lengths.split(","))
    rounds = 1 if opts.quick else opts.rounds
    from jitscope.api.commands.trace import run_trace

    rows = []
    with watch_machine(uses_jax=True), tempfile.TemporaryDirectory() as scratch:
        for n in lengths:
            target = _program(Path(scratch), n)
            report, _ = run_trace([target], [SHAPES], None, None, ("jaxpr", "hlo"), False, compile_profile=True)
            record = report.traces[0].compile_time
            assert record is not None
            loop = next((line for line in record.lines if line.location and line.location.line == LOOP_LINE), None)
            whole = (record.trace_seconds or 0.0) + (record.lower_seconds or 0.0) + (record.compile_seconds or 0.0)
            ratio, xla_share = _phases_vs_bench(target, rounds)
            cost = _capture_cost(target, rounds)
            first = record.lines[0].location is not None and record.lines[0].location.line == LOOP_LINE
            rows.append((n, whole, loop.compile_share if loop else 0.0, first, ratio, cost, xla_share))
            print(f"n={n:5d}  cold compile {whole:7.3f} s  loop line {rows[-1][2]:5.1%}{'' if first else ' (NOT first)'}"
                  f"  phases / bench's compile {ratio:.3f} (XLA's events {xla_share:.0%})  capture cost x{cost:.2f}",
                  flush=True)
    print("\n| unrolled | cold compile | loop line's share | ranked first | phases / bench compile | XLA's events "
          "| capture cost |")
    print("|---:|---:|---:|:---:|---:|---:|---:|")
    for n, whole, share, first, ratio, cost, xla_share in rows:
        print(f"| {n} | {whole:.2f} s | {share:.0%} | {'yes' if first else 'no'} | {ratio:.3f} | {xla_share:.0%} "
              f"| x{cost:.2f} |")
    ok_share = all(r[2] > 0.8 for r in rows)
    ok_phases = all(abs(r[4] - 1) <= 0.10 for r in rows)
    print(f"\nloop line > 80% everywhere: {'yes' if ok_share else 'NO'}; phases within 10% of bench's compile: "
          f"{'yes' if ok_phases else 'NO'}; capture cost median x{statistics.median(r[5] for r in rows):.2f} "
          "(> 1.10: opt-in --compile-profile)")


if __name__ == "__main__":
    main()
