"""``trace|bench|profile TARGET --from-run``: the target loaded with the arguments of a real call of it.

The program is the target's own script (``path/train.py:train_step``) or module
(``pkg.train:train_step``, run as ``python -m pkg.train``); ``capture.capture_call`` runs it to
the wanted call. The result is an ordinary ``TargetHandle`` whose one example is that call, so
the commands run on it unchanged: ``trace`` traces it (arrays become their abstract values as
JAX's jit sees them: nothing new is allocated), ``bench`` and ``profile`` time the real arrays.
"""

from __future__ import annotations

import importlib.util
import os
import types
from collections.abc import Sequence
from dataclasses import dataclass

from jitscope.errors import UsageError
from jitscope.load.live import live_target
from jitscope.load.target import TargetHandle, split_target
from jitscope.run.capture import CapturedCall, CaptureResult, capture_call, require_call
from jitscope.run.program import Program, check_program


@dataclass(frozen=True, slots=True)
class FromRun:
    """What ``--from-run``, ``--call``, ``--continue`` and the program's arguments ask for."""

    call: int = 1
    keep_running: bool = False
    program_args: tuple[str, ...] = ()


def program_for(target: str, args: Sequence[str]) -> tuple[Program, str, str]:
    """The program that defines ``target``, the file whose module binds it, and the attribute path."""
    head, attr_path = split_target(target)
    if attr_path == "*":
        raise UsageError(f"--from-run takes one function, not {target!r}", hint="name it: train.py:train_step")
    if head.endswith(".py") or "/" in head or os.sep in head:
        program = Program(head, None, tuple(args))
        check_program(program)
        return program, head, attr_path
    program = Program(None, head, tuple(args))
    check_program(program)
    from pathlib import Path

    from jitscope.load.target import importable

    with importable(Path.cwd()):  # where `python -m` looks first
        spec = importlib.util.find_spec(head)
    origin = getattr(spec, "origin", None)
    if origin is None or not origin.endswith(".py"):
        raise UsageError(f"{head} has no Python source to run", hint="give the script's path instead")
    return program, origin, attr_path


def load_from_run(target: str, request: FromRun, *, abstract: bool = False) -> tuple[TargetHandle, CaptureResult]:
    """Run the program to the requested call and return the target loaded with that call's arguments.

    ``abstract`` (trace): the call's arrays become their abstract values (shape, dtype, weak type,
    sharding), as ``JITSCOPE_EXAMPLES`` arrays do; arrays inside other objects stay as they are.
    """
    program, filename, attr_path = program_for(target, request.program_args)
    result = capture_call(program, filename, attr_path, call=request.call, keep_running=request.keep_running)
    call = require_call(result, target, request.call)
    return captured_target(target, filename, attr_path, call, abstract=abstract), result


def captured_target(text: str, filename: str, attr_path: str, call: CapturedCall, *,
                    abstract: bool = False) -> TargetHandle:
    """A TargetHandle for the object the program called, with the captured call as its one example."""
    # The program ran as __main__, which is jitscope's entry point in sys.modules, not the program's module:
    # stand in for it with a module that names the script, so "your code" is the script's project.
    module = types.ModuleType(os.path.splitext(os.path.basename(filename))[0])
    module.__file__ = os.path.abspath(filename)
    how = f"the arguments of call {call.number}, taken from the running program after {call.seconds:.2f} s"
    return live_target(call.fn, call.args, call.kwargs, text=text, attr_path=attr_path, how=how,
                       label=f"call {call.number} of the program", module=module,
                       abstract=abstract)
