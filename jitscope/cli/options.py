"""Option aliases shared by the commands that load and call a target (trace, bench, lint --trace)."""

from __future__ import annotations

from typing import Annotated

import typer

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


def enable_x64_if(requested: bool) -> None:
    """Turn on jax_enable_x64 before anything is traced."""
    if requested:
        import jax

        jax.config.update("jax_enable_x64", True)
