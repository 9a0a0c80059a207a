"""Rendering a 20,000-equation jaxpr: jitscope's record + renderers against ``str(jaxpr)``.

Run: ``python benchmarks/render_jaxpr.py [n_eqns]``. Target: record + plain text <= 3x ``str(jaxpr)``.

Everything is timed side by side in one process on the same jaxpr, so the ratios are
meaningful even on a noisy machine; each figure is the best of a few rounds with the
garbage collector off, as ``timeit`` does.
"""

from __future__ import annotations

import gc
import io
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: Rounds per measurement; the minimum is reported.
ROUNDS = 5


def build_jaxpr(n_eqns: int = 20000) -> Any:
    """A ClosedJaxpr with about ``n_eqns`` equations counting nested ones: a long elementwise
    chain with a jitted block called every 50 steps (a shared jaxpr) and a scan every 200."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    @jax.jit
    def block(x: Any) -> Any:
        return jnp.tanh(x * 0.5 + 1.0)

    def chain(x: Any) -> Any:
        emitted = 0
        step = 0
        while emitted < n_eqns:
            x = jnp.sin(x * 1.0001 + 0.5)
            emitted += 3
            if step % 50 == 0:
                x = block(x)
                emitted += 4
            if step % 200 == 0:
                x, _ = lax.scan(lambda c, _: (c * 2.0 + 1.0, None), x, None, length=3)
                emitted += 3
            step += 1
        return x

    return jax.make_jaxpr(chain)(jnp.zeros((8, 128), jnp.float32))


def best_of(fn: Callable[[], object], rounds: int = ROUNDS) -> float:
    """Fastest of ``rounds`` calls, in seconds, with the garbage collector off while timing."""
    best = float("inf")
    enabled = gc.isenabled()
    try:
        for _ in range(rounds):
            gc.collect()
            gc.disable()
            start = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - start)
            gc.enable()
    finally:
        if enabled:
            gc.enable()
    return best


def measure_render(n_eqns: int = 20000) -> dict[str, float]:
    """Seconds for each step on one ~``n_eqns`` jaxpr, and the ratios to ``str(jaxpr)``.

    Keys: n_eqns (equations incl. nested), str_jaxpr, record (jaxpr_to_record + summarize),
    text (render_jaxpr_text), rich_plain (a piped, colourless console), rich_color (a
    truecolor terminal console), and ratio_text / ratio_rich_plain / ratio_rich_color:
    (record + rendering) / str_jaxpr.
    """
    from rich.console import Console

    from jitscope.jaxcompat.jaxpr import jaxpr_to_record
    from jitscope.model.jaxpr import summarize
    from jitscope.render.jaxpr import render_jaxpr, render_jaxpr_text
    from jitscope.render.theme import THEME

    closed = build_jaxpr(n_eqns)
    record = jaxpr_to_record(closed)
    summary = summarize(record)

    def to_console(color: bool) -> Callable[[], object]:
        def run() -> object:
            console = Console(
                file=io.StringIO(),
                theme=THEME,
                width=200,
                force_terminal=color,
                color_system="truecolor" if color else None,
                soft_wrap=not color,
                highlight=False,
            )
            console.print(render_jaxpr(record, summary))
            return console.file

        return run

    results: dict[str, float] = {"n_eqns": float(summary.n_eqns_total)}
    results["str_jaxpr"] = best_of(lambda: str(closed))
    results["record"] = best_of(lambda: summarize(jaxpr_to_record(closed)))
    results["text"] = best_of(lambda: render_jaxpr_text(record, summary))
    results["rich_plain"] = best_of(to_console(False))
    results["rich_color"] = best_of(to_console(True))
    for key in ("text", "rich_plain", "rich_color"):
        results[f"ratio_{key}"] = (results["record"] + results[key]) / results["str_jaxpr"]
    return results


def main(argv: list[str]) -> int:
    n = int(argv[1]) if len(argv) > 1 else 20000
    r = measure_render(n)
    print(f"jaxpr with {int(r['n_eqns'])} equations (incl. nested), best of {ROUNDS}")
    print(f"  str(jaxpr)                       {r['str_jaxpr'] * 1e3:8.1f} ms   1.00x")
    print(f"  jaxpr_to_record + summarize      {r['record'] * 1e3:8.1f} ms")
    for key, label in (
        ("text", "render_jaxpr_text"),
        ("rich_plain", "rich, piped (no colour)"),
        ("rich_color", "rich, truecolor terminal"),
    ):
        print(f"  record + {label:<24}{(r['record'] + r[key]) * 1e3:8.1f} ms  {r['ratio_' + key]:5.2f}x")
    print("target: record + render_jaxpr_text <= 3x str(jaxpr)")
    return 0


if __name__ == "__main__":
    # Run from a checkout without installing: the repository root holds the package.
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    sys.exit(main(sys.argv))
