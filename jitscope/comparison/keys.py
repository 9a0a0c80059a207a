"""Recompilation behaviour of both sides: each call's compile-cache key, and what a change did to it.

A side's key for a call is built from its trace record (what the function body received: each leaf
traced, with its shape, dtype and weak type, or static, with its value) by the cache-key engine that
``jitscope run`` and ``lint --trace`` share (``tracing/cachekeys.py``), so the components read the same
("n (static): value", "x: dtype"). Both sides are called with the same arguments, so any component
that differs comes from the code: a parameter made static (``static_argnames``), a static one made
traced, a donation added or dropped, a dtype cast moved into the signature. Within each side's call
sequence, a call compiles unless an earlier one has the same key (the trace records it as
``cache_hit_of``); a call that compiles again is explained by its nearest earlier compile, so "n is
static now" shows up as "call 2 compiles on the new side: n (static): value 1 -> 2".
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from jitscope.model.diff import ArgumentChange, CompileCounts, KeyComparison
from jitscope.model.keys import KeyDiff
from jitscope.model.trace import SeenArg, TraceRecord
from jitscope.tracing import cachekeys

#: Object addresses in a static value's repr change from process to process: not a difference.
_ADDRESS = re.compile(r"\s+at\s+0x[0-9a-fA-F]+")


def _argument(path: str) -> str:
    """``params['w']`` -> ``params``; ``args[2][0]`` -> ``args[2]``."""
    if path.startswith("args["):
        return path[: path.index("]") + 1]
    return re.split(r"[\[.]", path, maxsplit=1)[0]


def record_key(record: TraceRecord) -> cachekeys.Key:
    """The key components of one traced call, from what its body received."""
    key: cachekeys.Key = {}
    for seen in record.seen:
        if seen.kind == "static":
            key[f"{seen.path} (static): value"] = cachekeys.shorten(_ADDRESS.sub("", seen.value_repr))
            key[f"{seen.path} (static): type"] = seen.type_name
        else:
            cachekeys.add_array(key, seen.path, seen.shape, seen.dtype, seen.weak_type, x64=True)
    for name in donated(record):
        key[f"{name}: donated"] = "yes"
    return key


def donated(record: TraceRecord) -> tuple[str, ...]:
    """The names of the arguments jit donates (``donate_argnums``, by position)."""
    names = [a.name for a in record.arguments]
    return tuple(names[i] if i < len(names) else f"args[{i}]" for i in record.donate_argnums)


def statics(record: TraceRecord) -> tuple[str, ...]:
    """The arguments the body received as static values (each named once, in order)."""
    return tuple(dict.fromkeys(_argument(s.path) for s in record.seen if s.kind == "static"))


def _handling(leaves: Sequence[SeenArg], is_donated: bool) -> str:
    if not leaves:
        return "absent"
    kinds = {s.kind for s in leaves}
    if kinds == {"static"}:
        text = "static" + (f" ({cachekeys.shorten(leaves[0].value_repr, 24)})" if len(leaves) == 1 else "")
    elif kinds == {"traced"}:
        text = "traced" + (f" {leaves[0].aval}" if len(leaves) == 1 else f" ({len(leaves)} arrays)")
    else:
        text = f"{sum(s.kind == 'traced' for s in leaves)} traced, {sum(s.kind == 'static' for s in leaves)} static"
    return text + (", donated" if is_donated else "")


def argument_changes(old: TraceRecord, new: TraceRecord) -> tuple[ArgumentChange, ...]:
    """Each argument whose handling differs, with what it does to recompiles."""
    by_arg: dict[str, tuple[list[SeenArg], list[SeenArg]]] = {}
    for index, record in enumerate((old, new)):
        for seen in record.seen:
            by_arg.setdefault(_argument(seen.path), ([], []))[index].append(seen)
    old_donated, new_donated = set(donated(old)), set(donated(new))
    out = []
    for name, (a, b) in by_arg.items():
        was = _handling(a, name in old_donated)
        now = _handling(b, name in new_donated)
        if was == now:
            continue
        out.append(ArgumentChange(name, was, now, _effect(name, a, b, name in old_donated, name in new_donated)))
    return tuple(out)


def _effect(name: str, old: Sequence[SeenArg], new: Sequence[SeenArg], was_donated: bool, now_donated: bool) -> str:
    old_static = any(s.kind == "static" for s in old)
    new_static = any(s.kind == "static" for s in new)
    if not old:
        return f"a new argument{': a recompile per distinct value of ' + name if new_static else ''}"
    if not new:
        return "no longer an argument"
    if new_static and not old_static:
        return f"a recompile per distinct value of {name} (one compile served every value before)"
    if old_static and not new_static:
        return f"one compile serves every value of {name} of the same shape and dtype (a recompile per value before)"
    if was_donated != now_donated:
        return (f"donated now: its buffer is reused for an output, and {name} cannot be read after the call"
                if now_donated else "no longer donated: the output needs a buffer of its own")
    if any(s.weak_type for s in old) != any(s.weak_type for s in new):
        return "weak type changed: calls with a Python number and with an array now share a compile or no longer do"
    return "its shape, dtype or value in the key changed"


def _cause(records: Sequence[TraceRecord], index: int) -> tuple[KeyDiff, ...]:
    """Why call ``index`` (0-based) compiles again: the differences from its nearest earlier compile."""
    earlier = [(r.call_index, record_key(r)) for r in records[:index]
               if r.cache_hit_of is None and r.target == records[index].target]
    found = cachekeys.nearest(earlier, record_key(records[index]))
    return found.diffs if found is not None else ()


def compare_keys(old: TraceRecord, new: TraceRecord, old_calls: Sequence[TraceRecord] = (),
                 new_calls: Sequence[TraceRecord] = ()) -> KeyComparison | None:
    """The two keys of one call compared; None when they are the same and the call compiles alike."""
    diffs = cachekeys.diff(record_key(old), record_key(new))
    arguments = argument_changes(old, new)
    old_hit, new_hit = old.cache_hit_of or 0, new.cache_hit_of or 0
    if not diffs and not arguments and (old_hit == 0) == (new_hit == 0):
        return None
    old_cause = _cause(old_calls, list(old_calls).index(old)) if old_hit == 0 and old in old_calls else ()
    new_cause = _cause(new_calls, list(new_calls).index(new)) if new_hit == 0 and new in new_calls else ()
    return KeyComparison(old_hit, new_hit, diffs, arguments, old_cause, new_cause, statics(old), statics(new),
                         donated(old), donated(new))


def compile_counts(pairs: Sequence[tuple[TraceRecord, TraceRecord]],
                   keys: Sequence[KeyComparison | None]) -> CompileCounts | None:
    """Compiles on each side over the paired calls; None when no key differs anywhere."""
    if not any(k is not None for k in keys):
        return None
    ok = [(a, b) for a, b in pairs if a.diagnostic is None and b.diagnostic is None]
    arguments: dict[str, ArgumentChange] = {}
    for key in keys:
        for change in key.arguments if key is not None else ():
            arguments.setdefault(change.argument, change)
    return CompileCounts(len(ok), sum(a.cache_hit_of is None for a, _ in ok), sum(b.cache_hit_of is None for _, b in ok),
                         tuple(arguments.values()))
