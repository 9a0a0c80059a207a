"""The lint rules: one file per rule, named after its code and name (``js101_print_in_traced_code.py``).

Each file holds one :class:`~jitscope.linter.rule.Rule` subclass with its documentation, its
``bad``/``good`` examples, its static ``check(ctx)`` (see :mod:`jitscope.linter.context`) and,
where the tracer can observe the hazard, its dynamic ``check_trace(trace)`` (see
:mod:`jitscope.linter.trace_context`). ``jitscope.linter.registry.RULES`` lists them in code order.
"""
