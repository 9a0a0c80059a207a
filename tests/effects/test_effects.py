"""The trace-time effect monitor, on a small user project traced with abstract inputs."""

from __future__ import annotations

import importlib
import logging
import re
import sys
import threading
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import pytest

from jitscope.effects.monitor import watch_effects
from jitscope.model.common import from_jsonable, to_jsonable
from jitscope.model.effects import EffectKind, EffectRecord, EffectsRecord
from jitscope.userframes import default_is_user_file, user_file_predicate

TARGETS = Path(__file__).resolve().parents[1] / "targets"
PROJECT = TARGETS / "effects_project"
F32 = jax.ShapeDtypeStruct((4,), jnp.float32)


@pytest.fixture
def project(monkeypatch: pytest.MonkeyPatch) -> Iterator[types.SimpleNamespace]:
    """Fresh fixture modules (their globals are mutated by the traced code)."""
    monkeypatch.syspath_prepend(str(TARGETS))
    for name in [m for m in sys.modules if m == "effects_project" or m.startswith("effects_project.")]:
        monkeypatch.delitem(sys.modules, name)
    impure = importlib.import_module("effects_project.impure")
    helpers = importlib.import_module("effects_project.helpers")
    yield types.SimpleNamespace(impure=impure, helpers=helpers)


def marked_line(filename: str, marker: str) -> int:
    """The line of ``filename`` (in the fixture project) that ends with ``# effect: <marker>``."""
    lines = (PROJECT / filename).read_text().splitlines()
    pattern = re.compile(rf"# effect: {re.escape(marker)}(\s|$)")
    matches = [n for n, text in enumerate(lines, start=1) if pattern.search(text)]
    assert len(matches) == 1, f"marker {marker!r} must appear once in {filename}"
    return matches[0]


def find(record: EffectsRecord, kind: EffectKind, filename: str, marker: str) -> EffectRecord:
    line = marked_line(filename, marker)
    found = [
        e
        for e in record.effects
        if e.kind is kind and e.location.line == line and Path(e.location.file).name == filename
    ]
    assert len(found) == 1, f"expected one {kind.value} effect at {filename}:{line}, got {record.effects}"
    return found[0]


def assert_only(record: EffectsRecord, *expected: tuple[EffectKind, str, str]) -> None:
    """``record`` holds exactly these (kind, marker, detail) effects, each at its marked line of impure.py."""
    for kind, marker, detail in expected:
        assert find(record, kind, "impure.py", marker).detail == detail
    assert len(record.effects) == len(expected)


def watch(fn: Callable[..., Any], *args: Any, trace: Callable[..., Any] | None = None) -> EffectsRecord:
    tracer = trace or (lambda f, *a: jax.make_jaxpr(f)(*a))
    with watch_effects(fn.__code__) as watcher:
        tracer(fn, *args)
    return watcher.record()


@pytest.fixture
def noisy(project: types.SimpleNamespace, capsys: pytest.CaptureFixture[str]) -> EffectsRecord:
    params = {"w": F32}
    record = watch(project.impure.noisy_step, F32, params, [])
    printed = capsys.readouterr()
    # Watching changes nothing the user's code does: its output still reaches stdout/stderr.
    assert "tracing noisy_step" in printed.out
    assert "to stderr" in printed.err
    return record


EXPECTED_NOISY = [
    (EffectKind.PRINT, "impure.py", "print", "print()"),
    (EffectKind.PRINT, "impure.py", "print-stderr", "print()"),
    (EffectKind.STDOUT, "impure.py", "stdout-write", "sys.stdout.write()"),
    (EffectKind.LOGGING, "impure.py", "logger-info", "logger.info()"),
    (EffectKind.LOGGING, "impure.py", "logging-warning", "logging.warning()"),
    (EffectKind.CLOCK, "impure.py", "perf-counter", "time.perf_counter()"),
    (EffectKind.CLOCK, "impure.py", "datetime-now", "datetime.datetime.now()"),
    (EffectKind.RANDOMNESS, "impure.py", "random-random", "random.random()"),
    (EffectKind.RANDOMNESS, "impure.py", "random-randint", "random.randint()"),
    (EffectKind.RANDOMNESS, "impure.py", "np-legacy", "np.random.randint()"),
    (EffectKind.RANDOMNESS, "impure.py", "np-generator", "generator.normal()"),
    (EffectKind.RANDOMNESS, "impure.py", "uuid4", "uuid.uuid4()"),
    (EffectKind.RANDOMNESS, "impure.py", "urandom", "os.urandom()"),
    (EffectKind.OS, "impure.py", "listdir", "os.listdir()"),
    (EffectKind.GLOBAL_WRITE, "impure.py", "global-store", "global 'STEP' assigned"),
    (EffectKind.GLOBAL_WRITE, "impure.py", "global-append", "append() on global 'CALLS'"),
    (EffectKind.GLOBAL_WRITE, "impure.py", "global-item", "item assignment on global 'SETTINGS'"),
    (
        EffectKind.GLOBAL_WRITE,
        "impure.py",
        "module-attr",
        "attribute assignment .LAST_SHAPE on module 'effects_project.helpers'",
    ),
    (EffectKind.ARGUMENT_MUTATION, "impure.py", "arg-item", "item assignment on argument 'params'"),
    (EffectKind.ARGUMENT_MUTATION, "impure.py", "arg-append", "append() on argument 'history'"),
    (EffectKind.ARGUMENT_MUTATION, "helpers.py", "helper-append", "append() on argument 'history'"),
    (EffectKind.PRINT, "helpers.py", "helper-print", "print()"),
    (EffectKind.FILE_IO, "helpers.py", "helper-open", "open()"),
    (EffectKind.FILE_IO, "helpers.py", "helper-file-write", "TextIOWrapper.write()"),
    (EffectKind.FILE_IO, "helpers.py", "helper-path-exists", "pathlib.Path.exists()"),
]


@pytest.mark.parametrize(
    ("kind", "filename", "marker", "detail"), EXPECTED_NOISY, ids=[m for _, _, m, _ in EXPECTED_NOISY]
)
def test_each_effect_is_reported_at_its_user_line(
    noisy: EffectsRecord, kind: EffectKind, filename: str, marker: str, detail: str
) -> None:
    effect = find(noisy, kind, filename, marker)
    assert effect.detail == detail
    assert effect.count == 1
    expected_function = "noisy_step" if filename == "impure.py" else None
    if expected_function:
        assert effect.location.function == expected_function


def test_every_effect_kind_is_expected_somewhere() -> None:
    kinds = {kind for kind, *_ in EXPECTED_NOISY}
    # talks_to_the_outside and counter_step cover the rest (see their tests below).
    assert set(EffectKind) - kinds == {EffectKind.NETWORK, EffectKind.SUBPROCESS, EffectKind.CLOSURE_MUTATION}


def test_nothing_else_is_reported(noisy: EffectsRecord) -> None:
    expected = {(kind, marked_line(filename, marker)) for kind, filename, marker, _ in EXPECTED_NOISY}
    assert {(e.kind, e.location.line) for e in noisy.effects} == expected
    assert len(noisy.effects) == len(EXPECTED_NOISY)
    assert noisy.body_runs == 1
    assert noisy.notes == ()


def test_helper_effects_name_the_helper_function(noisy: EffectsRecord) -> None:
    assert find(noisy, EffectKind.PRINT, "helpers.py", "helper-print").location.function == "record_shape"
    assert (
        find(noisy, EffectKind.ARGUMENT_MUTATION, "helpers.py", "helper-append").location.function
        == "remember"
    )


def test_description_is_one_line_with_the_fix(noisy: EffectsRecord) -> None:
    effect = find(noisy, EffectKind.PRINT, "impure.py", "print")
    text = effect.describe()
    assert text.startswith(f"print() at {effect.location.file}:{effect.location.line} in noisy_step")
    assert text.endswith("runs only while tracing; use jax.debug.print")
    assert "\n" not in text


def test_record_round_trips_through_json(noisy: EffectsRecord) -> None:
    assert from_jsonable(EffectsRecord, to_jsonable(noisy)) == noisy


def test_subprocess_network_and_environment(project: types.SimpleNamespace) -> None:
    assert_only(
        watch(project.impure.talks_to_the_outside, F32),
        (EffectKind.SUBPROCESS, "subprocess", "subprocess.run()"),
        (EffectKind.NETWORK, "socket", "socket.socket()"),
        (EffectKind.OS, "environ", "os.environ[...] = ..."),
        (EffectKind.OS, "environ-del", "del os.environ[...]"),
    )


def test_effects_in_user_callbacks_that_jax_calls(project: types.SimpleNamespace, capsys: Any) -> None:
    record = watch(project.impure.scans_with_a_noisy_body, F32)
    capsys.readouterr()
    effect = find(record, EffectKind.PRINT, "impure.py", "scan-body-print")
    assert effect.location.function == "body"
    assert len(record.effects) == 1


def test_closure_mutations(project: types.SimpleNamespace) -> None:
    assert_only(
        watch(project.impure.counter_step, F32),
        (EffectKind.CLOSURE_MUTATION, "closure-append", "append() on closure 'seen'"),
        (EffectKind.CLOSURE_MUTATION, "closure-item", "item assignment on closure 'counts'"),
        (EffectKind.CLOSURE_MUTATION, "nonlocal", "nonlocal 'total' rebound"),
    )


def test_attribute_writes_on_pre_existing_objects(project: types.SimpleNamespace) -> None:
    model = project.impure.Model()
    bound = model.apply
    with watch_effects(bound.__func__.__code__) as watcher:
        jax.make_jaxpr(bound)(F32)
    assert_only(
        watcher.record(),
        (EffectKind.ARGUMENT_MUTATION, "self-attr", "attribute assignment .calls on argument 'self'"),
        (EffectKind.ARGUMENT_MUTATION, "self-cache-item", "item assignment on argument 'self.cache'"),
    )


def test_global_object_attribute_write_and_method_on_it(project: types.SimpleNamespace) -> None:
    assert_only(
        watch(project.impure.uses_global_model, F32),
        (EffectKind.GLOBAL_WRITE, "global-object-attr", "attribute assignment .calls on global 'MODEL'"),
        (EffectKind.GLOBAL_WRITE, "self-attr", "attribute assignment .calls on global 'MODEL'"),
        (EffectKind.GLOBAL_WRITE, "self-cache-item", "item assignment on global 'MODEL.cache'"),
    )


def test_containers_created_while_tracing_are_not_effects(project: types.SimpleNamespace) -> None:
    record = watch(project.impure.busy_but_pure, F32, {"w": F32})
    assert record.effects == ()
    assert record.body_runs == 1


def test_in_place_updates_deletions_and_unattributed_mutations(project: types.SimpleNamespace) -> None:
    assert_only(
        watch(project.impure.mutates_in_other_ways, F32, {"w": F32, "drop": F32}, [], {}),
        (EffectKind.ARGUMENT_MUTATION, "arg-inplace", "in-place update on argument 'history'"),
        (EffectKind.ARGUMENT_MUTATION, "arg-del", "item deletion on argument 'params'"),
        # Changed by a C function: reported once, at the traced function's definition.
        (EffectKind.ARGUMENT_MUTATION, "library-mutation", "argument 'options' changed (call site not found)"),
    )


def test_setdefault_of_an_existing_key_is_not_a_mutation(project: types.SimpleNamespace) -> None:
    record = watch(project.impure.setdefault_on_existing_key, F32, {"w": F32})
    assert record.effects == ()


def test_counts_and_body_runs_add_up_over_repeated_traces(
    project: types.SimpleNamespace, capsys: pytest.CaptureFixture[str]
) -> None:
    fn = project.impure.noisy_step
    with watch_effects(fn.__code__) as watcher:
        jax.make_jaxpr(fn)(F32, {"w": F32}, [])
        # Another shape, so JAX's trace cache cannot skip the body.
        wide = jax.ShapeDtypeStruct((8,), jnp.float32)
        jax.jit(fn).trace(wide, {"w": wide}, [])
    capsys.readouterr()
    record = watcher.record()
    assert record.body_runs == 2
    assert find(record, EffectKind.PRINT, "impure.py", "print").count == 2
    assert find(record, EffectKind.GLOBAL_WRITE, "impure.py", "global-store").count == 2
    assert find(record, EffectKind.RANDOMNESS, "impure.py", "np-legacy").count == 2
    assert find(record, EffectKind.ARGUMENT_MUTATION, "helpers.py", "helper-append").count == 2


def pure_model(x: jax.Array) -> jax.Array:
    def layer(carry: jax.Array, _: None) -> tuple[jax.Array, None]:
        return jnp.tanh(carry @ jnp.eye(4) + 1.0), None

    y, _ = jax.lax.scan(layer, x, None, length=3)
    y = jax.lax.cond(y.sum() > 0, jnp.sin, jnp.cos, y)
    return jax.nn.softmax(y) + jax.random.normal(jax.random.key(0), y.shape)


def test_pure_function_and_jax_internals_yield_no_effects() -> None:
    # Lowering and compiling with jax_log_compiles makes JAX itself log and read clocks.
    def trace_lower_compile(f: Callable[..., Any], *args: Any) -> None:
        with jax.log_compiles(True):
            jax.jit(f).trace(*args).lower().compile()

    record = watch(pure_model, F32, trace=trace_lower_compile)
    assert record.effects == ()
    assert record.body_runs == 1


def test_is_user_file_can_exclude_everything(project: types.SimpleNamespace, capsys: Any) -> None:
    fn = project.impure.noisy_step
    with watch_effects(fn.__code__, is_user_file=lambda filename: False) as watcher:
        jax.make_jaxpr(fn)(F32, {"w": F32}, [])
    capsys.readouterr()
    assert watcher.record().effects == ()
    assert watcher.record().body_runs == 1


def test_user_paths_predicate() -> None:
    only_project = user_file_predicate([PROJECT])
    assert only_project(str(PROJECT / "impure.py"))
    assert not only_project(__file__)
    assert default_is_user_file(__file__)
    assert not default_is_user_file(jax.__file__)
    assert not default_is_user_file(logging.__file__)
    assert not default_is_user_file("<string>")


class _CountingProfiler:
    def __init__(self) -> None:
        self.events = 0

    def __call__(self, frame: types.FrameType, event: str, arg: object) -> None:
        self.events += 1


def _fails_while_tracing(x: jax.Array) -> jax.Array:
    print("about to fail")
    raise ValueError("user code failed")


def test_previous_profiler_is_restored_after_an_exception(capsys: Any) -> None:
    previous = _CountingProfiler()
    sys.setprofile(previous)
    try:
        with (
            pytest.raises(ValueError, match="user code failed"),
            watch_effects(_fails_while_tracing.__code__) as watcher,
        ):
            jax.make_jaxpr(_fails_while_tracing)(F32)
        assert sys.getprofile() is previous
    finally:
        sys.setprofile(None)
    assert previous.events > 0  # it was chained, not silenced, during the watch
    assert [e.detail for e in watcher.record().effects] == ["print()"]
    assert sys.gettrace() is None


def test_no_profiler_before_means_none_after(project: types.SimpleNamespace, capsys: Any) -> None:
    assert sys.getprofile() is None
    watch(project.impure.noisy_step, F32, {"w": F32}, [])
    assert sys.getprofile() is None
    assert sys.gettrace() is None


def test_c_level_profiler_is_left_alone() -> None:
    pyinstrument = pytest.importorskip("pyinstrument")
    profiler = pyinstrument.Profiler(async_mode="disabled")
    profiler.start()
    try:
        installed = sys.getprofile()
        with watch_effects(pure_model.__code__) as watcher:
            jax.make_jaxpr(pure_model)(F32)
        assert sys.getprofile() is installed
    finally:
        profiler.stop()
    record = watcher.record()
    assert record.effects == ()
    assert record.notes and "C-level profiler" in record.notes[0]


def _prints_under_a_profiler(x: jax.Array) -> jax.Array:
    print("profiled")
    return x + 1


def test_c_level_profiler_and_effects(capsys: Any) -> None:
    """3.11's profile hook cannot chain a C-level profiler, so it watches nothing; sys.monitoring can."""
    pyinstrument = pytest.importorskip("pyinstrument")
    profiler = pyinstrument.Profiler(async_mode="disabled")
    profiler.start()
    try:
        with watch_effects(_prints_under_a_profiler.__code__) as watcher:
            jax.make_jaxpr(_prints_under_a_profiler)(F32)
    finally:
        profiler.stop()
    record = watcher.record()
    if HAS_MONITORING:
        assert [e.detail for e in record.effects] == ["print()"]
        note = "a C-level profiler (e.g. pyinstrument) was active: it was left alone, and side effects"
        assert record.notes == (f"{note} were watched through sys.monitoring",)
    else:
        assert record.effects == ()
        assert record.notes == ("side effects were not watched: a C-level profiler (e.g. pyinstrument) was active",)


def _prints_in_a_thread(x: jax.Array) -> jax.Array:
    print("thread")
    return x + 1


def test_watches_on_two_threads_do_not_mix(capsys: Any) -> None:
    results: dict[str, EffectsRecord] = {}

    def run(name: str, fn: Callable[..., Any]) -> None:
        results[name] = watch(fn, F32)

    threads = [
        threading.Thread(target=run, args=("printer", _prints_in_a_thread)),
        threading.Thread(target=run, args=("pure", pure_model)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [e.detail for e in results["printer"].effects] == ["print()"]
    assert results["pure"].effects == ()
    assert sys.getprofile() is None


HAS_MONITORING = hasattr(sys, "monitoring")


@pytest.mark.skipif(not HAS_MONITORING, reason="sys.monitoring needs Python 3.12+")
def test_monitoring_and_profile_backends_report_the_same(
    project: types.SimpleNamespace, capsys: pytest.CaptureFixture[str]
) -> None:
    records = {}
    for backend in ("profile", "monitoring"):
        for name in ("effects_project.impure", "effects_project.helpers"):
            importlib.reload(sys.modules[name])  # fresh globals, so both runs see the same changes
        fn = sys.modules["effects_project.impure"].noisy_step
        with watch_effects(fn.__code__, backend=backend) as watcher:  # type: ignore[arg-type]
            jax.make_jaxpr(fn)(F32, {"w": F32}, [])
        records[backend] = watcher.record()
    capsys.readouterr()
    assert set(records["monitoring"].effects) == set(records["profile"].effects)
    assert records["monitoring"].body_runs == records["profile"].body_runs == 1


@pytest.mark.skipif(HAS_MONITORING, reason="only Python 3.11 lacks sys.monitoring")
def test_monitoring_backend_falls_back_to_the_profile_hook_on_311(capsys: Any) -> None:
    def prints(x: jax.Array) -> jax.Array:
        print("tracing")
        return x

    with watch_effects(prints.__code__, backend="monitoring") as watcher:
        jax.make_jaxpr(prints)(F32)
    record = watcher.record()
    assert [e.detail for e in record.effects] == ["print()"]
    assert record.notes == ("sys.monitoring needs Python 3.12+; the profile hook was used instead",)
