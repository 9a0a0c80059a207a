"""Read the user's call of a jitted function at its line: which arguments the statement replaces with the result.

``params, opt_state, loss = step(params, opt_state, batch)`` replaces ``params`` and ``opt_state``:
nothing reads their old buffers after the call, so donating them is safe. An argument the statement
does not assign back may be read again later, and donating it would break the program.
"""

from __future__ import annotations

import ast
import functools

from jitscope.model.common import Location


@functools.lru_cache(maxsize=32)
def _tree(file: str) -> ast.Module | None:
    try:
        with open(file, encoding="utf-8") as handle:
            return ast.parse(handle.read(), file)
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return None


def _targets(statement: ast.stmt) -> set[str]:
    targets: list[ast.expr] = []
    if isinstance(statement, ast.Assign):
        targets = list(statement.targets)
    elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
        targets = [statement.target]
    names: set[str] = set()
    while targets:
        target = targets.pop()
        if isinstance(target, (ast.Tuple, ast.List)):
            targets.extend(target.elts)
        elif isinstance(target, ast.Starred):
            targets.append(target.value)
        else:
            names.add(ast.unparse(target))
    return names


def replaced_arguments(call_site: Location, positional: int) -> set[int] | None:
    """The positional arguments (0-based) of the call at ``call_site`` that its statement assigns the result
    to; None where the line cannot be read as one assignment of one call with ``positional`` arguments."""
    tree = _tree(call_site.file)
    if tree is None:
        return None
    statement = next((node for node in ast.walk(tree) if isinstance(node, ast.stmt)
                      and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.For,
                                                ast.While, ast.If, ast.With, ast.Try, ast.AsyncFor, ast.AsyncWith))
                      and node.lineno <= call_site.line <= (node.end_lineno or node.lineno)), None)
    if statement is None:
        return None
    calls = [node for node in ast.walk(statement) if isinstance(node, ast.Call) and len(node.args) == positional
             and node.lineno <= call_site.line <= (node.end_lineno or node.lineno)]
    if len(calls) != 1:
        return None
    assigned = _targets(statement)
    return {i for i, arg in enumerate(calls[0].args) if ast.unparse(arg) in assigned}
