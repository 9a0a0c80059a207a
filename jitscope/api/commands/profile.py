"""``jitscope profile`` and ``jitscope.profile``: device time of cached calls, attributed to the user's source lines.

``profile(fn, *args)`` is the Python entry, ``profile_command`` the command line's (``cli/profile.py`` parses
the options).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jitscope.api.checks import check_int, check_path, check_profile
from jitscope.api.targets import TargetFlags, run_planned, shape_list, target_of

if TYPE_CHECKING:
    from jitscope.api.results import ProfileResult


def profile(
    fn: Callable[..., Any], /, *args: Any,
    calls: int = 20,
    budget: float = 0.3,
    seed: int = 0,
    trace_out: str | Path | None = None,
    static_argnums: int | Sequence[int] | None = None,
    static_argnames: str | Sequence[str] | None = None,
    shapes: str | Sequence[str] | None = None,
    **kwargs: Any,
) -> ProfileResult:
    """Profile cached calls of ``fn(*args, **kwargs)`` on the device and attribute the time to your source
    lines, as ``jitscope profile``.

    >>> result = jitscope.profile(train_step, model, optimizer, batch)
    >>> result.lines[0].location, result.lines[0].share
    """
    from jitscope.api.results import ProfileResult
    from jitscope.load.mesh import example_mesh_scope
    from jitscope.profiling.runner import ProfileOptions, profile_calls
    from jitscope.timing.plan import plan_calls

    check_profile(calls, budget, cli=False)
    check_int("seed", seed)
    check_path("trace_out", trace_out)
    make_trace_folder(Path(trace_out) if trace_out is not None else None, "trace_out")
    handle = target_of(fn, args, kwargs, static_argnums, static_argnames, abstract=False, shapes=shapes)
    options = ProfileOptions(calls=calls, budget=budget, seed=seed,
                             trace_out=str(trace_out) if trace_out is not None else None)
    planned = plan_calls([handle], shape_list(shapes))
    with example_mesh_scope(argset for _, argset in planned):
        return ProfileResult(profile_calls(planned, options))


def make_trace_folder(trace_out: Path | None, option: str) -> None:
    """The folder for the device trace, created; one error line where a file is in the way."""
    if trace_out is None:
        return
    if trace_out.exists() and not trace_out.is_dir():
        from jitscope.errors import UsageError

        raise UsageError(f"{option} {trace_out} is a file", hint="name a folder (it is created)")
    trace_out.mkdir(parents=True, exist_ok=True)


def profile_command(flags: TargetFlags, fmt_name: str, out: Path | None, *, calls: int, budget: float, seed: int,
                    trace_out: Path | None, distributed: bool = False, save: Path | None = None) -> bool:
    """``jitscope profile``: the report on stdout or in ``out``, failed calls on stderr; True when a call failed.
    ``distributed``: one process of a job someone else launched (``hosts/distributed.py``): process 0 shows every
    process's device time merged; ``save``: each process's report as ``FILE.pI.json``."""
    from jitscope.api.commands.bench import report_failures, report_process_failures
    from jitscope.api.commands.jobs import failures_sent, finish_job, join_first
    from jitscope.api.results import ProfileResult
    from jitscope.profiling.runner import ProfileOptions, profile_calls
    from jitscope.report.writers.console import make_console
    from jitscope.report.writers.destination import write_result
    from jitscope.stdout import user_output_to_stderr

    if distributed:
        refuse_for_processes(flags, trace_out, "--distributed")
    make_trace_folder(trace_out, "--trace-out")
    options = ProfileOptions(calls=calls, budget=budget, seed=seed,
                             trace_out=str(trace_out) if trace_out is not None else None)
    place, job = join_first("profile", flags.devices, flags.mesh, distributed=distributed)
    if place is not None:
        from jitscope.hosts.launch import LOCKSTEP_ROUNDS

        options = dataclasses.replace(options, lockstep_rounds=LOCKSTEP_ROUNDS)
    # --distributed: stdout is process 0's merged report alone (gloo's connection lines go to stderr too)
    with user_output_to_stderr(job is not None), failures_sent(job):
        report = run_planned(flags, "jitscope profile", fmt_name,
                             lambda planned, progress: profile_calls(planned, options, progress))
    if place is not None:
        from jitscope.hosts.launch import this_process

        report = dataclasses.replace(report, process=this_process(place))
    stderr = make_console(stderr=True)
    if job is not None:
        own = report
        loaded = finish_job(job, own, save=save, merge=_merge_profile, fmt_name=fmt_name, out=out,
                            show_own=lambda: write_result(ProfileResult(own, failures_inline=True), fmt_name, out))
        return report_process_failures(loaded, stderr)
    terminal = fmt_name == "text" and out is None
    if report.rows or not terminal:  # on a terminal with no rows, the errors on stderr are the whole story
        write_result(ProfileResult(report, failures_inline=not terminal), fmt_name, out)
    if trace_out is not None:
        stderr.print(f"raw profile kept in {trace_out} (open the .xplane.pb in XProf/TensorBoard, or the "
                     ".trace.json.gz in Perfetto)", markup=False, highlight=False)
    if report.failures:
        report_failures(report, stderr)  # type: ignore[arg-type]  # the same failure records as bench's
    return bool(report.failures)


def profile_processes_command(flags: TargetFlags, count: int, fmt_name: str, out: Path | None, *, calls: int,
                              seed: int, trace_out: Path | None, save: Path | None) -> bool:
    """``jitscope profile TARGET --processes N``: N local CPU processes joined by ``jax.distributed``, each
    profiling the calls on the mesh spanning all their devices, timed in lockstep (``bench --processes``'s
    launcher); their device time by source line merged (``hosts/profile.py``). ``save``: each process's report as
    ``FILE.pI.json`` (what ``jitscope merge`` reads); ``out``: the merged report. True when a call failed."""
    from jitscope.api.commands.bench import report_process_failures
    from jitscope.api.commands.jobs import LAUNCH_TIMEOUT_S, write_merged
    from jitscope.hosts.launch import launch_reports
    from jitscope.hosts.profile import merge_profile
    from jitscope.hosts.reports import read_launched
    from jitscope.model.profile import ProfileReport
    from jitscope.report.writers.console import make_console

    argv = profile_argv(flags, count, calls=calls, seed=seed, trace_out=trace_out)
    stderr = make_console(stderr=True)
    stderr.print(f"jitscope profile: {count} local CPU processes joined by jax.distributed ...", highlight=False)
    loaded = launch_reports(argv, count, name="profile", read=read_launched(ProfileReport, "profile"), save=save,
                            timeout=LAUNCH_TIMEOUT_S)
    write_merged(merge_profile(loaded), fmt_name, out)
    return report_process_failures(loaded, stderr)  # every process ran the same calls: the first one's errors


def _merge_profile(loaded: list[tuple[str, Any]]) -> Any:
    from jitscope.hosts.profile import merge_profile

    return merge_profile(loaded)


def refuse_for_processes(flags: TargetFlags, trace_out: Path | None, switch: str) -> None:
    """One line (exit 2) for what ``--processes``/``--distributed`` cannot profile."""
    from jitscope.api.commands import jobs

    raw = "the raw captures are per process: profile one process with --trace-out"
    jobs.refuse_for_processes(switch, flags, "each process must make exactly the same calls; profile them in one "
                              "process", (trace_out is not None, "--trace-out", raw))


def profile_argv(flags: TargetFlags, count: int, *, calls: int, seed: int, trace_out: Path | None) -> list[str]:
    """The command line each launched process runs (``--format``/``--out`` are the launcher's)."""
    from jitscope.hosts.launch import check_processes

    refuse_for_processes(flags, trace_out, "--processes")
    total = check_processes(count, flags.devices, flags.mesh, command="profile")
    argv = flags.argv("profile", total)
    return [*argv, "--calls", str(calls), "--seed", str(seed)]
