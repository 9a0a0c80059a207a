"""How often is ``jitscope lint`` wrong on real, well-kept JAX code?

Lints the installed sources of two corpora of JAX projects and reports, per package:
files, lines, findings and *wrong findings per 10,000 lines*, judged from verdicts kept
in ``benchmarks/lint_verdicts.json``:

- ``tuned``: jax, optax, flax, equinox (the rules were developed against them);
- ``untuned``: numpyro, blackjax, jaxopt, distrax, optimistix, lineax, jraph, gymnax,
  evosax, dynamax (never looked at while the rules were first written; its wrong findings
  have since been read and fixed, so it is no longer unseen code);
- ``fresh``: chex, orbax, jaxtyping, tensorflow_probability, treescope (added after that, read
  once before any fix for it: the honest figure until it too is fixed against);
- ``repos``: brax, MuJoCo's mjx, jax-md, pgx, levanter, bayeux (physics simulation, molecular
  dynamics, RL environments, large-model training, probabilistic programming): public repositories
  at pinned commits, examples and tests included, read once before any rule change for them
  (issue 21). They are not pip packages: check each out as ``DIR/owner+name`` and pass
  ``--repos DIR`` (or set ``JITSCOPE_LINT_REPOS``); ``--clone-commands`` prints the git commands.
- ``reach``: kfac-jax and jumanji (a second-order optimizer, an RL environment suite; issue 34), checked
  out the same way: the corpus of ``lint_reach.py``, which measures how much of their compiled code the
  linter analyses as traced.

Every finding has a verdict: ``wrong`` (the analysis is mistaken), ``harmless`` (true as
stated but intended or without consequence) or ``real`` (a hazard worth fixing). A verdict
is keyed by package, path inside the package, rule code and a hash of the flagged source
line with whitespace normalised (not the line number, so it survives unrelated edits).
Findings without a verdict are listed so that they get read; ``--template`` prints JSON
entries for them to fill in. Verdicts whose finding is gone are counted as "stale" (a
fixed false positive, or code that moved).

Install the corpora into the venv that runs this script (the package index is enough)::

    pip install -e . optax flax equinox numpyro blackjax jaxopt distrax optimistix lineax \\
        jraph gymnax evosax dynamax chex orbax-checkpoint jaxtyping tensorflow-probability treescope
    python benchmarks/lint_false_positives.py [--corpus tuned|untuned|fresh|repos|reach|all] [--packages ...]
        [--show] [--code JS201] [--verdict wrong] [--template]
    python benchmarks/lint_false_positives.py --quick   # smoke run: jitscope's own source only

A package that is not installed is reported as skipped: the script needs none of them.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from machine import watch_machine

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from jitscope.config import LintConfig
from jitscope.linter import lint_paths
from jitscope.model.lint import Finding

CORPORA: dict[str, tuple[str, ...]] = {
    "tuned": ("jax", "optax", "flax", "equinox"),
    "untuned": (
        "numpyro",
        "blackjax",
        "jaxopt",
        "distrax",
        "optimistix",
        "lineax",
        "jraph",
        "gymnax",
        "evosax",
        "dynamax",
    ),
    # added after every wrong finding of the untuned corpus had been fixed against it: unseen code
    # again, read once before any fix for it (first reading: 19 findings, 15 wrong)
    "fresh": ("chex", "orbax", "jaxtyping", "tensorflow_probability", "treescope"),
    # added for issue 21, after the fresh corpus had been fixed against: read once before any rule change
    # for it (first reading: 61 findings, 31 wrong, 1.14 per 10k lines)
    "repos": ("brax", "mjx", "jax_md", "pgx", "levanter", "bayeux"),
    # issue 34: an RL environment suite and a second-order optimizer, read before the linter followed
    # project jit factories, jax.jit(obj.method) and modules (first reading: 4 findings, 2 wrong)
    "reach": ("kfac_jax", "jumanji"),
}
#: the repos corpus: name -> (GitHub repository, commit, folder linted inside the checkout). mjx is the
#: JAX part of the MuJoCo repository (the rest is C++ and the C API's Python bindings).
REPOSITORIES: dict[str, tuple[str, str, str]] = {
    "brax": ("google/brax", "0b96d056328d15ea7ebfd3ce07f42be72ec76e40", ""),
    "mjx": ("google-deepmind/mujoco", "a7255075b003506ff5f34b512d88e02df12a73c6", "mjx"),
    "jax_md": ("jax-md/jax-md", "a41c7d19f6468f4e5263c32c12c9ed6cba26ebff", ""),
    "pgx": ("sotetsuk/pgx", "079b2d730e3845c25d49d99e0ccf9a374dd04cb9", ""),
    "levanter": ("stanford-crfm/levanter", "9263f81e8b453241332c2c0b2d2001bfb2d2241c", ""),
    "bayeux": ("jax-ml/bayeux", "772ac59db9ed9cf315ad363d931c2e9fa8d44582", ""),
    "kfac_jax": ("google-deepmind/kfac-jax", "babd85368ca209861ac947c829c0cf57592f7d22", ""),
    "jumanji": ("instadeepai/jumanji", "590005b0fb305b1a98a4828bfb6b2ea28b47dd5b", ""),
}
VERDICTS = Path(__file__).with_name("lint_verdicts.json")
KINDS = ("wrong", "harmless", "real")

Key = tuple[str, str, str, str]


def installed_source(package: str) -> Path | None:
    """The source directory of an installed package, found without importing it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def repository_source(package: str, repos: Path | None) -> Path | None:
    """The linted folder of a repository of the repos corpus, checked out under ``repos`` (None: absent)."""
    if repos is None:
        return None
    repository, _, folder = REPOSITORIES[package]
    path = repos / repository.replace("/", "+") / folder
    return path if path.is_dir() else None


def clone_commands(repos: Path) -> str:
    lines = []
    for repository, commit, _ in REPOSITORIES.values():
        target = repos / repository.replace("/", "+")
        lines.append(f"git clone https://github.com/{repository} {target} && git -C {target} checkout {commit}")
    return "\n".join(lines)


def line_hash(text: str) -> str:
    """A hash of one source line that ignores indentation and runs of whitespace."""
    normalised = " ".join(text.split())
    return hashlib.sha1(normalised.encode()).hexdigest()[:12]


@dataclass(frozen=True, slots=True)
class Judged:
    """One finding, located inside its package, with its verdict (None: not read yet)."""

    package: str
    path: str
    finding: Finding
    text: str
    verdict: str | None

    @property
    def key(self) -> Key:
        return (self.package, self.path, self.finding.code, line_hash(self.text))


def load_verdicts(path: Path) -> dict[Key, dict[str, str]]:
    if not path.exists():
        return {}
    entries = json.loads(path.read_text())
    out: dict[Key, dict[str, str]] = {}
    for entry in entries:
        if entry["verdict"] not in KINDS:
            raise SystemExit(f"{path}: unknown verdict {entry['verdict']!r} in {entry}")
        out[(entry["package"], entry["path"], entry["code"], entry["hash"])] = entry
    return out


def judge(
    package: str, source: Path, findings: list[Finding], verdicts: dict[Key, dict[str, str]]
) -> list[Judged]:
    cache: dict[Path, list[str]] = {}
    out = []
    for f in findings:
        path = Path(f.file)
        if not path.is_absolute():
            # lint_paths reports files under the working directory relative to it, others absolute.
            candidates = (Path.cwd() / path, source / path)
            path = next((p for p in candidates if p.exists()), candidates[0])
        if path not in cache:
            try:
                cache[path] = path.read_text(errors="replace").splitlines()
            except OSError:
                cache[path] = []
        lines = cache[path]
        text = lines[f.line - 1].strip() if 0 < f.line <= len(lines) else ""
        rel = path.relative_to(source).as_posix() if path.is_relative_to(source) else path.as_posix()
        key = (package, rel, f.code, line_hash(text))
        entry = verdicts.get(key)
        out.append(Judged(package, rel, f, text, entry["verdict"] if entry else None))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", choices=(*CORPORA, "all"), default="all")
    parser.add_argument("--packages", nargs="+", default=None, help="lint these packages instead")
    parser.add_argument("--show", action="store_true", help="print every finding with its line and verdict")
    parser.add_argument("--code", default=None, help="with --show: only this rule")
    parser.add_argument("--verdict", default=None, help="with --show: only this verdict (or 'none')")
    parser.add_argument("--template", action="store_true", help="print JSON entries for unjudged findings")
    parser.add_argument("--verdicts", type=Path, default=VERDICTS)
    parser.add_argument("--quick", action="store_true", help="smoke run: lint jitscope's own source only")
    parser.add_argument(
        "--repos",
        type=Path,
        default=Path(os.environ["JITSCOPE_LINT_REPOS"]) if os.environ.get("JITSCOPE_LINT_REPOS") else None,
        help="folder holding the repos corpus as owner+name checkouts (default: $JITSCOPE_LINT_REPOS)",
    )
    parser.add_argument("--clone-commands", action="store_true", help="print how to check out the repos corpus")
    args = parser.parse_args()
    if args.clone_commands:
        print(clone_commands(args.repos or Path("repos")))
        return
    if args.quick:
        args.packages = ["jitscope"]
    with watch_machine():
        report_corpora(args)


def report_corpora(args: argparse.Namespace) -> None:
    verdicts = load_verdicts(args.verdicts)
    if args.packages:
        corpora = {"selected": tuple(args.packages)}
    elif args.corpus == "all":
        corpora = CORPORA
    else:
        corpora = {args.corpus: CORPORA[args.corpus]}

    used: set[Key] = set()
    unjudged: list[Judged] = []
    header = (
        f"{'package':<11}{'files':>6}{'lines':>10}{'findings':>9}{'wrong':>6}{'harmless':>9}{'real':>5}"
        f"{'wrong/10k':>10}{'time':>7}  by rule"
    )
    tables: list[str] = []
    for corpus, packages in corpora.items():
        rows = [f"corpus: {corpus}", header]
        totals: Counter[str] = Counter()
        for package in packages:
            in_repos = package in REPOSITORIES
            source = repository_source(package, args.repos) if in_repos else installed_source(package)
            if source is None:
                rows.append(f"{package:<11} " + ("not checked out (--repos), skipped" if in_repos
                                                 else "not installed, skipped"))
                continue
            start = time.perf_counter()
            report = lint_paths([source], LintConfig(), root=source)
            elapsed = time.perf_counter() - start
            judged = judge(package, source, list(report.findings), verdicts)
            counts = Counter(j.verdict or "none" for j in judged)
            used.update(j.key for j in judged)
            unjudged.extend(j for j in judged if j.verdict is None)
            n_lines = report.lines_checked
            totals.update(counts)
            totals.update({"files": report.files_checked, "lines": n_lines, "findings": len(judged)})
            by_rule = Counter(j.finding.code for j in judged)
            rows.append(
                f"{package:<11}{report.files_checked:>6}{n_lines:>10,}{len(judged):>9}{counts['wrong']:>6}"
                f"{counts['harmless']:>9}{counts['real']:>5}{_per10k(counts['wrong'], n_lines):>10.2f}"
                f"{elapsed:>6.1f}s  " + (", ".join(f"{c} {n}" for c, n in sorted(by_rule.items())) or "-")
            )
            if args.show:
                for j in judged:
                    if (args.code and j.finding.code != args.code) or (
                        args.verdict and (j.verdict or "none") != args.verdict
                    ):
                        continue
                    f = j.finding
                    print(
                        f"{package}/{j.path}:{f.line}:{f.column}: {f.code} {f.severity} [{f.function}] "
                        f"({j.verdict or 'no verdict'}) {f.message}\n    | {j.text}"
                    )
        rows.append(
            f"{'all':<11}{totals['files']:>6}{totals['lines']:>10,}{totals['findings']:>9}{totals['wrong']:>6}"
            f"{totals['harmless']:>9}{totals['real']:>5}{_per10k(totals['wrong'], totals['lines']):>10.2f}"
        )
        if totals["none"]:
            rows.append(f"  {totals['none']} findings have no verdict yet (listed below)")
        tables.append("\n".join(rows))

    print()
    print("\n\n".join(tables))
    linted = {p for packages in corpora.values() for p in packages}
    stale = [k for k in verdicts if k not in used and k[0] in linted]
    if stale:
        print(f"\n{len(stale)} verdicts match no finding any more (fixed, or the code moved)")
    if unjudged:
        print(
            f"\nfindings without a verdict ({len(unjudged)}): read them and add them to {args.verdicts.name}"
        )
        for j in unjudged:
            f = j.finding
            print(f"  {j.package}/{j.path}:{f.line}: {f.code} [{f.function}] {f.message}\n    | {j.text}")
        if args.template:
            entries = {
                j.key: {
                    "package": j.package,
                    "path": j.path,
                    "code": j.finding.code,
                    "hash": line_hash(j.text),
                    "line": j.text,
                    "verdict": "",
                    "reason": "",
                }
                for j in unjudged
            }
            print(json.dumps(list(entries.values()), indent=1, ensure_ascii=False))


def _per10k(count: int, lines: int) -> float:
    return 1e4 * count / lines if lines else 0.0


if __name__ == "__main__":
    main()
