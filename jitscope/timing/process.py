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
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jitscope import children
from jitscope.errors import JitscopeError, UserCodeError
from jitscope.load.specs import ArgSet
from jitscope.model.bench import ColdRun, ProcessRecord, ProcessRun
from jitscope.model.common import from_jsonable, to_jsonable

_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])


@dataclass(frozen=True, slots=True)
class ProcessRequest:
    target: str  # "path.py:fn" or "pkg.mod:fn", loadable as typed
    cwd: str
    argset: ArgSet | None  # None: the target's own example number ``example``, made again by its module
    seed: int
    cache: str  # "off" or a persistent cache directory
    x64: bool
    result_path: str
    example: int = -1


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    paths = [_PACKAGE_ROOT] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    return env


def _sendable(request: ProcessRequest, examples: tuple[ArgSet, ...]) -> bytes:
    """``request`` pickled for the child. One of the target's own examples is sent as its number: loading the
    module in the child makes it again, where pickle could not copy it (a TrainState holds optax's closures) or
    the child could not import what it holds (a class of a module loaded from its path)."""
    number = next((i for i, example in enumerate(examples) if example is request.argset), None)
    if number is not None:
        request = ProcessRequest(request.target, request.cwd, None, request.seed, request.cache, request.x64,
                                 request.result_path, number)
    try:
        return pickle.dumps(request)
    except (pickle.PicklingError, AttributeError, TypeError) as exc:
        from jitscope.errors import UsageError

        raise UsageError(f"--cold-process cannot copy the arguments of {request.target} into a new process "
                         f"({type(exc).__name__}: {exc})",
                         hint="declare them in the module's JITSCOPE_EXAMPLES, or drop --cold-process") from None


def run_once(request: ProcessRequest, *, timeout: float | None = None,
             examples: tuple[ArgSet, ...] = ()) -> ProcessRun:
    """Start a process for ``request`` and return what it measured (raises on failure)."""
    sent = _sendable(request, examples)
    start = time.perf_counter()
    proc = children.run([sys.executable, "-m", "jitscope.timing.process"], input=sent, cwd=request.cwd,
                        env=_child_env(), timeout=timeout)  # its process group ends with it, or with jitscope
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
                    cwd: str | None = None, examples: tuple[ArgSet, ...] = ()) -> ProcessRecord:
    """``runs`` truly cold processes; the record's median is over their wall times. ``examples``: the target's
    own, one of which ``argset`` may be (sent by its number when pickle cannot copy it)."""
    from jitscope.timing.stats import median

    results: list[ProcessRun] = []
    from jitscope.outputs import scratch_folder

    with scratch_folder("jitscope-bench-") as tmp:
        for i in range(runs):
            path = os.path.join(tmp, f"result-{i}.json")
            request = ProcessRequest(target, cwd or os.getcwd(), argset, seed, cache, x64, path)
            results.append(run_once(request, examples=examples))
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

    argset = request.argset if request.argset is not None else handle.examples[request.example]
    args, kwargs = make_inputs(argset, request.seed)
    t3 = time.perf_counter()
    options = handle.options.with_static_names(argset.static_names)
    with persistent_cache(request.cache):
        try:
            run = measure_cold(handle.fn, options, args, kwargs, clock=perf_clock).run
        except Exception as exc:  # noqa: BLE001 - the user's code failed
            raise user_code_failed(handle.name, argset.describe(), exc, options, "on its first call",
                                   fn=handle.fn, argset=argset) from None
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
