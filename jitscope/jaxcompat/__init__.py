"""The adapter between jitscope and JAX: the only package that touches JAX internals.

JAX moves fast. Everything version-specific (private attributes of jit wrappers,
jaxpr types, monitoring event names, cache sizes) lives in this package, so a new
JAX release breaks these files and nothing else. Importing this package does not
import jax; its submodules do.
"""
