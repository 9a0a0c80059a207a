"""Typed PRNG keys, float0 and narrow dtypes from live values and ``JITSCOPE_EXAMPLES`` to abstract values.

Before issue 29 a typed key (``jax.random.key(0)``, dtype ``key<fry>``) made every deep command exit 3 with
"Cannot interpret 'key<fry>' as a data type": its spec was made with ``np.dtype``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import jax
import jax.numpy as jnp

from jitscope.load.abstract import to_abstract
from jitscope.load.examples import examples_for, to_spec
from jitscope.load.specs import ArraySpec, build_argset

TARGETS = Path(__file__).resolve().parents[1] / "targets" / "keys"


def _keys_step():
    sys.path.insert(0, str(TARGETS))
    try:
        import keys_step
    finally:
        sys.path.remove(str(TARGETS))
    return keys_step


def test_live_keys_and_extended_dtypes_become_specs_of_their_dtype() -> None:
    module = _keys_step()
    specs = to_spec(module.mixed_args())
    assert [s.dtype for s in specs] == ["key<rbg>", "float0", "bfloat16", "float8_e4m3fn", "int4"]
    assert specs[0] == ArraySpec((3,), "key<rbg>")
    assert to_spec({"k": jax.random.key(0, impl="unsafe_rbg")}) == {"k": ArraySpec((), "key<urbg>")}
    abstract = to_spec(jax.ShapeDtypeStruct((2,), jax.random.key(0).dtype))
    assert abstract == ArraySpec((2,), "key<fry>")


def test_examples_with_keys_trace_as_the_same_abstract_values() -> None:
    module = _keys_step()
    (argset,) = examples_for(module, "mixed")
    args, _ = to_abstract(argset)
    live = module.mixed_args()
    assert [(a.shape, a.dtype) for a in args] == [(v.shape, v.dtype) for v in live]
    (default,) = to_abstract(build_argset("key[]"))[0]
    assert default.dtype == jax.random.key(0).dtype
    out = jax.eval_shape(module.step, *to_abstract(examples_for(module, "step")[0])[0])
    assert out.shape == (4, 3) and out.dtype == jnp.float32


def test_an_example_may_be_the_tuple_of_arguments_itself() -> None:
    """``JITSCOPE_EXAMPLES = {"f": (jax.random.key(0), jnp.ones((128, 128)))}``: the natural way to write
    one call is the arguments themselves; before, it was refused ("must be a spec string, a dict or a list")."""
    from jitscope.load.examples import parse_example_entry

    (argset,) = parse_example_entry("f", (jax.random.key(0), jnp.ones((128, 128))))
    assert argset.args == (ArraySpec((), "key<fry>"), ArraySpec((128, 128), "float32"))
    (first, second) = parse_example_entry("f", [(jnp.ones(3),), {"args": (jnp.ones(4),)}])
    assert first.args == (ArraySpec((3,), "float32"),) and second.args == (ArraySpec((4,), "float32"),)
