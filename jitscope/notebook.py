"""IPython and Jupyter magics: ``%load_ext jitscope``, then

- ``%jitscope trace f(x, y)``, ``%jitscope bench f(x)``, ``%jitscope profile step(state, batch)``,
  ``%jitscope memory step(state, batch)``: the call is evaluated in the notebook's namespace and handed to
  ``jitscope.trace/bench/profile/memory``;
- ``%jitscope run train(3)`` and the cell magic ``%%jitscope run``: every compile of the statement or the
  cell (``jitscope.watch``), with the cause of each recompile;
- ``%jitscope lint [PATH]``: the linter on files;
- ``%jitscope doctor train.py ARGS`` (a script, as ``jitscope doctor``), ``%jitscope doctor STATEMENT`` and
  ``%%jitscope doctor``: what to fix first in the program, the statement or the cell, ranked by its cost;
  ``%jitscope doctor step(params, batch)`` with a jitted ``step``: that function as a target
  (``jitscope.doctor(step, params, batch)``).

Options come before the call, named like the CLI's: ``%jitscope bench --budget 0.2 f(x)``,
``%jitscope trace --stages jaxpr --static n f(x, n=3)``, ``%%jitscope run --fresh``; ``--out FILE`` also
saves the report. ``-o`` returns the result object instead of showing it
(``r = %jitscope -o bench f(x)``). The report shows as HTML in Jupyter, VS Code and Colab and as
text in a terminal IPython. A mistake in the magic (a syntax error, an unknown option, a name
that is not defined) is one ``UsageError`` line.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: Each command's options: name -> (keyword of the API function, converter; None for a flag that sets True,
#: or the value a flag sets).
_Converter = Callable[[str], Any] | None


@dataclass(frozen=True)
class _Option:
    keyword: str
    convert: _Converter = None  # None: a flag
    flag_value: Any = True
    repeat: bool = False


def _names(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


_COMMON = {"--out": _Option("out", str)}
OPTIONS: dict[str, dict[str, _Option]] = {
    "trace": {"--stages": _Option("stages", str), "--no-effects": _Option("effects", None, False),
              "--locations": _Option("locations", str), "--depth": _Option("depth", int),
              "--fold-libraries": _Option("fold", None, True), "--no-fold-libraries": _Option("fold", None, False),
              "--static": _Option("static_argnames", _names, repeat=True), **_COMMON},
    "bench": {"--budget": _Option("budget", float), "--min-rounds": _Option("min_rounds", int),
              "--cold-runs": _Option("cold_runs", int), "--eager": _Option("eager"),
              "--no-dispatch": _Option("dispatch", None, False), "--seed": _Option("seed", int),
              "--save": _Option("save", str), "--compare": _Option("compare", str),
              "--static": _Option("static_argnames", _names, repeat=True), **_COMMON},
    "profile": {"--calls": _Option("calls", int), "--budget": _Option("budget", float),
                "--seed": _Option("seed", int), "--trace-out": _Option("trace_out", str),
                "--static": _Option("static_argnames", _names, repeat=True), **_COMMON},
    "memory": {"--fail-over": _Option("fail_over", str), "--try-remat": _Option("try_remat"),
               "--static": _Option("static_argnames", _names, repeat=True), **_COMMON},
    "run": {"--fresh": _Option("fresh"), "--no-effects": _Option("effects", None, False), **_COMMON},
    "doctor": {"--fresh": _Option("fresh"), "--no-effects": _Option("effects", None, False), **_COMMON},
    "lint": {"--select": _Option("select", _names, repeat=True), "--ignore": _Option("ignore", _names, repeat=True),
             "--fail-on": _Option("fail_on", str), **_COMMON},
}
USAGE = ("%jitscope [-o] trace|bench|profile|memory [OPTIONS] f(args...), %jitscope run|doctor [--fresh] STATEMENT, "
         "%%jitscope run|doctor [--fresh], %jitscope doctor SCRIPT.py [ARGS] | jitted(args...), %jitscope lint [PATH]")


def load_ipython_extension(ipython: Any) -> None:
    """Register ``%jitscope`` (line) and ``%%jitscope`` (cell)."""
    ipython.register_magic_function(_make_magic(ipython), magic_kind="line_cell", magic_name="jitscope")


def _make_magic(ipython: Any) -> Callable[[str, str | None], Any]:
    def jitscope(line: str, cell: str | None = None) -> Any:
        from IPython.core.error import UsageError

        from jitscope.errors import JitscopeError

        try:
            return run_magic(ipython, line, cell)
        except JitscopeError as exc:
            raise UsageError(f"jitscope: {exc.one_line()}") from None

    jitscope.__doc__ = __doc__
    return jitscope


def run_magic(ipython: Any, line: str, cell: str | None) -> Any:
    """Parse the magic's line, run the command, show (or with ``-o`` return) its result."""
    from jitscope.errors import UsageError

    words = line.strip().split(None, 1)
    keep = bool(words) and words[0] == "-o"
    if keep:
        words = words[1].split(None, 1) if len(words) > 1 else []
    if not words:
        raise UsageError("which command?", hint=f"usage: {USAGE}")
    command, rest = words[0], words[1] if len(words) > 1 else ""
    if command not in OPTIONS:
        raise UsageError(f"unknown command {command!r}", hint=f"usage: {USAGE}")
    options, rest = _parse_options(command, rest)
    out = options.pop("out", None)
    if cell is not None and command not in ("run", "doctor"):
        raise UsageError(f"%%jitscope {command} is not a cell magic", hint=f"use the line magic: %jitscope {command} "
                         "f(x), or %%jitscope run to watch a cell's compiles")
    result = _as_options(command, lambda: _run(ipython, command, options, rest, cell))
    if out is not None:
        path = result.save(out)
        print(f"report written to {path}")
    if keep:
        return result
    from IPython.display import display

    display(result)
    return None


def _as_options(command: str, run: Callable[[], Any]) -> Any:
    """``run()``, a bad option's error naming it as the magic's option (``--budget``), as the CLI names it, not as
    the Python keyword the API saw (``budget``)."""
    from jitscope.errors import BadTypeError, BadValueError

    try:
        return run()
    except (BadValueError, BadTypeError) as exc:
        for spelling, option in OPTIONS[command].items():
            keyword = option.keyword
            if exc.message.startswith((f"{keyword} ", f"{keyword}:")):
                raise type(exc)(spelling + exc.message[len(keyword):], hint=exc.hint, detail=exc.detail) from None
        raise


def _run(ipython: Any, command: str, options: dict[str, Any], rest: str, cell: str | None) -> Any:
    import jitscope
    from jitscope.errors import UsageError

    if command == "lint":
        return jitscope.lint(rest.strip() or ".", **options)
    if command == "doctor":
        return _doctor(ipython, options, rest, cell)
    if command == "run":
        code = cell if cell is not None else rest
        if not code.strip():
            raise UsageError("nothing to run", hint="%jitscope run STATEMENT, or %%jitscope run over a cell")
        _check_syntax(code, "the cell" if cell is not None else "the statement")
        name = "cell" if cell is not None else code.strip().splitlines()[0][:60]
        with jitscope.watch(name, **options) as watch:
            outcome = ipython.run_cell(code)  # the user's own output and tracebacks, as IPython shows them
        assert watch.report is not None
        if not outcome.success:
            print("jitscope: the code raised: the compiles up to the error are below")
        return watch.report
    fn, args, kwargs = _evaluate_call(ipython, rest, command)
    api: Callable[..., Any] = getattr(jitscope, command)
    clash = sorted(set(kwargs) & set(options))
    if clash:
        raise UsageError(f"{clash[0]}= is both an option and an argument of the call",
                         hint="pass the function's own keyword through functools.partial")
    return api(fn, *args, **options, **kwargs)


def _doctor(ipython: Any, options: dict[str, Any], rest: str, cell: str | None) -> Any:
    """A script (``train.py ARGS``) runs as ``jitscope doctor`` runs it; a statement or a cell is watched as
    ``%jitscope run`` watches it, and its record diagnosed the same way."""
    import shlex

    import jitscope
    from jitscope.api.commands.doctor import DoctorResult
    from jitscope.doctor.program import diagnose_record

    words = shlex.split(rest) if cell is None and rest.strip() else []
    if words and words[0].endswith(".py"):
        fresh = options.pop("fresh", False)
        if fresh:
            from jitscope.testing.watch import clear_jax_caches

            clear_jax_caches()
        return jitscope.doctor(words[0], *words[1:], **options)
    target = _jitted_call(ipython, rest) if cell is None else None
    if target is not None:  # %jitscope doctor step(params, batch): the jitted function as a target
        fn, args, kwargs = target
        options.pop("fresh", None)
        options.pop("effects", None)
        return jitscope.doctor(fn, *args, **options, **kwargs)
    watched = _run(ipython, "run", options, rest, cell)
    return DoctorResult(diagnose_record(watched.record), watched.record)


def _jitted_call(ipython: Any, rest: str) -> tuple[Any, list[Any], dict[str, Any]] | None:
    """``step(params, batch)`` where ``step`` is jitted (``jax.jit``, ``nnx.jit``, ``eqx.filter_jit``): the call's
    function and values, for doctor's target form; None for any other statement (it runs under run's watch)."""
    try:
        tree = ast.parse(rest.strip(), mode="eval")
    except SyntaxError:
        return None
    if not isinstance(tree.body, ast.Call):
        return None
    from jitscope.jaxcompat.wrappers import FUNCTION, recognise

    try:
        fn = eval(compile(ast.Expression(tree.body.func), "<jitscope magic>", "eval"), ipython.user_ns)
    except Exception:  # noqa: BLE001 - the statement form reports the user's error as it runs
        return None
    if recognise(fn).kind == FUNCTION:
        return None  # a plain function (a training loop): run it under the watch
    return _evaluate_call(ipython, rest, "doctor")


def _parse_options(command: str, rest: str) -> tuple[dict[str, Any], str]:
    """Leading ``--name [value]`` words -> API keywords; the rest is the call (or the path, the statement)."""
    from jitscope.errors import UsageError

    spec = OPTIONS[command]
    options: dict[str, Any] = {}
    rest = rest.strip()
    while rest.startswith("--"):
        word, _, rest = rest.partition(" ")
        name, eq, inline = word.partition("=")
        option = spec.get(name)
        if option is None:
            known = ", ".join(spec)
            raise UsageError(f"%jitscope {command} has no option {name}", hint=f"its options are {known}")
        rest = rest.strip()
        if option.convert is None:
            if eq:
                raise UsageError(f"{name} takes no value")
            options[option.keyword] = option.flag_value
            continue
        if not eq:
            inline, _, rest = rest.partition(" ")
            rest = rest.strip()
        if not inline:
            raise UsageError(f"{name} needs a value")
        try:
            value = option.convert(inline)
        except ValueError:
            raise UsageError(f"{name} {inline!r} is not a valid value") from None
        if option.repeat:
            options[option.keyword] = [*options.get(option.keyword, []), *value]
        else:
            options[option.keyword] = value
    return options, rest


def _check_syntax(code: str, what: str) -> ast.Module:
    from jitscope.errors import UsageError

    try:
        return ast.parse(code)
    except SyntaxError as exc:
        raise UsageError(f"{what} is not valid Python: {exc.msg} (line {exc.lineno})") from None


def _evaluate_call(ipython: Any, text: str, command: str) -> tuple[Any, list[Any], dict[str, Any]]:
    """``f(x, *rest, n=3, **more)`` -> the function and the argument values, evaluated in the user's namespace."""
    from jitscope.errors import UsageError

    source = text.strip()
    if not source:
        raise UsageError(f"%jitscope {command} needs a call", hint=f"e.g. %jitscope {command} f(x, y)")
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError as exc:
        raise UsageError(f"{source!r} is not valid Python: {exc.msg}") from None
    call = tree.body
    if not isinstance(call, ast.Call):
        raise UsageError(f"{source!r} is not a call", hint=f"write the call to inspect: %jitscope {command} f(x, y)")

    def value(node: ast.expr) -> Any:
        expression = ast.Expression(node)
        ast.fix_missing_locations(expression)
        try:
            return eval(compile(expression, "<jitscope magic>", "eval"), ipython.user_ns)
        except Exception as exc:  # noqa: BLE001 - the user's expression failed: one line saying which and why
            raise UsageError(f"evaluating {ast.unparse(node)!r} raised {type(exc).__name__}: {exc}") from None

    fn = value(call.func)
    args: list[Any] = []
    for node in call.args:
        args.extend(value(node.value)) if isinstance(node, ast.Starred) else args.append(value(node))
    kwargs: dict[str, Any] = {}
    for keyword in call.keywords:
        if keyword.arg is None:
            kwargs.update(value(keyword.value))
        else:
            kwargs[keyword.arg] = value(keyword.value)
    return fn, args, kwargs
