"""``jitscope lint``: a JAX-aware linter.

Static analysis never imports or runs the code it checks, and never imports jax.
Entry points: :func:`lint_paths` (files and directories, with configuration and
``extra_findings`` from the dynamic lint) and :func:`lint_source` (one module as text).
"""

from __future__ import annotations

from jitscope.lint.engine import lint_paths, lint_source

__all__ = ["lint_paths", "lint_source"]
