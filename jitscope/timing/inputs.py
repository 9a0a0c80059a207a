"""Concrete device inputs for an ArgSet, the memory check before allocating them, and blockers.

Inputs are made once, before any timing: random normal floats (seedable), small
non-negative ints (valid as indices into most axes), random bools, typed PRNG keys from
random key data, zeros for ``float0``. They are generated with numpy, so the same seed gives
the same values on every backend, then placed on the default device and waited for.
"""

from __future__ import annotations

import operator
import os
from collections.abc import Callable
from typing import Any

from jitscope.errors import ResourceError
from jitscope.load.abstract import input_bytes, leaf_sharding, map_specs
from jitscope.load.specs import ArgSet, ArraySpec
from jitscope.units import fmt_bytes

#: Refuse inputs that would take more than this fraction of the memory available.
MEMORY_HEADROOM = 0.8
#: Integer inputs are drawn from [0, INT_HIGH).
INT_HIGH = 8


def host_available_bytes() -> int | None:
    """Memory the OS could give us now (MemAvailable on Linux), or None if unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


def check_fits(argset: ArgSet, *, host_available: int | None, device_free: int | None, on_cpu: bool,
               what: str = "") -> None:
    """Raise ResourceError, before anything is allocated, when the inputs cannot fit.

    On a CPU backend the host holds both the numpy staging copy and the device array;
    on an accelerator the host holds the staging copy and the device the array.
    """
    need = input_bytes(argset)
    if need == 0:
        return
    name = f" for {what}" if what else ""
    checks = [("host", host_available, 2 * need if on_cpu else need)]
    if not on_cpu:
        checks.append(("device", device_free, need))
    for where, available, required in checks:
        if available is not None and required > MEMORY_HEADROOM * available:
            raise ResourceError(
                f"inputs{name} need an estimated {fmt_bytes(required)} of {where} memory "
                f"({argset.describe()}), but only {fmt_bytes(available)} is available",
                hint="use smaller --shapes",
            )


def _host_array(spec: Any, rng: Any) -> Any:
    """A NumPy array for an ArraySpec or an abstract array (anything with ``.shape`` and ``.dtype``: a
    ``jax.ShapeDtypeStruct`` of an eval_shape'd state); a typed key's: a JAX key array made from NumPy key data."""
    import jax.numpy as jnp
    import numpy as np

    from jitscope.dtypes import dtype_name, is_key
    from jitscope.jaxcompat.dtypes import jax_dtype, make_keys

    name = dtype_name(spec.dtype)
    if is_key(name):
        return make_keys(name, tuple(spec.shape), rng)
    dtype = jax_dtype(name)
    shape = spec.shape
    if name == "float0":  # the tangent type of integer inputs: it has one value
        return np.zeros(shape, dtype)
    # jnp.issubdtype, not NumPy's: it knows ml_dtypes' kinds (int4 is an integer, float8_e4m3fn a float)
    if jnp.issubdtype(dtype, jnp.complexfloating):
        real = rng.standard_normal(shape, dtype=np.float32)
        return (real + 1j * rng.standard_normal(shape, dtype=np.float32)).astype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if jnp.issubdtype(dtype, jnp.integer):  # int2's largest value is 1: [0, min(INT_HIGH, max + 1))
        return rng.integers(0, min(INT_HIGH, int(jnp.iinfo(dtype).max) + 1), size=shape).astype(dtype)
    # float16/bfloat16/float8/float4 (ml_dtypes) are drawn in float32 and rounded; an unsigned float
    # (float8_e8m0fnu, a scale) makes NaN of negatives, so it gets their magnitudes.
    values = rng.standard_normal(shape, dtype=np.float32)
    return (values if float(jnp.finfo(dtype).min) < 0 else np.abs(values)).astype(dtype)


def make_inputs(argset: ArgSet, seed: int) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Concrete arrays for every ArraySpec of ``argset``, and for every abstract leaf (``jax.ShapeDtypeStruct``)
    of the objects it holds, as for ``--shapes``: on the default device and ready."""
    import jax
    import numpy as np

    rng = np.random.default_rng(seed)

    def concrete(leaf: Any) -> Any:
        # A spec with a sharding (f32[64,128]@(data,None)) is placed across the mesh, as the real step gets it;
        # an abstract leaf (a jax.eval_shape'd TrainState's or module's) where its own sharding says, if any.
        where = leaf_sharding(leaf) if isinstance(leaf, ArraySpec) else getattr(leaf, "sharding", None)
        return jax.device_put(_host_array(leaf, rng), where)

    args, kwargs = map_specs(argset, concrete, abstract_leaves=True)
    jax.block_until_ready((args, kwargs))
    return args, kwargs


def copy_arrays(tree: Any) -> Any:
    """Device copies of every array leaf (for donated arguments), ready before returning."""
    import jax

    copied = jax.tree.map(lambda x: x.copy() if isinstance(x, jax.Array) else x, tree)
    jax.block_until_ready(copied)
    return copied


def tree_nbytes(tree: Any) -> int:
    import jax

    return sum(int(getattr(leaf, "nbytes", 0)) for leaf in jax.tree.leaves(tree))


def count_array_leaves(tree: Any) -> int:
    import jax

    return sum(1 for leaf in jax.tree.leaves(tree) if isinstance(leaf, jax.Array))


def blocker_for(out: Any) -> Callable[[Any], Any]:
    """The cheapest correct way to wait for every output leaf of outputs shaped like ``out``.

    One array: its own ``block_until_ready``. Several: ``jax.block_until_ready`` (one batched
    wait). None at all (``None``, ``()``, Python values): ``jax.effects_barrier`` so side
    effects such as callbacks still finish inside the timing.
    """
    import jax

    if isinstance(out, jax.Array):
        return _block_one
    if count_array_leaves(out):
        return jax.block_until_ready
    barrier = jax.effects_barrier
    return lambda _out: barrier()


#: ``x.block_until_ready()`` without a Python frame of ours around it.
_block_one = operator.methodcaller("block_until_ready")


def block_all(out: Any) -> Any:
    """Wait for every array leaf (and pending effects when there are none)."""
    return blocker_for(out)(out)
