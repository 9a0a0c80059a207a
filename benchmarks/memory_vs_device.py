"""``jitscope memory``'s peak against the device's own peak (``device.memory_stats()``), where JAX has one.

For each workload, in two fresh processes (the device's peak counter only ever grows, and on a GPU
compiling moves it: XLA's autotuner runs candidate kernels on scratch buffers, 237 MB of them for
``memory_peak.train_step`` on an H200, more than the program itself needs):

1. ``jitscope.memory`` compiles the step and reports the bytes live at the peak (XLA's buffer
   assignment, nothing run); the compiled program goes into a persistent compilation cache;
2. a second process places the arguments on the device, reads ``bytes_in_use``, loads the program
   from that cache (no autotuning: the peak does not move, and the script checks it did not), runs
   it once (blocked on every output) and reads ``peak_bytes_in_use``.

The device's figure for the program is ``peak - in use before + argument bytes`` (the arguments were
already live); reported / device should be close to 1 (the allocator rounds buffers up and may
keep a workspace, so the device's figure is usually a little higher).

On CPU JAX exposes no memory statistics: the script prints the reported peaks and says the device
figure is not available. Run it on a GPU:

    python benchmarks/memory_vs_device.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: name -> (module file under the repository, function, argument shapes (f32))
WORKLOADS: dict[str, tuple[str, str, tuple[tuple[int, ...], ...]]] = {
    "memory_peak.train_step": ("examples/memory_peak.py", "train_step", ((512, 1024), (1024, 512), (8192, 512))),
    "rnn_step (scan)": ("benchmarks/memory_vs_device.py", "rnn_step", ((256, 256), (64, 128, 256))),
}


def rnn_step(w, xs):  # type: ignore[no-untyped-def]
    """A scan whose carry and saved activations dominate: the second workload."""
    import jax
    import jax.numpy as jnp

    def loss(w, xs):  # type: ignore[no-untyped-def]
        def cell(h, x):  # type: ignore[no-untyped-def]
            h = jnp.tanh(h @ w + x)
            return h, h

        _, hs = jax.lax.scan(cell, jnp.zeros(xs.shape[1:]), xs)
        return (hs ** 2).mean()

    return w - 0.01 * jax.grad(loss)(w, xs)


_CHILD = """
import importlib.util, json, sys
sys.path.insert(0, sys.argv[1])
import jax, jax.numpy as jnp
from jitscope.jaxcompat.monitoring import device_memory

stage, path, name, shapes, cache = sys.argv[2], sys.argv[3], sys.argv[4], json.loads(sys.argv[5]), sys.argv[6]
jax.config.update("jax_compilation_cache_dir", cache)
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
spec = importlib.util.spec_from_file_location("workload", path)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
fn = getattr(module, name)
specs = [jax.ShapeDtypeStruct(tuple(s), jnp.float32) for s in shapes]
if stage == "report":
    import jitscope
    from jitscope.jaxcompat.stages import memory_record
    reported = jitscope.memory(fn, *specs).peak_bytes
    compiled = jax.jit(fn).lower(*specs).compile()  # into the cache, autotuned, for the second process
    analysis = memory_record(compiled)
    print(json.dumps({"reported": reported, "xla": analysis.peak_bytes if analysis else None,
                      "backend": jax.default_backend(),
                      "device_kind": jax.devices()[0].device_kind, "has_stats": device_memory() is not None}))
else:
    args = jax.block_until_ready([jnp.ones(s.shape, s.dtype) for s in specs])
    before = device_memory()
    compiled = jax.jit(fn).lower(*args).compile()  # from the cache: nothing autotuned, nothing allocated
    loaded = device_memory()
    jax.block_until_ready(compiled(*args))
    after = device_memory()
    arguments = sum(a.size * a.dtype.itemsize for a in args)
    print(json.dumps({"device": after.peak_bytes_in_use - before.bytes_in_use + arguments,
                      "compile_moved_peak": loaded.peak_bytes_in_use > before.peak_bytes_in_use}))
"""


def _child(stage: str, path: str, name: str, shapes: tuple[tuple[int, ...], ...], cache: str) -> dict:
    # The run is measured as JAX runs by default, in one preallocated pool: without it the allocator grows
    # its regions in powers of two and charges a buffer the whole region it leaves unsplit (152 MiB of
    # temporaries took a 256 MiB chunk on an H200), which is the allocator's slack, not the program's need.
    env = {**os.environ, "XLA_PYTHON_CLIENT_PREALLOCATE": "true"} if stage == "run" else None
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(ROOT), stage, str(ROOT / path), name, json.dumps(shapes),
                           cache], capture_output=True, text=True, cwd=ROOT, check=False, env=env)
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def measure(path: str, name: str, shapes: tuple[tuple[int, ...], ...]) -> dict:
    """``reported`` (jitscope's peak), and ``device`` (the device's) where the backend reports memory."""
    with tempfile.TemporaryDirectory(prefix="jitscope-memory-cache-") as cache:
        found = _child("report", path, name, shapes, cache)
        if "error" in found or not found.pop("has_stats"):
            return found
        device = _child("run", path, name, shapes, cache)
        if "error" in device:
            return device
        if device["compile_moved_peak"]:  # the cache missed: the figure would hold the autotuner's scratch
            return {**found, "error": "the second process compiled again (the persistent cache missed), so the "
                                      "device's peak includes compile-time scratch: no device figure"}
        return {**found, "device": device["device"]}


def main() -> None:
    for label, (path, name, shapes) in WORKLOADS.items():
        found = measure(path, name, shapes)
        if "error" in found:
            print(f"{label}: {found['error']}")
            continue
        reported = f"reported {found['reported'] / 2**20:8.2f} MiB"
        if "device" not in found:
            print(f"{label:<24} {reported}   device: memory_stats() is not available on {found['backend']}")
            continue
        ratio = found["reported"] / found["device"] if found["device"] else float("nan")
        print(f"{label:<24} {reported}   device {found['device'] / 2**20:8.2f} MiB   reported/device {ratio:.3f}"
              f"   ({found['device_kind']})")


if __name__ == "__main__":
    main()
