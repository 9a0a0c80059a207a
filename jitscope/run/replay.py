"""``trace|bench|profile TARGET --from DIR [--compile K]``: replay a compile saved by ``run --capture DIR``.

The target is loaded as usual (its module imported); its one example becomes the K-th saved
compile of that function: arrays as abstract specs (bench and profile make inputs of those
shapes, as they do for ``--shapes``), statics and other leaves as saved (``run/signature.py``).
"""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path

from jitscope.errors import UsageError
from jitscope.load.target import TargetHandle, load_targets
from jitscope.run.signature import pick_call, read_capture, rebuild_argset


def load_from_capture(target: str, directory: Path, compile_number: int = 1) -> TargetHandle:
    calls = read_capture(directory)
    if target.rpartition(":")[2] == "*":
        raise UsageError(f"--from replays one function, not {target!r}", hint="name it: train.py:train_step")
    handle = load_targets(target)[0]
    name = getattr(handle.fn, "__qualname__", None) or handle.attr_path
    saved = pick_call(calls, name if any(c.function == name for c in calls) else handle.attr_path.rsplit(".", 1)[-1],
                      compile_number, str(directory))
    argset = rebuild_argset(saved, _parameters(handle.fn), handle.module)
    how = f"{handle.how}; arguments of compile {saved.compile} of {saved.function} saved in {directory}"
    # static and traced as the wrapper makes them: handle.options hold its rule (jaxcompat/wrappers.py)
    return dataclasses.replace(handle, examples=(argset,), how=how)


def _parameters(fn: object) -> list[str]:
    try:
        return list(inspect.signature(fn).parameters)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return []
