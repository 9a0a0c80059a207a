"""Which process of a multi-process JAX program this is, read without starting anything.

``jax.distributed.initialize()`` fills ``jax._src.distributed.global_state`` (process id,
count, coordinator address, and a client once connected); reading it costs a few attribute
lookups and never starts a backend, so ``jitscope run`` can ask at every compile until the
program has initialised it. Where no ``jax.distributed`` client exists (a TPU pod slice,
whose runtime knows the processes itself), ``jax.process_count()`` answers once a backend is
up, which a compile guarantees. ``jax.process_index()`` before a backend exists would start one,
so it is never called then.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class DistributedProcess:
    index: int
    count: int
    coordinator: str = ""
    source: str = "jax.distributed"


def _global_state() -> Any:
    module = sys.modules.get("jax._src.distributed")
    return getattr(module, "global_state", None)


def backend_started() -> bool:
    """Whether JAX has started its backends (a compile has run, or a device was asked for)."""
    bridge = sys.modules.get("jax._src.xla_bridge")
    check = getattr(bridge, "backends_are_initialized", None)
    if not callable(check):
        return False
    try:
        return bool(check())
    except Exception:  # noqa: BLE001 - a JAX whose check fails: treat as not started
        return False


def distributed_process() -> DistributedProcess | None:
    """This process's index and the process count, once ``jax.distributed`` is initialised; None before
    (and for a single process). With a backend started, also a multi-process backend that needed no
    ``jax.distributed`` call."""
    state = _global_state()
    if state is not None and getattr(state, "client", None) is not None:
        index, count = getattr(state, "process_id", None), getattr(state, "num_processes", None)
        if isinstance(index, int) and isinstance(count, int) and count > 1:
            return DistributedProcess(index, count, str(getattr(state, "coordinator_address", "") or ""))
    if not backend_started():
        return None
    try:
        import jax

        count = int(jax.process_count())
        index = int(jax.process_index())
    except Exception:  # noqa: BLE001 - never fail the user's program over this
        return None
    return DistributedProcess(index, count, "", "jax.process_index") if count > 1 else None


def local_device_names() -> tuple[str, ...]:
    """This process's devices ("cpu:0", "cuda:2", by global id), or () when no backend has started."""
    if not backend_started():
        return ()
    try:
        import jax

        return tuple(f"{d.platform}:{d.id}" for d in jax.local_devices())
    except Exception:  # noqa: BLE001
        return ()


def cpu_collectives_missing() -> str | None:
    """Why this JAX cannot run collectives across CPU processes (no gloo), or None when it can."""
    import jax

    if "jax_cpu_collectives_implementation" not in getattr(jax.config, "values", {}):
        return f"JAX {jax.__version__} has no jax_cpu_collectives_implementation (gloo): no collectives across " \
               "CPU processes"
    return None


def initialize(coordinator: str, count: int, index: int) -> None:
    """Join ``count`` local CPU processes through ``jax.distributed`` (gloo collectives), as process ``index``.

    Called before anything starts a backend: the device count per process is still open.
    """
    import jax

    if cpu_collectives_missing() is None:
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(coordinator_address=coordinator, num_processes=count, process_id=index)


def local_share(n: int) -> int:
    """Of ``n`` devices across the processes of an initialised ``jax.distributed`` program, how many this one
    brings (``n`` itself for a single process); read before a backend starts."""
    state = _global_state()
    count = getattr(state, "num_processes", None) if getattr(state, "client", None) is not None else None
    return -(-n // count) if isinstance(count, int) and count > 1 else n
