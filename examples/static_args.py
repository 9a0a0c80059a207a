"""Seed 2, "static_argnums and static_argnames": Python control flow on an argument.

Tracing ``conditional_double`` with a traced ``threshold`` fails (the Python ``if`` needs a
concrete value); marking ``threshold`` static fixes it, at the price of one compile per
distinct threshold.

    jitscope trace examples/static_args.py:conditional_double --shapes "f32[], 0.0"   # fails, explained
    jitscope trace examples/static_args.py:conditional_double --shapes "f32[]" --static threshold=0.0
    jitscope trace examples/static_args.py:jitted_conditional_double_nums
    jitscope trace examples/static_args.py:jitted_func            # 4 calls, 2 compiles
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
}

if __name__ == "__main__":
    result1 = jitted_conditional_double_nums(jnp.array(5.0), threshold=0.0)
    print(f"Result (static_argnums): {result1}")  # 10.0
    result2 = jitted_conditional_double_names(jnp.array(-2.0), threshold=0.0)
    print(f"Result (static_argnames): {result2}")  # -2.0
    try:
        jax.jit(conditional_double)(jnp.array(5.0), threshold=0.0)
    except Exception as e:  # ConcretizationTypeError
        print(f"Error: {type(e).__name__}")
