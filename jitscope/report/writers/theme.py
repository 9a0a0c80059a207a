"""Named styles, in one Theme. Renderers use style names, never colours."""

from __future__ import annotations

from rich.theme import Theme

STYLES: dict[str, str] = {
    # jaxpr
    "jaxpr.primitive": "bold cyan",
    "jaxpr.var": "yellow",
    "jaxpr.type": "green",
    "jaxpr.literal": "magenta",
    "jaxpr.param": "dim",
    "jaxpr.keyword": "bold",
    "jaxpr.location": "dim italic",
    "jaxpr.label": "bold",
    # StableHLO / HLO
    "hlo.op": "bold cyan",
    "hlo.value": "yellow",
    "hlo.type": "green",
    "hlo.attr": "dim",
    "hlo.number": "magenta",
    "hlo.comment": "dim italic",
    "hlo.string": "italic green",
    # shared
    "jitscope.title": "bold",
    "jitscope.heading": "bold underline",
    "jitscope.muted": "dim",
    "jitscope.good": "green",
    "jitscope.warn": "yellow",
    "jitscope.bad": "bold red",
    "jitscope.path": "blue",
    "jitscope.number": "cyan",
    # lint severities
    "lint.error": "bold red",
    "lint.warning": "yellow",
    "lint.info": "blue",
    "lint.code": "bold magenta",
    # bench
    "bench.phase": "",
    "bench.run": "bold cyan",
    "bench.compile": "bold magenta",
}

THEME = Theme(STYLES)
