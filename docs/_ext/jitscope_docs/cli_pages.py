"""``reference/cli/``: every command and option, read from the typer app itself (its click parameters).

The help is the parameters' own ``help`` text, so the page says what ``jitscope CMD --help`` says,
whatever the terminal: nothing here depends on its width or colours.
"""

from __future__ import annotations

from typing import Any

from jitscope_docs.markdown import code, escape


def root_command() -> Any:
    """The click group behind ``jitscope`` (every command registered)."""
    import typer.main

    from jitscope.cli.commands import build_app

    return typer.main.get_command(build_app())


def _first_line(text: str | None) -> str:
    return (text or "").strip().split("\n\n")[0].replace("\n", " ")


def _param_heading(param: Any, ctx: Any) -> str:
    """The parameter as ``--help`` names it: ``-s``, ``--shapes`` ``<str>``; an argument by its metavar."""
    if param.param_type_name == "argument":
        return code(param.make_metavar(ctx)) + ("" if param.required else " (optional)")
    names = ", ".join(code(o) for o in [*param.opts, *param.secondary_opts])
    if not param.is_flag and not param.count:
        names += f" {code(param.make_metavar(ctx))}"
    return names


def _default(param: Any) -> str | None:
    """``Default: ...`` as ``--help`` shows it (a flag pair names the option that is on)."""
    if param.param_type_name == "argument" or param.show_default is False:
        return None
    default = param.default
    if param.is_flag and param.secondary_opts:
        return f"Default: {code(param.opts[0] if default else param.secondary_opts[0])}."
    if default is None or default == () or default is False or callable(default) or param.is_flag:
        return None
    value = getattr(default, "value", default)
    return f"Default: {code(str(value))}."


def command_page(name: str, command: Any) -> str:
    """The Markdown page of one command: usage, its help, then every visible parameter."""
    ctx = command.context_class(command, info_name=f"jitscope {name}", terminal_width=100, max_content_width=100)
    usage = " ".join(command.collect_usage_pieces(ctx))
    lines = [f"# jitscope {name}", "", f"{escape(_first_line(command.help))}", "", "```text",
             f"jitscope {name} {usage}", "```", ""]
    rest = (command.help or "").strip().split("\n\n")[1:]
    lines += [escape(" ".join(p.split())) + "\n" for p in rest]
    arguments = [p for p in command.params if p.param_type_name == "argument"]
    options = [p for p in command.params if p.param_type_name == "option" and not p.hidden]
    for title, params in (("Arguments", arguments), ("Options", options)):
        if not params:
            continue
        lines += [f"## {title}", ""]
        for param in params:
            lines += [f"### {_param_heading(param, ctx)}", ""]
            text = escape(" ".join((getattr(param, "help", None) or "").split()))
            default = _default(param)
            lines += [" ".join(part for part in (text, default) if part) or "(no description)", ""]
    lines += ["`-h`, `--help` shows this help in the terminal.", ""]
    return "\n".join(lines)


def cli_pages() -> dict[str, str]:
    """``reference/cli/index.md`` and one page per command, in the order ``jitscope --help`` lists them."""
    group = root_command()
    names = list(group.commands)
    index = ["# Commands", "", "Every command and option, generated from the `jitscope` command itself "
             "(the same text as `jitscope CMD --help`).", "", "| command | what it does |", "| --- | --- |"]
    index += [f"| [`jitscope {n}`]({n}.md) | {escape(_first_line(group.commands[n].help))} |" for n in names]
    index += ["", "`jitscope --version` prints the version.", "", "```{toctree}", ":hidden:", "", *names, "```", ""]
    pages = {"reference/cli/index.md": "\n".join(index)}
    pages.update({f"reference/cli/{n}.md": command_page(n, group.commands[n]) for n in names})
    return pages
