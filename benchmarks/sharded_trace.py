"""How much longer does ``jitscope trace`` take for a sharded program on 8 devices than on one?

A transformer block (``examples/transformer.py:encode`` with one layer: attention + MLP) is
traced, lowered and compiled by jitscope's pipeline (``run_trace``, every stage, as
``jitscope trace`` does), once on one CPU device with plain shapes and once on 8 virtual CPU
devices with a 2 x 4 ``data`` x ``model`` mesh and Megatron-style shardings, which adds
XLA's SPMD partitioning and jitscope's sharding analysis (layouts, collectives, per-line
traffic). Each side runs in its own process (the device count is fixed when JAX starts),
the two alternating, ``--runs`` times; each process times ``--rounds`` traces after one
warm-up and reports its median. The figure is the median over runs of the per-run ratio
sharded / single. Target: ratio <= 2. The share of jitscope's own sharding analysis in the
sharded trace is printed too.

    python benchmarks/sharded_trace.py [--runs 5] [--rounds 5]
    python benchmarks/sharded_trace.py --quick    # smoke run: 1 run of 2 rounds
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

from machine import spread, watch_machine

TARGET = str(ROOT / "examples" / "transformer.py") + ":encode"
MESH = "data=2,model=4"


def _layer(sharded: bool, dim: int = 256, hidden: int = 1024) -> str:
    def s(spec: str) -> str:
        return spec if sharded else ""

    return (f"{{'attn': {{'qkv': f32[{dim},{3 * dim}]{s('@(None,model)')}, 'out': f32[{dim},{dim}]{s('@(model,None)')}}}, "
            f"'ln1': (f32[{dim}]{s('@()')}, f32[{dim}]{s('@()')}), 'ln2': (f32[{dim}]{s('@()')}, f32[{dim}]{s('@()')}), "
            f"'mlp_in': f32[{dim},{hidden}]{s('@(None,model)')}, 'mlp_out': f32[{hidden},{dim}]{s('@(model,None)')}}}")


def shapes(sharded: bool) -> str:
    return f"[{_layer(sharded)}], f32[16,128,256]{'@(data,None,None)' if sharded else ''}"


def child(sharded: bool, rounds: int) -> None:
    """One side: time run_trace ``rounds`` times after a warm-up; print JSON medians."""
    import gc

    if sharded:
        os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"
    from jitscope.api.commands.trace import run_trace
    from jitscope.load.mesh import mesh_scope
    from jitscope.sharding import analyse

    spent: list[float] = []
    original = analyse.analyse_compiled

    def timed(*args, **kwargs):  # type: ignore[no-untyped-def]
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            spent.append(time.perf_counter() - start)

    analyse.analyse_compiled = timed
    stages = ("jaxpr", "stablehlo", "hlo", "cost", "memory")
    totals: list[float] = []
    with mesh_scope(8 if sharded else None, MESH if sharded else None):
        for i in range(rounds + 1):
            gc.collect()
            start = time.perf_counter()
            report, _ = run_trace([TARGET], [shapes(sharded)], ["num_heads=4"], None, stages, watch_effects=True)
            elapsed = time.perf_counter() - start
            if i:  # the first is a warm-up (imports, first compile of JAX's own helpers)
                totals.append(elapsed)
    record = report.traces[0]
    assert record.diagnostic is None, record.diagnostic
    collectives = len(record.sharding.collectives) if record.sharding is not None else 0
    print(json.dumps({"total": statistics.median(totals), "analysis": statistics.median(spent[1:] or [0.0]),
                      "collectives": collectives}))


def run_side(sharded: bool, rounds: int) -> dict[str, float]:
    out = subprocess.run([sys.executable, __file__, "--child", "sharded" if sharded else "single",
                          "--rounds", str(rounds)], capture_output=True, text=True, check=True, cwd=ROOT)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="smoke run: 1 run of 2 rounds")
    parser.add_argument("--child", choices=("sharded", "single"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child == "sharded", args.rounds)
        return
    runs, rounds = (1, 2) if args.quick else (args.runs, args.rounds)
    ratios: list[float] = []
    shares: list[float] = []
    with watch_machine(uses_jax=False) as machine:
        print(f"transformer block (examples/transformer.py:encode, 1 layer, dim 256): {runs} run(s) x {rounds} "
              f"rounds per side; sharded: {MESH} on 8 CPU devices")
        for run in range(runs):
            order = (True, False) if run % 2 == 0 else (False, True)
            sides = {sharded: run_side(sharded, rounds) for sharded in order}
            machine.sample()
            sharded, single = sides[True], sides[False]
            ratios.append(sharded["total"] / single["total"])
            shares.append(sharded["analysis"] / sharded["total"])
            print(f"  run {run + 1}: 1 device {single['total'] * 1e3:7.1f} ms   8 devices {sharded['total'] * 1e3:7.1f} ms"
                  f" ({sharded['collectives']:.0f} collectives; sharding analysis {sharded['analysis'] * 1e3:.1f} ms)")
        print(f"trace (all stages) 8 devices / 1 device   ratio {spread(ratios)} (target <= 2)")
        print(f"sharding analysis / whole sharded trace   share {spread(shares)}")


if __name__ == "__main__":
    main()
