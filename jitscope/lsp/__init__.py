"""``jitscope lsp``: the static linter as a Language Server, for editors.

- :mod:`.buffers`: lint the text of an open editor buffer as ``jitscope lint`` lints the file (its
  ``[tool.jitscope.lint]`` configuration, suppression comments, per-file ignores, excludes).
- :mod:`.edits`: the edits the server offers (a suppression comment), and columns in the client's units.
- :mod:`.server`: the pygls server (diagnostics, hover, code actions). Only this module imports pygls, and
  only ``jitscope lsp`` imports it: pygls is an optional extra (``pip install 'jitscope[lsp]'``).

Nothing here imports jax: like ``jitscope lint``, the server never imports or runs the user's code.
"""
