"""Which files are the user's code for ``jitscope trace``: the target's project.

An equation is annotated with the nearest frame in these files, and the per-line summary lists
their lines; everything else (site-packages, the standard library, other folders) is library
code, counted toward the user's line that called it. The project is, in order:

1. ``[tool.jitscope] source = ["src", ...]`` in the nearest pyproject.toml above the target's module;
2. the target's top-level package folder (``mypkg/`` for ``mypkg/models/gpt.py`` when both folders
   have an ``__init__.py``), or else the folder of the target's module (``examples/`` for
   ``examples/mlp.py``).

A target with no file (built in a notebook, ``exec``) falls back to "any file outside installed
packages, the standard library, JAX and jitscope".
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from jitscope.userframes import IsUserFile, default_is_user_file, display_path, project_file_predicate


@dataclass(frozen=True, slots=True)
class Project:
    """The folders of the user's code, and the predicate that tells a file in them."""

    roots: tuple[str, ...]
    is_user_file: IsUserFile

    @property
    def shown_roots(self) -> tuple[str, ...]:
        """The roots as a person reads them (relative to the current directory when below it)."""
        return tuple(display_path(root) for root in self.roots)


def source_roots(module_file: str | None) -> tuple[str, ...]:
    """The configured ``source`` folders, else the module's top-level package folder or its own folder."""
    if not module_file or module_file.startswith("<"):
        return ()
    from jitscope.config import load_config

    path = Path(module_file).resolve()
    configured = load_config(path.parent).source
    if configured:
        return tuple(str(folder) for folder in configured)
    folder = path.parent
    while (folder / "__init__.py").is_file() and (folder.parent / "__init__.py").is_file():
        folder = folder.parent
    return (str(folder),)


def project_of(module: ModuleType | None) -> Project:
    """The project of a target's module (see the module docstring)."""
    roots = source_roots(getattr(module, "__file__", None))
    if not roots:
        return Project((), default_is_user_file)
    return Project(roots, project_file_predicate(roots))
