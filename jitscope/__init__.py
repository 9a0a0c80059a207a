"""jitscope: see what ``jax.jit`` really does to your code.

Importing this package never imports jax: the CLI's ``--help`` and the linter's static
checks must stay fast, so everything that needs jax imports it lazily.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
