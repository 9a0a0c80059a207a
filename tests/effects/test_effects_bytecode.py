"""Static facts the effect monitor reads from bytecode: store targets, global stores, call candidates."""

from __future__ import annotations

import functools
import inspect
from typing import Any

from jitscope.effects.bytecode import ObjectPath, analyse_code

COUNTER = 0


def _line_of(fn: Any, text: str) -> int:
    """Line number of the first source line of ``fn`` containing ``text``."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def stores_everywhere(d: Any, xs: Any, obj: Any, flag: bool) -> None:
    global COUNTER
    d["k"] = 1
    d["a"]["b"] += 2
    xs[0 if flag else 1] = 3
    obj.attr = 4
    obj.n += 1
    del d["k"]
    COUNTER = 5
    xs += [1]
    local = {}
    local[d.get("x")] = 1


def test_store_targets_are_named_through_attributes_constant_keys_and_branches() -> None:
    facts = analyse_code(stores_everywhere.__code__)
    found = [(s.operation, str(s.target), s.attribute, s.deleting, s.line) for s in facts.stores]
    fn = stores_everywhere
    assert found == [
        ("item", "d", None, False, _line_of(fn, 'd["k"] = 1')),
        ("item", "d['a']", None, False, _line_of(fn, 'd["a"]["b"]')),
        ("item", "xs", None, False, _line_of(fn, "xs[0 if flag")),
        ("attr", "obj", "attr", False, _line_of(fn, "obj.attr")),
        ("attr", "obj", "n", False, _line_of(fn, "obj.n")),
        ("item", "d", None, True, _line_of(fn, 'del d["k"]')),
        ("inplace", "xs", None, False, _line_of(fn, "xs += [1]")),
        ("item", "local", None, False, _line_of(fn, "local[d.get")),
    ]
    assert [(s.name, s.line) for s in facts.global_stores] == [("COUNTER", _line_of(fn, "COUNTER = 5"))]
    assert facts.watches_return


def version_shaped_stores(d: Any, xs: Any, obj: Any, out: Any, key: Any) -> Any:
    d[xs[1:2]] = 1
    xs[1:2] = d
    del xs[1:2]
    COUNTERS[:] = xs
    out[obj.key()] = d
    out[f"{key:>3}"] = xs
    out[obj.make(a=1)] = 2
    first, second = xs
    second["k"] = first
    xs += [1]; alias = xs  # one line, so 3.13 fuses the store and the load
    obj.attr = [v for v in d if (kept := v)]
    for i in range(3):
        d["loop"] = i
    with obj:
        obj.inner = 1
    try:
        d["try"] = 1
    except KeyError as error:
        out["except"] = error
    return alias, kept


COUNTERS: list[int] = []


def test_store_targets_survive_slices_method_calls_and_fused_opcodes() -> None:
    """Each version's opcodes for these (BINARY_SLICE, STORE_SLICE, LOAD_ATTR's method bit,
    CALL_KW, FORMAT_WITH_SPEC, STORE_FAST_STORE_FAST, STORE_FAST_LOAD_FAST, inlined
    comprehensions) leave the walk naming the right object, never a neighbour on the stack."""
    fn = version_shaped_stores
    facts = analyse_code(fn.__code__)
    found = sorted((s.line, s.operation, str(s.target), s.attribute, s.deleting) for s in facts.stores)
    assert found == [
        (_line_of(fn, "d[xs[1:2]]"), "item", "d", None, False),
        (_line_of(fn, "xs[1:2] = d"), "item", "xs", None, False),
        (_line_of(fn, "del xs[1:2]"), "item", "xs", None, True),
        (_line_of(fn, "COUNTERS[:]"), "item", "COUNTERS", None, False),
        (_line_of(fn, "out[obj.key()]"), "item", "out", None, False),
        (_line_of(fn, 'out[f"{key'), "item", "out", None, False),
        (_line_of(fn, "out[obj.make"), "item", "out", None, False),
        (_line_of(fn, 'second["k"]'), "item", "second", None, False),
        (_line_of(fn, "xs += [1]"), "inplace", "xs", None, False),
        (_line_of(fn, "obj.attr ="), "attr", "obj", "attr", False),
        (_line_of(fn, 'd["loop"]'), "item", "d", None, False),
        (_line_of(fn, "obj.inner"), "attr", "obj", "inner", False),
        (_line_of(fn, 'd["try"]'), "item", "d", None, False),
        (_line_of(fn, 'out["except"]'), "item", "out", None, False),
    ]


def make_counter() -> Any:
    count = 0

    def bump() -> int:
        nonlocal count
        count += 1
        return count

    return bump


def test_nonlocal_stores_and_nested_code() -> None:
    bump = make_counter()
    facts = analyse_code(bump.__code__)
    assert [(s.name, s.line) for s in facts.nonlocal_stores] == [
        ("count", _line_of(make_counter, "count += 1"))
    ]
    assert bump.__code__ in analyse_code(make_counter.__code__).nested_codes


def draws(rng: Any, np: Any) -> Any:
    return np.random.normal() + rng.integers(3) + len([])


def test_call_candidates_are_loads_of_listed_names() -> None:
    facts = analyse_code(draws.__code__, frozenset({"normal", "integers"}))
    assert [c.callee for c in facts.call_candidates] == [
        ObjectPath("fast", "np", (("attr", "random"), ("attr", "normal"))),
        ObjectPath("fast", "rng", (("attr", "integers"),)),
    ]
    assert str(facts.call_candidates[0].callee) == "np.random.normal"
    assert facts.loaded_globals == frozenset({"len"})


def pure(x: Any) -> Any:
    y = x * 2
    return [y + i for i in range(3)]


def test_pure_code_needs_no_return_checks() -> None:
    facts = analyse_code(pure.__code__)
    assert not facts.watches_return
    assert facts.call_candidates == ()


def hands_callables_to_c_code(x: Any, fn: Any, make: Any) -> Any:
    show = functools.partial(print, "x:", sep="")
    show(x)
    fn(x)
    list(map(fn, [x]))
    list(filter(None, [x]))
    made = make()
    made(x)
    return COUNTER


def test_handed_calls_are_calls_of_arguments_partial_locals_and_map_filter_with_a_named_function() -> None:
    facts = analyse_code(hands_callables_to_c_code.__code__)
    found = [(str(c.callee), str(c.first_arg) if c.first_arg else None, c.line) for c in facts.handed_calls]
    fn = hands_callables_to_c_code
    # ``filter(None, ...)`` hands over nothing named: left out. Calls of globals (``list``) are kept: a
    # global may be a partial. ``made = make()`` is kept with what made it: the frame start decides
    # (``make`` may be ``functools.partial`` under another name, or a factory returning one).
    assert ("show", "x", _line_of(fn, "show(x)")) in found
    assert ("fn", "x", _line_of(fn, "fn(x)")) in found
    assert ("map", "fn", _line_of(fn, "map(fn")) in found
    assert not any(callee == "filter" for callee, _, _ in found)
    (made,) = [c for c in facts.handed_calls if str(c.callee) == "made"]
    assert str(made.maker) == "make"
