"""What each command does, one module per command, each readable top to bottom: the Python entry
(``jitscope.trace``...) and the whole command minus option parsing and output, which the CLI's module
of the same name (``cli/trace.py``...) calls.

A subpackage rather than ``api/commands/trace.py``: importing a module ``jitscope.api.commands.trace`` would bind the
module over the lazily imported function ``jitscope.api.commands.trace``.
"""
