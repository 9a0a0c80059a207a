"""optax: a warmup-cosine schedule inside a jitted step; the learning rate logged as a Python float (a recompile
hazard when fed back), and a step counter passed as a Python int on the last call."""
import jax
import jax.numpy as jnp
import optax

schedule = optax.warmup_cosine_decay_schedule(0.0, 1e-2, warmup_steps=2, decay_steps=10)
optim = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(schedule))
params = {"w": jnp.ones((4, 4)), "b": jnp.zeros((4,))}
opt_state = optim.init(params)


@jax.jit
def step(params, opt_state, x):
    loss, grads = jax.value_and_grad(lambda p: jnp.sum((x @ p["w"] + p["b"]) ** 2))(params)
    updates, opt_state = optim.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


@jax.jit
def scaled(x, lr):
    return x * lr


x = jnp.ones((2, 4))
for i in range(4):
    params, opt_state, loss = step(params, opt_state, x)
    lr = float(schedule(i))
    scaled(x, lr)  # a Python float: weak-typed f32[] every time, compiled once
scaled(x, jnp.float32(0.5))  # an array now: weak_type True -> False, one recompile
print(float(loss))
