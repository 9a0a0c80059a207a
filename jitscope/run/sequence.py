"""Which calls of a declared call sequence really traced again: ``jitscope run``'s observer on ``jit(f).trace``.

``lint --trace`` (JS306) predicts recompiles from cache keys (``tracing/recompile.py``) and checks the
prediction here, with the mechanism ``jitscope run`` uses on a real program.
"""

from __future__ import annotations

from typing import Any

from jitscope.load.specs import ArgSet, iter_array_specs


def observe_sequence(target: Any, argsets: tuple[ArgSet, ...]) -> list[bool | None]:
    """Trace each call on ONE jit wrapper; True where the body ran again (a cache miss), None on error.

    ``jit(f).trace`` shares JAX's tracing cache with calls, so the body runs exactly when a
    real call would retrace and recompile; abstract inputs mean nothing is allocated. Whether it
    ran is what ``jitscope run``'s observer sees (a traced event of the call): one mechanism for
    every command that watches JAX's caches, checked against JAX's own log by
    tests/run/test_run_oracle.py.
    """
    from jitscope.jaxcompat.compile_hooks import installed
    from jitscope.jaxcompat.jit import make_jit
    from jitscope.jaxcompat.wrappers import for_call
    from jitscope.load.abstract import to_abstract
    from jitscope.run.observer import RunObserver

    statics: tuple[str, ...] = ()
    for argset in argsets:
        statics += argset.static_names
    # static and traced as the wrapper makes them (jaxcompat/wrappers.py), on one wrapper for every call
    options = for_call(target.options.with_static_names(tuple(dict.fromkeys(statics))),
                       [(argset.args, argset.kwargs) for argset in argsets])
    jitted = make_jit(target.fn, options)
    observer = RunObserver(effects=False)
    observed: list[bool | None] = []
    with installed(observer) as status:
        for argset in argsets:
            before = len(observer.finish())
            args, kwargs = to_abstract(argset)
            try:
                jitted.trace(*args, **kwargs)
            except Exception:  # noqa: BLE001 - a failing call is reported by the trace checks
                observed.append(None)
                continue
            ran = any(event.traced for event in observer.finish()[before:])
            # JAX's trace cache ignores how (Auto-axis) inputs are sharded, but lowering does not: a new
            # sharding compiles again without running the body, so a trace-cache hit proves nothing then.
            sharded = any(s.sharding is not None for s in iter_array_specs((argset.args, argset.kwargs)))
            observed.append(None if status.trace_hook is None else True if ran else None if sharded else False)
    return observed
