"""Two local processes of tests/hosts/hosts_dp_program.py joined by jax.distributed on CPU, each under
``jitscope run --out DIR/run.json`` (``launch_run.py``); each variant is launched once per test session."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.hosts.launch_run import launch


def cpu_collectives_reason() -> str | None:
    """Why this JAX cannot run CPU collectives across processes, or None when it can."""
    import jax

    if "jax_cpu_collectives_implementation" not in getattr(jax.config, "values", {}):
        return f"JAX {jax.__version__} has no jax_cpu_collectives_implementation (gloo): no CPU collectives " \
               "across processes"
    return None


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
