"""``jitscope lint``: a JAX-aware linter.

Static analysis never imports or runs the code it checks, and never imports jax.
Entry points: :func:`lint_paths` (files and directories, with configuration and
``extra_findings`` from the dynamic lint), :func:`lint_source` (one module as text) and
:func:`make_finding` (a finding for a rule code, for checkers outside the static engine).
"""

from __future__ import annotations

from jitscope.linter.engine import lint_paths, lint_source, make_finding

__all__ = ["lint_paths", "lint_source", "make_finding"]
