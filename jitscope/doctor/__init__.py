"""``jitscope doctor``: what to fix first in a program, ranked by what each problem cost in this run.

It composes what the other commands measure (no second analysis of its own): ``run``'s watch of
every compile and its causes (``findings.py`` turns that record into findings), and the gate a CI
job sets on the avoidable share of the run (``gate.py``).
"""
