"""Tracing with and without the effect monitor, side by side: the monitor's slowdown.

Run: ``python benchmarks/effects_overhead.py [--rounds 7] [--real]`` (``--quick``: 1 round, a
200-op loop). Target: <= 1.5x tracing time. A third
column times an empty profile hook: on CPython 3.11 that alone costs about 2x, because the
interpreter leaves its specialised fast path for every instruction while any hook is set.

Three workloads, each traced with ``jax.make_jaxpr`` on abstract inputs:

* ``mlp``: value-and-grad of a 10-layer MLP's loss (mostly time inside JAX);
* ``loop``: a 2,000-op Python loop of jnp ops written in user code (every op is a
  call *from* user code, the monitor's slowest path);
* ``impure``: the loop plus a few effects on every 100th step (prints go to a buffer).

``--real`` adds two steps as their libraries' users write them (``benchmarks/targets/``, needs flax,
equinox and optax): ``nnx-gpt`` (a two-block GPT's ``nnx.jit`` step, traced through ``nnx.jit``)
and ``eqx-mlp`` (an MLP's ``eqx.filter_jit`` step, traced through ``eqx.filter_eval_shape``), each
a fresh copy of the step's own function every round. Most of their trace is the libraries' Python
and JAX's between the binds, where the 3.11 hook's gates (``jitscope/jaxcompat/hook_gate.py``) matter.

Each round traces a fresh function object (same code) so JAX's trace cache cannot
skip the body; rounds alternate plain and watched so drift affects both alike, and
each figure is the minimum over rounds with the garbage collector off. The ratio of each
round (watched / plain of the same round) is printed as median, min and max too.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

from machine import spread, watch_machine

ROUNDS = 7
LAYERS = 10
WIDTH = 256
LOOP_OPS = 2000

CALLS: list[int] = []


def mlp_loss(params: list[tuple[Any, Any]], x: Any, y: Any) -> Any:
    import jax
    import jax.numpy as jnp

    h = x
    for w, b in params[:-1]:
        h = jax.nn.gelu(h @ w + b)
    w, b = params[-1]
    logits = h @ w + b
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * y, axis=-1))


def mlp_step(params: list[tuple[Any, Any]], x: Any, y: Any) -> Any:
    import jax

    return jax.value_and_grad(mlp_loss)(params, x, y)


def op_loop(x: Any) -> Any:
    import jax.numpy as jnp

    for i in range(LOOP_OPS // 4):
        x = jnp.sin(x) * 1.0001 + float(i % 7)
        x = jnp.maximum(x, -1.0)
    return x


def impure_loop(x: Any) -> Any:
    import jax.numpy as jnp

    for i in range(LOOP_OPS // 4):
        x = jnp.sin(x) * 1.0001 + float(i % 7)
        x = jnp.maximum(x, -1.0)
        if i % 100 == 0:
            print("step", i)
            CALLS.append(i)
            time.perf_counter()
    return x


def fresh(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A new function object with the same code: JAX caches traces per function object."""
    assert isinstance(fn, types.FunctionType)
    return types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)


def _noop_profile_hook(frame: types.FrameType, event: str, arg: object) -> None:
    """The floor: what any Python-level profile hook costs before doing anything."""


def time_trace(fn: Callable[..., Any], args: tuple[Any, ...], mode: str,
               trace: Callable[..., Any] | None = None) -> float:
    """Seconds to trace ``fn`` once: ``mode`` is "plain", "noop" (empty profile hook) or "watched";
    ``trace(fn, *args)`` traces (default: ``jax.make_jaxpr``)."""
    import jax

    from jitscope.effects.monitor import watch_effects

    def make_jaxpr(target: Callable[..., Any], *args: Any) -> Any:
        return jax.make_jaxpr(target)(*args)

    trace = trace or make_jaxpr
    target = fresh(fn)
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            if mode == "watched":
                with watch_effects(fn.__code__) as watch:
                    trace(target, *args)
                watch.record()
            elif mode == "noop":
                sys.setprofile(_noop_profile_hook)
                try:
                    trace(target, *args)
                finally:
                    sys.setprofile(None)
            else:
                trace(target, *args)
        return time.perf_counter() - start
    finally:
        gc.enable()


Workload = tuple[Callable[..., Any], tuple[Any, ...], "Callable[..., Any] | None"]


def real_workloads() -> dict[str, Workload]:
    """The nnx GPT's and the equinox MLP's steps from ``benchmarks/targets/``, each traced through its wrapper."""
    import runpy

    import equinox as eqx
    from flax import nnx

    targets = Path(__file__).resolve().parent / "targets"
    with contextlib.redirect_stdout(io.StringIO()):
        gpt = runpy.run_path(str(targets / "train_nnx_gpt.py"))
        mlp = runpy.run_path(str(targets / "train_eqx_mlp.py"))

    def through_nnx_jit(target: Callable[..., Any], *args: Any) -> Any:
        return nnx.jit(target).trace(*args)

    def through_filter_jit(target: Callable[..., Any], *args: Any) -> Any:
        return eqx.filter_eval_shape(target, *args)

    return {
        "nnx-gpt": (gpt["train_step"].__wrapped__, (gpt["model"], gpt["optimizer"], gpt["batch"]), through_nnx_jit),
        "eqx-mlp": (mlp["train_step"].__wrapped__, (mlp["model"], mlp["state"][1], mlp["x"], mlp["y"]),
                    through_filter_jit),
    }


def workloads() -> dict[str, Workload]:
    import jax
    import jax.numpy as jnp

    f32 = jnp.float32
    dims = [WIDTH] * LAYERS + [10]
    params = [
        (jax.ShapeDtypeStruct((a, b), f32), jax.ShapeDtypeStruct((b,), f32))
        for a, b in zip([WIDTH, *dims[:-1]], dims, strict=True)
    ]
    batch = (jax.ShapeDtypeStruct((64, WIDTH), f32), jax.ShapeDtypeStruct((64, 10), f32))
    vector = (jax.ShapeDtypeStruct((8, 128), f32),)
    return {"mlp": (mlp_step, (params, *batch), None), "loop": (op_loop, vector, None),
            "impure": (impure_loop, vector, None)}


def main() -> None:
    global LOOP_OPS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=ROUNDS, help=f"rounds per workload [{ROUNDS}]")
    parser.add_argument("--quick", action="store_true", help="smoke run: 1 round, a 200-op loop")
    parser.add_argument("--real", action="store_true",
                        help="also the nnx GPT's and the equinox MLP's steps (needs flax, equinox, optax)")
    opts = parser.parse_args()
    if opts.quick:
        opts.rounds, LOOP_OPS = 1, 200
    rounds = max(1, opts.rounds)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    modes = ("plain", "noop", "watched")
    with watch_machine(uses_jax=True) as machine:
        print(f"Python {sys.version.split()[0]}, {rounds} round(s), minimum of each; loop of {LOOP_OPS} ops")
        print(f"{'workload':<9} {'plain ms':>9} {'no-op hook':>16} {'watched':>16}   per-round watched / plain")
        chosen = {**workloads(), **(real_workloads() if opts.real else {})}
        for name, (fn, args, trace) in chosen.items():
            for mode in modes:  # warm JAX's own caches for every mode
                time_trace(fn, args, mode, trace)
            times: dict[str, list[float]] = {mode: [] for mode in modes}
            for _ in range(rounds):
                for mode in modes:
                    times[mode].append(time_trace(fn, args, mode, trace))
                machine.sample()
            best = {mode: min(values) for mode, values in times.items()}
            plain = best["plain"]
            cells = [f"{best[m] * 1e3:7.1f} ({best[m] / plain:.2f}x)" for m in ("noop", "watched")]
            per_round = [w / p for w, p in zip(times["watched"], times["plain"], strict=True)]
            print(f"{name:<9} {plain * 1e3:>9.1f} {cells[0]:>16} {cells[1]:>16}   "
                  f"{spread(per_round, 'rounds')}")
        print("target: watched <= 1.50x plain. The no-op column is the floor of any sys.setprofile hook")
        print("(CPython runs every instruction on its slow path while one is set). On 3.11 the monitor is such a")
        print("hook; on 3.12+ it uses sys.monitoring instead, so there 'watched' can be far below the no-op column.")


if __name__ == "__main__":
    main()
