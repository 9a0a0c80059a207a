"""Each argument of a traced call as a whole: what it is, how many leaves were traced, and their size.

The "what the function saw" table lists every leaf (``model.blocks[0].attn.key.kernel.value``); a
model has hundreds. ``summarize_arguments`` gives one row per argument instead (``model: GPT(110,529
params, 432 KiB), 38 traced leaves``), which the view shows for arguments with many leaves.
"""

from __future__ import annotations

from typing import Any

from jitscope.load.objects import leaf_bytes, leaf_size
from jitscope.load.specs import LABEL_LIMIT, ArgSet, format_value
from jitscope.model.trace import ArgumentSummary


def summarize_arguments(names: list[str], args: tuple[Any, ...], kwargs: dict[str, Any],
                        argset: ArgSet) -> tuple[ArgumentSummary, ...]:
    """One summary per argument the body received (``args``/``kwargs`` hold its tracers); the label text
    comes from the call as given (``argset``), so it matches the call line."""
    import jax

    from jitscope.jaxcompat.features import tracer_type

    tracer = tracer_type()
    given = list(argset.args) + [argset.kwargs.get(k) for k in kwargs]
    received = list(zip(names, args, strict=False)) + list(kwargs.items())
    out = []
    for (name, value), original in zip(received, given, strict=False):
        leaves = jax.tree_util.tree_leaves(value, is_leaf=lambda x: x is None)
        traced = [leaf for leaf in leaves if isinstance(leaf, tracer) and hasattr(getattr(leaf, "aval", None), "shape")]
        out.append(ArgumentSummary(
            name=name,
            type_name=type(original).__name__,
            text=format_value(original, limit=LABEL_LIMIT),
            traced=len(traced),
            static=len(leaves) - len(traced),
            elements=sum(leaf_size(leaf.aval) for leaf in traced),
            nbytes=sum(leaf_bytes(leaf.aval) for leaf in traced),
        ))
    return tuple(out)


