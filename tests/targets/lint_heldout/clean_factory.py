"""The project's compile helpers used as intended: hashable configuration, fixed lengths."""

from proj.compilation import compiled, jit_with_config


def _scale(x, cfg):
    return x * cfg[1]


scale = jit_with_config(_scale)


@compiled
def unroll(state, action, n_steps):
    for _ in range(n_steps):
        state = state + action
    return state


def run(xs, state, action):
    cfg = ("scale", 2.0)
    outs = [scale(x, cfg) for x in xs]
    for _ in range(10):
        state = unroll(state, action, n_steps=16)
    return outs, state
