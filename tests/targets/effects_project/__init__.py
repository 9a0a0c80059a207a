"""A small user project whose traced functions do trace-time side effects (fixture for tests/tracing).

Lines that cause an effect end with ``# effect: <name>``; tests find line numbers by
those markers instead of hard-coding them.
"""
