"""``jitscope memory``'s cost against the compile it reads: a ~10k-instruction module on this machine.

Prints, side by side in one run (medians of ROUNDS): XLA's compile without a dump, the same compile
writing the dump ``jitscope memory`` reads, and the analysis (parsing the dump and the module, the
peak, attribution to lines, residuals, donation). The issue's bar: the analysis under 10% of the compile.

    python benchmarks/memory_overhead.py [--layers 60] [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import time


def model(layers: int):
    import jax
    import jax.numpy as jnp

    def loss(ws, x):
        h = x
        for i, w in enumerate(ws):  # unrolled: each layer its own instructions
            h = jnp.tanh(h @ w) + (0.1 * i) * jnp.sin(h)
        return (h ** 2).mean()

    def step(ws, x):
        grads = jax.grad(loss)(ws, x)
        return [w - 0.01 * g for w, g in zip(ws, grads, strict=True)]

    return step


def main() -> None:
    import jax
    import jax.numpy as jnp

    from jitscope.buffers.analyse import analyse
    from jitscope.jaxcompat.xla_dump import compile_with_dump
    from jitscope.profiling.attribute import FunctionSpan
    from jitscope.profiling.hlo import parse_module

    parser = argparse.ArgumentParser()
    parser.add_argument("--layers", type=int, default=60)  # ~16k HLO instructions; 300 takes minutes to compile
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    step = model(args.layers)
    ws = [jax.ShapeDtypeStruct((64, 64), jnp.float32)] * args.layers
    x = jax.ShapeDtypeStruct((32, 64), jnp.float32)
    plain, dumped, analysed = [], [], []
    instructions = 0
    for _ in range(args.rounds):
        jax.clear_caches()  # every compile below is a real one
        lowered = jax.jit(step).lower(ws, x)
        start = time.perf_counter()
        compiled = lowered.compile()
        plain.append(time.perf_counter() - start)
        lowered = jax.jit(step).lower(ws, x)  # a fresh lowering: nothing cached
        _, texts = compile_with_dump(lowered)
        dumped.append(texts.compile_seconds)
        start = time.perf_counter()
        analyse(texts.module, texts.buffer_assignment, texts.live_range, {}, FunctionSpan(__file__, 1, 10**6),
                lambda f: f == __file__)
        analysed.append(time.perf_counter() - start)
        instructions = sum(len(c.instructions) for c in parse_module(texts.module).computations.values())
        del compiled
    p, d, a = (statistics.median(v) for v in (plain, dumped, analysed))
    print(f"jax {jax.__version__}, {jax.default_backend()}, {instructions:,} HLO instructions, {args.rounds} rounds")
    print(f"compile, no dump        {p:8.3f} s")
    print(f"compile, with the dump  {d:8.3f} s  ({d / p:.2f}x)")
    print(f"analysis                {a:8.3f} s  ({a / p:.1%} of the compile without a dump)")


if __name__ == "__main__":
    main()
