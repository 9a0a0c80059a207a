"""Target loading: ``pkg.mod:fn``, ``path/to/file.py:fn``, ``mod:Obj.attr``, ``mod:*``.

``load_targets`` returns handles: live objects (the user's function) plus a record
of *how* each was found. ``sys.path`` changes happen inside ``importable`` and are
undone, so loading a target never leaves the interpreter different.
"""

from __future__ import annotations

import contextlib
import difflib
import importlib
import importlib.util
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from jitscope.errors import SpecError, TargetError, UserCodeError
from jitscope.jaxcompat.jit import JitOptions, is_jitted
from jitscope.jaxcompat.wrappers import EQUINOX, JAX_JIT, describe_rule, for_call, recognise
from jitscope.load.examples import example_names, examples_for, examples_from_config
from jitscope.load.specs import ArgSet
from jitscope.userframes import format_user_traceback


@dataclass(frozen=True, slots=True)
class TargetHandle:
    """A loaded target. Holds live objects: never leaves loading/tracing code."""

    text: str  # what the user typed
    name: str  # display name, e.g. "examples/mlp.py:train_step"
    attr_path: str  # "train_step", "Model.apply"
    fn: Callable[..., Any]  # the Python function to trace (jit wrapper removed)
    original: Any  # the object found in the module (maybe a jit wrapper)
    options: JitOptions
    module: ModuleType
    how: str  # how it was found, for --verbose and JSON
    examples: tuple[ArgSet, ...]

    @property
    def source_file(self) -> str | None:
        code = getattr(self.fn, "__code__", None)
        return code.co_filename if code is not None else getattr(self.module, "__file__", None)


@contextlib.contextmanager
def importable(*dirs: Path) -> Iterator[None]:
    """Put ``dirs`` at the front of ``sys.path`` for the duration, then restore it exactly."""
    saved = list(sys.path)
    for d in reversed([str(d) for d in dirs]):
        if d not in sys.path:
            sys.path.insert(0, d)
    try:
        yield
    finally:
        sys.path[:] = saved


def split_target(text: str) -> tuple[str, str]:
    """``"a/b.py:f"`` -> ``("a/b.py", "f")``; the attribute part defaults to ``*``."""
    head, sep, attr = text.rpartition(":")
    if not sep:
        if text.endswith(".py"):
            return text, "*"
        raise TargetError(
            f"target {text!r} has no function: expected MODULE:FUNCTION",
            hint="for example examples/mlp.py:train_step or mypkg.models:predict",
        )
    if not head or not attr:
        raise TargetError(f"target {text!r} is incomplete: expected MODULE:FUNCTION")
    return head, attr


def looks_like_target(text: str) -> bool:
    """Whether a command line's word names a target (``pkg.mod:fn``, ``path/to/file.py:fn``) rather than a
    script to run: a ``:`` with something on both sides, and no file of that very name."""
    head, sep, attr = text.rpartition(":")
    return bool(sep and head and attr) and not os.path.exists(text)


def _looks_like_path(head: str) -> bool:
    return head.endswith(".py") or "/" in head or os.sep in head


def load_module(head: str, cwd: Path) -> tuple[ModuleType, str]:
    """Import a module by dotted name or file path; return it and how it was found."""
    if not _looks_like_path(head) and not all(part.isidentifier() for part in head.split(".")):
        raise TargetError(f"{head!r} is neither a module name nor a path to a .py file",
                          hint="for example mypkg.models:predict or path/to/file.py:predict")
    if _looks_like_path(head):
        path = (cwd / head).resolve()
        if not path.is_file():
            if path.exists():  # a FIFO or a device: importing it would wait, or read forever
                from jitscope.inputs import file_kind

                raise TargetError(f"cannot import {head}: it is {file_kind(path.stat().st_mode)}, not a Python file",
                                  hint="name a .py file")
            raise TargetError(f"file not found: {head}", hint=f"looked in {cwd}")
        name = path.stem if path.stem.isidentifier() else "_jitscope_target"
        with importable(path.parent, cwd):
            module = _exec_user_module(name, path, head)
        return module, f"imported {head} as module {name!r} ({path})"
    with importable(cwd):
        try:
            module = importlib.import_module(head)
        except ModuleNotFoundError as exc:
            if exc.name and (head == exc.name or head.startswith(exc.name + ".")):
                raise TargetError(
                    f"no module named {exc.name!r}",
                    hint="run from your project root, install the package, or pass a path like path/to/file.py:fn",
                ) from None
            raise _import_failed(head, exc) from None
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - anything the user's module raises at import
            raise _import_failed(head, exc) from None
    return module, f"imported module {head!r} ({getattr(module, '__file__', '?')})"


def _exec_user_module(name: str, path: Path, shown: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise TargetError(f"cannot import {shown}: not a Python module")
    module = importlib.util.module_from_spec(spec)
    previous = sys.modules.get(name)
    sys.modules[name] = module  # dataclasses and pickling look the module up by name
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:
        if previous is not None:
            sys.modules[name] = previous
        else:
            sys.modules.pop(name, None)
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise _import_failed(shown, exc) from None
    return module


def _import_failed(shown: str, exc: BaseException) -> UserCodeError:
    if isinstance(exc, SyntaxError):
        where = f"{exc.filename}:{exc.lineno}" if exc.filename else shown
        return UserCodeError(
            f"syntax error in {where}: {exc.msg}", detail=format_user_traceback(exc), hint="fix the syntax error"
        )
    return UserCodeError(
        f"importing {shown} raised {type(exc).__name__}: {exc}",
        hint="the error is in your module's import-time code; its traceback is below",
        detail=format_user_traceback(exc),
    )


def resolve_attr(module: ModuleType, attr_path: str, shown: str) -> Any:
    """Follow ``A.b.c`` from ``module``, suggesting close names when a part is missing."""
    obj: Any = module
    walked: list[str] = []
    for part in attr_path.split("."):
        if not hasattr(obj, part):
            where = f"{shown}:{'.'.join(walked)}" if walked else shown
            candidates = [n for n in dir(obj) if not n.startswith("__")]
            close = difflib.get_close_matches(part, candidates, n=3, cutoff=0.6)
            hint = f"did you mean {', '.join(repr(c) for c in close)}?" if close else None
            if hint is None and walked == []:
                funcs = [n for n in candidates if callable(getattr(obj, n, None)) and not n.startswith("_")]
                hint = f"available: {', '.join(funcs[:8])}" if funcs else None
            raise TargetError(f"{where} has no attribute {part!r}", hint=hint)
        obj = getattr(obj, part)
        walked.append(part)
    return obj


def jit_options_for(target: TargetHandle, argset: ArgSet) -> tuple[JitOptions, str]:
    """How to jit ``target`` for ``argset`` (trace, bench, profile, memory and lint alike), and a note saying
    what that changed ("" when nothing): the argset's statics added, and the leaves its wrapper's rule makes
    static (``jaxcompat/wrappers.py``), where the call holds any."""
    options = for_call(target.options.with_static_names(argset.static_names), (argset.args, argset.kwargs))
    if options.filter_static and not target.options.filter_static:
        return options, describe_rule(recognise(target.original).kind, options.static_leaves)
    return options, ""


def _make_handle(
    text: str, shown: str, module: ModuleType, attr_path: str, obj: Any, how: str, cwd: Path | None = None
) -> TargetHandle:
    if not callable(obj):
        raise TargetError(
            f"{shown}:{attr_path} is a {type(obj).__name__}, not a function",
            hint="point at a function, a jitted function or a bound method",
        )
    found = recognise(obj)
    fn, options = found.fn, found.options
    if found.kind in (JAX_JIT, EQUINOX):
        how += f"; unwrapped its {found.kind} wrapper"
    return TargetHandle(
        text=text,
        name=f"{shown}:{attr_path}",
        attr_path=attr_path,
        fn=fn,
        original=obj,
        options=options,
        module=module,
        how=how,
        examples=examples_for(module, attr_path)
        or examples_from_config((f"{shown}:{attr_path}", f"{module.__name__}:{attr_path}"), cwd or Path.cwd()),
    )


def load_targets(text: str, cwd: Path | None = None) -> list[TargetHandle]:
    """Load one target spec; ``mod:*`` yields every jitted function with example arguments."""
    cwd = cwd or Path.cwd()
    head, attr_path = split_target(text)
    module, how = load_module(head, cwd)
    if attr_path != "*":
        return [_make_handle(text, head, module, attr_path, resolve_attr(module, attr_path, head), how, cwd)]
    names = list(example_names(module))
    for name, value in vars(module).items():
        defined_here = getattr(getattr(value, "__wrapped__", value), "__module__", None) == module.__name__
        if is_jitted(value) and defined_here and name not in names:
            names.append(name)
    handles = [
        _make_handle(text, head, module, name, resolve_attr(module, name, head), how, cwd)
        for name in names
    ]
    with_examples = [h for h in handles if h.examples]
    if not with_examples:
        raise TargetError(
            f"{head} has no jitted function with example arguments",
            hint="declare JITSCOPE_EXAMPLES in the module (see docs/guides/trace.md) or name a function and pass --shapes",
        )
    return with_examples


def parameter_names(fn: Callable[..., Any]) -> list[str]:
    """The names of ``fn``'s parameters; none for callables without a signature (builtins, some C functions)."""
    import inspect

    try:
        return list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return []


def check_call(target: TargetHandle, argset: ArgSet) -> None:
    """Refuse an ArgSet that cannot bind to the function's signature, before any tracing.

    Without this, a missing or extra argument surfaces as a TypeError from deep inside
    JAX's tracing machinery; here it is a spec error that names the parameters.
    """
    import inspect

    try:
        signature = inspect.signature(target.fn)
    except (TypeError, ValueError):  # builtins and C functions: let JAX decide
        return
    try:
        signature.bind(*argset.args, **argset.kwargs)
    except TypeError as exc:
        params = ", ".join(str(p) for p in signature.parameters.values())
        raise SpecError(
            f"arguments do not fit {target.name}({params}): {exc}",
            hint="pass one --shapes entry per positional parameter, and --arg/--static NAME=... for the rest",
        ) from None
