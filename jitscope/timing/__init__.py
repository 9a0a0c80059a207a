"""``jitscope bench``: the cold first call against cached calls, measured honestly.

``clock``, ``stats``, ``calibrate``, ``scaling`` and ``compare`` are pure (no jax) and
tested on fixed inputs; ``loops`` holds the timed loops; ``inputs``, ``cold``, ``process``
and ``runner`` touch JAX. Importing this package does not import jax.
"""
