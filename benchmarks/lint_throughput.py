"""How fast is ``jitscope lint`` on a big real code base?

Lints the installed ``jax`` package's source (about 600 files, 300k lines) and, side by
side in the same run, measures

1. ``jitscope lint DIR`` as a user runs it (a fresh process, all cores, JSON to /dev/null);
2. ``flake8 --select E,F DIR`` (a fresh process; flake8 uses all cores by default);
3. the floor: a bare ``ast.parse`` of every file, in this process, one core.

Each is run ``--repeat`` times, interleaved (so all three see the same background load);
the medians are reported, and the ratios as the median, min and max of the per-round ratios.
Targets: jitscope <= 0.15 x flake8's wall time, and within 2 x the bare-parse floor.
flake8 is optional: without it (or with ``--no-flake8``) jitscope is compared with the floor only.

    python benchmarks/lint_throughput.py [--path DIR] [--repeat 3] [--jobs N] [--no-flake8]
    python benchmarks/lint_throughput.py --quick   # smoke run: one round on jitscope's own source
"""

from __future__ import annotations

import argparse
import ast
import gc
import importlib.metadata
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from machine import LoadWatch, spread, watch_machine

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


FLAKE8_MISSING = (
    "flake8 is not installed: `python -m pip install flake8` to compare against it; "
    "reporting jitscope against the parse floor only"
)
FLAKE8_SKIPPED = "flake8 skipped (--no-flake8): reporting jitscope against the parse floor only"


def find_flake8() -> list[str] | None:
    """The command that runs flake8: on PATH, else as a module of this Python; None if neither."""
    on_path = shutil.which("flake8")
    if on_path:
        return [on_path]
    if importlib.util.find_spec("flake8") is not None:
        return [sys.executable, "-m", "flake8"]
    return None


def installed_version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "?"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--path", type=Path, default=None, help="source tree to lint [installed jax]")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=None, help="jitscope worker processes [all cores]")
    parser.add_argument("--no-flake8", action="store_true", help="do not run flake8, even if installed")
    parser.add_argument(
        "--quick", action="store_true", help="smoke run: one round on jitscope's own source (unless --path)"
    )
    args = parser.parse_args()
    if args.quick:
        args.repeat = 1
        args.path = args.path or ROOT / "jitscope"
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")

    with watch_machine() as machine:
        measure(args, machine)


def measure(args: argparse.Namespace, machine: LoadWatch) -> None:
    target = args.path or installed_source("jax")
    files = python_files(target)
    lines = sum(len(p.read_bytes().splitlines()) for p in files)
    flake8 = None if args.no_flake8 else find_flake8()
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

    about = f"jax {installed_version('jax')}, " if args.path is None else ""
    print(f"target: {target} ({about}{len(files)} files, {lines:,} lines), {args.repeat} round(s)")
    if flake8 is None:
        print(FLAKE8_SKIPPED if args.no_flake8 else FLAKE8_MISSING)
    else:
        print(f"flake8 {installed_version('flake8')}: {' '.join(flake8)}")
    times: dict[str, list[float]] = {"jitscope": [], "parse": []}
    if flake8 is not None:
        times["flake8"] = []
    report = None
    for i in range(args.repeat):
        elapsed, result = run(jitscope_cmd)
        if result.returncode not in (0, 1):
            raise SystemExit(f"jitscope failed ({result.returncode}): {result.stderr[-2000:]}")
        report = json.loads(result.stdout)
        times["jitscope"].append(elapsed)
        if flake8 is not None:
            elapsed, result = run([*flake8, "--select", "E,F", str(target)])
            if result.returncode not in (0, 1):
                raise SystemExit(f"flake8 failed ({result.returncode}): {result.stderr[-2000:]}")
            times["flake8"].append(elapsed)
        gc.collect()
        times["parse"].append(bare_parse(files))
        machine.sample()
        print(f"  round {i + 1}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in times.items()))

    med = {k: statistics.median(v) for k, v in times.items()}
    assert report is not None
    internal = [f for f in report["findings"] if f["code"] == "JS000" and "internal error" in f["message"]]
    print()
    print(
        f"jitscope lint       {med['jitscope']:6.2f} s  ({lines / med['jitscope']:,.0f} lines/s, "
        f"{report['summary']['total']} findings, {len(internal)} internal errors)"
    )
    if flake8 is not None:
        print(f"flake8 --select E,F {med['flake8']:6.2f} s")
    print(f"bare ast.parse      {med['parse']:6.2f} s  (one core, in process)")
    print()
    # Per-round ratios: both sides of one round saw the same load, so their spread shows the noise.
    if flake8 is not None:
        per_round = [a / b for a, b in zip(times["jitscope"], times["flake8"], strict=True)]
        print(f"jitscope / flake8      = ratio {spread(per_round, 'rounds')}   (target <= 0.15)")
    per_round = [a / b for a, b in zip(times["jitscope"], times["parse"], strict=True)]
    print(f"jitscope / bare parse  = ratio {spread(per_round, 'rounds')}   (target <= 2)")
    if internal:
        raise SystemExit(
            f"{len(internal)} internal errors, e.g. {internal[0]['file']}: {internal[0]['message']}"
        )


if __name__ == "__main__":
    main()
