"""How much of a call's time `jitscope profile` puts on source lines, and whether its parts add up to bench's time.

For each bundled example: the device time per call the capture shows, the share of it attributed to
a source line (the rest had no source metadata), the parts (lines + no source + device idle + copies
+ host overhead) against the cached-call median that `jitscope bench` measures in the same process,
and how much slower calls ran while the profiler watched.

    python benchmarks/profile_attribution.py            # 20 profiled calls, 0.3 s bench budget per example
    python benchmarks/profile_attribution.py --quick    # smoke run: 3 calls, 0.05 s
"""

from __future__ import annotations

import argparse
from pathlib import Path

from machine import watch_machine

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
TARGETS = ("profile_hotspot.py:layer", "mlp.py:train_step", "transformer.py:encode", "scan_rnn.py:rnn",
           "jit_sin.py:*")


def fmt(seconds: float) -> str:
    from jitscope.units import fmt_duration

    return fmt_duration(seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20, help="calls captured under the profiler")
    parser.add_argument("--budget", type=float, default=0.3, help="seconds of cached calls timed (profile and bench)")
    parser.add_argument("--quick", action="store_true", help="smoke run: --calls 3 --budget 0.05")
    opts = parser.parse_args()
    if opts.quick:
        opts.calls, opts.budget = 3, 0.05
    with watch_machine(uses_jax=True) as machine:
        report(opts, machine.sample)


def report(opts: argparse.Namespace, sample: object) -> None:
    from jitscope.timing.plan import plan_calls
    from jitscope.timing.runner import BenchOptions, bench_calls
    from jitscope.profiling.runner import ProfileOptions, profile_calls

    calls = plan_calls([str(EXAMPLES / t) for t in TARGETS])
    profiled = profile_calls(calls, ProfileOptions(calls=opts.calls, budget=opts.budget))
    benched = bench_calls(calls, BenchOptions(budget=opts.budget, dispatch=False)).report
    bench_median = {(r.target, r.call): r.cached.blocked.median for r in benched.rows}
    print(f"{opts.calls} profiled calls, {opts.budget} s of cached calls timed per example "
          f"({profiled.environment.get('backend')}, jax {profiled.environment.get('jax')})\n")
    head = (f"{'example':<34}{'device':>10}{'on lines':>10}{'idle':>9}{'host':>10}{'parts':>10}{'profile':>10}"
            f"{'bench':>10}{'parts/bench':>13}{'watched':>9}")
    print(head)
    shares, ratios = [], []
    for row in profiled.rows:
        if callable(sample):
            sample()
        rec = row.reconciliation
        device = row.device_time
        on_lines = rec.lines / device if device else 0.0
        bench = bench_median.get((row.target, row.call), float("nan"))
        ratio = rec.total / bench if bench > 0 else float("nan")  # NaN (no bench row) compares False
        shares.append(on_lines)
        ratios.append(ratio)
        name = row.target.rsplit("/", 1)[-1]
        print(f"{name:<34}{fmt(device):>10}{on_lines:>10.1%}{fmt(rec.idle):>9}{fmt(rec.host):>10}{fmt(rec.total):>10}"
              f"{fmt(rec.measured):>10}{fmt(bench):>10}{ratio:>13.3f}{rec.profiled_wall / rec.measured:>8.2f}x")
    for failure in profiled.failures:
        print(f"failed: {failure.target}: {failure.error}")
    print("\ndevice: time of the program's ops per call as the capture shows it; on lines: its share attributed to a "
          "source line;\nparts: lines + no source + idle + copies + host (measured - device span); profile: the "
          "cached median profile\nmeasured (no profiler); bench: `jitscope bench`'s cached median of the same call, "
          "measured after it;\nwatched: a call's time under the profiler against the time without it")
    if shares:
        print(f"\nattributed to source lines: min {min(shares):.1%}; parts/bench: "
              f"{min(ratios):.3f} .. {max(ratios):.3f}")


if __name__ == "__main__":
    main()
