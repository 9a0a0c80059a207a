"""What does jitscope cost on top of the JAX work it shows?

1. ``jitscope trace`` of two bundled examples (a small MLP step, where process start-up
   dominates, and a 4-layer transformer encoder) against a plain Python script doing the same
   JAX work (import jax, trace, lower, compile, print jaxpr/StableHLO/HLO and the analyses),
   each in a fresh process, alternating (the order rotates each run), N runs. Each run gives
   one ratio per mode, both sides measured back to back under the same load; the median of
   those ratios is the figure, printed with its min and max. Target: ratio <= 1.2.
2. Rendering a 20,000-equation jaxpr (record conversion + rendering) against
   ``str(jaxpr)``. Target: ratio <= 3.

    python benchmarks/trace_overhead.py [--runs 7] [--eqns 20000] [--render-rounds 5]
    python benchmarks/trace_overhead.py --quick    # smoke run: 1 run, no warm-up, a 2,000-equation jaxpr
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

from machine import LoadWatch, spread, watch_machine

PLAIN = """
import sys
import jax
sys.path.insert(0, {examples!r})
module = __import__({module!r})

class _Dtype:
    def __init__(self, name):
        self.name = name
    def __getitem__(self, dims):
        dims = dims if isinstance(dims, tuple) else (dims,)
        return jax.ShapeDtypeStruct(dims, self.name)

args = eval({spec!r}, {{"f32": _Dtype("float32"), "i32": _Dtype("int32")}})
traced = getattr(module, {fn!r}).trace(*args)
print(traced.jaxpr)
lowered = traced.lower()
print(lowered.as_text(dialect="stablehlo"))
compiled = lowered.compile()
print(compiled.as_text())
print(compiled.cost_analysis(), compiled.memory_analysis())
"""

#: (example file, function): a small model where start-up dominates, and a bigger one.
TARGETS = (("mlp", "train_step"), ("transformer", "encode"))


def _time(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    return time.perf_counter() - start


def measure_cli(
    module: str, fn: str, runs: int, machine: LoadWatch, *, warm: bool = True
) -> dict[str, list[float]]:
    """Wall times of ``jitscope trace``, of it with ``--no-effects`` and of the plain script, per run."""
    sys.path.insert(0, str(ROOT / "examples"))
    spec = __import__(module).JITSCOPE_EXAMPLES[fn]
    plain = PLAIN.format(examples=str(ROOT / "examples"), module=module, fn=fn, spec=f"({spec},)")
    jitscope_cmd = [sys.executable, "-m", "jitscope", "trace", f"examples/{module}.py:{fn}"]
    commands = {
        "jitscope": jitscope_cmd,
        "no_effects": [*jitscope_cmd, "--no-effects"],
        "plain": [sys.executable, "-c", plain],
    }
    if warm:  # warm the OS file cache for both
        _time(commands["plain"])
        _time(jitscope_cmd)
    times: dict[str, list[float]] = {name: [] for name in commands}
    names = list(commands)
    for i in range(runs):
        # Rotate the order so that no mode always runs first (or right after the same one).
        for name in names[i % 3:] + names[:i % 3]:
            times[name].append(_time(commands[name]))
        machine.sample()
    return times


def ratios(times: dict[str, list[float]], mode: str) -> list[float]:
    """Per-run ratio of ``mode`` to the plain script (the two ran back to back)."""
    return [ours / plain for ours, plain in zip(times[mode], times["plain"], strict=True)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--eqns", type=int, default=20000)
    parser.add_argument("--render-rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="smoke run: 1 run without warm-up, 2,000 equations, 2 rounds")
    opts = parser.parse_args()
    if opts.quick:
        opts.runs, opts.eqns, opts.render_rounds = 1, 2000, 2
    if opts.runs < 1:
        parser.error("--runs must be at least 1")

    with watch_machine(uses_jax=True) as machine:
        for module, fn in TARGETS:
            times = measure_cli(module, fn, opts.runs, machine, warm=not opts.quick)
            med = {name: statistics.median(values) for name, values in times.items()}
            print(f"trace CLI   {module}.py:{fn:<11} jitscope {med['jitscope']:.2f} s   plain script "
                  f"{med['plain']:.2f} s   with --no-effects {med['no_effects']:.2f} s (medians)")
            print(f"            jitscope / plain      ratio {spread(ratios(times, 'jitscope'))} (target <= 1.2)")
            print(f"            --no-effects / plain  ratio {spread(ratios(times, 'no_effects'))}")

        from render_jaxpr import measure_render

        r = measure_render(opts.eqns, max(1, opts.render_rounds))
        print(f"render      {r.n_eqns} equations: str(jaxpr) {r.best('str_jaxpr') * 1e3:.0f} ms; "
              f"record {r.best('record') * 1e3:.0f} ms (best of {len(r.rounds['record'])} rounds)")
        for key, label in (("text", "plain text"), ("rich_plain", "rich, piped"),
                           ("rich_color", "rich, terminal colour")):
            print(f"            {label:<22} ratio {r.ratio(key):.2f} (target <= 3); per round "
                  f"{spread(r.per_round_ratios(key), 'rounds')}")


if __name__ == "__main__":
    main()
