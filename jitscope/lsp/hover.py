"""The hover text over a finding: the rule's documentation, as ``jitscope rule JSxxx`` shows it."""

from __future__ import annotations

import re

from jitscope.linter.registry import find_rule
from jitscope.model.lint import Finding

_HEADING = re.compile(r"^(#{1,3}) ", re.MULTILINE)


def rule_markdown(finding: Finding) -> str:
    """Markdown for one finding: a title line (code, name, severity), then the rule's docs.

    The message and its suggestion are left out: they are the diagnostic's message, which the editor
    shows in the same hover.
    """
    rule = find_rule(finding.code)
    if rule is None:  # a code from a newer or older jitscope: say what is known
        return f"**{finding.code}** `{finding.name}` ({finding.severity})"
    info = rule.info()
    title = f"**{info.code}** `{info.name}` ({finding.severity}"
    title += ", dynamic: checked by `jitscope lint --trace`)" if info.dynamic_only else ")"
    parts = [title]
    # The docstring's "## What it does" headings are page-sized; a hover is a tooltip.
    parts.append(_HEADING.sub("#### ", info.docs))
    parts.append(f"Silence it on this line with `# jitscope: ignore[{info.code}]`; "
                 f"`jitscope rule {info.code}` prints this in a terminal.")
    return "\n\n".join(parts)
