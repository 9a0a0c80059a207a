"""The guide's rule table (docs/guide.md), rendered from the registry.

``python -m jitscope.linter.docs`` rewrites the table between the ``<!-- rules:start -->`` and
``<!-- rules:end -->`` markers of README.md; ``--check`` only says whether it is stale (exit 1).
A test runs the check, so a new rule cannot ship with an outdated README.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from jitscope.linter.registry import RULES

START = "<!-- rules:start -->"
END = "<!-- rules:end -->"
README = Path(__file__).resolve().parents[2] / "docs" / "guide.md"


def render_rule_table() -> str:
    """The Markdown table of every rule, in code order."""
    rows = ["| code | name | default severity | what it flags |", "|---|---|---|---|"]
    for rule in RULES:
        summary = rule.summary
        if rule.dynamic_only:
            summary += " (dynamic: reported by `jitscope lint --trace`)"
        rows.append(f"| `{rule.code}` | `{rule.name}` | {rule.severity} | {summary} |")
    return "\n".join(rows) + "\n"


def with_rule_table(text: str) -> str:
    """``text`` with the table between the markers replaced by the rendered one."""
    start, end = text.find(START), text.find(END)
    if start < 0 or end < start:
        raise ValueError(f"README lacks the markers {START} ... {END}")
    return text[: start + len(START)] + "\n" + render_rule_table() + text[end:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jitscope.linter.docs", description=__doc__)
    parser.add_argument("readme", nargs="?", type=Path, default=README)
    parser.add_argument("--check", action="store_true", help="exit 1 if the table is stale; write nothing")
    args = parser.parse_args(argv)
    text = args.readme.read_text(encoding="utf-8")
    updated = with_rule_table(text)
    if updated == text:
        return 0
    if args.check:
        print(f"{args.readme}: the rule table is stale; run python -m jitscope.linter.docs", file=sys.stderr)
        return 1
    args.readme.write_text(updated, encoding="utf-8")
    print(f"{args.readme}: rule table updated", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
