"""Option aliases shared by the commands: loading and calling a target (trace, bench, lint --trace), and output."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from jitscope.api.checks import MAX_BUDGET_S, MAX_COUNT, check_count, check_seconds  # noqa: F401
from jitscope.cli.formats import REPORT_FORMATS, SUFFIX_FORMATS, format_of_suffix, suffixes_of

if TYPE_CHECKING:
    from jitscope.api.results import Result

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
        "pytrees {'w': f32[3,3]}; repeat it to describe a call sequence (one call each). Without it, the "
        "module's JITSCOPE_EXAMPLES are used.",
        show_default=False,
    ),
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


def resolve_from_run(targets: list[str], from_run: bool, call: int, keep_running: bool,
                     *, flags: tuple[object, ...] = (), abstract: bool = False,
                     capture: Path | None = None, compile_number: int = 1) -> list[Any]:
    """Where the call comes from. With --from-run, the targets list is TARGET then the program's arguments: run
    it and return the loaded target (arguments from the call); with --from DIR, the target loaded with a saved
    compile's signature as its example; otherwise the targets unchanged."""
    from jitscope.errors import UsageError

    if capture is not None:
        if from_run or any(flags):
            raise UsageError("--from takes the arguments from the capture",
                             hint="drop --from-run/--shapes/--static/--arg, or drop --from")
        from jitscope.run.replay import load_from_capture

        return [load_from_capture(target, capture, compile_number) for target in targets]
    if compile_number != 1:
        raise UsageError("--compile needs --from DIR")
    if not from_run:
        if call != 1 or keep_running:
            raise UsageError("--call and --continue need --from-run")
        return targets
    if any(flags):
        raise UsageError("--from-run takes the arguments from the program",
                         hint="drop --shapes/--static/--arg, or drop --from-run")
    from jitscope.run.from_run import FromRun, load_from_run

    handle, _ = load_from_run(targets[0], FromRun(call, keep_running, tuple(targets[1:])), abstract=abstract)
    return [handle]


def enable_x64_if(requested: bool) -> None:
    """Turn on jax_enable_x64 before anything is traced."""
    if requested:
        import jax

        jax.config.update("jax_enable_x64", True)


# -- output: one --format option with the same names on every command, and --out FILE -------------


class ReportFormat(str, Enum):
    """``--format`` of trace and bench (and the first four of lint's)."""

    text = "text"
    json = "json"
    markdown = "markdown"
    html = "html"


def format_option(sarif: bool = False, what: str = "") -> Any:
    """``--format/-f``: the same names on every command."""
    names = [*REPORT_FORMATS, *(("sarif", "github") if sarif else ())]
    return typer.Option(
        "--format", "-f", show_default=False,
        help=f"{', '.join(names)}{what}. Default: text, or what the --out FILE suffix says "
        "(.txt .json .md .html" + (" .sarif" if sarif else "") + ").",
    )


def resolve_format(fmt: Enum | str | None, out: Path | None, choices: tuple[str, ...] = REPORT_FORMATS) -> str:
    """The format asked for: ``--format``, else the ``--out`` file's suffix, else text on stdout.

    An ``--out`` whose suffix names no format the command writes is an error (``cli/formats.py``)."""
    if fmt is not None:
        return fmt.value if isinstance(fmt, Enum) else fmt
    if out is None:
        return "text"
    named = format_of_suffix(str(out), choices)
    if named is None:
        from jitscope.errors import UsageError

        raise UsageError(f"cannot tell the format from the suffix of --out {out}",
                         hint=f"name it {suffixes_of(choices)}, or pass --format {'|'.join(choices)}")
    return named


def is_report_file(out: Path | None) -> bool:
    """True when ``--out`` names a report file (a format's suffix) rather than a folder."""
    return out is not None and out.suffix.lower() in SUFFIX_FORMATS


def write_report(text: str, out: Path | None) -> None:
    """The report on stdout, or into ``out`` (with one line on stderr saying where)."""
    if not text.endswith("\n"):
        text += "\n"
    if out is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    from jitscope.outputs import write_atomic

    write_atomic(out, text)  # whole or not at all, relative to where jitscope started
    print(f"report written to {out} ({len(text.encode()):,} bytes)", file=sys.stderr)


def write_result(result: Result[Any], fmt: str, out: Path | None) -> None:
    """What every command ends with: the API's result in ``fmt``, on stdout (the themed console, colour on a
    terminal, for text) or into ``out``. The CLI and the Python API render through the same object."""
    if fmt == "text" and out is None:
        from jitscope.report.writers.console import make_console

        make_console().print(result.renderable())
        return
    write_report(result.render(fmt), out)
