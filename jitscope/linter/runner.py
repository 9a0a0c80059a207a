"""Linting many files: one lean function per file, a process pool, and cross-module follow-up.

``lint_one`` reads, parses and analyses one file and never raises: every failure is a
JS000 finding. ``lint_files`` runs it over a process pool in chunks (files sorted
largest first, so the pool stays balanced). Calls from traced code into other modules
of the linted tree come back as :class:`ExternalRef`; the runner resolves them to
files and re-lints just those files with the extra traced entry points, for a few
rounds, so helpers in other modules are checked too.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import sys
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field

from jitscope.linter.analysis.discovered import Entry, ExternalRef
from jitscope.linter.analysis.inherited_tracing import class_facts
from jitscope.linter.analysis.jit_factories import factory_statics
from jitscope.linter.analysis.module_analysis import ModuleAnalysis, analyze_module
from jitscope.linter.analysis.module_index import FuncNode, ImportedFacts, ModuleIndex
from jitscope.linter.analysis.parameters import all_params, defaulted_params, positional_params, self_param
from jitscope.linter.analysis.source import (
    NotRegular,
    ParsedSource,
    file_finding,
    parse_source,
    read_source_bytes,
)
from jitscope.linter.analysis.taint_flags import FunctionFacts
from jitscope.linter.context import ModuleContext
from jitscope.linter.files import SourceFileRef
from jitscope.linter.fix_builder import attach_fix
from jitscope.linter.module_facts import (
    OVERRIDE,
    ModuleFacts,
    imported_facts,
    module_aliases,
    override_requests,
)
from jitscope.linter.registry import static_rules
from jitscope.linter.rule import Rule
from jitscope.linter.suppression import split_suppressed
from jitscope.model.lint import Finding

#: Rounds of cross-module follow-up (a helper of a helper of ... in another module).
_FOLLOW_ROUNDS = 4
#: Below this many files the pool costs more than it saves...
_POOL_MIN_FILES = 24
#: ...unless they are this large together and workers can be forked (cheap to start): the follow-up
#: rounds re-lint a few big modules (jax's lax.py, lax_numpy.py: 1 MB in 4 files, 0.4 s of CPU),
#: which one process would lint alone.
_POOL_MIN_BYTES = 256_000
_MARKERS = ("jax", "equinox", "flax")
#: rules about traced values: re-checked when another module declares some fields static
_VALUE_CODES = frozenset({"JS201", "JS202", "JS203", "JS204"})


@dataclass(slots=True)
class FileResult:
    """What linting one file produced."""

    display: str
    findings: list[Finding] = field(default_factory=list)
    lines: int = 0
    suppressed: int = 0
    external: list[ExternalRef] = field(default_factory=list)
    #: what other modules may need from this one
    facts: ModuleFacts = field(default_factory=ModuleFacts)
    #: why the file was not read at all (it turned out not to be a regular file); "" when it was
    skipped: str = ""


@dataclass(frozen=True, slots=True)
class FileTask:
    ref: SourceFileRef
    codes: frozenset[str]
    extra: tuple[tuple[str, ExternalRef], ...] = ()
    #: what the other linted modules this one imports know
    imported: ImportedFacts | None = None


_RULE_CACHE: dict[frozenset[str], tuple[Rule, ...]] = {}


def _rules(codes: frozenset[str]) -> tuple[Rule, ...]:
    rules = _RULE_CACHE.get(codes)
    if rules is None:
        rules = static_rules(codes)
        _RULE_CACHE[codes] = rules
    return rules


def lint_one(task: FileTask) -> FileResult:
    """Lint one file; internal errors become a JS000 finding instead of escaping."""
    data = read_source_bytes(task.ref.path, task.ref.display)
    if isinstance(data, NotRegular):
        return FileResult(task.ref.display, skipped=data.reason)
    if isinstance(data, Finding):
        return FileResult(task.ref.display, [data] if "JS000" in task.codes else [])
    return lint_data(task, data)


def lint_data(task: FileTask, data: bytes) -> FileResult:
    """Lint the contents of one file (``task.ref`` names it)."""
    ref = task.ref
    result = FileResult(ref.display)
    parsed = parse_source(ref.display, data)
    if isinstance(parsed, Finding):
        if "JS000" in task.codes:
            result.findings.append(parsed)
        return result
    result.lines = parsed.line_count
    if not task.extra and not task.imported and not any(marker in parsed.text for marker in _MARKERS):
        # Nothing here names JAX; but its classes may override methods traced in a base class, and
        # it may call a jit factory imported from another module: keep its top level for the runner.
        if "class " in parsed.text or "import" in parsed.text:
            index = ModuleIndex(parsed, ref.module, ref.is_package)
            result.facts = ModuleFacts(
                classes=class_facts(index, {}),
                imports=module_aliases(index),
                container_fields=index.own_container_fields,
                other_fields=index.other_fields,
            )
        return result
    try:
        findings, external = _analyse(parsed, ref, task, result)
    except RecursionError:
        findings, external = (
            [file_finding(ref.display, "file is too deeply nested to analyse", certain=False)],
            [],
        )
    except Exception as err:  # noqa: BLE001 - one bad file must not stop the run
        message = f"internal error while analysing this file ({type(err).__name__}: {err}); please report it"
        findings, external = [file_finding(ref.display, message, certain=False)], []
    # the lines (split on first use) only where there is a finding to check for a suppression comment
    kept, result.suppressed = split_suppressed(findings, parsed.lines) if findings else ([], 0)
    result.findings = sorted(kept, key=Finding.sort_key)
    result.external = external
    return result


def _analyse(
    parsed: ParsedSource, ref: SourceFileRef, task: FileTask, result: FileResult
) -> tuple[list[Finding], list[ExternalRef]]:
    rules = _rules(task.codes)
    index = ModuleIndex(parsed, ref.module, ref.is_package, task.imported)
    extra, forwarded = _extra_entries(index, task.extra)
    if not rules:
        return [], []
    analysis = analyze_module(index, extra)
    result.facts = ModuleFacts(
        index.own_static_fields,
        tuple(factory_statics(index).items()),
        class_facts(index, _traced_by_call(analysis)),
        module_aliases(index),
        index.own_static_methods,
        index.own_container_fields,
        index.other_fields,
    )
    ctx = ModuleContext(analysis)
    findings: list[Finding] = []
    seen: set[tuple[str, int, int]] = set()
    for rule in rules:
        for finding in rule.check(ctx):
            key = (finding.code, finding.line, finding.column)
            if key not in seen:
                seen.add(key)
                findings.append(attach_fix(ctx, rule, finding) if rule.fixable else finding)
    return findings, [*analysis.external, *forwarded]


def _traced_by_call(analysis: ModuleAnalysis) -> dict[int, FunctionFacts]:
    """Functions traced because something calls them (an override is traced the same way),
    not because of a decorator on their own def (an override drops the decorator)."""
    return {
        id(facts.func): facts
        for facts in analysis.functions
        if facts.kind == "callee" or not facts.reason.startswith(("decorated with", "registered with"))
    }


def _extra_entries(
    index: ModuleIndex, requests: Sequence[tuple[str, ExternalRef]]
) -> tuple[list[Entry], list[ExternalRef]]:
    """Entries for functions other modules call from traced code; re-exports are forwarded."""
    entries: list[Entry] = []
    forwarded: list[ExternalRef] = []
    aliases: dict[str, str] | None = None
    for name, ref in requests:
        func = _lookup(index, name)
        if func is None:
            head, _, rest = name.partition(".")
            if aliases is None:  # imports and re-exports (``solve = math.solve``)
                aliases = dict(module_aliases(index))
            target = aliases.get(head)
            if target is not None:
                forwarded.append(
                    ExternalRef(
                        f"{target}.{rest}" if rest else target,
                        ref.reason,
                        ref.positional,
                        ref.keywords,
                        ref.all_tainted,
                        ref.array_keywords,
                        ref.static_positions,
                        ref.static_names,
                        ref.defaults_static,
                    )
                )
            continue
        tainted, arrays = _tainted(index, func, ref)
        static = frozenset(all_params(func)) - tainted if ref.all_tainted else frozenset()
        entries.append(
            Entry(
                func,
                ref.reason,
                ref.all_tainted,
                tainted,
                None,
                static=static,
                arrays=arrays,
                kind="jit" if ref.all_tainted else "callee",
            )
        )
    return entries, forwarded


def _lookup(index: ModuleIndex, name: str) -> FuncNode | None:
    if name in index.defs:
        return index.defs[name]
    cls_name, _, method = name.partition(".")
    cls = index.classes.get(cls_name)
    if cls is not None and method:
        return index.methods.get(id(cls), {}).get(method)
    return None


def _tainted(index: ModuleIndex, func: FuncNode, ref: ExternalRef) -> tuple[frozenset[str], frozenset[str]]:
    me = self_param(index, func)
    if ref.all_tainted:
        positional = positional_params(func)
        static = set(ref.static_names)
        static.update(positional[i] for i in ref.static_positions if -len(positional) <= i < len(positional))
        if ref.defaults_static:
            static.update(defaulted_params(func))
        everything = frozenset(p for p in all_params(func) if p != me and p not in static)
        return everything, everything
    names = positional_params(func)
    if me is not None and names and names[0] == me:
        names = names[1:]
    known = all_params(func)
    tainted = {names[i] for i, flags in enumerate(ref.positional) if flags & 1 and i < len(names)}
    tainted.update(k for k in ref.keywords if k in known)
    arrays = {names[i] for i, flags in enumerate(ref.positional) if flags & 2 and i < len(names)}
    arrays.update(k for k in ref.array_keywords if k in known)
    return frozenset(tainted), frozenset(arrays)


# -- many files ----------------------------------------------------------------------------------


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def _worker_init() -> None:
    # Parsing allocates millions of short-lived AST objects; the cyclic GC only slows that down.
    gc.disable()


def _start_method() -> str | None:
    """fork is cheapest, but forking a process that has imported JAX (multithreaded) can deadlock:
    then (jitscope lint --trace, tests) workers start from a clean forkserver instead."""
    if not sys.platform.startswith("linux"):
        return None
    return "forkserver" if "jax" in sys.modules else "fork"


def _pooled(tasks: list[FileTask], jobs: int, method: str | None) -> bool:
    """Whether ``tasks`` are worth starting ``jobs`` worker processes for."""
    if jobs <= 1 or len(tasks) < 2:
        return False
    if len(tasks) >= _POOL_MIN_FILES:
        return True
    return method == "fork" and sum(t.ref.size for t in tasks) >= _POOL_MIN_BYTES


def _run(tasks: list[FileTask], jobs: int) -> list[FileResult]:
    method = _start_method()
    if not _pooled(tasks, jobs, method):
        enabled = gc.isenabled()
        gc.disable()
        try:
            return [lint_one(t) for t in tasks]
        finally:
            if enabled:
                gc.enable()
    # Deal the files, largest first, round-robin into chunks of about equal size; idle workers
    # then take the next chunk. Chunks keep inter-process traffic low, equal chunks keep all
    # cores busy to the end; 16 per worker (6 before) leave a shorter tail when one worker
    # finishes its last chunk before the other (jax's tree, 2 jobs: first round 1.69 -> 1.64 s wall).
    order = sorted(range(len(tasks)), key=lambda i: -tasks[i].ref.size)
    n_chunks = min(len(tasks), jobs * 16)
    chunks = [order[k::n_chunks] for k in range(n_chunks)]
    context = multiprocessing.get_context(method)
    try:
        workers = min(jobs, len(tasks))
        with ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_worker_init) as pool:
            done = list(pool.map(_lint_chunk, [[tasks[i] for i in chunk] for chunk in chunks]))
    except (BrokenProcessPool, OSError):
        # A worker died (out of memory, killed) or processes cannot be created here: lint in-process.
        return _run(tasks, 1)
    results: list[FileResult | None] = [None] * len(tasks)
    for chunk, chunk_results in zip(chunks, done, strict=True):
        for i, result in zip(chunk, chunk_results, strict=True):
            results[i] = result
    return [r for r in results if r is not None]


def _lint_chunk(tasks: list[FileTask]) -> list[FileResult]:
    return [lint_one(t) for t in tasks]


def lint_files(
    refs: Sequence[SourceFileRef], codes: frozenset[str], jobs: int | None = None
) -> list[FileResult]:
    """Lint ``refs`` with ``jobs`` processes, following traced calls across modules."""
    jobs = default_jobs() if jobs is None else max(1, jobs)
    tasks = [FileTask(ref, codes) for ref in refs]
    results = _run(tasks, jobs)
    modules: dict[str, list[int]] = {}
    for i, source_ref in enumerate(refs):
        modules.setdefault(source_ref.module, []).append(i)
    requested: dict[int, dict[tuple[object, ...], ExternalRef]] = {}
    imported = imported_facts(modules, [r.facts for r in results])
    recheck = [i for i, r in enumerate(results) if i in imported and _needs_recheck(r, imported[i])]
    for i, result in zip(
        recheck, _run([FileTask(refs[i], codes, (), imported[i]) for i in recheck], jobs), strict=True
    ):
        results[i] = result
    pending = [(i, ref) for i, result in enumerate(results) for ref in result.external]
    pending.extend(override_requests(modules, [r.facts for r in results]))
    for _ in range(_FOLLOW_ROUNDS):
        changed: set[int] = set()
        for position, ref in pending:
            target = _resolve(modules, ref.qualname, refs, position)
            if target is None or (target[0] == position and not ref.reason.startswith(OVERRIDE)):
                continue
            file_index, name = target
            key = (
                name,
                ref.positional,
                ref.keywords,
                ref.all_tainted,
                ref.static_positions,
                ref.static_names,
            )
            bucket = requested.setdefault(file_index, {})
            if key not in bucket:
                bucket[key] = ref
                changed.add(file_index)
        if not changed:
            break
        order = sorted(changed)
        again = [
            FileTask(
                refs[i],
                codes,
                tuple((str(key[0]), r) for key, r in requested[i].items()),
                imported.get(i),
            )
            for i in order
        ]
        fresh = _run(again, jobs)
        pending = [(i, ref) for i, result in zip(order, fresh, strict=True) for ref in result.external]
        for i, result in zip(order, fresh, strict=True):
            results[i] = result
        # a base-class method traced only now (``jax.jit(env.step)`` with ``env: Environment``
        # elsewhere) makes its overrides traced too (requests already made are skipped above)
        pending.extend(override_requests(modules, [r.facts for r in results]))
    return results


def _needs_recheck(result: FileResult, imported: ImportedFacts) -> bool:
    """Whether what other modules know can change this file's findings."""
    return bool(imported.factories) or any(f.code in _VALUE_CODES for f in result.findings)


def _resolve(
    modules: dict[str, list[int]], qualname: str, refs: Sequence[SourceFileRef], caller: int
) -> tuple[int, str] | None:
    """(file index, name inside the module) for a dotted name, by its longest module prefix.

    When several linted files have that module name (two projects side by side), the one
    sharing the longest directory prefix with the calling file wins.
    """
    parts = qualname.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        candidates = modules.get(".".join(parts[:cut]))
        if candidates:
            here = refs[caller].path
            best = max(candidates, key=lambda i: len(os.path.commonpath([here, refs[i].path])))
            return best, ".".join(parts[cut:])
    return None
