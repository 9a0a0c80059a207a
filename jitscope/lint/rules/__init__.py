"""The lint rules: one file per rule, named after its code and name (``js101_print_in_traced_code.py``).

Each file holds one :class:`~jitscope.lint.rule.Rule` subclass with its documentation, its
``bad``/``good`` examples, its static ``check(ctx)`` (see :mod:`jitscope.lint.context`) and,
where the tracer can observe the hazard, its dynamic ``check_trace(trace)`` (see
:mod:`jitscope.lint.trace_context`). ``jitscope.lint.registry.RULES`` lists them in code order.
"""
