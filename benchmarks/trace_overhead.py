"""What does jitscope cost on top of the JAX work it shows?

1. ``jitscope trace examples/mlp.py:train_step`` against a plain Python script that does the
   same JAX work (import jax, trace, lower, compile, print jaxpr/StableHLO/HLO), each in a
   fresh process, alternating, median of N runs. Target: ratio <= 1.2.
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
import jax
import sys
sys.path.insert(0, {examples!r})
import mlp
x = {args}
traced = mlp.train_step.trace(*x)
print(traced.jaxpr)
lowered = traced.lower()
print(lowered.as_text(dialect="stablehlo"))
compiled = lowered.compile()
print(compiled.as_text())
print(compiled.cost_analysis(), compiled.memory_analysis())
"""

ARGS = (
    "({'layer0': {'w': jax.ShapeDtypeStruct((784, 512), 'float32'), 'b': jax.ShapeDtypeStruct((512,), 'float32')},"
    " 'layer1': {'w': jax.ShapeDtypeStruct((512, 10), 'float32'), 'b': jax.ShapeDtypeStruct((10,), 'float32')}},"
    " jax.ShapeDtypeStruct((128, 784), 'float32'), jax.ShapeDtypeStruct((128,), 'int32'))"
)


def _time(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    return time.perf_counter() - start


def measure_cli(runs: int) -> dict[str, float]:
    plain = PLAIN.format(examples=str(ROOT / "examples"), args=ARGS)
    jitscope_cmd = [sys.executable, "-m", "jitscope", "trace", "examples/mlp.py:train_step"]
    plain_cmd = [sys.executable, "-c", plain]
    _time(plain_cmd)  # warm the OS file cache for both
    _time(jitscope_cmd)
    ours, theirs = [], []
    for _ in range(runs):
        ours.append(_time(jitscope_cmd))
        theirs.append(_time(plain_cmd))
    return {"jitscope": statistics.median(ours), "plain": statistics.median(theirs)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--eqns", type=int, default=20000)
    opts = parser.parse_args()

    cli = measure_cli(opts.runs)
    ratio = cli["jitscope"] / cli["plain"]
    print(f"trace CLI   jitscope {cli['jitscope']:.2f} s   plain script {cli['plain']:.2f} s   "
          f"ratio {ratio:.2f} (target <= 1.2)")

    from render_jaxpr import measure_render

    r = measure_render(opts.eqns)
    print(f"render      {int(r['n_eqns'])} equations: str(jaxpr) {r['str_jaxpr'] * 1e3:.0f} ms; "
          f"record {r['record'] * 1e3:.0f} ms")
    for key, label in (("ratio_text", "plain text"), ("ratio_rich_plain", "rich, piped"),
                       ("ratio_rich_color", "rich, terminal colour")):
        print(f"            {label:<22} ratio {r[key]:.2f} (target <= 3)")


if __name__ == "__main__":
    main()
