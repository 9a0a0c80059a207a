"""``jitscope profile``: where a compiled program's device time goes, by the user's source line.

Named ``profiling`` so it is not confused with the pyinstrument ``--profile`` option of trace and
bench (``report/writers/call_trees.py``). capture (jaxcompat/profiler.py) -> events.py (device events per
HLO instruction) -> hlo.py (the compiled module) -> attribute.py (instructions to source lines) ->
runner.py (the command minus rendering).
"""
