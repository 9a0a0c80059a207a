"""A tiny GPT written with flax nnx and trained with optax, as nnx users write it.

`train_step(model, optimizer, batch)` takes a model object and an optimizer holding its state:
no --shapes string can describe them, so point jitscope at the running program instead:

    jitscope trace examples/gpt_nnx.py:train_step --from-run            # the step's real arguments
    jitscope bench examples/gpt_nnx.py:train_step --from-run --call 2
    jitscope run examples/gpt_nnx.py                                    # every compile, with causes

The last batch of the epoch is shorter (a ragged batch), so the step compiles twice.
Needs flax and optax: pip install -e ".[test-models]".
"""

from __future__ import annotations

import sys

import jax
import jax.numpy as jnp
import optax
from flax import nnx

VOCAB, CONTEXT, WIDTH, HEADS, LAYERS = 65, 32, 64, 4, 2
_List = getattr(nnx, "List", list)  # flax >= 0.12 wants sub-modules in a list declared as nnx.List


class Block(nnx.Module):
    def __init__(self, rngs: nnx.Rngs):
        self.norm1 = nnx.LayerNorm(WIDTH, rngs=rngs)
        self.attention = nnx.MultiHeadAttention(num_heads=HEADS, in_features=WIDTH, decode=False, rngs=rngs)
        self.norm2 = nnx.LayerNorm(WIDTH, rngs=rngs)
        self.up = nnx.Linear(WIDTH, 4 * WIDTH, rngs=rngs)
        self.down = nnx.Linear(4 * WIDTH, WIDTH, rngs=rngs)

    def __call__(self, x, mask):
        x = x + self.attention(self.norm1(x), mask=mask)
        return x + self.down(nnx.gelu(self.up(self.norm2(x))))


class GPT(nnx.Module):
    def __init__(self, rngs: nnx.Rngs):
        self.tokens = nnx.Embed(VOCAB, WIDTH, rngs=rngs)
        self.positions = nnx.Embed(CONTEXT, WIDTH, rngs=rngs)
        self.blocks = _List([Block(rngs) for _ in range(LAYERS)])
        self.norm = nnx.LayerNorm(WIDTH, rngs=rngs)
        self.head = nnx.Linear(WIDTH, VOCAB, rngs=rngs)

    def __call__(self, tokens):
        length = tokens.shape[1]
        x = self.tokens(tokens) + self.positions(jnp.arange(length))
        mask = nnx.make_causal_mask(tokens)
        for block in self.blocks:
            x = block(x, mask)
        return self.head(self.norm(x))


def make_optimizer(model: GPT) -> nnx.Optimizer:
    try:
        return nnx.Optimizer(model, optax.adamw(3e-4), wrt=nnx.Param)
    except TypeError:  # flax < 0.11 has no `wrt`
        return nnx.Optimizer(model, optax.adamw(3e-4))


@nnx.jit
def train_step(model: GPT, optimizer: nnx.Optimizer, batch: jax.Array) -> jax.Array:
    def loss_fn(model: GPT) -> jax.Array:
        logits = model(batch[:, :-1])
        return optax.softmax_cross_entropy_with_integer_labels(logits, batch[:, 1:]).mean()

    loss, grads = nnx.value_and_grad(loss_fn)(model)
    try:
        optimizer.update(model, grads)  # flax >= 0.11
    except TypeError:
        optimizer.update(grads)
    return loss


def main(steps: int = 4) -> None:
    model = GPT(nnx.Rngs(0))
    optimizer = make_optimizer(model)
    data = jax.random.randint(jax.random.PRNGKey(1), (8 * steps - 3, CONTEXT + 1), 0, VOCAB)
    for start in range(0, data.shape[0], 8):  # the last batch has 5 rows: a recompile
        loss = train_step(model, optimizer, data[start:start + 8])
    print(f"loss after {steps} steps: {float(loss):.3f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 4)
