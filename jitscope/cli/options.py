"""Option aliases shared by the commands: loading and calling a target (trace, bench, lint --trace), and output."""

from __future__ import annotations

from pathlib import Path
from collections.abc import Sequence
from typing import Annotated, Any

import typer

from jitscope.report.formats import REPORT_FORMATS

TargetsArg = Annotated[
    list[str],
    typer.Argument(
        help="What to inspect: pkg.module:fn, path/to/file.py:fn, module:Class.method, or module:* "
        "(every jitted function with JITSCOPE_EXAMPLES).",
        show_default=False,
        metavar="TARGET...",
    ),
]
ShapesOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--shapes",
        "-s",
        help="Positional arguments as abstract arrays, e.g. \"f32[8,128], i32[8]\", scalars f32[], "
        "typed PRNG keys key<fry>[] (key[]: JAX's default), pytrees {'w': f32[3,3]}; repeat it to describe a "
        "call sequence (one call each). Without it, the module's JITSCOPE_EXAMPLES are used.",
        show_default=False,
    ),
]
ShapesListOpt = Annotated[
    list[str] | None,
    typer.Option("--shapes", "-s", show_default=False,
                 help="Positional arguments as abstract arrays, e.g. \"f32[8,128], i32[8]\"; repeat for one row "
                 "per shape set. Without it, the module's JITSCOPE_EXAMPLES are used."),
]
BenchStaticOpt = Annotated[
    list[str] | None,
    typer.Option("--static", show_default=False,
                 help="A static argument NAME=PYTHON_LITERAL; repeat a name with other values for one row each."),
]
StaticOpt = Annotated[
    list[str] | None,
    typer.Option("--static", help="A static argument NAME=PYTHON_LITERAL, e.g. threshold=0.0 (repeatable).",
                 show_default=False),
]
ArgOpt = Annotated[
    list[str] | None,
    typer.Option("--arg", help="A keyword argument NAME=SPEC, e.g. mask=bool[8] (repeatable).", show_default=False),
]
def file_path(text: str) -> Path:
    """A file option's value (``--save``, ``--out FILE``): ``foo.json/`` is refused here, where the trailing
    slash is still there to see (a ``Path`` drops it), one ``error:`` line and exit 2."""
    from jitscope.outputs import check_file_name

    check_file_name(text)
    return Path(text)


#: ``typer.Option`` arguments of every option naming a file jitscope writes (shown as ``<path>``, as a Path).
FILE_OUT: dict[str, Any] = {"parser": file_path, "metavar": "<path>"}

ReportOutOpt = Annotated[
    Path | None,
    typer.Option(help="Write the report to this file (.html, .md, .json, .txt: the suffix picks the format).",
                 show_default=False, **FILE_OUT),
]
X64Opt = Annotated[
    bool, typer.Option("--x64", help="Enable 64-bit types in JAX (jax_enable_x64) before tracing.")
]
DevicesOpt = Annotated[
    int | None,
    typer.Option("--devices", min=1, show_default=False,
                 help="Use N devices: on CPU, start JAX with N virtual devices (must come before JAX starts); "
                 "on GPU/TPU, the first N. Default: the --mesh size, else JAX's default."),
]
MeshOpt = Annotated[
    str | None,
    typer.Option("--mesh", show_default=False,
                 help="A named device mesh, e.g. data=4,model=2 (axis sizes multiply to the device count). "
                 "Shard arguments over it in specs: f32[64,128]@(data,None), @() replicated."),
]


FromRunOpt = Annotated[
    bool,
    typer.Option("--from-run", help="Run the target's own script (or module) as `jitscope run` would, take the "
                 "real arguments of its call of TARGET (a model, an optimizer state, arrays), then stop it. "
                 "The program's arguments go after `--`.", show_default=False),
]
CallOpt = Annotated[
    int, typer.Option("--call", min=1, help="With --from-run: which call of TARGET to take (1 = the first).")
]
ContinueOpt = Annotated[
    bool, typer.Option("--continue", help="With --from-run: let the program run to its end after the call is "
                       "taken (arrays the call donates are copied first).", show_default=False),
]


FromCaptureOpt = Annotated[
    Path | None,
    typer.Option("--from", help="A folder written by `jitscope run --capture DIR`: call TARGET as the program "
                 "did when it compiled it (abstract arrays, saved statics), without running the program.",
                 show_default=False),
]
CompileOpt = Annotated[
    int, typer.Option("--compile", min=1, help="With --from: which saved compile of TARGET to replay (1 = the first).")
]

DistributedOpt = Annotated[
    bool,
    typer.Option("--distributed", show_default=False,
                 help="Run as one process of a multi-process job you launched (srun -n 4 jitscope ..., mpirun, a "
                 "TPU pod; or JAX_COORDINATOR_ADDRESS, JAX_NUM_PROCESSES and JAX_PROCESS_ID in each process): join "
                 "it with jax.distributed.initialize() as JAX detects it, make the same calls as the others in "
                 "lockstep, on a --mesh that spans them; process 0 prints every process's figures merged (as "
                 "--processes does; --out: that merged report), the others one line. --save FILE.json: each "
                 "process's report as FILE.p0.json, FILE.p1.json ... for jitscope merge."),
]


# -- output: one --format option with the same names on every command, and --out FILE -------------


def format_option(sarif: bool = False, what: str = "") -> Any:
    """``--format/-f``: the same names on every command. A plain string, checked by the command with the Python
    API's check (``api.checks.format_of``), so a bad name reads the same from both."""
    names = [*REPORT_FORMATS, *(("sarif", "github") if sarif else ())]
    return choice_option("--format", "-f", choices=names,
                         help=f"{', '.join(names)}{what}. Default: text, or what the --out FILE suffix says "
                         "(.txt .json .md .html" + (" .sarif" if sarif else "") + ").")


def choice_option(*spellings: str, choices: Sequence[str], help: str) -> Any:  # noqa: A002 - typer's name
    """An option taking one of ``choices``, shown and completed as click shows a choice, but checked by the
    command (``api.checks.check_choice``: the Python API's line for the same value), not by click."""
    return typer.Option(*spellings, show_default=False, help=help, metavar=f"[{'|'.join(choices)}]",
                        autocompletion=lambda: list(choices))
