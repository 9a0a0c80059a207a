"""The output layer: commands build a view model (``model.py``) from their records; back ends render it.

Back ends: ``rich_text`` (terminal, and plain text on a colourless console), ``markdown``
(pull-request comments, ``$GITHUB_STEP_SUMMARY``) and ``html`` (one self-contained report).
JSON is not a view: it is each command's versioned record schema (``render/json.py``).
Nothing in this package imports jax; only ``rich_text`` imports rich.
"""
