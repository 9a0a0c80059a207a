"""Lookup tables for the effect monitor, built from the side-effect catalogue.

What counts as a side effect is data in :mod:`jitscope.model.effect_catalogue`, shared with
the static linter; this module turns it into what the monitor can look up fast.

A profiler sees two sorts of calls: C functions (``c_call`` events carry the function
object) and Python functions (``call`` events carry the new frame and its code object).
So the catalogue is built as two lookup tables, one keyed by the C function
object and one by the code object, plus a table of owner types whose every public
method is an effect (``random.Random``, sockets, open files). Only modules that are
already imported are looked at: importing ``urllib.request`` just to watch it would
cost more than the whole watch, and code that calls it has imported it anyway.
"""

from __future__ import annotations

import importlib
import sys
import types
from dataclasses import dataclass, field

from jitscope.model.effect_catalogue import (
    CATALOGUE,
    EFFECTFUL_TYPES,
    FILE_METHODS,
    MUTATING_METHODS,
    STREAM_WRITE_METHODS,
)
from jitscope.model.effects import EffectKind

K = EffectKind


@dataclass(frozen=True, slots=True)
class EffectSpec:
    """How to report a call of one catalogued function."""

    kind: EffectKind
    #: Shown in the record, e.g. ``time.time()``.
    detail: str


#: Re-exported for the effect monitor: the data lives in ``jitscope.model.effect_catalogue``.
__all__ = [
    "FILE_METHODS",
    "MUTATING_METHODS",
    "STREAM_WRITE_METHODS",
    "EffectCatalog",
    "EffectSpec",
    "NumpyRandomSupport",
    "build_effect_catalog",
    "numpy_random_support",
]


@dataclass(slots=True)
class EffectCatalog:
    """Lookup tables built from the catalogue for the modules imported right now."""

    #: C functions, keyed by the function object (bound builtin methods compare by owner and method).
    by_callable: dict[object, EffectSpec] = field(default_factory=dict)
    #: Python functions, keyed by their code object.
    by_code: dict[types.CodeType, EffectSpec] = field(default_factory=dict)
    #: Owner type -> kind, for C methods called on instances (``rng.random()``, ``sock.send()``).
    by_owner_type: dict[type, EffectKind] = field(default_factory=dict)

    def spec_for_method(self, owner: object, name: str) -> EffectSpec | None:
        """The effect of calling C method ``name`` on ``owner``, if it is one."""
        if name.startswith("_"):
            return None
        for owner_type in type(owner).__mro__:
            kind = self.by_owner_type.get(owner_type)
            if kind is None:
                continue
            if kind is K.FILE_IO and name not in FILE_METHODS:
                return None
            return EffectSpec(kind, f"{owner_type.__name__}.{name}()")
        return None


def _resolve(module: types.ModuleType, path: str) -> object | None:
    value: object = module
    for part in path.split("."):
        value = getattr(value, part, None)
        if value is None:
            return None
    return value


def _code_of(value: object) -> types.CodeType | None:
    if isinstance(value, type):
        init = value.__dict__.get("__init__")
        return getattr(init, "__code__", None)
    function = getattr(value, "__func__", value)
    code = getattr(function, "__code__", None)
    return code if isinstance(code, types.CodeType) else None


_ENVIRON_DETAILS = {
    "_Environ.__setitem__": "os.environ[...] = ...",
    "_Environ.__delitem__": "del os.environ[...]",
}


def _detail_for(module_name: str, path: str, kind: EffectKind) -> str:
    if module_name == "builtins":
        return f"{path}()"
    if kind is K.LOGGING and path.startswith(("Logger.", "LoggerAdapter.")):
        return f"logger.{path.split('.')[-1]}()"
    if path.startswith("_Environ."):
        return _ENVIRON_DETAILS.get(path, f"os.environ.{path.split('.')[-1]}()")
    return f"{module_name}.{path}()"


def build_effect_catalog(modules: dict[str, types.ModuleType] | None = None) -> EffectCatalog:
    """Tables for every catalogued function whose module is imported (``sys.modules`` by default)."""
    loaded = sys.modules if modules is None else modules
    catalog = EffectCatalog()
    for entry in CATALOGUE:
        module_name, kind = entry.module, entry.kind
        module = loaded.get(module_name) if entry.traced else None
        if module is None:
            continue
        for path in entry.names:
            value = _resolve(module, path)
            if value is None:
                continue
            spec = EffectSpec(kind, _detail_for(module_name, path, kind))
            code = _code_of(value)
            if code is not None:
                catalog.by_code.setdefault(code, spec)
            elif callable(value):
                try:
                    catalog.by_callable.setdefault(value, spec)
                except TypeError:  # an unhashable callable cannot be a key; skip it
                    continue
    for effectful in EFFECTFUL_TYPES:
        owner_type = getattr(loaded.get(effectful.module), effectful.name, None)
        if isinstance(owner_type, type):
            catalog.by_owner_type.setdefault(owner_type, effectful.kind)
    return catalog


@dataclass(frozen=True, slots=True)
class NumpyRandomSupport:
    """What is needed to spot NumPy random calls, which the profiler cannot see.

    NumPy's random methods are Cython functions: calling them raises no profile event,
    so the monitor finds them in the bytecode (by name) and confirms them by type.
    """

    #: RandomState, Generator and BitGenerator (empty when numpy.random is not imported).
    owner_types: tuple[type, ...] = ()
    #: Method and module-level function names that may be a NumPy random call.
    names: frozenset[str] = frozenset()

    def is_random_owner(self, value: object) -> bool:
        return bool(self.owner_types) and isinstance(value, self.owner_types)

    def is_random_callable(self, value: object) -> bool:
        """A bound NumPy random method, e.g. ``np.random.normal`` (bound to the global RandomState)."""
        return self.is_random_owner(getattr(value, "__self__", None))


_NOT_DRAWS = frozenset({"default_rng", "spawn", "bit_generator"})


def numpy_random_support(modules: dict[str, types.ModuleType] | None = None) -> NumpyRandomSupport:
    """Names and types of NumPy's random API, if ``numpy.random`` is imported."""
    loaded = sys.modules if modules is None else modules
    module = loaded.get("numpy.random")
    if module is None and modules is None and "numpy" in loaded:
        # NumPy 2 imports numpy.random on the first ``np.random`` access: user code reaching it
        # only while being traced would be too late for the watch to know what to look for
        # (seen with JAX 0.4.38, which does not import it itself). About 7 ms, once.
        module = importlib.import_module("numpy.random")
    if module is None:
        return NumpyRandomSupport()
    owner_types = tuple(
        owner
        for owner in (getattr(module, name, None) for name in ("RandomState", "Generator", "BitGenerator"))
        if isinstance(owner, type)
    )
    # Only methods: properties such as ``Generator.bit_generator`` are reads, not draws.
    names = {
        name
        for owner in owner_types
        for name in dir(owner)
        if not name.startswith("_") and callable(getattr(owner, name, None))
    }
    names.update(name for name in getattr(module, "__all__", ()) if not name[:1].isupper())
    return NumpyRandomSupport(owner_types, frozenset(names - _NOT_DRAWS))
