"""Run the user's program as ``python path.py ARGS`` or ``python -m pkg.mod ARGS`` would.

The program runs in this process as ``__main__`` (``runpy``), with ``sys.argv`` and
``sys.path[0]`` set the way the interpreter sets them, stdin and stdout untouched. Its
exit is turned into an exit code the way the interpreter does it: ``sys.exit(n)``
gives n, an uncaught exception prints its traceback through ``sys.excepthook`` (so a
hook the program installed is honoured) and gives 1, Ctrl-C prints the
KeyboardInterrupt traceback and gives 130, SIGTERM (unless the program handles it) ends the
program with 143, as a shell reports a process that signal killed, and the report is still
written. The frames of runpy and jitscope that sit below the program are cut from the
traceback, so it reads as Python's own, and its module frame starts a fresh frame-stack chunk
as under ``python`` (``frame_stack.py``: otherwise jitscope's frames below it could make its
calls map and unmap chunks where python's do not).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import runpy
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jitscope.errors import UsageError

EXIT_INTERRUPTED = 130
_JITSCOPE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _hidden(filename: str) -> bool:
    """runpy's and jitscope's frames below the program: Python's own traceback would not have them."""
    return filename in ("<frozen runpy>", runpy.__file__) or filename.startswith(_JITSCOPE_DIR)


class ProgramStopped(BaseException):
    """Raised inside the program by jitscope to end it early (``--from-run`` once it has its call)."""

    description = "stopped by jitscope at the captured call"


@dataclass(frozen=True, slots=True)
class Program:
    """What to run: a script path or a module name, and its arguments."""

    path: str | None
    module: str | None
    args: tuple[str, ...] = ()

    @property
    def display(self) -> str:
        return f"-m {self.module}" if self.module else str(self.path)


@dataclass(frozen=True, slots=True)
class Outcome:
    exit_code: int
    description: str  # "exited 0", "raised ValueError", "interrupted (Ctrl-C)"


def check_program(program: Program) -> None:
    """Refuse a missing script or module before anything runs (exit 2, one line)."""
    if program.module is not None:
        saved_path = sys.path[:]
        _set_path0(os.getcwd())  # where `python -m` looks first, as run_program does
        try:
            found = _module_exists(program.module)
        finally:
            sys.path[:] = saved_path
        if not found:
            raise UsageError(f"no module named {program.module!r}", hint="check the name and that it is importable")
    else:
        _check_script(program.path)


def _module_exists(name: str) -> bool:
    """Whether ``python -m name`` would find the module, asked of the import system's finders without running
    any package's ``__init__`` (``importlib.util.find_spec`` imports the parents: one that raises is the
    program's failure, shown when it runs, as python shows it). A finder that fails leaves it to the run."""
    path: list[str] | None = None
    parts = name.split(".")
    for at in range(len(parts)):
        full = ".".join(parts[: at + 1])
        try:
            module = sys.modules.get(full)
            spec = module.__spec__ if module is not None else next(
                (found for finder in sys.meta_path if hasattr(finder, "find_spec")
                 for found in [finder.find_spec(full, path)] if found is not None), None)
        except Exception:  # noqa: BLE001 - a finder's own failure: running the program will say it
            return True
        if spec is None:
            return False
        path = spec.submodule_search_locations
        if path is None and at < len(parts) - 1:
            return False  # ``a.b`` where ``a`` is a module, not a package
    return True


def _check_script(path: str | None) -> None:
    """A script python could run: a regular file, or a folder or zip with a ``__main__.py`` (runpy says so if
    not); never a FIFO or a device, which python would wait on or read forever."""
    import stat

    try:
        mode = os.stat(path).st_mode if path is not None else None
    except OSError:
        mode = None
    if mode is None:
        raise UsageError(f"no such file: {path}", hint="give the path of a Python script, or -m MODULE")
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        from jitscope.inputs import file_kind

        raise UsageError(f"cannot run {path}: it is {file_kind(mode)}, not a Python script",
                         hint="give the path of a Python script, or -m MODULE")


def run_program(program: Program) -> Outcome:
    """Run ``program`` to completion; never raises for what the program does."""
    # The whole sys.path comes back afterwards: a program that empties it must not stop jitscope from
    # importing what writes its report (python would not care: it exits).
    from jitscope.run.frame_stack import programs_start_at_a_chunk
    from jitscope.run.termination import EXIT_TERMINATED, Terminated, sigterm_ends_the_program

    saved_argv, saved_path = sys.argv[:], sys.path[:]
    try:
        with sigterm_ends_the_program(), programs_start_at_a_chunk():
            _run(program)
    except SystemExit as exc:
        return _exit_outcome(exc.code)
    except ProgramStopped as exc:
        return Outcome(0, exc.description)
    except KeyboardInterrupt as exc:
        _print_traceback(exc)
        return Outcome(EXIT_INTERRUPTED, "interrupted (Ctrl-C)")
    except Terminated:
        return Outcome(EXIT_TERMINATED, "terminated by SIGTERM")
    except BaseException as exc:  # noqa: BLE001 - the program's own failure, shown as Python shows it
        _print_traceback(exc)
        return Outcome(1, f"raised {type(exc).__name__}")
    finally:
        sys.argv = saved_argv
        sys.path[:] = saved_path
    return Outcome(0, "exited 0")


def _run(program: Program) -> None:
    """``python -m MODULE ARGS`` or ``python PATH ARGS``, in this process."""
    if program.module is not None:
        sys.argv = [program.module, *program.args]  # run_module replaces argv[0] with the module's file
        _set_path0(os.getcwd())
        runpy.run_module(program.module, run_name="__main__", alter_sys=True)
    else:
        assert program.path is not None
        sys.argv = [program.path, *program.args]
        _set_path0(os.path.dirname(os.path.abspath(program.path)))
        runpy.run_path(program.path, run_name="__main__")


def _set_path0(directory: str) -> None:
    if sys.path:
        sys.path[0] = directory
    else:
        sys.path.insert(0, directory)


def _exit_outcome(code: object) -> Outcome:
    if code is None:
        return Outcome(0, "exited 0")
    if isinstance(code, int):
        return Outcome(code, f"exited {code}")
    print(code, file=sys.stderr)  # sys.exit("message"): Python prints it and exits 1
    return Outcome(1, "exited 1")


def _print_traceback(exc: BaseException) -> None:
    tb = exc.__traceback__
    while tb is not None and _hidden(tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next
    exc = exc.with_traceback(tb)
    sys.stderr.flush()
    try:
        sys.excepthook(type(exc), exc, tb)
    except Exception:  # noqa: BLE001 - a broken hook: Python falls back to its own printer too
        sys.__excepthook__(type(exc), exc, tb)
    sys.stderr.flush()


def when_imported(name: str, callback: Callable[[], None]) -> Callable[[], None]:
    """Call ``callback`` right after top-level module ``name`` is first imported (now, if it already is).

    jitscope must not import jax itself before the program runs: a script that sets
    ``JAX_PLATFORMS`` or ``JAX_ENABLE_X64`` in ``os.environ`` before ``import jax`` would
    otherwise see its settings ignored.
    Returns a function that stops waiting (for a program that never imported it).
    """
    if name in sys.modules:
        callback()
        return lambda: None
    watcher = _ImportWatcher(name, callback)
    sys.meta_path.insert(0, watcher)
    return lambda: sys.meta_path.remove(watcher) if watcher in sys.meta_path else None


class _ImportWatcher:  # a sys.meta_path finder (importlib.abc is not imported: ~6 ms)
    def __init__(self, name: str, callback: Callable[[], None]) -> None:
        self.name = name
        self.callback = callback
        self.busy = False

    def find_spec(self, fullname: str, path: Any, target: types.ModuleType | None = None
                  ) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.name or self.busy:
            return None
        self.busy = True
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            self.busy = False
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _NotifyingLoader(spec.loader, self)  # type: ignore[assignment]
        return spec

    def loaded(self) -> None:
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        self.callback()


class _NotifyingLoader:  # an importlib Loader
    def __init__(self, loader: Any, watcher: _ImportWatcher) -> None:
        self._loader = loader
        self._watcher = watcher

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        module: types.ModuleType | None = self._loader.create_module(spec)
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        self._loader.exec_module(module)
        if module.__spec__ is not None:
            module.__spec__.loader = self._loader  # from now on the module looks untouched
        module.__loader__ = self._loader
        self._watcher.loaded()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)
