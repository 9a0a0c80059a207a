"""``jitscope trace`` on a function called with typed PRNG keys, as a user runs it (issue 29, item 1)."""

from __future__ import annotations

import json

import jax
import numpy as np

from jitscope.load.objects import describe_object
from tests.conftest import ROOT, run_cli

KEYS = ROOT / "tests" / "targets" / "keys"


def test_trace_of_a_key_argument_from_the_examples_and_from_shapes_exits_0() -> None:
    """Both exited 3 with "internal error: TypeError: Cannot interpret 'key<fry>' as a data type"."""
    proc = run_cli("trace", "keys_step.py:step", "--stages", "jaxpr", "-f", "json", cwd=KEYS)
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout)["traces"][0]["seen"]
    assert [(a["path"], a["dtype"]) for a in seen] == [("key", "key<fry>"), ("x", "f32")]
    bad = run_cli("trace", "keys_step.py:step", "--shapes", "key<nope>[], f32[3]", cwd=KEYS)
    assert bad.returncode == 2 and bad.stderr.startswith("error: unknown PRNG key implementation key<nope>")
    assert "Traceback" not in bad.stderr


def test_a_live_key_or_float0_array_is_labelled_by_its_dtype() -> None:
    assert describe_object(jax.random.split(jax.random.key(0, impl="rbg"), 4)) == "key<rbg>[4]"
    assert describe_object(np.zeros((3,), jax.dtypes.float0)) == "float0[3]"
