"""Rendering a 20,000-equation jaxpr: jitscope's record + renderers against ``str(jaxpr)``.

Run: ``python benchmarks/render_jaxpr.py [n_eqns] [--rounds 5]`` (``--quick``: 2,000 equations,
2 rounds). Target: record + plain text <= 3x ``str(jaxpr)``.

Everything is timed side by side in one process on the same jaxpr: each round times every
step once, in turn, with the garbage collector off, as ``timeit`` does. Each figure is the
best of the rounds; the ratios are printed both from those bests and as the median, min and
max of the per-round ratios (the steps of one round saw the same load).
"""

from __future__ import annotations

import argparse
import gc
import io
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from machine import spread, watch_machine

#: Rounds per measurement by default; the minimum is reported, and the per-round spread.
ROUNDS = 5
#: The rendering steps, each timed after ``record`` (jaxpr_to_record + summarize).
RENDERERS = ("text", "rich_plain", "rich_color")


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


def timed(fn: Callable[[], object]) -> float:
    """Seconds for one call of ``fn``, with the garbage collector off while timing."""
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        fn()
        return time.perf_counter() - start
    finally:
        if enabled:
            gc.enable()


@dataclass(frozen=True, slots=True)
class RenderTimes:
    """Per-round seconds of each step (keys: str_jaxpr, record, text, rich_plain, rich_color)."""

    n_eqns: int
    rounds: dict[str, list[float]]

    def best(self, step: str) -> float:
        return min(self.rounds[step])

    def ratio(self, renderer: str) -> float:
        """(record + rendering) / str(jaxpr), from the best round of each."""
        return (self.best("record") + self.best(renderer)) / self.best("str_jaxpr")

    def per_round_ratios(self, renderer: str) -> list[float]:
        steps = zip(self.rounds["record"], self.rounds[renderer], self.rounds["str_jaxpr"], strict=True)
        return [(record + render) / plain for record, render, plain in steps]


def measure_render(n_eqns: int = 20000, rounds: int = ROUNDS) -> RenderTimes:
    """Time each step on one ~``n_eqns`` jaxpr, every step once per round, ``rounds`` rounds.

    Steps: str_jaxpr, record (jaxpr_to_record + summarize), text (render_jaxpr_text),
    rich_plain (a piped, colourless console) and rich_color (a truecolor terminal console).
    """
    from rich.console import Console

    from jitscope.jaxcompat.jaxpr import jaxpr_to_record
    from jitscope.model.jaxpr import summarize
    from jitscope.report.views.jaxpr import render_jaxpr, render_jaxpr_text
    from jitscope.report.writers.theme import THEME

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

    steps: dict[str, Callable[[], object]] = {
        "str_jaxpr": lambda: str(closed),
        "record": lambda: summarize(jaxpr_to_record(closed)),
        "text": lambda: render_jaxpr_text(record, summary),
        "rich_plain": to_console(False),
        "rich_color": to_console(True),
    }
    times: dict[str, list[float]] = {name: [] for name in steps}
    for _ in range(rounds):
        for name, step in steps.items():
            times[name].append(timed(step))
    return RenderTimes(n_eqns=summary.n_eqns_total, rounds=times)


LABELS = {
    "text": "render_jaxpr_text",
    "rich_plain": "rich, piped (no colour)",
    "rich_color": "rich, truecolor terminal",
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n_eqns", nargs="?", type=int, default=20000, help="equations in the jaxpr [20000]")
    parser.add_argument("--rounds", type=int, default=ROUNDS, help=f"rounds of every step [{ROUNDS}]")
    parser.add_argument("--quick", action="store_true", help="smoke run: 2,000 equations, 2 rounds")
    opts = parser.parse_args(argv)
    if opts.quick:
        opts.n_eqns, opts.rounds = 2000, 2
    with watch_machine(uses_jax=True):
        r = measure_render(opts.n_eqns, max(1, opts.rounds))
        rounds = len(r.rounds["str_jaxpr"])
        print(f"jaxpr with {r.n_eqns} equations (incl. nested), best of {rounds} rounds")
        print(f"  str(jaxpr)                       {r.best('str_jaxpr') * 1e3:8.1f} ms   1.00x")
        print(f"  jaxpr_to_record + summarize      {r.best('record') * 1e3:8.1f} ms")
        for key, label in LABELS.items():
            total = (r.best("record") + r.best(key)) * 1e3
            print(f"  record + {label:<24}{total:8.1f} ms  {r.ratio(key):5.2f}x   "
                  f"per round: ratio {spread(r.per_round_ratios(key), 'rounds')}")
        print("target: record + render_jaxpr_text <= 3x str(jaxpr)")
    return 0


if __name__ == "__main__":
    # Run from a checkout without installing: the repository root holds the package.
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    sys.exit(main())
