"""``jitscope merge``: the ``jitscope run`` reports of every process of one program, read as one.

``load.py`` reads and checks the per-process files (one run, one schema, every process once),
``merge.py`` lines the compiles up across processes and says what to read first (a process
that never finished, programs that differ, compiles one process made alone, stragglers),
``programs.py`` finds where two processes' compiled programs first differ.
``bench``/``profile``/``trace`` across processes: ``launch.py`` starts N local ones (``--processes``),
``distributed.py`` joins a job someone else launched (``--distributed``) and brings the reports to
process 0; ``reports.py`` and the per-command modules merge them.
"""
