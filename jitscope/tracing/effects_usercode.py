"""Which source files count as the user's code.

The effect monitor reports an effect only when its immediate caller is user code, so
JAX's own logging, clock reads and file reads while tracing are never reported, while
helpers in the user's other modules are. "User code" is any real file outside the
standard library, installed packages, JAX / NumPy and jitscope itself.
"""

from __future__ import annotations

import functools
import os
import site
import sys
import sysconfig
from collections.abc import Callable, Iterable
from pathlib import Path

#: Decides whether a code object's ``co_filename`` is user code.
IsUserFile = Callable[[str], bool]

#: Packages whose files are never user code even when installed in editable mode
#: (e.g. a JAX checkout on sys.path): their internal effects are not the user's.
_LIBRARY_PACKAGES: tuple[str, ...] = ("jax", "jaxlib", "numpy", "ml_dtypes", "opt_einsum", "jitscope")

_INSTALLED_DIR_NAMES: frozenset[str] = frozenset({"site-packages", "dist-packages"})


@functools.cache
def library_prefixes() -> tuple[str, ...]:
    """Directories whose files are not user code (computed once: it depends only on the interpreter)."""
    roots: set[str] = set()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            roots.add(path)
    roots.update(getattr(site, "getsitepackages", list)())
    user_site = getattr(site, "getusersitepackages", lambda: None)()
    if isinstance(user_site, str):
        roots.add(user_site)
    for name in _LIBRARY_PACKAGES:
        module = sys.modules.get(name)
        module_file = getattr(module, "__file__", None)
        if module_file:
            roots.add(os.path.dirname(module_file))
    # The jitscope package itself, found without importing anything else.
    roots.add(str(Path(__file__).resolve().parent.parent))
    resolved = {os.path.realpath(root) for root in roots} | roots
    return tuple(sorted(os.path.join(root, "") for root in resolved if root))


def _is_under_library(filename: str, prefixes: tuple[str, ...]) -> bool:
    if filename.startswith(prefixes):
        return True
    parts = Path(filename).parts
    return any(part in _INSTALLED_DIR_NAMES for part in parts)


def default_is_user_file(filename: str) -> bool:
    """True for a real source file outside the stdlib, installed packages, JAX/NumPy and jitscope.

    Pseudo file names such as ``<string>`` (dataclass ``__init__``, ``exec``) and
    ``<frozen ...>`` are not user code: there is no line to show.
    """
    if not filename or filename.startswith("<"):
        return False
    prefixes = library_prefixes()
    if _is_under_library(filename, prefixes):
        return False
    # Symlinked checkouts: a library file reached through a link is still a library file.
    return not _is_under_library(os.path.realpath(filename), prefixes)


def user_file_predicate(user_paths: Iterable[str | os.PathLike[str]]) -> IsUserFile:
    """A predicate that accepts only files under ``user_paths`` (and never library files).

    Use it to narrow "user code" to one project, e.g. ``user_file_predicate([project_root])``.
    """
    roots = tuple(os.path.join(os.path.realpath(os.fspath(path)), "") for path in user_paths)

    def is_user_file(filename: str) -> bool:
        if not default_is_user_file(filename):
            return False
        return os.path.realpath(filename).startswith(roots)

    return is_user_file
