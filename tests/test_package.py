"""The package as it would be published: ``python -m build`` makes an sdist and, from it, a wheel that
``twine check`` accepts; the sdist holds the source release and nothing local; the wheel, installed in a
fresh virtual environment outside the clone, traces a file outside the repository.

The build runs once per test run (shared by xdist's workers), on a copy of the source tree (setuptools
writes ``*.egg-info`` and ``build/`` where it builds), without build isolation: the ``test`` extra brings
the build back end (``setuptools``), ``build`` and ``twine``, so nothing is downloaded (the module took
35 s on a busy 2-core machine). The fresh environment has no pip and no packages of its own: it sees
this interpreter's site-packages through a ``.pth`` file (jax is not installed again) and gets the
wheel, without dependencies, from this interpreter's pip.
"""

from __future__ import annotations

import email.parser
import fcntl
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

import jitscope

ROOT = Path(__file__).resolve().parents[1]
# [build-system]'s floor: PEP 639's license-files. Older setuptools would fail the build, not skip it.
for _tool, _least in (("build", None), ("twine", "6.1"), ("setuptools", "77")):
    pytest.importorskip(_tool, minversion=_least, reason=f"{_tool}{'>=' + _least if _least else ''} is not "
                        "installed (the `test` extra has it)")

#: What a local checkout may hold that must never ship: CI's environments, the built docs, reports, caches.
LOCAL_ONLY = {
    ".ci-venv/readme/lib/site.py": "", "docs/_build/html/index.html": "<html>", "jitscope-reports/r.html": "",
    "jitscope-out/trace.json": "{}", "tests/__pycache__/conftest.cpython-311.pyc": "", "dist/old.whl": "",
}
#: Top-level entries of the repository the sdist leaves out on purpose.
NOT_SHIPPED = {".git", ".ci", ".gitignore", "build", "dist", ".ci-venv", "jitscope-reports", "jitscope-out"}


def _run(*args: str | Path, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600,
                            check=False)
    assert result.returncode == 0, f"{' '.join(map(str, args))} failed:\n{result.stdout[-3000:]}{result.stderr[-3000:]}"
    return result


def _build(root: Path) -> None:
    """A copy of the source tree in ``root/jitscope`` (plus a file in each place local work leaves files in),
    and ``python -m build`` of it into ``root/dist``: the sdist, then the wheel built from the unpacked sdist."""
    copy = root / "jitscope"
    skip = shutil.ignore_patterns(".git", ".ci-venv", "build", "dist", "*.egg-info", "__pycache__", "_build",
                                  "jitscope-reports", "jitscope-out", ".*_cache")
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(ROOT, copy, ignore=skip)
    for name, text in LOCAL_ONLY.items():
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        (copy / name).write_text(text)
    _run(sys.executable, "-m", "build", "--no-isolation", "--outdir", root / "dist", copy, cwd=root)


@pytest.fixture(scope="module")
def built(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder holding the copy (``jitscope/``) and what was built from it (``dist/``), built once per run:
    pytest-xdist's workers share the folder above their own temporary folders (xdist's documented recipe)."""
    if not hasattr(request.config, "workerinput"):
        root = tmp_path_factory.mktemp("package")
        _build(root)
        return root
    root = tmp_path_factory.getbasetemp().parent / "package"
    root.mkdir(exist_ok=True)
    with open(root / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the other worker waits for the build, then uses it
        if not (root / "built").exists():
            _build(root)
            (root / "built").touch()
    return root


@pytest.fixture(scope="module")
def source(built: Path) -> Path:
    return built / "jitscope"


@pytest.fixture(scope="module")
def dist(built: Path) -> Path:
    return built / "dist"


def _one(dist: Path, pattern: str) -> Path:
    (path,) = dist.glob(pattern)
    return path


def test_twine_accepts_the_sdist_and_the_wheel(dist: Path) -> None:
    result = _run(sys.executable, "-m", "twine", "check", "--strict", *sorted(dist.iterdir()), cwd=dist)
    assert result.stdout.count("PASSED") == 2, result.stdout


def test_the_metadata_has_the_one_version_and_the_licence(dist: Path) -> None:
    with zipfile.ZipFile(_one(dist, "*.whl")) as wheel:
        info = f"jitscope-{jitscope.__version__}.dist-info"
        metadata = email.parser.Parser().parsestr(wheel.read(f"{info}/METADATA").decode())
        assert f"{info}/licenses/LICENSE" in wheel.namelist()
    assert metadata["Version"] == jitscope.__version__
    assert metadata["License-Expression"] == "Apache-2.0" and metadata["License-File"] == "LICENSE"
    assert metadata["Requires-Python"] == ">=3.11"
    assert metadata["Description-Content-Type"] == "text/markdown"


def test_the_wheel_holds_every_file_of_the_package(dist: Path, source: Path) -> None:
    # A subpackage without __init__.py, or a data file setuptools does not pick up, would be missing.
    package = {p.relative_to(source).as_posix() for p in (source / "jitscope").rglob("*")
               if p.is_file() and "__pycache__" not in p.parts}
    with zipfile.ZipFile(_one(dist, "*.whl")) as wheel:
        shipped = {name for name in wheel.namelist() if name.startswith("jitscope/")}
    assert shipped == package


def test_the_sdist_is_the_source_release_without_local_files(dist: Path, source: Path) -> None:
    with tarfile.open(_one(dist, "*.tar.gz")) as sdist:
        names = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    for needed in ("LICENSE", "README.md", "CHANGELOG.md", "pyproject.toml", "PKG-INFO", "jitscope/__init__.py",
                   "tests/test_package.py", "tests/conftest.py", "examples/mlp.py", "benchmarks/trace_overhead.py",
                   ".pre-commit-hooks.yaml"):
        assert needed in names, f"the sdist lacks {needed}"
    for name in LOCAL_ONLY:
        assert name not in names, f"the sdist ships a local file: {name}"
    shipped_files = {n for n in names if (source / n).is_file()}
    expected = {p.relative_to(source).as_posix() for p in source.rglob("*")
                if p.is_file() and p.relative_to(source).parts[0] not in NOT_SHIPPED and p.suffix != ".pyc"
                and "_build" not in p.parts and "__pycache__" not in p.parts}
    assert expected - shipped_files == set(), "files of the source tree missing from the sdist"


def _site_dirs() -> list[str]:
    """This interpreter's site-packages folders (a venv's own, and any a .pth file added)."""
    dirs = [p for p in sys.path if Path(p).name in ("site-packages", "dist-packages") and Path(p).is_dir()]
    return list(dict.fromkeys([*dirs, sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]))


def test_the_wheel_in_a_fresh_environment_traces_a_file_outside_the_repository(
    dist: Path, tmp_path: Path
) -> None:
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=tmp_path)
    python = venv / "bin" / "python"
    site = Path(_run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=tmp_path)
                .stdout.strip())
    # Plain folders, not site dirs: the .pth files there (an editable install of this clone) are not run.
    (site / "parent-site-packages.pth").write_text("\n".join(_site_dirs()) + "\n")
    # --ignore-installed: the parent's own jitscope (a regular install, as in CI) is on the .pth path; pip would
    # call the wheel "already satisfied" and install nothing.
    _run(sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-deps", "--no-index",
         "--ignore-installed", _one(dist, "*.whl"), cwd=tmp_path)

    project = tmp_path / "project"
    project.mkdir()
    (project / "model.py").write_text(
        "import jax.numpy as jnp\n\n\ndef predict(w, x):\n    return jnp.tanh(x @ w).sum()\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(NO_COLOR="1", COLUMNS="100", PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}")
    where = _run(python, "-c", "import jitscope; print(jitscope.__file__)", cwd=project, env=env).stdout
    assert Path(where.strip()).is_relative_to(venv), f"jitscope was imported from {where}, not the wheel"
    assert _run("jitscope", "--version", cwd=project, env=env).stdout == f"jitscope {jitscope.__version__}\n"

    result = _run("jitscope", "trace", "model.py:predict", "--shapes", "f32[4,3], f32[8,4]", cwd=project, env=env)
    for text in ("jaxpr", "tanh", "model.py:5", "StableHLO", "HLO (optimised)"):
        assert text in result.stdout, f"{text!r} missing from the trace:\n{result.stdout}"
