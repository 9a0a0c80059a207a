from __future__ import annotations

import sys
from pathlib import Path

import pytest

import jitscope
from jitscope.errors import TargetError, UserCodeError
from jitscope.load.specs import ArraySpec
from jitscope.load.target import importable, load_targets, split_target

PROJ = Path(__file__).resolve().parents[1] / "targets" / "loadproj"


@pytest.fixture(autouse=True)
def _forget_fixture_modules():
    yield
    for name in [n for n in sys.modules if n == "pkg" or n.startswith("pkg.")]:
        del sys.modules[name]


def test_split_target():
    assert split_target("a/b.py:f") == ("a/b.py", "f")
    assert split_target("pkg.mod:Model.apply") == ("pkg.mod", "Model.apply")
    assert split_target("a/b.py") == ("a/b.py", "*")
    with pytest.raises(TargetError, match="expected MODULE:FUNCTION"):
        split_target("pkg.mod")


def test_dotted_module_target_unwraps_jit_and_restores_sys_path():
    before = list(sys.path)
    (handle,) = load_targets("pkg.models:with_statics", cwd=PROJ)
    assert sys.path == before
    assert handle.fn.__name__ == "with_statics" and not hasattr(handle.fn, "lower")
    assert handle.options.static_argnames == ("n",)
    assert handle.options.donate_argnums == (0,)
    assert handle.options.from_user_jit
    assert "unwrapped its jax.jit wrapper" in handle.how
    assert [a.kwargs["n"] for a in handle.examples] == [1, 2]


def test_file_target_with_sibling_imports():
    (handle,) = load_targets("pkg/models.py:plain_jit", cwd=PROJ)
    assert handle.name == "pkg/models.py:plain_jit"
    assert handle.examples[0].args == (ArraySpec((3,), "float32"),)


def test_jit_of_existing_function_keeps_static_argnums():
    (handle,) = load_targets("pkg.models:made", cwd=PROJ)
    assert handle.fn.__name__ == "raw"
    assert handle.options.static_argnums == (1,)


def test_dotted_attribute_and_bound_method():
    (handle,) = load_targets("pkg.models:model.apply", cwd=PROJ)
    assert handle.fn.__self__.k == 3.0
    assert handle.examples[0].args == (ArraySpec((2, 2), "float32"),)


def test_star_loads_every_jitted_function_with_examples():
    names = [h.attr_path for h in load_targets("pkg.models:*", cwd=PROJ)]
    assert names == ["plain_jit", "with_statics", "model.apply"]


def test_missing_module():
    with pytest.raises(TargetError, match="no module named 'nope'"):
        load_targets("nope.mod:f", cwd=PROJ)


def test_missing_file():
    with pytest.raises(TargetError, match="file not found: nope.py"):
        load_targets("nope.py:f", cwd=PROJ)


def test_missing_attribute_suggests_close_names():
    with pytest.raises(TargetError) as info:
        load_targets("pkg.models:plain_jt", cwd=PROJ)
    assert "has no attribute 'plain_jt'" in info.value.message
    assert "did you mean 'plain_jit'" in (info.value.hint or "")


def test_not_callable():
    with pytest.raises(TargetError, match="is a int, not a function"):
        load_targets("pkg.models:NOT_CALLABLE", cwd=PROJ)


def test_import_error_in_user_module_shows_user_traceback():
    with pytest.raises(UserCodeError) as info:
        load_targets("broken_import.py:helper", cwd=PROJ)
    assert "NameError" in info.value.message
    detail = info.value.detail or ""
    assert "broken_import.py" in detail and "undefined_name" in detail
    # No frames from importlib or from jitscope's own package (the clone's folder may well be named jitscope).
    package_dir = str(Path(jitscope.__file__).resolve().parent)
    assert "importlib" not in detail and package_dir not in detail and 'File "jitscope/' not in detail


def test_missing_dependency_of_user_module_is_an_import_error_not_a_missing_target():
    with pytest.raises(UserCodeError, match="ModuleNotFoundError"):
        load_targets("missing_dep.py:f", cwd=PROJ)


def test_syntax_error():
    with pytest.raises(UserCodeError, match=r"syntax error in .*syntax_error.py:2"):
        load_targets("syntax_error.py:f", cwd=PROJ)


def test_importable_restores_on_error(tmp_path):
    before = list(sys.path)
    with pytest.raises(RuntimeError), importable(tmp_path):
        assert sys.path[0] == str(tmp_path)
        raise RuntimeError
    assert sys.path == before
