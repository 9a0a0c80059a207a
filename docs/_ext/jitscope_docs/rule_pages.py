"""``reference/rules/``: one page per lint rule, from the rule classes (their docstrings and fields)."""

from __future__ import annotations

from jitscope_docs.markdown import escape


def rule_page(rule: type) -> str:
    """A rule's page: its code and name, severity, what it flags, then its docstring (Markdown headings)."""
    info = rule.info()  # type: ignore[attr-defined]
    facts = [f"Default severity: **{info.severity}**."]
    if getattr(rule, "fixable", False):
        facts.append("`jitscope lint --fix` fixes it where the rewrite is provably the same computation.")
    if info.dynamic_only:
        facts.append("Dynamic: reported by `jitscope lint --trace`, from what happened while tracing.")
    return "\n".join([
        f"# {info.code} `{info.name}`", "", escape(info.summary[:1].upper() + info.summary[1:]) + ".", "",
        " ".join(facts), "", f"`jitscope rule {info.code}` prints this page in the terminal; "
        f"`# jitscope: ignore[{info.code}]` on a line suppresses it there.", "", _body(info.docs), "",
    ])


def _body(docs: str) -> str:
    """The docstring without its one-line summary (the page's title says it)."""
    parts = docs.split("\n", 1)
    return parts[1].strip() if len(parts) > 1 else ""


def rule_table(rules: tuple[type, ...]) -> str:
    rows = ["| code | name | default severity | what it flags |", "| --- | --- | --- | --- |"]
    for rule in rules:
        summary = escape(rule.summary)  # type: ignore[attr-defined]
        if rule.dynamic_only:  # type: ignore[attr-defined]
            summary += " (dynamic: `jitscope lint --trace`)"
        rows.append(f"| [{rule.code}]({rule.code}.md) | `{rule.name}` | {rule.severity} | {summary} |")  # type: ignore[attr-defined]
    return "\n".join(rows)


def rule_pages() -> dict[str, str]:
    from jitscope.linter.registry import RULES

    index = "\n".join([
        "# Lint rules", "", "Every rule `jitscope lint` checks, generated from the rule modules "
        "(`jitscope/linter/rules/`). Codes are a stable contract: `JS0xx` are about the run itself, `JS1xx` "
        "side effects at trace time, `JS2xx` code that fails while tracing, `JS3xx` recompilation.", "",
        rule_table(RULES), "", "```{toctree}", ":hidden:", "", *(r.code for r in RULES), "```", ""])
    return {"reference/rules/index.md": index, **{f"reference/rules/{r.code}.md": rule_page(r) for r in RULES}}
