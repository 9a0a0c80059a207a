"""What does jitscope cost on top of the JAX work it shows?

1. ``jitscope trace`` of two bundled examples (a small MLP step, where process start-up
   dominates, and a 4-layer transformer encoder) against a plain Python script doing the same
   JAX work (import jax, trace, lower, compile, print jaxpr/StableHLO/HLO and the analyses),
   each in a fresh process, alternating, median of N runs. Target: ratio <= 1.2.
2. Rendering a 20,000-equation jaxpr (record conversion + rendering) against
   ``str(jaxpr)``. Target: ratio <= 3.

    python benchmarks/trace_overhead.py [--runs 7]
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


def measure_cli(module: str, fn: str, runs: int) -> dict[str, float]:
    """Median wall time of ``jitscope trace`` and of the plain script, run alternately."""
    sys.path.insert(0, str(ROOT / "examples"))
    spec = __import__(module).JITSCOPE_EXAMPLES[fn]
    plain = PLAIN.format(examples=str(ROOT / "examples"), module=module, fn=fn, spec=f"({spec},)")
    jitscope_cmd = [sys.executable, "-m", "jitscope", "trace", f"examples/{module}.py:{fn}"]
    quiet_cmd = [*jitscope_cmd, "--no-effects"]
    plain_cmd = [sys.executable, "-c", plain]
    _time(plain_cmd)  # warm the OS file cache for both
    _time(jitscope_cmd)
    ours, unwatched, theirs = [], [], []
    for _ in range(runs):
        ours.append(_time(jitscope_cmd))
        unwatched.append(_time(quiet_cmd))
        theirs.append(_time(plain_cmd))
    return {
        "jitscope": statistics.median(ours),
        "no_effects": statistics.median(unwatched),
        "plain": statistics.median(theirs),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--eqns", type=int, default=20000)
    opts = parser.parse_args()

    for module, fn in TARGETS:
        cli = measure_cli(module, fn, opts.runs)
        ratio = cli["jitscope"] / cli["plain"]
        print(f"trace CLI   {module}.py:{fn:<11} jitscope {cli['jitscope']:.2f} s   plain script "
              f"{cli['plain']:.2f} s   ratio {ratio:.2f} (target <= 1.2); with --no-effects "
              f"{cli['no_effects']:.2f} s, ratio {cli['no_effects'] / cli['plain']:.2f}")

    from render_jaxpr import measure_render

    r = measure_render(opts.eqns)
    print(f"render      {int(r['n_eqns'])} equations: str(jaxpr) {r['str_jaxpr'] * 1e3:.0f} ms; "
          f"record {r['record'] * 1e3:.0f} ms")
    for key, label in (("ratio_text", "plain text"), ("ratio_rich_plain", "rich, piped"),
                       ("ratio_rich_color", "rich, terminal colour")):
        print(f"            {label:<22} ratio {r[key]:.2f} (target <= 3)")


if __name__ == "__main__":
    main()
