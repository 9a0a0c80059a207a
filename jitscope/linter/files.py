"""Which files a lint run checks: walking directories, excludes, module names.

Only regular files (and links to them) are linted: a FIFO named ``x.py`` would block the
read forever and a link to ``/dev/zero`` never ends, so those, devices, sockets and broken
links are skipped, each with a note saying why (:class:`SkippedFile`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

from jitscope.errors import UsageError
from jitscope.linter.analysis.qualified_names import words
from jitscope.linter.analysis.source import NotRegular, source_size
from jitscope.model.lint import SkippedFile

#: Directory names never entered while walking (a path given explicitly is always linted).
DEFAULT_EXCLUDED_DIRS = words(
    ".git .hg .svn .venv venv .tox .nox __pycache__ .mypy_cache .ruff_cache .pytest_cache "
    "node_modules build dist .eggs __pypackages__ .ipynb_checkpoints"
)


@dataclass(frozen=True, slots=True)
class SourceFileRef:
    """One file to lint: where it is, how findings name it, and its dotted module name."""

    path: str
    display: str
    module: str
    is_package: bool
    size: int


@dataclass(frozen=True, slots=True)
class FileSet:
    """The files to lint, and the paths found but not read (not regular files)."""

    files: list[SourceFileRef]
    skipped: list[SkippedFile]


def relative_to(path: Path, root: Path) -> str | None:
    """``path`` relative to ``root`` in posix form, or None when it is outside."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return None


def matches(rel: str, pattern: str) -> bool:
    """Exclude / per-file-ignore matching: a glob on the relative path, a directory, or a name part."""
    pat = pattern.strip().rstrip("/")
    pat = pat.removeprefix("./")
    if not pat:
        return False
    if "/" not in pat:
        return any(fnmatchcase(part, pat) for part in rel.split("/"))
    return fnmatchcase(rel, pat) or rel.startswith(pat + "/") or fnmatchcase(rel, pat + "/*")


def excluded(path: Path, root: Path, patterns: Sequence[str]) -> bool:
    if not patterns:
        return False
    rel = relative_to(path, root)
    if rel is None:
        rel = path.as_posix().lstrip("/")
    return any(matches(rel, p) for p in patterns)


def display_path(path: Path, cwd: Path) -> str:
    rel = relative_to(path, cwd)
    return rel if rel is not None else str(path)


class _ModuleNamer:
    """Dotted module names from the ``__init__.py`` files above a path (cached per directory)."""

    def __init__(self) -> None:
        self._package: dict[Path, str | None] = {}

    def package_of(self, directory: Path) -> str | None:
        if directory in self._package:
            return self._package[directory]
        name: str | None = None
        if (directory / "__init__.py").is_file():
            parent = self.package_of(directory.parent) if directory.parent != directory else None
            name = f"{parent}.{directory.name}" if parent else directory.name
        self._package[directory] = name
        return name

    def module_of(self, path: Path) -> tuple[str, bool]:
        package = self.package_of(path.parent)
        if path.name == "__init__.py":
            return package or path.parent.name, True
        stem = path.name.rsplit(".", 1)[0]
        return (f"{package}.{stem}" if package else stem), False


def collect_files(paths: Iterable[str | Path], root: Path, exclude: Sequence[str] = ()) -> FileSet:
    """The Python files under ``paths``, minus excluded ones, sorted and without duplicates.

    Anything that is not a regular file (or a link to one) is skipped with a note, never opened.
    """
    cwd = Path.cwd().resolve()
    namer = _ModuleNamer()
    seen: set[Path] = set()
    out: list[SourceFileRef] = []
    skipped: list[SkippedFile] = []

    def add(file: Path) -> None:
        if file in seen or excluded(file, root, exclude):
            return
        seen.add(file)
        size = source_size(str(file))
        if isinstance(size, NotRegular):
            skipped.append(SkippedFile(display_path(file, cwd), size.reason))
            return
        module, is_package = namer.module_of(file)
        out.append(SourceFileRef(str(file), display_path(file, cwd), module, is_package, size))

    for raw in paths:
        given = Path(raw)
        if not given.exists():
            raise UsageError(f"path not found: {raw}")
        start = given.resolve()
        if start.is_file():
            add(start)
            continue
        if not start.is_dir():  # a FIFO, a device, a link to one: skipped under the name it was given
            add(given.parent.resolve() / given.name)
            continue
        if excluded(start, root, exclude) and start != root:
            continue
        for dirpath, dirnames, filenames in os.walk(start):
            here = Path(dirpath)
            dirnames[:] = sorted(
                d
                for d in dirnames
                if d not in DEFAULT_EXCLUDED_DIRS and not excluded(here / d, root, exclude)
            )
            for name in filenames:
                if name.endswith(".py"):
                    add(here / name)
    out.sort(key=lambda ref: ref.display)
    skipped.sort(key=lambda s: s.file)
    return FileSet(out, skipped)
