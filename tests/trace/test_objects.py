"""Call labels summarise objects instead of printing their repr (load/objects.py, ArgSet.describe)."""

from __future__ import annotations

import numpy as np

from jitscope.load.objects import describe_object
from jitscope.load.specs import ArgSet, ArraySpec, format_value


class Module:  # the name is what marks a neural-network module (flax, equinox, haiku all call it Module)
    pass


class Dense(Module):
    def __init__(self, n_in: int, n_out: int) -> None:
        self.kernel = np.zeros((n_in, n_out), np.float32)
        self.bias = np.zeros((n_out,), np.float32)
        self.activation = np.tanh


class MLP(Module):
    def __init__(self) -> None:
        self.layers = [Dense(784, 512), Dense(512, 10)]
        self.step = np.zeros((), np.int32)  # not a parameter: integers are not counted as params


class OptState:
    def __init__(self) -> None:
        self.mu = {"w": np.zeros((100,), np.float32)}
        self.nu = {"w": np.zeros((100,), np.float32)}
        self.count = np.zeros((), np.int32)


class Opaque:
    pass


def test_a_module_is_its_parameter_count_and_bytes():
    assert describe_object(MLP()) == "MLP(407,050 params, 1.55 MiB)"


def test_other_array_holders_are_their_array_count_and_bytes():
    assert describe_object(OptState()) == "OptState(3 arrays, 804 B)"


def test_never_an_arrays_values():
    assert describe_object(np.arange(6, dtype=np.float32).reshape(2, 3)) == "f32[2,3]"
    assert describe_object(Opaque()) == "Opaque(...)"  # its repr has an address
    assert describe_object(_activation) == "_activation"  # a function by its name, not <function ... at 0x...>


def _activation(x):
    return x


def test_call_labels_summarise_objects_and_long_pytrees():
    many = {f"layer{i}": {"w": ArraySpec((64, 64), "float32"), "b": ArraySpec((64,), "float32")} for i in range(6)}
    argset = ArgSet((MLP(), many, ArraySpec((8, 65), "int32")), {"train": True})
    assert argset.describe() == "MLP(407,050 params, 1.55 MiB), dict(12 arrays, 97.5 KiB), i32[8,65], train=True"
    # Short pytrees keep their spec text.
    assert format_value({"w": ArraySpec((3,), "float32")}, limit=120) == "{'w': f32[3]}"
