"""JS000 `unparsable-file`: its docs and examples; no check of its own (the engine reports files it cannot parse)."""

from __future__ import annotations

from jitscope.linter.analysis.source import JS000_CODE, JS000_NAME, MAX_FILE_BYTES
from jitscope.linter.rule import Rule


class UnparsableFile(Rule):
    """A file jitscope could not read or parse.

    ## What it does
    Reports files with a syntax error, an undecodable encoding, null bytes, or a
    size above the limit (generated code, data saved as `.py`), instead of stopping
    the lint run.

    ## Why is this bad?
    Nothing in the file was checked. A syntax error also means the module cannot be
    imported at all.

    ## Example
    ```python
    def step(x:
        return x
    ```

    ## Use instead
    ```python
    def step(x):
        return x
    ```
    """

    code = JS000_CODE
    name = JS000_NAME
    severity = "error"
    summary = (
        f"file has a syntax error, cannot be decoded, or is larger than {MAX_FILE_BYTES // 1_000_000} MB"
    )
    bad = ("def f(x:\n    return x\n",)
    good = ("def f(x):\n    return x\n",)
