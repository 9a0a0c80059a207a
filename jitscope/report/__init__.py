"""The output layer: what a report shows (``views/``) and how it is written (``writers/``).

A command turns its records into a view model, ``views.document.Document`` (``views/trace.py``,
``views/bench.py``, ... one per command), and a writer writes any document in one format:
``writers/terminal.py`` (rich on a terminal, plain text on a colourless console),
``writers/markdown.py`` (pull-request comments, ``$GITHUB_STEP_SUMMARY``) and ``writers/html.py``
(one self-contained page); ``writers.render_document(document, fmt)`` picks one by name. Three
formats are not views: JSON is each command's versioned record schema (``writers/json.py``), and
lint's findings are also written as SARIF (``writers/sarif.py``) and GitHub annotations
(``writers/github.py``).

``views/`` holds plain data and styled text (styles by name, never colours); ``writers/`` turns
them into rich renderables or strings. Nothing here imports jax; writers import views, never the
other way.
"""
