"""One prepared check of every GPU path of jitscope, in one command: bench, profile, memory, run, trace, sharding.

Run it whenever a GPU is at hand (under 8 minutes on one GPU, nothing to install beyond jitscope itself):

    python benchmarks/gpu_check.py --out DIR        # DIR/gpu_check.json and DIR/gpu_check.md
    python benchmarks/gpu_check.py --quick          # the CPU smoke run CI does: small sizes, GPU rows skipped

One row per check and case, each "pass", "FAIL", or "skipped: why":

- bench: ``jitscope.bench``'s cached median against a hand-written blocking ``timeit`` of the same jitted call
  (``jax.block_until_ready`` on every output), on a matmul, a convolution and a transformer training step;
  within 10%. Beside it, a deliberately unblocked loop (the calls only dispatched): on a GPU it reads far less
  than the truth, and jitscope must not read like it.
- profile: ``jitscope.profile``'s parts (device time on lines + no source + idle + copies + host) against
  bench's cached median of the same call, within 10%; the share of device time put on source lines.
- memory: ``jitscope.memory``'s peak (XLA's buffer assignment, nothing run) against the device's own
  ``peak_bytes_in_use`` after a real call, in a fresh process each (``benchmarks/memory_vs_device.py``).
- run: ``jitscope run``'s compile count per function against JAX's own compile log (``JAX_LOG_COMPILES``) on
  ``examples/train_loop.py`` (four recompile causes).
- trace: the optimised HLO's library calls (cuBLAS, cuDNN ...) named, each with the user's line.
- sharding: ``jitscope trace`` of the data-parallel example on every device, when there are several.

Exit status: 0 when the checks ran (a FAIL row is a finding, reported, not an error of the script); 2 when the
machine has an NVIDIA GPU but the installed JAX cannot use it (one line says what to install).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
import timeit
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "benchmarks" / "targets"))
sys.path.insert(0, str(ROOT))

from machine import watch_machine  # noqa: E402

TOLERANCE = 0.10


@dataclass
class Row:
    check: str
    case: str
    status: str  # "pass", "FAIL", "skipped: ..."
    figure: str = ""  # the headline, as a person reads it
    detail: str = ""
    values: dict[str, Any] = field(default_factory=dict)


def within(ratio: float, tolerance: float = TOLERANCE) -> str:
    return "pass" if abs(ratio - 1) <= tolerance else "FAIL"


def fmt(seconds: float) -> str:
    from jitscope.units import fmt_duration

    return fmt_duration(seconds)


def gpu_present() -> bool:
    """An NVIDIA GPU on this machine, whatever JAX can see."""
    return Path("/proc/driver/nvidia/gpus").is_dir() or (
        shutil.which("nvidia-smi") is not None
        and subprocess.run(["nvidia-smi", "-L"], capture_output=True, check=False).returncode == 0)


def out_of_memory(exc: BaseException) -> bool:
    text = f"{type(exc).__name__}: {exc}"
    return "RESOURCE_EXHAUSTED" in text or "out of memory" in text.lower() or "Out of memory" in text


class Checks:
    """Runs each check, turning a case that does not fit the device, or fails, into its row."""

    def __init__(self, quick: bool, deadline: float) -> None:
        import jax

        from gpu_workloads import workloads

        self.quick = quick
        self.deadline = deadline
        self.backend = jax.default_backend()
        self.device = jax.devices()[0]
        self.on_gpu = self.backend == "gpu"
        self.workloads = workloads(quick)
        self.rows: list[Row] = []
        self.arguments: dict[str, tuple[Any, ...]] = {}
        self.bench_median: dict[str, float] = {}

    @contextmanager
    def case(self, check: str, case: str) -> Iterator[None]:
        if time.monotonic() > self.deadline:
            self.rows.append(Row(check, case, "skipped: out of time (the run's --minutes were spent)"))
            return
        start = time.perf_counter()
        try:
            yield
        except Exception as exc:  # noqa: BLE001 - every failure is a row, not the end of the check
            status = ("skipped: the device ran out of memory for this case" if out_of_memory(exc)
                      else "FAIL")
            self.rows.append(Row(check, case, status, detail=f"{type(exc).__name__}: {str(exc)[:300]}"))
        print(f"  {check} / {case}: {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)

    def args(self, workload: Any) -> tuple[Any, ...]:
        import jax

        if workload.name not in self.arguments:
            limit = _bytes_limit(self.device)
            if limit is not None and workload.bytes_needed > 0.8 * limit:
                raise MemoryError(f"out of memory: needs about {workload.bytes_needed / 2**30:.1f} GiB, "
                                  f"the device has {limit / 2**30:.1f} GiB")
            self.arguments[workload.name] = jax.block_until_ready(workload.make_arguments(jax.random.key(0)))
        return self.arguments[workload.name]

    # -- bench ------------------------------------------------------------------------------------

    def bench(self) -> None:
        import jax

        import jitscope

        budget = 0.02 if self.quick else 1.0
        for w in self.workloads:
            with self.case("bench", w.name):
                args = self.args(w)
                fn = w.fn
                jax.block_until_ready(fn(*args))  # compiled and warm for the hand-written loops
                hand_before = _blocked_timeit(fn, args, budget)
                ours = jitscope.bench(fn, *args, budget=budget, min_rounds=3 if self.quick else 5).cached.median_s
                hand_after = _blocked_timeit(fn, args, budget)
                unblocked = _unblocked_timeit(fn, args, budget)
                hand = (hand_before + hand_after) / 2
                self.bench_median[w.name] = ours
                ratio = ours / hand
                fooled = unblocked < 0.5 * hand and abs(ours - unblocked) < abs(ours - hand)
                self.rows.append(Row(
                    "bench", w.name, "FAIL" if fooled else within(ratio),
                    f"{fmt(ours)} vs timeit {fmt(hand)} ({ratio:.3f}x); unblocked {fmt(unblocked)}",
                    w.what + (f"; timeit before/after jitscope: {fmt(hand_before)} / {fmt(hand_after)}"),
                    {"jitscope_s": ours, "timeit_s": hand, "unblocked_s": unblocked, "ratio": ratio}))

    # -- profile ----------------------------------------------------------------------------------

    def profile(self) -> None:
        import jitscope

        for w in self.workloads:
            with self.case("profile", w.name):
                result = jitscope.profile(w.fn, *self.args(w), calls=3 if self.quick else 20,
                                          budget=0.05 if self.quick else 0.3)
                if not result.record.rows:
                    failure = result.record.failures[0].error if result.record.failures else "no row"
                    raise RuntimeError(f"profile measured nothing: {failure}")
                row = result.record.rows[0]
                rec = row.reconciliation
                bench = self.bench_median.get(w.name)
                on_lines = rec.lines / row.device_time if row.device_time else 0.0
                against = bench if bench else rec.measured
                ratio = rec.total / against
                self.rows.append(Row(
                    "profile", w.name, within(ratio),
                    f"parts {fmt(rec.total)} vs bench {fmt(against)} ({ratio:.3f}x); {on_lines:.0%} on lines",
                    f"{row.events_from}: device {fmt(row.device_time)}/call, idle {fmt(rec.idle)}, "
                    f"host {fmt(rec.host)}; watched calls {rec.profiled_wall / rec.measured:.2f}x",
                    {"parts_s": rec.total, "bench_s": against, "ratio": ratio, "on_lines": on_lines,
                     "device_s": row.device_time, "events_from": row.events_from, "warnings": list(row.warnings)}))

    # -- memory -----------------------------------------------------------------------------------

    def memory(self) -> None:
        from memory_vs_device import WORKLOADS, measure

        for label, (path, name, shapes) in list(WORKLOADS.items())[: 1 if self.quick else None]:
            with self.case("memory", label):
                found = measure(path, name, shapes)
                if "error" in found:
                    raise RuntimeError(found["error"])
                reported = found["reported"]
                if "device" not in found:
                    self.rows.append(Row("memory", label, f"skipped: no GPU ({found['backend']} reports no "
                                         "memory_stats())", f"reported {reported / 2**20:.1f} MiB",
                                         values={"reported_bytes": reported}))
                    continue
                ratio = reported / found["device"]
                xla = found.get("xla")
                self.rows.append(Row(
                    "memory", label, within(ratio),
                    f"{reported / 2**20:.1f} MiB vs device peak {found['device'] / 2**20:.1f} MiB ({ratio:.3f}x)",
                    f"XLA's memory_analysis(): {xla / 2**20:.1f} MiB" if xla else "",
                    {"reported_bytes": reported, "device_bytes": found["device"], "xla_bytes": xla}))

    # -- run --------------------------------------------------------------------------------------

    def run(self, tmp: Path) -> None:
        sys.path.insert(0, str(ROOT / "tests" / "run"))
        from oracle import run_with_oracle

        with self.case("run", "examples/train_loop.py"):
            found = run_with_oracle(ROOT / "examples" / "train_loop.py", tmp, platforms=None)
            ours, theirs = found.jitscope_compiles(), found.jax_compiles
            names = sorted(set(ours) | set(theirs))
            differ = [f"{n}: {ours.get(n, 0)} vs {theirs.get(n, 0)}" for n in names if ours.get(n) != theirs.get(n)]
            status = "pass" if found.returncode == 0 and not differ and theirs else "FAIL"
            self.rows.append(Row(
                "run", "examples/train_loop.py", status,
                f"{sum(ours.values())} compiles vs JAX's log {sum(theirs.values())}, {len(names)} functions",
                "; ".join(differ) or f"exit {found.returncode}",
                {"jitscope": dict(ours), "jax_log": dict(theirs), "returncode": found.returncode}))

    # -- trace ------------------------------------------------------------------------------------

    def trace(self) -> None:
        import jitscope

        for w in self.workloads:
            with self.case("trace", w.name):
                (call,) = jitscope.trace(w.fn, *self.args(w)).calls
                named = [f"{c.count}x {c.target}" for c in call.library_calls]
                lineless = [c.target for c in call.library_calls if not c.lines]
                vendor = [c for c in call.library_calls if c.what.startswith(("cuBLAS", "cuDNN"))]
                if not self.on_gpu:
                    status = f"skipped: no GPU ({len(named)} library calls on {self.backend})"
                else:
                    status = "pass" if vendor and not lineless else "FAIL"
                self.rows.append(Row(
                    "trace", w.name, status, ", ".join(named) or "no library calls",
                    ("without a line of yours: " + ", ".join(lineless)) if lineless else
                    "; ".join(f"{c.what}: {', '.join(f'{Path(x.file).name}:{x.line}' for x in c.lines[:3])}"
                              for c in call.library_calls),
                    {"library_calls": [asdict(c) for c in call.library_calls]}))

    # -- sharding ---------------------------------------------------------------------------------

    def sharding(self) -> None:
        import jax

        count = jax.device_count()
        if count < 2:
            self.rows.append(Row("sharding", "examples/sharded_data_parallel.py",
                                 f"skipped: one device ({self.device.device_kind})"))
            return
        with self.case("sharding", f"data parallel on {count} devices"):
            proc = subprocess.run(
                [sys.executable, "-m", "jitscope", "trace", "examples/sharded_data_parallel.py:train_step",
                 "--mesh", f"data={count}", "--format", "json"],
                cwd=ROOT, capture_output=True, text=True, check=False, timeout=300)
            if proc.returncode != 0:
                raise RuntimeError((proc.stderr.strip().splitlines() or ["failed"])[-1])
            sharding = json.loads(proc.stdout)["traces"][0].get("sharding") or {}
            kinds = sorted({c["kind"] for c in sharding.get("collectives", ())})
            self.rows.append(Row("sharding", f"data parallel on {count} devices",
                                 "pass" if "all-reduce" in kinds else "FAIL", ", ".join(kinds) or "no collectives"))


def _bytes_limit(device: Any) -> int | None:
    from jitscope.jaxcompat.monitoring import device_memory

    found = device_memory(device)
    return found.bytes_limit if found is not None else None


def _blocked_timeit(fn: Callable[..., Any], args: tuple[Any, ...], budget: float) -> float:
    """The careful hand-written figure: each call blocked on every output leaf; median of 5 rounds."""
    import jax

    timer = timeit.Timer(lambda: jax.block_until_ready(fn(*args)))
    number = _calls_for(timer, budget)
    return statistics.median(t / number for t in timer.repeat(5, number))


def _unblocked_timeit(fn: Callable[..., Any], args: tuple[Any, ...], budget: float) -> float:
    """The mistake: the calls only dispatched, their results never waited for (the queue is drained after the
    clock stops; calls on one device run in order, so waiting for the last waits for them all)."""
    import jax

    timer = timeit.Timer(lambda: fn(*args))
    number = _calls_for(timeit.Timer(lambda: jax.block_until_ready(fn(*args))), budget)
    times = []
    for _ in range(5):
        times.append(timer.timeit(number) / number)
        jax.block_until_ready(fn(*args))
    return statistics.median(times)


def _calls_for(timer: timeit.Timer, budget: float) -> int:
    start = time.perf_counter()
    timer.timeit(1)
    one = max(time.perf_counter() - start, 1e-7)
    return max(1, min(10_000, int(budget / 5 / one)))


def markdown(rows: list[Row], header: str) -> str:
    lines = [header, "", "| check | case | result | figure | detail |", "| --- | --- | --- | --- | --- |"]
    for r in rows:
        cells = (r.check, r.case, r.status, r.figure, r.detail)
        lines.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes and short budgets (the CPU smoke run)")
    parser.add_argument("--out", type=Path, default=Path("."), help="where gpu_check.json and gpu_check.md go")
    parser.add_argument("--minutes", type=float, default=7.0, help="rows not started by then are skipped")
    parser.add_argument("--only", default="bench,profile,memory,run,trace,sharding", help="checks to run")
    opts = parser.parse_args(argv)
    deadline = time.monotonic() + 60 * opts.minutes
    # The memory check's fresh processes need the GPU memory this one would otherwise have taken at start.
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    import jax

    if jax.default_backend() == "cpu" and gpu_present() and os.environ.get("JAX_PLATFORMS", "") != "cpu":
        print(f"error: this machine has an NVIDIA GPU but JAX {jax.__version__} cannot use it: install JAX's CUDA "
              'build (pip install -U "jax[cuda13]", or "jax[cuda12]" for a CUDA 12 driver), or set '
              "JAX_PLATFORMS=cpu to check the CPU paths only", file=sys.stderr)
        return 2
    opts.out.mkdir(parents=True, exist_ok=True)
    with watch_machine(uses_jax=True):
        checks = Checks(opts.quick, deadline)
        only = {name.strip() for name in opts.only.split(",")}
        for name in ("bench", "profile", "memory", "run", "trace", "sharding"):
            if name in only:
                print(f"{name} ...", file=sys.stderr, flush=True)
                getattr(checks, name)(opts.out) if name == "run" else getattr(checks, name)()
        device = f"{checks.device.device_kind} ({checks.backend}, jax {jax.__version__})"
        header = (f"GPU check on {device}, {time.strftime('%Y-%m-%d', time.gmtime())}"
                  + (" (--quick)" if opts.quick else ""))
        table = markdown(checks.rows, header)
        print(table)
    (opts.out / "gpu_check.md").write_text(table)
    (opts.out / "gpu_check.json").write_text(json.dumps(
        {"device": device, "quick": opts.quick, "rows": [asdict(r) for r in checks.rows]}, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
