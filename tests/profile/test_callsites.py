"""profiling/callsites.py: the call line of a helper's work, for XLA whose HLO keeps one frame."""

from __future__ import annotations

import functools
import inspect

from jitscope.profiling.callsites import call_chains
from tests.profile import targets


def _line(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _everywhere(_: str) -> bool:
    return True


def test_a_helpers_lines_lead_back_to_the_call_line():
    chains = call_chains(targets.nested, _everywhere)
    file = targets.__file__
    exp_line = _line(targets.scale, "jnp.exp")
    chain = chains[(file, exp_line)]
    assert [(c.function, c.line) for c in chain] == [
        ("scale", exp_line), ("helper", _line(targets.helper, "return scale(g)")),
        ("nested", _line(targets.nested, "z = helper(y)"))]
    assert chains[(file, _line(targets.helper, "g = h + 1.0"))][-1].line == _line(targets.nested, "helper(y)")


def test_a_lambda_calling_a_helper_is_its_own_line():
    chains = call_chains(targets.scanned, _everywhere)
    chain = chains[(targets.__file__, _line(targets.helper, "g = h + 1.0"))]
    assert (chain[-1].function, chain[-1].line) == ("<lambda>", _line(targets.scanned, "jax.lax.scan("))


def twice(x):
    a = targets.helper(x)  # an attribute load: not followed
    b = targets.scale(x)
    return a + b


def _closure():
    local = targets.scale

    @functools.wraps(local)
    def wrapped(h):
        return local(h)

    def fn(x):
        y = wrapped(x)
        z = wrapped(y)
        return z

    return fn


def test_a_helper_reached_from_two_lines_is_left_alone():
    chains = call_chains(_closure(), _everywhere)  # through a closure cell and functools.wraps
    assert (targets.__file__, _line(targets.scale, "jnp.exp")) not in chains
    assert call_chains(twice, _everywhere) == {}


def test_only_user_files_are_followed():
    assert call_chains(targets.nested, lambda path: path != targets.__file__) == {}
    assert call_chains(len, _everywhere) == {}


def helper_twice(x):
    y = targets.nested(x)  # not followed: an attribute of a module
    z = _inner(x)
    return _inner(z) + y


def _inner(h):
    return _leaf(h) * 2.0


def _leaf(h):
    return h * 3.0


def _recursive(h, n=2):
    return _recursive(h, n - 1) if n else _inner(h)


def test_everything_under_a_helper_called_from_two_lines_is_left_alone():
    assert call_chains(helper_twice, _everywhere) == {}  # _inner's lines, and _leaf's under them


def test_recursion_ends():
    chains = call_chains(_recursive, _everywhere)
    chain = chains[(__file__, _line(_leaf, "h * 3.0"))]
    assert [c.function for c in chain] == ["_leaf", "_inner", "_recursive"]
