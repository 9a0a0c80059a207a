"""What a failed trace tells about which names held tracers, whatever JAX's message says."""

from __future__ import annotations

from functools import partial

import jax
import pytest

from jitscope.jaxcompat.values import traced_names_at_failure


@partial(jax.jit, static_argnames="limit")
def _branches(x, limit):
    y = x * 2
    if y.sum() > limit:  # y holds a tracer, limit a Python float
        return y
    return x


def test_traced_names_on_the_failing_line_come_from_the_frame():
    with pytest.raises(jax.errors.TracerBoolConversionError) as info:
        _branches(jax.numpy.ones(3), limit=1.0)
    assert traced_names_at_failure(info.value) == ["y"]


def test_no_user_frame_means_no_names():
    assert traced_names_at_failure(ValueError("raised outside any frame")) == []
