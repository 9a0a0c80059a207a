"""How fast does jaxcompat/xspace.py (pure Python) read a capture, next to ``jax.profiler.ProfileData`` (C++)?

Captures ``--calls`` calls of a program with many small thunks (a scan of ``--steps`` steps) under
``jax.profiler.trace`` (about 10 MB of ``.xplane.pb`` with the defaults on JAX 0.10, CPU), then reads
the file ``--repeat`` times with each reader and prints the best times side by side: the whole
walk (``read_events``, which jitscope profile runs) and the parse alone. Without ProfileData (JAX
0.4.38-0.6.x) only the reader's row is printed.

    python benchmarks/xspace_reader.py [--calls 400] [--steps 100] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable

from machine import watch_machine


def _best(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    import jax
    import jax.numpy as jnp

    from jitscope.jaxcompat import profiler as jp
    from jitscope.jaxcompat.xspace import read_xspace

    @jax.jit
    def program(x):
        y, _ = jax.lax.scan(lambda c, _: (jnp.tanh(c) * 1.5 + 0.5, None), x, None, length=args.steps)
        return y

    x = jnp.ones((8, 8))
    program(x).block_until_ready()
    with watch_machine(uses_jax=True), tempfile.TemporaryDirectory() as directory:
        with jp.capture(directory):
            for _ in range(args.calls):
                program(x).block_until_ready()
        path = jp.xspace_files(directory)[-1]
        size = os.path.getsize(path)
        cls = jp.profile_data_class()
        events = sum(len(line.events) for plane in read_xspace(path).planes for line in plane.lines)
        print(f"jax {jax.__version__}: {path.rsplit('/', 1)[-1]} {size / 1e6:.1f} MB, {events} events, "
              f"best of {args.repeat}")
        mine_parse = _best(lambda: read_xspace(path), args.repeat)
        if cls is None:
            mine_walk = _best(lambda: jp.read_events(path), args.repeat)
            print(f"  xspace.py  parse {mine_parse:.3f} s   read_events {mine_walk:.3f} s   (no ProfileData here)")
            return
        theirs_parse = _best(lambda: cls.from_file(path), args.repeat)
        theirs_walk = _best(lambda: jp.read_events(path), args.repeat)
        original = jp.profile_data_class
        jp.profile_data_class = lambda: None  # type: ignore[assignment]
        try:
            mine_walk = _best(lambda: jp.read_events(path), args.repeat)
        finally:
            jp.profile_data_class = original
        print(f"  {'':12}{'parse':>10}{'read_events':>14}")
        print(f"  {'ProfileData':12}{theirs_parse:>9.3f}s{theirs_walk:>13.3f}s")
        print(f"  {'xspace.py':12}{mine_parse:>9.3f}s{mine_walk:>13.3f}s")
        print(f"  {'ratio':12}{mine_parse / theirs_parse:>9.1f}x{mine_walk / theirs_walk:>13.1f}x")


if __name__ == "__main__":
    main()
