"""``reference/schemas.md``: the JSON documents jitscope writes, from the records themselves.

Every ``--format json`` document is ``to_jsonable(record)``: a frozen dataclass whose ``kind`` and
``schema_version`` fields have defaults. This module finds those records in ``jitscope.model``, and
lists each one's fields and the records nested in them, with their types, so a field added to a record
is on the page at the next build.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
import re
import typing
from typing import Any

from jitscope_docs.markdown import code, escape


def document_records() -> list[type]:
    """The top-level records (a default ``kind`` and ``schema_version``), ordered by kind."""
    import jitscope.model

    found: dict[str, type] = {}
    for info in pkgutil.iter_modules(jitscope.model.__path__):
        module = importlib.import_module(f"jitscope.model.{info.name}")
        for _, cls in inspect.getmembers(module, dataclasses.is_dataclass):
            fields = {f.name: f for f in dataclasses.fields(cls)}
            kind, version = fields.get("kind"), fields.get("schema_version")
            if cls.__module__ == module.__name__ and kind and version and isinstance(kind.default, str) \
                    and isinstance(version.default, str):
                found[kind.default] = cls
    return [found[k] for k in sorted(found)]


def _type_text(hint: Any) -> str:
    text = str(hint) if not isinstance(hint, type) else hint.__name__
    text = re.sub(r"\b(?:[a-z_][\w]*\.)+([A-Za-z_]\w*)", r"\1", text)  # jitscope.model.trace.Foo -> Foo
    return text.replace("typing.", "").replace("NoneType", "None")


def _nested(hint: Any, module: Any) -> list[type]:
    out = []
    for name in re.findall(r"\b[A-Z]\w+", str(hint)):
        cls = getattr(module, name, None)
        if isinstance(cls, type) and dataclasses.is_dataclass(cls):
            out.append(cls)
    return out


def _record_section(cls: type, anchors: dict[type, str]) -> list[str]:
    import sys

    module = sys.modules[cls.__module__]
    hints = typing.get_type_hints(cls)
    doc = inspect.getdoc(cls) or ""
    lines = [f"### `{cls.__name__}`", ""]
    if doc and not doc.startswith(cls.__name__ + "("):
        lines += [escape(" ".join(doc.split("\n\n")[0].split())), ""]
    lines += ["| field | type | default |", "| --- | --- | --- |"]
    for field in dataclasses.fields(cls):
        if field.default is not dataclasses.MISSING:
            default = code(repr(field.default))
        elif field.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
            default = code(repr(field.default_factory()))  # type: ignore[misc]
        else:
            default = "required"
        type_text = escape(_type_text(hints[field.name]))
        for nested in _nested(hints[field.name], module):
            if nested in anchors:
                type_text = re.sub(rf"\b{nested.__name__}\b", f"[{nested.__name__}](#{anchors[nested]})",
                                   type_text, count=1)
        lines.append(f"| `{field.name}` | {type_text} | {default} |")
    return [*lines, ""]


def _records_of(top: type) -> list[type]:
    import sys

    order, todo = [], [top]
    while todo:
        cls = todo.pop(0)
        if cls in order:
            continue
        order.append(cls)
        hints = typing.get_type_hints(cls)
        todo += [n for f in dataclasses.fields(cls) for n in _nested(hints[f.name], sys.modules[cls.__module__])]
    return order


def schema_pages() -> dict[str, str]:
    lines = [
        "# JSON schemas", "",
        "Every command's `--format json` (and `--out FILE.json`, `bench --save`, `run --out`) writes one JSON "
        "document: the record the command rendered, field for field. Each document has a `kind` and a "
        "`schema_version`; a minor version only adds fields (older documents still load), a new major version "
        "is a breaking change, and readers refuse a major version they do not know. NaN is written as `null`; "
        "tuples as lists; enums as their values.", "",
        "This page is generated from the records in `jitscope/model/`, so it lists exactly what the current "
        "version writes.", "",
        "| kind | record | schema version |", "| --- | --- | --- |",
    ]
    tops = document_records()
    sections: list[str] = []
    for top in tops:
        kind = next(f.default for f in dataclasses.fields(top) if f.name == "kind")
        version = next(f.default for f in dataclasses.fields(top) if f.name == "schema_version")
        slug = kind.replace(".", "-")
        lines.append(f"| [`{kind}`](#{slug}) | `{top.__name__}` | {version} |")
        records = _records_of(top)
        anchors = {cls: f"{slug}-{cls.__name__.lower()}" for cls in records}
        sections += [f"({slug})=", f"## `{kind}`", "", f"Schema version {version}; the document is "
                     f"`{top.__name__}` (`{top.__module__}`).", ""]
        for cls in records:
            sections += [f"({anchors[cls]})=", *_record_section(cls, anchors)]
    return {"reference/schemas.md": "\n".join([*lines, "", *sections])}
