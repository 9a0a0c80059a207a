"""A deliberately impure training step: every side effect here runs once, while tracing.

    jitscope trace examples/impure.py:noisy_step
    jitscope lint examples/impure.py
"""

import logging
import time

import jax
import jax.numpy as jnp
import numpy as np

logger = logging.getLogger(__name__)

STEP_COUNT = 0
HISTORY = []
SCALE = 2.0  # read at trace time and baked into the compiled program


@jax.jit
def noisy_step(x):
    global STEP_COUNT
    print("tracing noisy_step with", x)  # runs once per trace, not per call
    logger.warning("step %s", STEP_COUNT)
    STEP_COUNT += 1  # counts traces, not calls
    started = time.time()  # a trace-time constant
    noise = np.random.normal()  # one host random number, frozen into the program
    HISTORY.append(x)  # leaks a tracer into a global list
    return x * SCALE + noise + started * 0


JITSCOPE_EXAMPLES = {"noisy_step": "f32[4]"}
