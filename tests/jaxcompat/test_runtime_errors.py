"""Classifying JAX runtime errors: real instances of this JAX's runtime error class, and stand-ins."""

from __future__ import annotations

import pytest

from jitscope.errors import CompileError, DeviceMemoryError
from jitscope.jaxcompat.runtime_errors import (
    device_memory_error,
    is_runtime_error,
    out_of_memory,
    requested_bytes,
    runtime_error_types,
    status_code,
)
from jitscope.tracing.compile import lower_and_compile

GPU_OOM = "RESOURCE_EXHAUSTED: Out of memory while trying to allocate 17179869184 bytes."
BFC_OOM = "RESOURCE_EXHAUSTED: Failed to allocate request for 16.00GiB (17179869184B) on device ordinal 0"


def real(message: str) -> BaseException:
    return runtime_error_types()[0](message)


def test_this_jax_has_a_runtime_error_class_and_it_is_what_jax_raises():
    import jax
    import jax.numpy as jnp

    assert runtime_error_types()
    with pytest.raises(Exception) as info:  # a real runtime error: a failing host callback
        jax.block_until_ready(jax.jit(lambda x: jax.pure_callback(_fail, x, x))(jnp.zeros(2)))
    assert is_runtime_error(info.value)


def _fail(x):
    raise ValueError("callback failed")


@pytest.mark.parametrize(("message", "asked"), [(GPU_OOM, 17179869184), (BFC_OOM, 17179869184),
                                                ("RESOURCE_EXHAUSTED: ran out of memory in hbm", None)])
def test_out_of_memory_is_recognised(message, asked):
    exc = real(message)
    assert status_code(exc) == "RESOURCE_EXHAUSTED"
    oom = out_of_memory(exc)
    assert oom is not None and oom.requested == asked
    err = device_memory_error(exc, "compiling")
    assert isinstance(err, DeviceMemoryError) and err.exit_code == 2
    assert err.message.startswith("the device ran out of memory")
    assert "XLA_PYTHON_CLIENT_PREALLOCATE=false" in err.one_line() and "\n" not in err.one_line()


def test_old_jaxlib_class_is_recognised_by_name():
    class XlaRuntimeError(RuntimeError):  # stand-in for jaxlib.xla_extension.XlaRuntimeError (JAX < 0.4.36)
        pass

    assert device_memory_error(XlaRuntimeError(GPU_OOM), "running f") is not None


def test_other_errors_are_left_alone():
    assert device_memory_error(real("INVALID_ARGUMENT: bad shape"), "compiling") is None
    assert device_memory_error(MemoryError(GPU_OOM), "compiling") is None  # not from XLA
    assert device_memory_error(ValueError("out of memory"), "compiling") is None
    assert status_code(ValueError("INTERNAL: x")) is None


def test_backend_start_that_ran_out_of_memory():
    exc = RuntimeError("Unable to initialize backend 'cuda': INTERNAL: CUDA_ERROR_OUT_OF_MEMORY: out of memory")
    assert device_memory_error(exc, "starting the backend") is not None


def test_sizes_in_messages():
    assert requested_bytes("tried to allocate 2.50GiB") == int(2.5 * 2**30)
    assert requested_bytes("no size here") is None


class _Lowered:
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def as_text(self, dialect: str = "") -> str:
        return ""

    def compile(self):
        raise self.exc


class _Traced:
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def lower(self):
        return _Lowered(self.exc)


def test_trace_compile_stage_reports_out_of_memory():
    with pytest.raises(DeviceMemoryError, match="ran out of memory .* while compiling"):
        lower_and_compile(_Traced(real(GPU_OOM)), ["hlo"])
    with pytest.raises(CompileError, match="XLA compilation failed"):
        lower_and_compile(_Traced(real("INTERNAL: something else")), ["hlo"])
