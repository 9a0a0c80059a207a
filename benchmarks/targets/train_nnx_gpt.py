"""``run_overhead.py --model nnx-gpt``: a two-block GPT in flax nnx, trained with optax adamw under ``nnx.jit``,
as flax's own tutorials write it (the model and the optimizer are the step's arguments, updated in place).

Like every ``train_*.py`` here it ends with ``state`` and ``step(state) -> state``; run_overhead.py adds the
timed loop around them."""

import jax
import jax.numpy as jnp
import optax
from flax import nnx

VOCAB, CONTEXT, WIDTH, HEADS, BATCH = 65, 32, 64, 4, 8


class Block(nnx.Module):
    def __init__(self, rngs: nnx.Rngs):
        self.ln1 = nnx.LayerNorm(WIDTH, rngs=rngs)
        self.attn = nnx.MultiHeadAttention(HEADS, WIDTH, decode=False, rngs=rngs)
        self.ln2 = nnx.LayerNorm(WIDTH, rngs=rngs)
        self.up = nnx.Linear(WIDTH, 4 * WIDTH, rngs=rngs)
        self.down = nnx.Linear(4 * WIDTH, WIDTH, rngs=rngs)

    def __call__(self, x, mask):
        x = x + self.attn(self.ln1(x), mask=mask)
        return x + self.down(nnx.gelu(self.up(self.ln2(x))))


class GPT(nnx.Module):
    def __init__(self, rngs: nnx.Rngs):
        self.tok = nnx.Embed(VOCAB, WIDTH, rngs=rngs)
        self.pos = nnx.Embed(CONTEXT, WIDTH, rngs=rngs)
        self.blocks = nnx.List([Block(rngs) for _ in range(2)])
        self.ln = nnx.LayerNorm(WIDTH, rngs=rngs)
        self.head = nnx.Linear(WIDTH, VOCAB, rngs=rngs)

    def __call__(self, tokens):
        x = self.tok(tokens) + self.pos(jnp.arange(tokens.shape[1]))
        mask = nnx.make_causal_mask(tokens)
        for block in self.blocks:
            x = block(x, mask)
        return self.head(self.ln(x))


@nnx.jit
def train_step(model, optimizer, batch):
    def loss_fn(model):
        logits = model(batch[:, :-1])
        return optax.softmax_cross_entropy_with_integer_labels(logits, batch[:, 1:]).mean()

    loss, grads = nnx.value_and_grad(loss_fn)(model)
    optimizer.update(model, grads)
    return loss


model = GPT(nnx.Rngs(0))
optimizer = nnx.Optimizer(model, optax.adamw(3e-4), wrt=nnx.Param)
batch = jax.random.randint(jax.random.PRNGKey(1), (BATCH, CONTEXT + 1), 0, VOCAB)


def step(loss):
    return train_step(model, optimizer, batch)


state = jnp.zeros(())
