"""What jitscope's pytest plugin (``jitscope.pytest_plugin``) is made of, kept free of pytest's hooks.

* ``watch``: one test's compiles (a fresh observer per test, JAX's caches cleared first) and the
  ``max_compiles`` check;
* ``baseline``: per-test compile counts and compile time saved to JSON and compared (``--jitscope-save``,
  ``--jitscope-compare``);
* ``bench``: the ``jit_bench`` fixture, ``jitscope bench`` on a live function and real arguments;
* ``benchjson``: bench rows as a pytest-benchmark JSON document.

Nothing here imports jax at import time.
"""
