"""What a report shows: the view model (``document.py``), one view per command built from its records,
and the IR laid out as styled lines (jaxpr, StableHLO, HLO) that every writer shows the same way.

Records in, plain data out: nothing here imports jax or a writer. The styled lines (``lines.py``) and
the IR layouts that produce them are also rich renderables; they import rich when rendered through it,
never on import, so piped text is written without loading rich at all.
"""
