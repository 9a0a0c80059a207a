"""``jitscope memory --try-remat``: trace with every function given to ``jax.grad`` put under ``jax.checkpoint``.

For the length of the block, ``jax.grad``, ``jax.value_and_grad`` and ``jax.vjp`` (looked up on the
``jax`` module when the user's code runs) differentiate ``jax.checkpoint(fun, policy=...)`` instead of
``fun``: the forward pass is recomputed in the backward pass except what the policy saves. That is
what wrapping the differentiated function in ``jax.checkpoint`` would do, measured by compiling it.
Code that bound ``grad`` before (``from jax import grad``) or differentiates another way (a library's
own transform) is not reached: the block says how many calls it rewrote. The names are put back when
the block ends, even when it raises.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import Any

_PATCHED = ("grad", "value_and_grad", "vjp")


@contextlib.contextmanager
def checkpointed_gradients(policy: str) -> Iterator[list[str]]:
    """Patch the names in ``_PATCHED``; yields the list of those called (one entry per call)."""
    import jax

    chosen = getattr(jax.checkpoint_policies, policy)
    seen: list[str] = []
    originals = {name: getattr(jax, name) for name in _PATCHED}

    def wrap(name: str, original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        def patched(fun: Any, *args: Any, **kwargs: Any) -> Any:
            seen.append(name)
            return original(jax.checkpoint(fun, policy=chosen), *args, **kwargs)

        return patched

    try:
        for name, original in originals.items():
            setattr(jax, name, wrap(name, original))
        yield seen
    finally:
        for name, original in originals.items():
            setattr(jax, name, original)
