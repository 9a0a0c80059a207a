"""Which process of a multi-process JAX program this is, read without starting anything.

``jax.distributed.initialize()`` fills ``jax._src.distributed.global_state`` (process id,
count, coordinator address, and a client once connected); reading it costs a few attribute
lookups and never starts a backend, so ``jitscope run`` can ask at every compile until the
program has initialised it. Where no ``jax.distributed`` client exists (a TPU pod slice,
whose runtime knows the processes itself), ``jax.process_count()`` answers once a backend is
up, which a compile guarantees. ``jax.process_index()`` before a backend exists would start one,
so it is never called then.

``--distributed`` (``initialize_detected``) joins a job someone else launched, as JAX detects it, and
the processes' reports travel to process 0 through the coordination service's key-value store
(``publish``/``fetch``: ``global_state.client``, a private API present on every JAX we support).
"""

from __future__ import annotations

import sys
import time
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


def _accelerator_installed() -> bool:
    """Whether a GPU or TPU runtime for JAX is installed (a PJRT plugin, or libtpu), looked up without
    importing it."""
    import importlib.metadata
    import importlib.util
    import pkgutil

    if importlib.util.find_spec("libtpu") is not None:
        return True
    if any(True for _ in importlib.metadata.entry_points(group="jax_plugins")):
        return True
    try:
        import jax_plugins  # the namespace JAX's CUDA/ROCm plugins live in
    except ImportError:
        return False
    return any(True for _ in pkgutil.iter_modules(jax_plugins.__path__))


def cpu_only() -> bool:
    """Whether the processes will run on CPU: ``JAX_PLATFORMS`` names cpu first, or no accelerator runtime is
    installed; read before any backend starts."""
    import jax

    platforms = str(getattr(jax.config, "jax_platforms", None) or "")
    if platforms.strip():
        return platforms.split(",")[0].strip().lower() == "cpu"
    return not _accelerator_installed()


def initialize_detected(coordinator: str | None = None, count: int | None = None, index: int | None = None) -> None:
    """``jax.distributed.initialize()`` inside a job someone else launched: JAX detects the cluster (Slurm, Open
    MPI, Kubernetes, Cloud TPU) for what is not given, and reads ``JAX_COORDINATOR_ADDRESS``. Gloo collectives
    only where the processes run on CPU (JAX 0.4.38's default there is none: an all-reduce across CPU processes
    fails); a GPU or TPU keeps its own. Raises JAX's ValueError when nothing is detected and RuntimeError when
    the processes cannot meet; called before any backend starts."""
    import jax

    if cpu_only() and cpu_collectives_missing() is None:
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(coordinator_address=coordinator, num_processes=count, process_id=index)


def joined_process() -> DistributedProcess | None:
    """This process's place once ``jax.distributed`` is initialised (a job of one process included), else None."""
    state = _global_state()
    if state is None or getattr(state, "client", None) is None:
        return None
    index, count = getattr(state, "process_id", None), getattr(state, "num_processes", None)
    if not isinstance(index, int) or not isinstance(count, int):
        return None
    return DistributedProcess(index, count, str(getattr(state, "coordinator_address", "") or ""))


class KeyValueError(Exception):
    """The coordination service's key-value store failed: no client, a time limit passed, the service is gone."""


#: The most bytes one key-value entry holds: JAX 0.4.38's coordination service refuses gRPC messages over
#: 4 MiB ("Received message larger than max"), and a trace report with its programs' HLO can be larger.
KV_CHUNK_BYTES = 1 << 20


#: What publish and fetch use of JAX's DistributedRuntimeClient (there on 0.4.38, 0.10.2 and 0.12).
_KV_METHODS = ("key_value_set", "key_value_set_bytes", "blocking_key_value_get", "blocking_key_value_get_bytes")


def _client() -> Any:
    client = getattr(_global_state(), "client", None)
    if client is None or not all(hasattr(client, name) for name in _KV_METHODS):
        raise KeyValueError("no jax.distributed key-value store in this process")
    return client


def key_value_store() -> bool:
    """Whether this process can publish and fetch through the coordination service (it has joined)."""
    try:
        _client()
    except KeyValueError:
        return False
    return True


def publish(key: str, data: bytes) -> None:
    """Put ``data`` under ``key`` in the coordination service's store, in chunks under ``key/0``, ``key/1`` ...,
    then their count under ``key``: whoever has the count finds every chunk there (each set is acknowledged)."""
    client = _client()
    chunks = [data[i:i + KV_CHUNK_BYTES] for i in range(0, len(data), KV_CHUNK_BYTES)] or [b""]
    try:
        for number, chunk in enumerate(chunks):
            client.key_value_set_bytes(f"{key}/{number}", chunk)
        client.key_value_set(key, str(len(chunks)))
    except Exception as exc:  # noqa: BLE001 - JAX's XlaRuntimeError/JaxRuntimeError, by version
        raise KeyValueError(_first_line(exc)) from None


def fetch(key: str, timeout_s: float) -> bytes:
    """What another process published under ``key``, waiting up to ``timeout_s`` for it; KeyValueError when
    it is not there by then."""
    client = _client()
    deadline = time.monotonic() + timeout_s
    try:
        count = int(client.blocking_key_value_get(key, _ms(deadline)))
        return b"".join(bytes(client.blocking_key_value_get_bytes(f"{key}/{n}", _ms(deadline))) for n in range(count))
    except Exception as exc:  # noqa: BLE001 - a time limit passed (DEADLINE_EXCEEDED), or the service is gone
        raise KeyValueError(_first_line(exc)) from None


def _ms(deadline: float) -> int:
    return max(int((deadline - time.monotonic()) * 1000), 1)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
