"""What machine, and how busy, a benchmark ran on: printed before and after its figures.

Every script in ``benchmarks/`` runs its measurements inside ``watch_machine()``::

    with watch_machine(uses_jax=True) as machine:
        for _ in range(rounds):
            ...
            machine.sample()  # optional: a load-average reading between rounds

On entry it prints a header (UTC date and time, CPU model, logical cores, memory, OS and
kernel, Python, JAX and its backend if the script uses JAX, and the 1/5/15-minute load
average); on exit the load average again, how many cores the run itself kept busy, and a
warning when other work was running: the ratios the scripts print compare two things
measured side by side, but the two sides rarely suffer the same from a busy machine.

Standard library only, and JAX is imported only when ``uses_jax`` is true (for scripts that
import it anyway), so the header costs nothing a script does not already pay.
"""

from __future__ import annotations

import datetime
import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

#: The warning printed when other work ran beside the benchmark.
BUSY_WARNING = "WARNING: the machine was busy: ratios may be inflated; rerun on a quiet machine"


@dataclass(frozen=True, slots=True)
class Machine:
    """One description of the machine; ``load`` is the 1/5/15-minute load average, if known."""

    utc: str
    cpu: str
    cores: int
    memory: str
    os: str
    python: str
    jax: str | None
    load: tuple[float, float, float] | None


def _read(path: str) -> str:
    try:
        return Path(path).read_text(errors="replace")
    except OSError:
        return ""


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo (Linux), else what ``platform`` knows."""
    for line in _read("/proc/cpuinfo").splitlines():
        key, _, value = line.partition(":")
        # x86 says "model name"; some ARM kernels only give "Hardware" or "Processor".
        if key.strip() in ("model name", "Hardware", "Processor", "cpu model") and value.strip():
            return value.strip()
    return platform.processor() or platform.machine() or "unknown CPU"


def logical_cores() -> int:
    return os.cpu_count() or 1


def _usable_cores() -> int | None:
    """Cores this process may run on, where the OS says (a container or ``taskset`` can limit it)."""
    affinity = getattr(os, "sched_getaffinity", None)
    if affinity is None:
        return None
    try:
        return len(affinity(0))
    except OSError:
        return None


def memory() -> str:
    """Total (and available) memory, from /proc/meminfo, else ``sysconf``."""
    info: dict[str, int] = {}
    for line in _read("/proc/meminfo").splitlines():
        key, _, value = line.partition(":")
        parts = value.split()
        if parts and parts[0].isdigit():
            info[key] = int(parts[0]) * 1024  # kB
    total = info.get("MemTotal")
    if total is None:
        try:
            total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (AttributeError, ValueError, OSError):
            return "unknown"
    text = f"{total / 2**30:.1f} GiB"
    if "MemAvailable" in info:
        text += f" ({info['MemAvailable'] / 2**30:.1f} GiB available)"
    return text


def os_description() -> str:
    """Kernel and, on Linux, the distribution's name: ``Linux 6.1.0 (Debian GNU/Linux 12)``."""
    text = f"{platform.system()} {platform.release()}".strip() or sys.platform
    for line in _read("/etc/os-release").splitlines():
        if line.startswith("PRETTY_NAME="):
            return f"{text} ({line.partition('=')[2].strip().strip(chr(34))})"
    return text


def python_description() -> str:
    return f"{platform.python_version()} ({platform.python_implementation()}, {sys.executable})"


def jax_description() -> str:
    """JAX and jaxlib versions and the default backend. Imports jax: only for scripts that do."""
    import jax

    try:
        import jaxlib

        jaxlib_version = getattr(jaxlib, "__version__", None) or jaxlib.version.__version__
    except (ImportError, AttributeError):
        jaxlib_version = "?"
    devices = jax.devices()
    kind = devices[0].device_kind if devices else "no device"
    return (
        f"{jax.__version__}, jaxlib {jaxlib_version}, backend {jax.default_backend()} "
        f"({len(devices)} x {kind})"
    )


def load_average() -> tuple[float, float, float] | None:
    try:
        return os.getloadavg()
    except (AttributeError, OSError):  # not on Windows
        return None


def format_load(load: tuple[float, float, float] | None) -> str:
    if load is None:
        return "unknown (os.getloadavg is not available here)"
    return f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (1/5/15 min)"


def describe_machine(*, uses_jax: bool = False) -> Machine:
    now = datetime.datetime.now(datetime.UTC)
    return Machine(
        utc=now.strftime("%Y-%m-%d %H:%M:%S UTC"),
        cpu=cpu_model(),
        cores=logical_cores(),
        memory=memory(),
        os=os_description(),
        python=python_description(),
        jax=jax_description() if uses_jax else None,
        load=load_average(),
    )


def render_header(machine: Machine) -> str:
    """The header block: one ``name  value`` line per field."""
    usable = _usable_cores()
    cores = f"{machine.cores} logical cores"
    if usable is not None and usable != machine.cores:
        cores += f" ({usable} usable by this process)"
    rows = [
        ("date", machine.utc),
        ("cpu", f"{machine.cpu}, {cores}"),
        ("memory", machine.memory),
        ("os", machine.os),
        ("python", machine.python),
    ]
    if machine.jax is not None:
        rows.append(("jax", machine.jax))
    rows.append(("load avg", format_load(machine.load)))
    return "\n".join(f"# {name:<9} {value}" for name, value in rows)


@dataclass(slots=True)
class LoadWatch:
    """Load-average readings taken during a run, and the CPU time the run itself used.

    The load average counts this run's own busy processes too, so "the machine was busy"
    compares the other work, i.e. the load average less the cores this run kept busy on
    average (its CPU time, children included, over the wall time), with half the cores.
    """

    cores: int
    start_wall: float = field(default_factory=time.perf_counter)
    start_cpu: float = field(default_factory=lambda: _cpu_seconds())
    readings: list[tuple[float, float]] = field(default_factory=list)  # (1-min load, own busy cores)

    def sample(self) -> None:
        """Note the load average now (cheap: one system call); call it between rounds."""
        load = load_average()
        if load is not None:
            self.readings.append((load[0], self.own_busy_cores()))

    def own_busy_cores(self) -> float:
        wall = time.perf_counter() - self.start_wall
        return (_cpu_seconds() - self.start_cpu) / wall if wall > 0 else 0.0

    def other_load(self) -> float | None:
        """The highest load average seen, less this run's own share; None without readings."""
        if not self.readings:
            return None
        return max(max(0.0, load - own) for load, own in self.readings)

    def busy(self) -> bool:
        other = self.other_load()
        return other is not None and other > self.cores / 2

    def render_footer(self) -> str:
        own = self.own_busy_cores()
        end = (
            f"# load avg  {format_load(load_average())} at the end; this run kept {own:.1f} of "
            f"{self.cores} cores busy on average"
        )
        lines = [end]
        other = self.other_load()
        if other is not None:
            lines.append(f"# other work: up to {other:.2f} busy cores during the run "
                         f"(quiet: <= {self.cores / 2:g}, half the cores)")
        if self.busy():
            lines.append(BUSY_WARNING)
        return "\n".join(lines)


def _cpu_seconds() -> float:
    """CPU time of this process (all threads) and of its finished children."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


@contextmanager
def watch_machine(*, uses_jax: bool = False) -> Iterator[LoadWatch]:
    """Print the machine header, run the block, then print the load and a warning if it was busy."""
    machine = describe_machine(uses_jax=uses_jax)
    print(render_header(machine), flush=True)
    watch = LoadWatch(cores=machine.cores)
    if machine.load is not None:
        watch.readings.append((machine.load[0], 0.0))  # before the run: all of it is other work
    yield watch
    watch.sample()
    print("\n" + watch.render_footer(), flush=True)


def spread(ratios: list[float], what: str = "runs") -> str:
    """``median 1.02 (min 0.97, max 1.11, 9 runs)``; the IQR too from 8 values on, and from 9 on the median's
    95% confidence interval (``median_interval``)."""
    if not ratios:
        return "no data"
    ordered = sorted(ratios)
    n = len(ordered)
    text = f"median {statistics.median(ordered):.3f} (min {ordered[0]:.3f}, max {ordered[-1]:.3f}"
    if n >= 8:
        q1, _, q3 = statistics.quantiles(ordered, n=4)
        text += f", IQR {q1:.3f}-{q3:.3f}"
    interval = median_interval(ordered)
    if interval is not None:
        text += f", median's 95% CI {interval[0]:.3f}-{interval[1]:.3f}"
    return text + f", {n} {what.removesuffix('s') if n == 1 else what})"


def median_interval(values: list[float], confidence: float = 0.95) -> tuple[float, float] | None:
    """A distribution-free confidence interval for the median: the order statistics ``k`` and ``n + 1 - k``
    with ``k`` the largest rank whose binomial(n, 1/2) tails leave at least ``confidence`` between them.
    It assumes only that the rounds are independent draws, so it holds for the skewed, heavy-tailed timings of
    a shared machine. None under 9 values, where the only such interval is the whole range (min, max)."""
    n = len(values)
    if n < 9:
        return None
    ordered = sorted(values)
    tail = 0.0
    k = 0  # (ordered[k], ordered[n - 1 - k]) misses the median with probability 2 * P(Binomial(n, 1/2) <= k)
    while True:
        tail += math.comb(n, k) / 2 ** n
        if 2 * tail > 1 - confidence:
            break
        k += 1
    if k == 0:
        return None
    return ordered[k - 1], ordered[n - k]


if __name__ == "__main__":
    print(render_header(describe_machine(uses_jax="--jax" in sys.argv)))
