import logging
import random
import time
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import optax

logger = logging.getLogger(__name__)
STEP = 0
CONFIG = {"lr": 1e-3}
metrics_log = []


def set_lr(lr):
    CONFIG["lr"] = lr


def loss_fn(params, batch):
    pred = batch["x"] @ params["w"]
    err = pred - batch["y"]
    if jnp.isnan(err).any():          # JS201
        logger.warning("nan!")        # JS101
    return jnp.mean(err ** 2)


@jax.jit
def train_step(params, opt_state, batch):
    global STEP
    STEP += 1                          # JS103
    loss, grads = jax.value_and_grad(loss_fn)(params, batch)
    lr = CONFIG["lr"]                  # JS105
    noise = np.random.normal()         # JS106
    updates = jax.tree.map(lambda g: -lr * g + noise, grads)
    metrics_log.append(loss)           # JS107
    print(f"loss {loss}")              # JS101
    return optax.apply_updates(params, updates), opt_state, float(loss)   # JS202


@partial(jax.jit, static_argnames=("n_layers", "dropout"))
def forward(x, n_layers, dropout: float = 0.1):   # JS302 (float static)
    for _ in range(n_layers):
        x = jnp.tanh(x)
    x[0] = 0.0                         # JS204
    return np.asarray(x)               # JS203


def evaluate(params, xs):
    out = []
    for i in range(1, len(xs)):
        out.append(forward(xs[:i], n_layers=i))   # JS304, JS302 (loop var static)
        step = jax.jit(lambda p: p * 2)            # JS303
        out.append(step(params))
    return out


layers = forward(jnp.ones(3), n_layers=[1, 2])    # JS301
bad = jax.jit(loss_fn, static_argnums=(5,))        # JS305
