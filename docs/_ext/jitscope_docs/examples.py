"""Sphinx extension: an example command that fails fails the build, at its page and line."""

from __future__ import annotations

from typing import Any


def _check_example_commands(app: Any, doctree: Any) -> None:
    """A ``{command-output}`` whose command exits with a code its directive does not name: one warning with the
    page and line (sphinxcontrib-programoutput's own names neither), so ``-W`` fails the build there.

    Runs before programoutput renders the nodes (priority 400 < its 500), through its cache, so each command
    still runs once; the node then takes the code, and programoutput does not warn a second time.
    """
    from sphinx.util import logging
    from sphinxcontrib.programoutput import Command, program_output

    for node in doctree.findall(program_output):
        command = Command.from_program_output_node(node)
        try:
            returncode, output = app.env.programoutput_cache[command]
        except OSError:
            continue  # programoutput reports a command that cannot start, at the node
        if returncode != node["returncode"]:
            last = output.strip().splitlines()[-1:] or [""]
            logging.getLogger(__name__).warning(
                f"example command `{' '.join(command.command) if not command.shell else command.command}` "
                f"exited {returncode}, not {node['returncode']}: {last[0]}",
                location=node, type="jitscope", subtype="example")
            node["returncode"] = returncode



def setup(app: Any) -> dict[str, Any]:
    app.setup_extension("sphinxcontrib.programoutput")
    app.connect("doctree-read", _check_example_commands, priority=400)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
