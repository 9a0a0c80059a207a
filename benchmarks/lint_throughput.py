"""How fast is ``jitscope lint`` on a big real code base?

Lints the installed ``jax`` package's source (about 600 files, 300k lines) and, side by
side in the same run, measures

1. ``jitscope lint DIR`` as a user runs it (a fresh process, all cores, JSON to /dev/null);
2. ``flake8 --select E,F DIR`` (a fresh process; flake8 uses all cores by default);
3. the floor: a bare ``ast.parse`` of every file, in this process, one core.

Each is run ``--repeat`` times, interleaved (so all three see the same background load);
the median is reported. Targets: jitscope <= 0.25 x flake8's wall time, and within 2 x
the bare-parse floor.

    python benchmarks/lint_throughput.py [--path DIR] [--repeat 3] [--jobs N]
"""

from __future__ import annotations

import argparse
import ast
import gc
import importlib.util
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def installed_source(package: str) -> Path:
    """The source directory of an installed package, found without importing it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"{package} is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


def python_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def bare_parse(files: list[Path]) -> float:
    """Read and ``ast.parse`` every file, keeping no tree alive (the floor any AST linter pays)."""
    start = time.perf_counter()
    for path in files:
        data = path.read_bytes()
        try:
            ast.parse(data)
        except (SyntaxError, ValueError):
            pass
    return time.perf_counter() - start


def run(cmd: list[str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    start = time.perf_counter()
    result = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env, check=False)
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--path", type=Path, default=None, help="source tree to lint [installed jax]")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=None, help="jitscope worker processes [all cores]")
    args = parser.parse_args()

    target = args.path or installed_source("jax")
    files = python_files(target)
    lines = sum(len(p.read_bytes().splitlines()) for p in files)
    flake8 = shutil.which("flake8") or str(Path(sys.executable).with_name("flake8"))
    jitscope_cmd = [
        sys.executable,
        "-m",
        "jitscope",
        "lint",
        str(target),
        "--format",
        "json",
        "--select",
        "ALL",
    ]
    if args.jobs:
        jitscope_cmd += ["--jobs", str(args.jobs)]
    flake8_cmd = [flake8, "--select", "E,F", str(target)]

    print(f"target: {target} ({len(files)} files, {lines:,} lines)")
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}"
    )
    times: dict[str, list[float]] = {"jitscope": [], "flake8": [], "parse": []}
    report = None
    for i in range(args.repeat):
        elapsed, result = run(jitscope_cmd)
        if result.returncode not in (0, 1):
            raise SystemExit(f"jitscope failed ({result.returncode}): {result.stderr[-2000:]}")
        report = json.loads(result.stdout)
        times["jitscope"].append(elapsed)
        elapsed, result = run(flake8_cmd)
        if result.returncode not in (0, 1):
            raise SystemExit(f"flake8 failed ({result.returncode}): {result.stderr[-2000:]}")
        times["flake8"].append(elapsed)
        gc.collect()
        times["parse"].append(bare_parse(files))
        print(f"  round {i + 1}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in times.items()))

    med = {k: statistics.median(v) for k, v in times.items()}
    assert report is not None
    internal = [f for f in report["findings"] if f["code"] == "JS000" and "internal error" in f["message"]]
    print()
    print(
        f"jitscope lint       {med['jitscope']:6.2f} s  ({lines / med['jitscope']:,.0f} lines/s, "
        f"{report['summary']['total']} findings, {len(internal)} internal errors)"
    )
    print(f"flake8 --select E,F {med['flake8']:6.2f} s")
    print(f"bare ast.parse      {med['parse']:6.2f} s  (one core, in process)")
    print()
    print(f"jitscope / flake8      = {med['jitscope'] / med['flake8']:.3f}   (target <= 0.25)")
    print(f"jitscope / bare parse  = {med['jitscope'] / med['parse']:.3f}   (target <= 2)")
    if internal:
        raise SystemExit(
            f"{len(internal)} internal errors, e.g. {internal[0]['file']}: {internal[0]['message']}"
        )


if __name__ == "__main__":
    main()
