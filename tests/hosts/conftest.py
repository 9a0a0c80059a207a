"""Two local processes of tests/hosts/hosts_dp_program.py joined by jax.distributed on CPU, each under
``jitscope run --out DIR/run.json``; each variant is launched once per test session."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT, STYLE_ENV

PROGRAM = Path(__file__).with_name("hosts_dp_program.py")
#: Seconds a launch may take before its processes are killed (two processes take 3-6 s on 2 busy cores).
LAUNCH_TIMEOUT_S = 90


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cpu_collectives_reason() -> str | None:
    """Why this JAX cannot run CPU collectives across processes, or None when it can."""
    import jax

    if "jax_cpu_collectives_implementation" not in getattr(jax.config, "values", {}):
        return f"JAX {jax.__version__} has no jax_cpu_collectives_implementation (gloo): no CPU collectives " \
               "across processes"
    return None


def launch(out: Path, variant: str, count: int = 2) -> list[subprocess.CompletedProcess[str]]:
    """Run ``count`` processes of the program, each under jitscope run; their results, by process index.

    In the ``killed`` variant process 1 kills itself; process 0 then waits in a collective, and is killed
    here once process 1 is gone (as a launcher ends a job one of whose processes died).
    """
    env = {k: v for k, v in os.environ.items() if k not in STYLE_ENV and k != "XLA_FLAGS"}
    env.update({"NO_COLOR": "1", "COLUMNS": "100", "JAX_PLATFORMS": "cpu",
                "HOSTS_COORDINATOR": f"127.0.0.1:{free_port()}", "HOSTS_COUNT": str(count)})
    procs = []
    logs = []
    for index in range(count):
        log = open(out / f"p{index}.log", "w+")  # noqa: SIM115 - closed below
        logs.append(log)
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "jitscope", "run", "--log", "compiles", "--out", str(out / "run.json"),
             str(PROGRAM), variant],
            cwd=ROOT, env={**env, "HOSTS_INDEX": str(index)}, stdout=log, stderr=subprocess.STDOUT, text=True,
            start_new_session=True))
    deadline = time.monotonic() + LAUNCH_TIMEOUT_S
    try:
        if variant == "killed":
            procs[1].wait(timeout=LAUNCH_TIMEOUT_S)
            time.sleep(1.0)
            if procs[0].poll() is None:
                os.killpg(procs[0].pid, signal.SIGKILL)
        for proc in procs:
            proc.wait(timeout=max(deadline - time.monotonic(), 1))
    finally:
        for proc in procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    results = []
    for proc, log in zip(procs, logs, strict=True):
        log.seek(0)
        results.append(subprocess.CompletedProcess(proc.args, proc.returncode, log.read(), ""))
        log.close()
    return results


@pytest.fixture(scope="session")
def launched(tmp_path_factory: pytest.TempPathFactory):
    """``launched(variant)`` -> (folder of the reports, the processes' results); each variant runs once."""
    reason = cpu_collectives_reason()
    if reason is not None:
        pytest.skip(reason)
    done: dict[str, tuple[Path, list[subprocess.CompletedProcess[str]]]] = {}

    def get(variant: str) -> tuple[Path, list[subprocess.CompletedProcess[str]]]:
        if variant not in done:
            out = tmp_path_factory.mktemp(f"hosts-{variant}")
            done[variant] = (out, launch(out, variant))
        return done[variant]

    return get


#: The targets of tests/hosts/hosts_bench_target.py that bench and profile --processes 2 run, with their options.
TARGET_RUNS = {
    "normalize": ("--shapes", "f32[64,16]@(data,None)", "--mesh", "data=2"),
    "uneven": ("--shapes", "f32[8]"),
    "fails_on_p1": ("--shapes", "f32[64,16]@(data,None)", "--mesh", "data=2"),
    "branch_on_p1": ("--shapes", "f32[64,16]@(data,None)", "--mesh", "data=2"),
}


def processes_runner(tmp_path_factory: pytest.TempPathFactory, command: str, *options: str):
    """``get(name)`` -> (folder with the saved per-process reports, the result) of ``jitscope COMMAND
    hosts_bench_target.py:NAME --processes 2 --save FOLDER/COMMAND.json``; each name runs once."""
    from tests.conftest import run_cli

    reason = cpu_collectives_reason()
    if reason is not None:
        pytest.skip(reason)
    done: dict[str, tuple[Path, object]] = {}

    def get(name: str):
        if name not in done:
            out = tmp_path_factory.mktemp(f"{command}-{name}")
            result = run_cli(command, f"tests/hosts/hosts_bench_target.py:{name}", *TARGET_RUNS[name], "--processes",
                             "2", *options, "--save", str(out / f"{command}.json"), "--format", "json")
            done[name] = (out, result)
        return done[name]

    return get
