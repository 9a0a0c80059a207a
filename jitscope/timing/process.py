"""A truly cold first call: a new Python process imports jax, loads the target and calls it once.

The parent sends the request (target name, arguments, seed, cache setting) on stdin
and times the process from start to finish; the child times its own steps and writes
them to a file (not stdout, which the user's module may print to). Run as
``python -m jitscope.timing.process``.
"""

from __future__ import annotations

import time

_STARTED = time.perf_counter()  # before jax (or anything heavy) is imported

import json
import os
import pickle
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jitscope.errors import JitscopeError, UserCodeError
from jitscope.load.specs import ArgSet
from jitscope.model.bench import ColdRun, ProcessRecord, ProcessRun
from jitscope.model.common import from_jsonable, to_jsonable

_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])


@dataclass(frozen=True, slots=True)
class ProcessRequest:
    target: str  # "path.py:fn" or "pkg.mod:fn", loadable as typed
    cwd: str
    argset: ArgSet
    seed: int
    cache: str  # "off" or a persistent cache directory
    x64: bool
    result_path: str


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    paths = [_PACKAGE_ROOT] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    return env


def run_once(request: ProcessRequest, *, timeout: float | None = None) -> ProcessRun:
    """Start a process for ``request`` and return what it measured (raises on failure)."""
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "jitscope.timing.process"], input=pickle.dumps(request), cwd=request.cwd,
        env=_child_env(), capture_output=True, timeout=timeout, check=False,
    )
    wall = time.perf_counter() - start
    try:
        result = json.loads(Path(request.result_path).read_text())
    except (OSError, ValueError):
        stderr = proc.stderr.decode(errors="replace").strip()
        raise UserCodeError(
            f"the cold-process run of {request.target} exited with status {proc.returncode} without a result",
            detail=stderr[-4000:] or None,
        ) from None
    if "error" in result:
        raise UserCodeError(f"cold process: {result['error']}", hint=result.get("hint"), detail=result.get("detail"))
    return ProcessRun(
        wall=wall,
        import_jax=result["import_jax"],
        load_target=result["load_target"],
        make_inputs=result["make_inputs"],
        first_call=from_jsonable(ColdRun, result["first_call"]),
        startup=max(0.0, wall - result["child_total"]),
    )


def measure_process(target: str, argset: ArgSet, *, seed: int, cache: str, x64: bool, runs: int,
                    cwd: str | None = None) -> ProcessRecord:
    """``runs`` truly cold processes; the record's median is over their wall times."""
    from jitscope.timing.stats import median

    results: list[ProcessRun] = []
    from jitscope.outputs import scratch_folder

    with scratch_folder("jitscope-bench-") as tmp:
        for i in range(runs):
            path = os.path.join(tmp, f"result-{i}.json")
            request = ProcessRequest(target, cwd or os.getcwd(), argset, seed, cache, x64, path)
            results.append(run_once(request))
    return ProcessRecord(runs=tuple(results), median_wall=median([r.wall for r in results]))


def _child(request: ProcessRequest) -> dict[str, Any]:
    t0 = time.perf_counter()
    import jax

    if request.x64:
        jax.config.update("jax_enable_x64", True)
    t1 = time.perf_counter()
    from jitscope.load.target import load_targets

    handles = [h for h in load_targets(request.target, Path(request.cwd)) if h.name == request.target]
    if not handles:
        raise JitscopeError(f"cannot load {request.target} in the cold process")
    handle = handles[0]
    t2 = time.perf_counter()
    from jitscope.jaxcompat.caches import persistent_cache
    from jitscope.timing.clock import perf_clock
    from jitscope.timing.cold import measure_cold, user_code_failed
    from jitscope.timing.inputs import make_inputs

    args, kwargs = make_inputs(request.argset, request.seed)
    t3 = time.perf_counter()
    options = handle.options.with_static_names(request.argset.static_names)
    with persistent_cache(request.cache):
        try:
            run = measure_cold(handle.fn, options, args, kwargs, clock=perf_clock).run
        except Exception as exc:  # noqa: BLE001 - the user's code failed
            raise user_code_failed(handle.name, request.argset.describe(), exc, options, "on its first call",
                                   fn=handle.fn, argset=request.argset) from None
    return {
        "import_jax": t1 - t0,
        "load_target": t2 - t1,
        "make_inputs": t3 - t2,
        "first_call": to_jsonable(run),
        "child_total": time.perf_counter() - _STARTED,
    }


def main() -> None:
    request: ProcessRequest = pickle.load(sys.stdin.buffer)
    try:
        result = _child(request)
    except JitscopeError as err:
        result = {"error": err.message, "hint": err.hint, "detail": err.detail}
    Path(request.result_path).write_text(json.dumps(result))


if __name__ == "__main__":
    main()
