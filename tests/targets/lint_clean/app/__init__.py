"""A small, correct JAX project: `jitscope lint` must find nothing here."""
