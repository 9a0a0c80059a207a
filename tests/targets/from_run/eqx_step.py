"""An equinox MLP trained with filter_jit; its default final activation is a lambda, which no capture can save."""
import equinox as eqx
import jax
import jax.numpy as jnp


@eqx.filter_jit
def step(model, x):
    return jnp.mean(jax.vmap(model)(x) ** 2)


def main():
    model = eqx.nn.MLP(4, 2, width_size=8, depth=1, key=jax.random.PRNGKey(0))
    for n in (8, 3):
        step(model, jnp.ones((n, 4)))


if __name__ == "__main__":
    main()
