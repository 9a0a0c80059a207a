"""flax nnx: a two-block GPT trained with optax adamw under `nnx.jit` (issue 24's model, kept tiny)."""

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
        self.blocks = nnx.List([Block(rngs) for _ in range(2)]) if hasattr(nnx, "List") else [
            Block(rngs) for _ in range(2)]
        self.ln = nnx.LayerNorm(WIDTH, rngs=rngs)
        self.head = nnx.Linear(WIDTH, VOCAB, rngs=rngs)

    def __call__(self, tokens):
        x = self.tok(tokens) + self.pos(jnp.arange(tokens.shape[1]))
        mask = nnx.make_causal_mask(tokens)
        for block in self.blocks:
            x = block(x, mask)
        return self.head(self.ln(x))


def make_optimizer(model):
    try:
        return nnx.Optimizer(model, optax.adamw(3e-4), wrt=nnx.Param)
    except TypeError:  # flax < 0.11: no wrt
        return nnx.Optimizer(model, optax.adamw(3e-4))


@nnx.jit
def train_step(model, optimizer, batch):
    def loss_fn(model):
        logits = model(batch[:, :-1])
        return optax.softmax_cross_entropy_with_integer_labels(logits, batch[:, 1:]).mean()

    loss, grads = nnx.value_and_grad(loss_fn)(model)
    try:
        optimizer.update(model, grads)
    except TypeError:  # flax < 0.11: update(grads)
        optimizer.update(grads)
    return loss


model = GPT(nnx.Rngs(0))
optimizer = make_optimizer(model)

JITSCOPE_EXAMPLES = {
    "train_step": {"args": (model, optimizer, jax.ShapeDtypeStruct((BATCH, CONTEXT + 1), jnp.int32))},
}
