"""``jitscope diff``'s comparison (named apart from the ``jitscope.diff`` function of the Python API, which a
subpackage ``jitscope.diff`` would replace as soon as it was imported): two versions of a jitted function
compared, as pure functions over trace records.

``compare.diff_reports(old, new)`` -> ``DiffReport`` (``model/diff.py``), built from ``jaxpr.py`` (lines of
the user's code, primitives), ``hlo.py`` (optimised HLO, collectives) and ``gate.py`` (``--fail-on``);
``sides.py`` gets each side's trace report (a child process, a git worktree); ``sources.py`` reads the
lines the reports point at.
"""
