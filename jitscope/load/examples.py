"""Example arguments declared by the user's module.

The convention (documented in the README): a module-level dict ``JITSCOPE_EXAMPLES``
mapping a function's name (or dotted attribute path) to how to call it::

    JITSCOPE_EXAMPLES = {
        "predict": "{'w': f32[784,10], 'b': f32[10]}, f32[128,784]",       # --shapes text
        "conditional_double": {"shapes": "f32[]", "static": {"threshold": 0.0}},
        "step": [                                                         # a call sequence
            {"shapes": "f32[8]", "static": {"n": 1}},
            {"shapes": "f32[16]", "static": {"n": 2}},
        ],
        "apply": {"args": (jax.ShapeDtypeStruct((8, 3), jnp.float32),), "kwargs": {"train": True}},
    }

Plain strings and dicts need no jitscope import in user code; ``args``/``kwargs`` may
also hold anything with ``.shape`` and ``.dtype`` (arrays, ShapeDtypeStruct), which is
turned into an abstract spec so nothing is allocated.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from jitscope.dtypes import dtype_name
from jitscope.errors import SpecError, UsageError
from jitscope.load.specs import ArgSet, ArraySpec, build_argset, parse_value

EXAMPLES_ATTR = "JITSCOPE_EXAMPLES"
_KEYS = frozenset({"shapes", "static", "args", "kwargs", "label", "mesh"})


def to_spec(value: Any) -> Any:
    """Python objects -> spec values: array-likes become ArraySpec; plain containers recurse."""
    from jitscope.load.abstract import map_containers

    return map_containers(value, _leaf_spec)


def _leaf_spec(value: Any) -> Any:
    if isinstance(value, (ArraySpec, str)):
        return value
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        from jitscope.load.mesh import partition_of

        partition, mesh = partition_of(getattr(value, "sharding", None))
        return ArraySpec(tuple(int(d) for d in value.shape), dtype_name(value.dtype),
                         bool(getattr(value, "weak_type", False)), partition, mesh)
    return value


def parse_example_entry(key: str, entry: Any, source: str = EXAMPLES_ATTR) -> tuple[ArgSet, ...]:
    """One ``JITSCOPE_EXAMPLES`` (or ``[tool.jitscope.examples]``) value -> the ArgSets it describes."""
    where = f"{source}[{key!r}]"
    if isinstance(entry, list):
        out: list[ArgSet] = []
        for i, item in enumerate(entry):
            out.extend(parse_example_entry(f"{key}[{i}]", item, source))
        return tuple(out)
    if isinstance(entry, str):
        return (build_argset(shapes=entry, label=""),)
    if isinstance(entry, tuple):  # the positional arguments themselves: (jax.random.key(0), jnp.ones(...))
        entry = {"args": entry}
    if not isinstance(entry, dict):
        raise SpecError(f"{where} must be a spec string, a tuple of arguments, a dict or a list of them, "
                        f"not {type(entry).__name__}")
    unknown = set(entry) - _KEYS
    if unknown:
        raise SpecError(f"{where} has unknown key(s) {sorted(unknown)}; allowed: {sorted(_KEYS)}")
    base = build_argset(shapes=entry["shapes"]) if "shapes" in entry else ArgSet()
    args = base.args + tuple(to_spec(a) for a in entry.get("args", ()))
    kwargs = dict(base.kwargs)
    for name, value in dict(entry.get("kwargs", {})).items():
        spec = to_spec(value)
        kwargs[name] = parse_value(spec, f"{where} kwargs {name}") if isinstance(spec, str) else spec
    statics = dict(entry.get("static", {}))
    kwargs.update(statics)
    argset = ArgSet(args, kwargs, tuple(statics), label=str(entry.get("label", "")))
    if "mesh" in entry:  # the mesh its @(...) shardings are laid out on, e.g. "data=4,model=2"
        argset = on_mesh(argset, entry["mesh"], where)
    return (argset,)



def on_mesh(argset: Any, mesh: Any, where: str) -> Any:
    """An example's ArgSet whose sharded specs are declared on ``mesh`` (its ``"mesh"`` key)."""
    from jitscope.load.abstract import map_specs
    from jitscope.load.mesh import parse_mesh

    try:
        text = str(parse_mesh(str(mesh)))
    except UsageError as exc:
        raise SpecError(f"{where}: 'mesh' {mesh!r} is not NAME=SIZE,...", hint="for example \"data=4,model=2\"") from exc

    def place(spec: Any) -> Any:
        return dataclasses.replace(spec, mesh=text) if spec.sharding is not None and not spec.mesh else spec

    args, kwargs = map_specs(argset, place)
    return dataclasses.replace(argset, args=args, kwargs=kwargs)

def examples_for(module: Any, attr_path: str) -> tuple[ArgSet, ...]:
    """The ArgSets declared for ``attr_path`` in ``module``, or ()."""
    table = getattr(module, EXAMPLES_ATTR, None)
    if table is None:
        return ()
    if not isinstance(table, dict):
        raise SpecError(f"{EXAMPLES_ATTR} in {module.__name__} must be a dict, not {type(table).__name__}")
    last = attr_path.rsplit(".", 1)[-1]
    for key in (attr_path, last):
        if key in table:
            return parse_example_entry(key, table[key])
    return ()


def examples_from_config(keys: tuple[str, ...], start: Path) -> tuple[ArgSet, ...]:
    """Examples for a target from ``[tool.jitscope.examples]`` in the nearest pyproject.toml.

    For modules you cannot (or would rather not) edit: the table maps a target, written as on
    the command line (``"pkg.model:apply"`` or ``"src/model.py:apply"``), to the same values
    ``JITSCOPE_EXAMPLES`` takes.
    """
    from jitscope.config import load_config

    config = load_config(start)
    table = config.section("examples")
    for key in keys:
        if key in table:
            return parse_example_entry(key, table[key], "[tool.jitscope.examples]")
    return ()


def example_names(module: Any) -> tuple[str, ...]:
    table = getattr(module, EXAMPLES_ATTR, None)
    return tuple(table) if isinstance(table, dict) else ()
