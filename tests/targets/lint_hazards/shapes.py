"""Jitted calls in loops whose argument shapes change (and some whose shapes are fixed)."""

import jax
import jax.numpy as jnp
import numpy as np


@jax.jit
def train_step(params, batch):
    return params - 0.01 * jnp.mean(batch, axis=0)


@jax.jit
def encode(tokens):
    return jnp.cumsum(tokens)


@jax.jit
def decode_step(params, seq):
    return seq[:, -1:] @ params


def epoch(params, data, batch_size):
    for start in range(0, len(data), batch_size):
        batch = data[start : start + batch_size]
        params = train_step(params, batch)  # expect: JS304
    return params


def encode_all(vocab, sentences):
    out = []
    for sentence in sentences:
        ids = jnp.array([vocab[w] for w in sentence.split()])
        out.append(encode(ids))  # expect: JS304
    return out


def sharded(params, data, n_shards):
    for shard in np.array_split(data, n_shards):
        params = train_step(params, shard)  # expect: JS304
    return params


def generate(params, prompt, steps):
    seq = prompt
    for _ in range(steps):
        nxt = decode_step(params, seq)  # expect: JS304
        seq = jnp.concatenate([seq, nxt], axis=1)
    return seq


def epoch_fixed(params, data, batch_size):
    n = len(data) // batch_size
    for i in range(n):
        params = train_step(params, data[i * batch_size : (i + 1) * batch_size])
    return params


def epoch_dropped_tail(params, data, batch_size):
    for start in range(0, len(data) - batch_size + 1, batch_size):
        params = train_step(params, data[start : start + batch_size])
    return params


def per_device(params, batches, n_dev):
    for batch in batches:
        params = train_step(params, batch.reshape(n_dev, -1))
    return params


def fill_steps(params, steps):
    for t in range(steps):
        params = train_step(params, jnp.full((8, 4), t))
    return params


def history_of_steps(params, batches):
    history = []
    for batch in batches:
        history.append(train_step(params, batch))
        params = train_step(history[-1], batch)
    return history
