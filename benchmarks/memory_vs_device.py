"""``jitscope memory``'s peak against the device's own peak (``device.memory_stats()``), where JAX has one.

For each workload, in a fresh process of its own (the device's peak counter only ever grows):
``jitscope.memory`` compiles the step and reports the bytes live at the peak (XLA's buffer
assignment, nothing run); then the arguments are placed on the device, ``bytes_in_use`` is read,
the compiled step runs once (blocked on every output) and ``peak_bytes_in_use`` is read. The
device's figure for the program is ``peak - in use before + argument bytes`` (the arguments were
already live); reported / device should be close to 1 (the allocator rounds buffers up and may
keep a workspace, so the device's figure is usually a little higher).

On CPU JAX exposes no memory statistics: the script prints the reported peaks and says the device
figure is not available. Run it on a GPU:

    python benchmarks/memory_vs_device.py
"""

from __future__ import annotations

import json
import subprocess
import sys
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
import jitscope
from jitscope.jaxcompat.monitoring import device_memory

path, name, shapes = sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
spec = importlib.util.spec_from_file_location("workload", path)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
fn = getattr(module, name)
args = [jnp.ones(tuple(s), jnp.float32) for s in shapes]
result = jitscope.memory(fn, *args)
out = {"reported": result.peak_bytes, "backend": jax.default_backend(), "device_kind": jax.devices()[0].device_kind}
if device_memory() is not None:
    jax.block_until_ready(args)
    compiled = jax.jit(fn).lower(*args).compile()
    before = device_memory().bytes_in_use
    jax.block_until_ready(compiled(*args))
    after = device_memory()
    arguments = sum(a.size * a.dtype.itemsize for a in args)
    out["device"] = after.peak_bytes_in_use - before + arguments
print(json.dumps(out))
"""


def measure(path: str, name: str, shapes: tuple[tuple[int, ...], ...]) -> dict:
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(ROOT), str(ROOT / path), name, json.dumps(shapes)],
                          capture_output=True, text=True, cwd=ROOT, check=False)
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


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
