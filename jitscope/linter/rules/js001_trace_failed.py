"""JS001 `trace-failed`: docs, examples and `jitscope lint --trace` check (no static check)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from jitscope.linter.rule import Rule
from jitscope.model.lint import Finding

if TYPE_CHECKING:  # the tracer's records: imported only by lint --trace, not by static lint
    from jitscope.linter.trace_context import TraceContext

TRACE_FAILED = "JS001"
#: ``Diagnostic.message`` of a ``sys.exit`` in the traced function (``jitscope.faults.UserExit``).
_EXIT_PREFIX = "UserExit: "


class TraceFailed(Rule):
    """A `--trace` target could not be traced (dynamic).

    ## What it does
    Only `jitscope lint --trace TARGET` checks this. When tracing the target fails,
    at your line or at the `def`, and no enabled rule explains the failure (JS201
    Python `if` on a tracer, JS202 concretization, ...), it is reported here: an
    exception your code raised while JAX traced it, a shape error, a `sys.exit()`.
    It is reported even when `select` leaves it out (a failed trace is never "All
    checks passed"); only `ignore = ["JS001"]` or a suppression comment drops it.

    ## Why is this bad?
    The function does not trace with these arguments, so `jax.jit` of it fails the
    same way, and nothing the tracer would have checked (side effects, hidden state,
    recompilations) was checked.

    ## Example
    ```python
    @jax.jit
    def step(x):
        if x.shape[0] != 8:
            raise ValueError("expected 8 rows")
        return x * 2
    ```

    ## Use instead
    ```python
    @jax.jit
    def step(x):
        return x * 2   # and trace it with the shapes it is meant for: -s "f32[8]"
    ```
    """

    code = TRACE_FAILED
    name = "trace-failed"
    severity = "error"
    summary = "a --trace target raised or exited while traced, so nothing about it was checked"
    dynamic_only = True
    bad = ("import jax\n@jax.jit\ndef f(x):\n    raise ValueError('no')\n",)
    good = ("import jax\n@jax.jit\ndef f(x):\n    return x * 2\n",)

    def check_trace(self, trace: TraceContext) -> Iterator[Finding]:
        # Every failure: where an enabled rule reports the same one, the engine keeps that rule's finding.
        diag = trace.failure
        if diag is None:
            return
        loc = diag.location
        from jitscope.linter.trace_context import Place  # here: static lint never loads the tracer's records

        where = trace.definition if loc is None else Place(loc.file, loc.line, loc.function, loc.column)
        traceback = "`jitscope trace` with the same target and arguments shows the traceback"
        if diag.message.startswith(_EXIT_PREFIX):
            during = f" in {trace.failed_call}" if trace.failed_call else ""
            message = (f"{trace.target} exited while JAX traced it{during}: "
                       f"{diag.message.removeprefix(_EXIT_PREFIX)}")
            fix = f"return or raise instead of calling sys.exit() in traced code; {traceback}"
        else:
            message = f"{trace.failure_prefix()}: {diag.message}"
            fix = f"fix the error your code raises while traced; {traceback}" if diag.kind == "user_error" \
                else diag.fix
        yield trace.finding(self, message, where, fix)
