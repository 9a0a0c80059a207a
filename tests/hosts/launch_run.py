"""Launch local processes of tests/hosts/hosts_dp_program.py joined by jax.distributed on CPU, each under
``jitscope run --out FOLDER/run.json``, as a cluster's launcher starts one per host.

Used by the tests (``tests/hosts/conftest.py``) and by the docs build, which merges what it leaves:
``python -m tests.hosts.launch_run VARIANT FOLDER`` (from the repository root; exit 1 when a process
failed).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import ROOT, STYLE_ENV

PROGRAM = Path(__file__).with_name("hosts_dp_program.py")
#: Seconds a launch may take before its processes are killed (two processes take 3-6 s on 2 busy cores).
LAUNCH_TIMEOUT_S = 90


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


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
             str(PROGRAM.relative_to(ROOT)), variant],
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


def main(variant: str, folder: str) -> int:
    """Launch the variant, its reports in ``folder``; 1 (with the failing processes' output on stderr) when a
    process that should have finished did not, so the docs build fails there rather than merging half a run."""
    out = Path(folder).resolve()
    out.mkdir(parents=True, exist_ok=True)
    failed = [(index, result) for index, result in enumerate(launch(out, variant))
              if result.returncode != 0 and variant != "killed"]
    for index, result in failed:
        print(f"process {index} exited {result.returncode}:\n{result.stdout[-3000:]}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
