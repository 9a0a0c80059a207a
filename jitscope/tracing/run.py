"""Which calls to trace for each target: from the command line, or from JITSCOPE_EXAMPLES."""

from __future__ import annotations

import inspect
from pathlib import Path

from jitscope.errors import SpecError
from jitscope.load.specs import ArgSet
from jitscope.load.target import TargetHandle, load_targets


def _required_params(fn: object) -> list[str]:
    try:
        sig = inspect.signature(fn)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return []
    return [
        p.name
        for p in sig.parameters.values()
        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]


def argsets_for(target: TargetHandle, cli: ArgSet | None) -> tuple[ArgSet, ...]:
    """The calls to make: the command line's if given, else the module's examples."""
    if cli is not None:
        return (cli,)
    if target.examples:
        return target.examples
    if not _required_params(target.fn):
        return (ArgSet(),)
    raise SpecError(
        f"no arguments for {target.name}: it takes ({', '.join(_required_params(target.fn))})",
        hint="pass --shapes \"f32[8,128], ...\" (and --static NAME=VALUE), or declare JITSCOPE_EXAMPLES "
        "in the module",
    )


def load_all(texts: list[str], cwd: Path | None = None) -> list[TargetHandle]:
    """Load every target named on the command line, in order, without duplicates."""
    seen: dict[str, TargetHandle] = {}
    for text in texts:
        for handle in load_targets(text, cwd):
            seen.setdefault(handle.name, handle)
    return list(seen.values())
