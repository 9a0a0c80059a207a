"""``jitscope lsp``: the static linter as a Language Server, for editors.

- :mod:`.buffers`: lint the text of an open editor buffer as ``jitscope lint`` lints the file (its
  ``[tool.jitscope.lint]`` configuration, suppression comments, per-file ignores, excludes).
- :mod:`.neighbours`: what the modules a buffer imports know (static fields, jit factories, traced base
  classes), as a lint of the whole tree would tell the file.
- :mod:`.edits`: the edits the server offers (a suppression comment), and columns in the client's units.
- :mod:`.protocol`: findings in LSP's terms (diagnostics, ranges); :mod:`.actions`: the code actions;
  :mod:`.hover`: the hover text.
- :mod:`.transport`: the JSON-RPC frames read within bounds (a bad one skipped), and an answer for every
  request, where pygls's own reader would go deaf.
- :mod:`.server`: the pygls server (diagnostics, hover, code actions). Only it imports pygls, and only it,
  :mod:`.protocol` and :mod:`.actions` import lsprotocol (pygls's types); only ``jitscope lsp`` imports
  them: pygls is an optional extra (``pip install 'jitscope[lsp]'``). :mod:`.buffers`, :mod:`.edits` and
  :mod:`.hover` need neither.

Nothing here imports jax: like ``jitscope lint``, the server never imports or runs the user's code.
"""
