"""Renderers: records in, text out. Nothing here imports jax."""
