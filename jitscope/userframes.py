"""Which code is the user's, and tracebacks trimmed to it.

Used by target loading (import errors), tracing (trace-time failures, and the effect
monitor, which reports an effect only when its immediate caller is user code) and bench
(run-time failures): the user sees their own frames, not jitscope's, importlib's or JAX's.
"User code" is any real file outside the standard library, installed packages, JAX /
NumPy and jitscope itself.
"""

from __future__ import annotations

import functools
import os
import re
import site
import sys
import sysconfig
import traceback
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
    # "scripts": console scripts such as jitscope's own entry point (bin/jitscope), never the user's lines
    for key in ("stdlib", "platstdlib", "purelib", "platlib", "scripts"):
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
    roots.add(str(Path(__file__).resolve().parent))
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
    return not _is_under_library(real_path(filename), prefixes)


def real_path(filename: str) -> str:
    """``os.path.realpath``, or ``filename`` itself where it cannot be resolved: a relative name once the working
    directory was removed (a program that chdirs into a folder it then deletes)."""
    try:
        return os.path.realpath(filename)
    except OSError:
        return filename


def user_file_predicate(user_paths: Iterable[str | os.PathLike[str]]) -> IsUserFile:
    """A predicate that accepts only files under ``user_paths`` (and never library files).

    Use it to narrow "user code" to one project, e.g. ``user_file_predicate([project_root])``.
    """
    roots = tuple(os.path.join(os.path.realpath(os.fspath(path)), "") for path in user_paths)

    def is_user_file(filename: str) -> bool:
        if not default_is_user_file(filename):
            return False
        return real_path(filename).startswith(roots)

    return is_user_file


@functools.cache
def is_user_file(filename: str) -> bool:
    """Cached :func:`default_is_user_file`, for tracebacks."""
    return default_is_user_file(filename)


def user_frames(tb: traceback.StackSummary) -> list[traceback.FrameSummary]:
    """The frames of ``tb`` that are in user code."""
    return [frame for frame in tb if is_user_file(frame.filename)]


def project_file_predicate(roots: Iterable[str | os.PathLike[str]]) -> IsUserFile:
    """The user's code as ``jitscope trace`` sees it: real files under ``roots`` (their project's folders).

    Unlike :func:`user_file_predicate`, a project installed into site-packages still counts (its roots
    say where it is); JAX's and jitscope's own files never do. Cached per file name.
    """
    resolved = tuple(os.path.join(os.path.realpath(os.fspath(root)), "") for root in roots)
    own = _own_package_dirs()

    @functools.cache
    def is_project_file(filename: str) -> bool:
        if not filename or filename.startswith("<"):
            return False
        real = real_path(filename)
        return real.startswith(resolved) and not real.startswith(own) and not filename.startswith(own)

    return is_project_file


def _own_package_dirs() -> tuple[str, ...]:
    """The folders of jitscope and of the loaded ``_LIBRARY_PACKAGES`` (JAX, NumPy...): never the user's code."""
    dirs = {str(Path(__file__).resolve().parent)}
    for name in _LIBRARY_PACKAGES:
        module_file = getattr(sys.modules.get(name), "__file__", None)
        if module_file:
            dirs.add(os.path.realpath(os.path.dirname(module_file)))
    return tuple(os.path.join(d, "") for d in dirs)


@functools.cache
def _stdlib_prefixes() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    roots = {paths[key] for key in ("stdlib", "platstdlib") if paths.get(key)}
    roots |= {os.path.realpath(root) for root in roots}
    return tuple(os.path.join(root, "") for root in roots)


def is_stdlib_file(filename: str) -> bool:
    """True for the standard library's files (not its site-packages) and pseudo-files such as ``<string>``."""
    if not filename or filename.startswith("<"):
        return True
    return filename.startswith(_stdlib_prefixes()) and not _is_under_library(filename, ())


def library_path(filename: str) -> str:
    """How a library file reads in an annotation: below its site-packages (``flax/nnx/nn/attention.py``),
    else relative to the current directory when below it, else as given."""
    parts = Path(filename).parts
    for i in range(len(parts) - 1, -1, -1):
        if parts[i] in _INSTALLED_DIR_NAMES:
            return "/".join(parts[i + 1 :])
    for prefix in _stdlib_prefixes():
        if filename.startswith(prefix):
            return filename[len(prefix) :]
    return display_path(filename)


def library_call_name(file: str, function: str) -> tuple[str, str]:
    """(``flax``, ``MultiHeadAttention``): a library function's top package, and its name (``<locals>.`` and
    a module's ``.__call__`` dropped), as a folded jaxpr line and the per-line summary name a library call."""
    package = library_path(file).split("/", 1)[0].removesuffix(".py")
    return package, function.replace("<locals>.", "").removesuffix(".__call__")


def display_path(filename: str) -> str:
    """``filename`` relative to the current directory when it is below it, as users typed it (relative to where
    jitscope started when the program removed the current directory)."""
    try:
        cwd = os.getcwd()
    except FileNotFoundError:  # the working directory was removed: where jitscope started
        from jitscope.outputs import START_DIR

        cwd = START_DIR
    return _relative_to(filename, cwd)


@functools.lru_cache(maxsize=4096)
def _relative_to(filename: str, cwd: str) -> str:
    # Cached: ``jitscope run`` asks for every compile's call site, and relpath normalises both paths each time.
    try:
        rel = os.path.relpath(filename, cwd)
    except (ValueError, OSError):  # another drive on Windows; a relative name with no directory to resolve it
        return filename
    return filename if rel.startswith("..") else rel


def exception_message(exc: BaseException) -> str:
    """``str(exc)`` without the boilerplate JAX appends about filtered frames."""
    text = str(exc).split("\n--------------------")[0]
    return "\n".join(line for line in text.splitlines() if not line.startswith("For simplicity, JAX"))


def format_user_traceback(exc: BaseException, *, limit_frames: int = 12) -> str:
    """A traceback of ``exc`` trimmed to the user's frames, ending with the exception line.

    Chained causes are dropped: the user wants the line in their code that failed,
    not JAX's internal re-raises.
    """
    frames = user_frames(traceback.extract_tb(exc.__traceback__))[-limit_frames:]
    lines = ["Traceback (user code only):"] if frames else []
    lines += [line.rstrip("\n") for line in traceback.format_list(frames)]
    name = type(exc).__qualname__
    module = type(exc).__module__
    if module not in ("builtins", "__main__"):
        name = f"{module}.{name}"
    lines.append(f"{name}: {exception_message(exc)}".rstrip(": "))
    return "\n".join(lines)


def count_user_frames(exc: BaseException) -> int:
    return len(user_frames(traceback.extract_tb(exc.__traceback__)))


def last_user_frame(exc: BaseException) -> traceback.FrameSummary | None:
    """The innermost frame of ``exc``'s traceback that is in user code."""
    frames = user_frames(traceback.extract_tb(exc.__traceback__))
    return frames[-1] if frames else None


def read_source_lines(path: str) -> list[str]:
    """The lines of a source file, undecodable bytes replaced; empty when it cannot be read.

    For code frames and suppression comments: a file that vanished or is unreadable just
    has no lines to show, it is not an error.
    """
    try:
        with open(path, "rb") as fh:
            text = fh.read().decode("utf-8", errors="replace")
    except OSError:
        return []
    # Lines as Python numbers them: only \n, \r\n and \r end a line (str.splitlines also splits on a form
    # feed, \v, \x1c-\x1e, \x85 and \u2028, which would shift every later line number in a code frame).
    return re.split(r"\r\n|\r|\n", text.removesuffix("\r\n").removesuffix("\n").removesuffix("\r")) if text else []
