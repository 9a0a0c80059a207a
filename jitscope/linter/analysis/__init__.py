"""The analysis core of ``jitscope lint``: what the linter knows about a module.

Rules never import these modules directly; they ask :class:`jitscope.linter.context.ModuleContext`.
What each part knows, in the order a module goes through them:

- ``source``: bytes -> decoded text and an ``ast`` tree (or a JS000 finding); columns.
- ``module_index``: the module's top level: imports, functions, classes, loggers,
  module-level values, the statement chain around a line; and what other modules it imports
  know (:class:`ImportedFacts`, passed in by the runner).
- ``pytree_registrations``: fields custom pytree registrations keep static (in the treedef).
- ``qualified_names``: what a name means (``jnp.sum`` -> ``jax.numpy.sum``; is it a jit
  transform, a lax body taker, a host callback, a static helper?).
- ``parameters``: which parameters of a traced function hold traced values
  (static_argnums/argnames, partial, defaults).
- ``function_refs``: which function an expression refers to (names, partials, methods).
- ``discovery`` (with ``discovery_transforms``) -> ``discovered``: which functions JAX traces
  (:class:`Entry`), every application of jit/pmap (:class:`JitSite`), and calls that leave the module.
- ``jit_factories``: functions jitted by a project's own wrappers and jit factories (also
  factories imported from another module).
- ``inherited_tracing``: classes, their bases and traced methods, and the overrides traced
  through a base class in another module.
- ``taint`` (with ``taint_flags``, ``taint_expressions``, ``taint_calls``, ``taint_resolution``,
  ``taint_transforms``, ``taint_narrowing``): which values inside a traced function may be tracers, arrays,
  containers or fresh objects (:class:`FunctionFacts`).
- ``jit_calls``: calls of jitted functions, with their arguments and the loops around them.
- ``ragged_batches``: batch loops whose last batch is shorter (for JS304).
- ``module_analysis``: the worklist that ties discovery and taint together
  (:class:`ModuleAnalysis`).
- ``ast_walk``: a fast child-node walker.
"""
