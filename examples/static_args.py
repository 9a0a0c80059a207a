"""Seed 2, "static_argnums and static_argnames": Python control flow on an argument.

The seed's code, as written. Tracing ``conditional_double`` with a traced ``threshold``
fails because the Python ``if`` needs a concrete value. The seed says marking ``threshold``
static makes it work; it does not, because ``x`` is still traced and ``x > threshold`` is
still a tracer: jitscope shows exactly that, names ``x`` as the culprit and suggests
``jnp.where``. ``conditional_double_where`` is the fix, and ``jitted_where`` shows the
seed's real point: each new static threshold costs a compile.

    jitscope trace examples/static_args.py:conditional_double --shapes "f32[], 0.0"   # fails, explained
    jitscope trace examples/static_args.py:jitted_conditional_double_nums             # still fails: x is traced
    jitscope trace examples/static_args.py:jitted_where                               # 4 calls, 2 compiles
"""

import jax
import jax.numpy as jnp


def conditional_double(x, threshold):
    # Python if statement depends on the value of x
    if x > threshold:
        return x * 2
    else:
        return x


# Using static_argnums (threshold is the 1st argument, index 1)
jitted_conditional_double_nums = jax.jit(conditional_double, static_argnums=(1,))

# Using static_argnames
jitted_conditional_double_names = jax.jit(conditional_double, static_argnames=("threshold",))

# threshold is static here
jitted_func = jax.jit(conditional_double, static_argnames=("threshold",))


def conditional_double_where(x, threshold):
    # Traced data picks the branch inside the compiled program; the static threshold is a constant.
    return jnp.where(x > threshold, x * 2, x)


jitted_where = jax.jit(conditional_double_where, static_argnames=("threshold",))

JITSCOPE_EXAMPLES = {
    "conditional_double": {"shapes": "f32[]", "static": {"threshold": 0.0}},
    "jitted_conditional_double_nums": {"shapes": "f32[]", "static": {"threshold": 0.0}},
    "jitted_conditional_double_names": {"shapes": "f32[]", "static": {"threshold": 0.0}},
    # The seed's call sequence: compiles for 0.0, reuses, recompiles for 10.0, reuses.
    "jitted_func": [
        {"shapes": "f32[]", "static": {"threshold": 0.0}},
        {"shapes": "f32[]", "static": {"threshold": 0.0}},
        {"shapes": "f32[]", "static": {"threshold": 10.0}},
        {"shapes": "f32[]", "static": {"threshold": 10.0}},
    ],
    "jitted_where": [
        {"shapes": "f32[]", "static": {"threshold": 0.0}},
        {"shapes": "f32[]", "static": {"threshold": 0.0}},
        {"shapes": "f32[]", "static": {"threshold": 10.0}},
        {"shapes": "f32[]", "static": {"threshold": 10.0}},
    ],
}

if __name__ == "__main__":
    for fn in (jax.jit(conditional_double), jitted_conditional_double_nums, jitted_conditional_double_names):
        try:
            fn(jnp.array(5.0), threshold=0.0)
        except Exception as e:  # TracerBoolConversionError, a ConcretizationTypeError
            print(f"Error: {type(e).__name__}")
    print(jitted_where(jnp.array(5.0), threshold=0.0), jitted_where(jnp.array(-2.0), threshold=0.0))  # 10.0 -2.0
