"""A compile's abstract signature, saved by ``jitscope run --capture DIR`` and replayed by ``--from DIR``.

The document (``DIR/capture.json``, ``"kind": "jitscope.capture"``, versioned like every jitscope
document) lists, for every compile of the user's jitted functions, the function (name and
``file:line``) and how it was called: each argument as a pytree structure and its leaves. A leaf
is an array's abstract value (shape, dtype, weak type; nothing of its data), a JSON literal (a
Python scalar), or, for any other leaf and for static arguments, the pickled object when it
pickles, else a ``module:qualname`` reference when the object is importable by that name
(``jax.nn.relu``, a ``custom_jvp`` pickle refuses), else its ``repr`` marked unsaved. The pytree structure is the pickled ``PyTreeDef``
(custom nodes such as an optax state or an equinox module are pickled by reference to their
classes, so replaying needs them importable), with its text beside it for reading.

Pickles run code when loaded: replay only captures you made. Objects a structure cannot rebuild
(a flax ``TrainState`` holding an optimizer's closures, an nnx graph) are saved unsaved, and
replaying them is one error naming the argument, suggesting ``--from-run``.
"""

from __future__ import annotations

import base64
import io
import json
import pickle
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from jitscope.dtypes import dtype_name
from jitscope.errors import UsageError
from jitscope.load.specs import ArgSet, ArraySpec, array_problem

KIND = "jitscope.capture"
#: Version of the capture document; a reader refuses another major version.
SCHEMA_VERSION = "1.0"
FILE = "capture.json"


def _pickled(value: Any) -> str | None:
    try:
        return base64.b64encode(pickle.dumps(value, protocol=4)).decode("ascii")
    except Exception:  # noqa: BLE001 - anything unpicklable (closures, locks, C objects) is saved unsaved
        return None


def _leaf(value: Any) -> dict[str, Any]:
    if isinstance(value, (bool, int, float)) or value is None or isinstance(value, str):
        return {"value": value}
    aval = getattr(value, "aval", None)
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    if shape is not None and dtype is not None and not isinstance(value, type):
        from jitscope.jaxcompat.dtypes import canonical_dtype_name

        # as JAX sees it: a NumPy int64 array is int32 to jit when x64 is off; a typed key is key<fry>
        name = canonical_dtype_name(dtype) if aval is None else dtype_name(dtype)
        return {"array": {"shape": [int(d) for d in shape], "dtype": name,
                          "weak_type": bool(getattr(aval, "weak_type", False))}}
    saved = _pickled(value)
    if saved is not None:
        return {"pickle": saved}
    reference = _reference(value)
    return {"ref": reference} if reference is not None else {"repr": repr(value)[:200], "unsaved": True}


def _reference(value: Any) -> str | None:
    """``module:qualname`` for an object importable by that name (``jax.nn.relu``, a ``custom_jvp`` that pickle
    refuses), checked by importing it back."""
    module, qualname = getattr(value, "__module__", None), getattr(value, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or "<" in qualname:
        return None
    try:
        found = _import_reference(f"{module}:{qualname}", None)
    except Exception:  # noqa: BLE001 - not importable by its name
        return None
    return f"{module}:{qualname}" if found is value else None


def _import_reference(reference: str, main: ModuleType | None) -> Any:
    import importlib

    module_name, _, qualname = reference.partition(":")
    obj: Any = main if module_name == "__main__" and main is not None else importlib.import_module(module_name)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def describe_argument(value: Any, static: bool) -> dict[str, Any]:
    """One argument as the capture document keeps it."""
    if static:
        return {"static": _leaf(value) if not _is_array_like(value) else {"repr": repr(value)[:200],
                                                                          "unsaved": True}}
    import jax

    with_paths, treedef = jax.tree_util.tree_flatten_with_path(value)
    leaves = [{**_leaf(leaf), "path": jax.tree_util.keystr(path)} for path, leaf in with_paths]
    return {"tree": _pickled(treedef), "tree_text": str(treedef), "leaves": leaves}


def _is_array_like(value: Any) -> bool:
    return hasattr(value, "shape") and hasattr(value, "dtype") and not isinstance(value, type)


def describe_call(fun: Any, args: Sequence[Any], kwargs: dict[str, Any], static_argnums: Sequence[int],
                  static_argnames: Sequence[str]) -> dict[str, Any]:
    from jitscope.run.keys import positional_names

    params = positional_names(fun)
    names = set(static_argnames)
    return {
        "args": [describe_argument(a, i in static_argnums or (i < len(params) and params[i] in names))
                 for i, a in enumerate(args)],
        "kwargs": {k: describe_argument(v, k in names) for k, v in kwargs.items()},
    }


def write_capture(directory: Path, program: str, argv: Sequence[str], jax_version: str | None,
                  calls: list[dict[str, Any]]) -> Path:
    from jitscope.outputs import write_atomic

    document = {"kind": KIND, "schema_version": SCHEMA_VERSION, "program": program, "argv": list(argv),
                "jax_version": jax_version, "calls": calls}
    return write_atomic(directory / FILE, json.dumps(document, indent=1) + "\n")  # a failed write keeps the last


# -- replay ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SavedCall:
    function: str
    defined_at: str | None
    compile: int  # this function's k-th compile in the run
    signature: str
    call: dict[str, Any]


def read_capture(directory: Path) -> list[SavedCall]:
    """The saved calls of a capture folder; one clear error for anything that is not one."""
    from jitscope.inputs import read_json, read_record

    path = directory / FILE if directory.is_dir() else directory
    if not path.exists() and not path.is_symlink():
        raise UsageError(f"no capture in {directory}: {path} does not exist",
                         hint="make one with: jitscope run --capture DIR your_script.py")
    document = read_json(path, "capture")
    if not isinstance(document, dict) or document.get("kind") != KIND:
        raise UsageError(f"{path} is not a jitscope capture (kind {document.get('kind') if isinstance(document, dict) else None!r})",
                         hint="make one with: jitscope run --capture DIR your_script.py")
    version = str(document.get("schema_version", ""))
    if version.split(".")[0] != SCHEMA_VERSION.split(".")[0]:
        raise UsageError(f"the capture {path} has schema version {version or '(none)'}; this jitscope reads "
                         f"{SCHEMA_VERSION.split('.')[0]}.x", hint="capture again with this jitscope's `run --capture`")
    return list(read_record(_Capture, document, "capture", path).calls)


@dataclass(frozen=True, slots=True)
class _Capture:
    """What ``read_capture`` checks of a capture document: its calls (each call's arguments are checked as they
    are rebuilt)."""

    calls: tuple[SavedCall, ...] = ()


def pick_call(calls: list[SavedCall], function: str, compile_number: int, where: str) -> SavedCall:
    """The ``compile_number``-th saved compile of ``function`` (matched by name, or its last part)."""
    mine = [c for c in calls if function in (c.function, c.function.rsplit(".", 1)[-1])]
    if not mine:
        known = sorted({c.function for c in calls})
        raise UsageError(f"the capture {where} has no compile of {function}",
                         hint=f"it has: {', '.join(known[:8])}" if known else "it holds no compile")
    if not 1 <= compile_number <= len(mine):
        raise UsageError(f"the capture {where} has {len(mine)} compile(s) of {function}; --compile "
                         f"{compile_number} is out of range", hint=f"pass --compile 1 to {len(mine)}")
    return mine[compile_number - 1]


class _Unpickler(pickle.Unpickler):
    """Classes the program defined in ``__main__`` are looked up in the target's module."""

    def __init__(self, data: bytes, main: ModuleType | None) -> None:
        super().__init__(io.BytesIO(data))
        self.main = main

    def find_class(self, module: str, name: str) -> Any:
        if module == "__main__" and self.main is not None:
            obj: Any = self.main
            for part in name.split("."):
                obj = getattr(obj, part)
            return obj
        return super().find_class(module, name)


def _unpickle(text: str, main: ModuleType | None, what: str) -> Any:
    try:
        return _Unpickler(base64.b64decode(text), main).load()
    except Exception as exc:  # noqa: BLE001 - a class that moved or is not importable here
        raise UsageError(f"cannot rebuild {what} from the capture: {type(exc).__name__}: {exc}",
                         hint="its classes must be importable here; or take the real call with --from-run") from None


def _rebuild_leaf(leaf: dict[str, Any], main: ModuleType | None, what: str) -> Any:
    if "array" in leaf:
        a = leaf["array"]
        problem = array_problem(a["shape"], a["dtype"]) if isinstance(a["dtype"], str) else "the dtype is no name"
        if problem is not None:
            raise UsageError(f"{what} in the capture is no array jitscope can make: {problem}",
                             hint="capture again with jitscope run --capture")
        return ArraySpec(tuple(a["shape"]), a["dtype"], bool(a.get("weak_type", False)))
    if "value" in leaf:
        return leaf["value"]
    if "pickle" in leaf:
        return _unpickle(leaf["pickle"], main, what)
    if "ref" in leaf:
        try:
            return _import_reference(leaf["ref"], main)
        except Exception as exc:  # noqa: BLE001 - moved or not importable here
            raise UsageError(f"cannot rebuild {what} from the capture: {leaf['ref']} is not importable here "
                             f"({type(exc).__name__})", hint="take the real call instead: --from-run") from None
    raise UsageError(f"{what} could not be saved by the capture: {leaf.get('repr', '?')} neither pickles nor is "
                     "importable by name",
                     hint="take the real call instead: --from-run")


def _rebuild_argument(saved: dict[str, Any], main: ModuleType | None, what: str) -> Any:
    if "static" in saved:
        return _rebuild_leaf(saved["static"], main, what)
    if saved.get("tree") is None:
        raise UsageError(f"{what} has a pytree structure the capture could not save ({saved.get('tree_text', '?')[:80]})",
                         hint="take the real call instead: --from-run")
    import jax

    treedef = _unpickle(saved["tree"], main, f"the structure of {what}")
    leaves = [_rebuild_leaf(leaf, main, f"{what}, leaf {leaf.get('path') or '(root)'},") for leaf in saved["leaves"]]
    return jax.tree_util.tree_unflatten(treedef, leaves)


def rebuild_argset(saved: SavedCall, params: Sequence[str], main: ModuleType | None) -> ArgSet:
    """The saved call as an ArgSet: arrays as abstract specs, the rest as saved; one line naming the call when
    the capture was changed so that it does not read."""
    try:
        return _rebuild_argset(saved, params, main)
    except (KeyError, TypeError, AttributeError, ValueError, IndexError) as exc:
        raise UsageError(f"compile {saved.compile} of {saved.function} in the capture is damaged "
                         f"({type(exc).__name__}: {exc})", hint="capture again with jitscope run --capture") from None


def _rebuild_argset(saved: SavedCall, params: Sequence[str], main: ModuleType | None) -> ArgSet:
    call = saved.call
    args = tuple(_rebuild_argument(a, main, f"argument {params[i] if i < len(params) else i}")
                 for i, a in enumerate(call["args"]))
    kwargs = {k: _rebuild_argument(v, main, f"argument {k}") for k, v in call["kwargs"].items()}
    statics = tuple(k for k, v in call["kwargs"].items() if "static" in v)
    return ArgSet(args, kwargs, statics, label=f"compile {saved.compile} of {saved.function}, from a capture")


class CaptureWriter:
    """``RunObserver.on_compile`` for ``run --capture DIR``: keeps each compile's signature, writes them at exit."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.calls: list[dict[str, Any]] = []
        self._counts: dict[tuple[str, str], int] = {}

    def __call__(self, event: Any, call: Any) -> None:
        where = str(event.defined_at) if event.defined_at is not None else None
        key = (event.function, where or "")
        self._counts[key] = self._counts.get(key, 0) + 1
        self.calls.append({
            "event": event.index, "function": event.function, "defined_at": where, "number": event.number,
            "compile": self._counts[key], "signature": event.signature, "via": event.via,
            "call": describe_call(call.fun, call.args, call.kwargs, call.static_argnums, call.static_argnames),
        })

    def write(self, program: str, argv: Sequence[str], jax_version: str | None) -> Path:
        return write_capture(self.directory, program, argv, jax_version, self.calls)
