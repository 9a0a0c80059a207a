"""The Python API's arguments as a loaded target: the function, its real (or abstract) arguments, its statics.

Arguments: arrays, pytrees, flax/equinox/haiku objects, optax states, Python values, as the
function is called. ``jax.ShapeDtypeStruct`` leaves are abstract: ``trace`` never allocates
anything (real arrays become their abstract values), ``bench`` and ``profile`` fill abstract
leaves with random data and time real arrays as given (a donated argument is copied before
each call, outside the timing). Options are keyword-only and named like the CLI's; a keyword
the function itself takes under one of those names goes through ``functools.partial``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from jitscope.load.target import TargetHandle


def target_of(fn: Any, args: Sequence[Any], kwargs: Mapping[str, Any], static_argnums: int | Sequence[int] | None,
            static_argnames: str | Sequence[str] | None, *, abstract: bool,
            shapes: str | Sequence[str] | None) -> TargetHandle:
    """``fn`` and the arguments it is called with, loaded as the CLI loads a target string."""
    from jitscope.api.checks import check_callable, int_list, text_list
    from jitscope.errors import UsageError
    from jitscope.load.live import display_name, live_target

    check_callable("fn", fn)
    argnums = int_list("static_argnums", static_argnums)
    argnames = text_list("static_argnames", static_argnames)
    text_list("shapes", shapes)
    if shapes is not None and (args or kwargs):
        raise UsageError("shapes= describes the arguments: pass either the arguments or shapes=, not both")
    name = display_name(fn)
    handle = live_target(fn, args, kwargs, text=name, attr_path=name.rsplit(":", 1)[-1],
                         how="passed to jitscope's Python API", label="", static_argnums=argnums,
                         static_argnames=argnames, abstract=abstract)
    if shapes is not None:
        import dataclasses

        handle = dataclasses.replace(handle, examples=())
    return handle


def shape_list(shapes: str | Sequence[str] | None) -> list[str] | None:
    """``shapes=``: one spec (one call) or a list of them (a call sequence)."""
    if shapes is None:
        return None
    return [shapes] if isinstance(shapes, str) else list(shapes)


@dataclass(frozen=True, slots=True)
class TargetFlags:
    """What the command line says about the targets and their arguments: the options every command that
    calls a target shares (declared once in ``cli/options.py``)."""

    targets: list[str]
    shapes: list[str] | None = None
    static: list[str] | None = None
    arg: list[str] | None = None
    x64: bool = False
    devices: int | None = None
    mesh: str | None = None
    from_run: bool = False
    call: int = 1
    keep_running: bool = False
    from_capture: Path | None = None
    compile_number: int = 1

    def argv(self, command: str, devices: int) -> list[str]:
        """``COMMAND TARGETS --devices N`` and the argument options, as a child ``jitscope`` process takes them
        (``--processes``: each process is such a child)."""
        out = [command, *self.targets, "--devices", str(devices)]
        for name, values in (("--shapes", self.shapes), ("--static", self.static), ("--arg", self.arg)):
            for value in values or ():
                out += [name, value]
        if self.mesh:
            out += ["--mesh", self.mesh]
        if self.x64:
            out.append("--x64")
        return out

    def load(self, *, abstract: bool = False) -> list[Any]:
        """The targets to call: as named, or taken from a program (``--from-run``) or a capture (``--from``)."""
        return resolve_from_run(self.targets, self.from_run, self.call, self.keep_running,
                                flags=(self.shapes, self.static, self.arg), abstract=abstract,
                                capture=self.from_capture, compile_number=self.compile_number)


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


R = TypeVar("R")


def run_planned(flags: TargetFlags, title: str, fmt_name: str, work: Callable[[list[Any], Any], R]) -> R:
    """The middle every command that calls the targets shares: x64, the mesh, a progress bar on stderr, the
    user's prints kept off a machine-readable stdout, the targets loaded and their calls planned, then
    ``work(planned, progress)`` under the examples' mesh (when ``--mesh`` is not given)."""
    from jitscope.faults import user_code_scope
    from jitscope.load.mesh import example_mesh_scope, mesh_scope
    from jitscope.report.writers.progress import progress_on_stderr
    from jitscope.stdout import user_output_to_stderr
    from jitscope.timing.plan import plan_calls

    enable_x64_if(flags.x64)
    with contextlib.ExitStack() as stack:
        stack.enter_context(mesh_scope(flags.devices, flags.mesh))
        progress = stack.enter_context(progress_on_stderr(title))
        stack.enter_context(user_output_to_stderr(fmt_name != "text"))
        stack.enter_context(user_code_scope())
        planned = plan_calls(flags.load(), flags.shapes, flags.static, flags.arg)
        with example_mesh_scope(argset for _, argset in planned):
            return work(planned, progress)
    raise AssertionError("unreachable")  # ExitStack does not swallow exceptions
