"""What counts as the user's code for trace: the target's project, or [tool.jitscope] source."""

from __future__ import annotations

import os

import pytest

from jitscope.errors import ConfigError
from jitscope.tracing.project import source_roots
from jitscope.userframes import library_path, project_file_predicate


def _write(path, text=""):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_a_plain_module_is_its_folder(tmp_path):
    module = _write(tmp_path / "examples" / "mlp.py")
    assert source_roots(str(module)) == (str((tmp_path / "examples").resolve()),)


def test_a_package_module_is_its_top_level_package(tmp_path):
    _write(tmp_path / "src" / "mypkg" / "__init__.py")
    _write(tmp_path / "src" / "mypkg" / "models" / "__init__.py")
    module = _write(tmp_path / "src" / "mypkg" / "models" / "gpt.py")
    assert source_roots(str(module)) == (str((tmp_path / "src" / "mypkg").resolve()),)


def test_source_setting_names_the_folders(tmp_path):
    _write(tmp_path / "pyproject.toml", '[tool.jitscope]\nsource = ["src", "scripts"]\n')
    module = _write(tmp_path / "scripts" / "train.py")
    assert source_roots(str(module)) == (str((tmp_path / "src").resolve()), str((tmp_path / "scripts").resolve()))


def test_a_bad_source_setting_is_one_clear_error(tmp_path):
    _write(tmp_path / "pyproject.toml", "[tool.jitscope]\nsource = 3\n")
    with pytest.raises(ConfigError, match="'source' must be a list of folders"):
        source_roots(str(_write(tmp_path / "train.py")))


def test_no_file_no_roots():
    assert source_roots(None) == () and source_roots("<stdin>") == ()


def test_project_files_are_the_roots_files_and_never_jax_or_jitscope(tmp_path):
    import jax

    import jitscope

    inside = _write(tmp_path / "proj" / "model.py")
    is_user = project_file_predicate([tmp_path / "proj"])
    assert is_user(str(inside))
    assert not is_user(str(_write(tmp_path / "other" / "helper.py")))
    assert not is_user("<string>")
    # A root that holds JAX or jitscope (source = ["."] in a checkout) still leaves them out.
    broad = project_file_predicate([os.path.dirname(os.path.dirname(jitscope.__file__)), os.path.dirname(jax.__file__)])
    assert not broad(jitscope.__file__) and not broad(jax.__file__)


def test_library_paths_read_from_site_packages():
    assert library_path("/venv/lib/python3.11/site-packages/flax/nnx/nn/attention.py") == "flax/nnx/nn/attention.py"
    assert library_path("/usr/lib/python3/dist-packages/optax/_src/transform.py") == "optax/_src/transform.py"
