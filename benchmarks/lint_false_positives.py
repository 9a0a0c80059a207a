"""How noisy is ``jitscope lint`` on correct, well-kept JAX code?

Lints the installed sources of jax, optax, flax and equinox (install them first:
``pip install optax flax equinox``) and reports, per package and per rule, the number of
findings and findings per 10,000 lines. Every finding on this code is a candidate false
positive: read them with ``--show`` (optionally ``--code JS201``) and decide.

    python benchmarks/lint_false_positives.py [--packages jax optax flax equinox] [--show] [--code JS201]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from jitscope.config import LintConfig
from jitscope.lint import lint_paths

PACKAGES = ("jax", "optax", "flax", "equinox")


def installed_source(package: str) -> Path | None:
    """The source directory of an installed package, found without importing it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--packages", nargs="+", default=list(PACKAGES))
    parser.add_argument("--show", action="store_true", help="print every finding with its source line")
    parser.add_argument("--code", default=None, help="with --show: only this rule")
    args = parser.parse_args()

    totals: Counter[str] = Counter()
    total_lines = 0
    rows = []
    for package in args.packages:
        source = installed_source(package)
        if source is None:
            print(f"{package}: not installed, skipped")
            continue
        start = time.perf_counter()
        report = lint_paths([source], LintConfig(), root=source)
        elapsed = time.perf_counter() - start
        per_rule = Counter(f.code for f in report.findings)
        totals.update(per_rule)
        total_lines += report.lines_checked
        rows.append(
            (package, report.files_checked, report.lines_checked, len(report.findings), per_rule, elapsed)
        )
        if args.show:
            for f in report.findings:
                if args.code and f.code != args.code:
                    continue
                path = Path(f.file) if Path(f.file).is_absolute() else Path.cwd() / f.file
                lines = path.read_text(errors="replace").splitlines()
                text = lines[f.line - 1].strip() if 0 < f.line <= len(lines) else ""
                shown = path.relative_to(source.parent) if path.is_relative_to(source.parent) else path
                print(f"{shown}:{f.line}:{f.column}: {f.code} [{f.function}] {f.message}\n    | {text}")

    print()
    print(
        f"{'package':<10}{'files':>7}{'lines':>10}{'findings':>10}{'per 10k lines':>15}{'time':>8}  by rule"
    )
    for package, files, n_lines, count, per_rule, elapsed in rows:
        density = 1e4 * count / n_lines if n_lines else 0.0
        by_rule = ", ".join(f"{code} {n}" for code, n in sorted(per_rule.items())) or "-"
        print(f"{package:<10}{files:>7}{n_lines:>10,}{count:>10}{density:>15.2f}{elapsed:>7.1f}s  {by_rule}")
    count = sum(totals.values())
    density = 1e4 * count / total_lines if total_lines else 0.0
    print(f"{'all':<10}{'':>7}{total_lines:>10,}{count:>10}{density:>15.2f}")
    print()
    print("findings per 10k lines, per rule:")
    for code, n in sorted(totals.items()):
        print(f"  {code}  {n:>4}  {1e4 * n / total_lines:6.2f}")


if __name__ == "__main__":
    main()
