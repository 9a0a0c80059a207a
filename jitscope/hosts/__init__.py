"""``jitscope merge``: the ``jitscope run`` reports of every process of one program, read as one.

``load.py`` reads and checks the per-process files (one run, one schema, every process once),
``merge.py`` lines the compiles up across processes and says what to read first (a process
that never finished, programs that differ, compiles one process made alone, stragglers),
``programs.py`` finds where two processes' compiled programs first differ.
"""
