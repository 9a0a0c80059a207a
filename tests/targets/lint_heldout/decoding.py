"""Autoregressive decoding and streaming: sequences that grow each step."""

import jax
import jax.numpy as jnp


@jax.jit
def next_token(params, tokens):
    logits = params["emb"][tokens].sum(axis=0) @ params["out"]
    return jnp.argmax(logits)


@jax.jit
def summarise(history):
    return jnp.mean(history, axis=0)


def generate(params, prompt, n_new):
    tokens = prompt
    for _ in range(n_new):
        tok = next_token(params, tokens)  # expect: JS304
        tokens = jnp.concatenate([tokens, tok[None]])
    return tokens


def stream(frames):
    seen = []
    stats = []
    for frame in frames:
        seen.append(frame)
        stats.append(summarise(jnp.stack(seen)))  # expect: JS304
    return stats


def encode_documents(encode, docs, vocab):
    out = []
    for doc in docs:
        ids = jnp.array([vocab[w] for w in doc.split()])
        out.append(next_token(encode, ids))  # expect: JS304
    return out
