"""``[tool.jitscope]`` configuration from pyproject.toml.

:func:`load_config` finds the nearest ``pyproject.toml`` with a ``[tool.jitscope]``
table, walking up from a start directory, and returns a :class:`JitscopeConfig`:
the raw table of every section (``lint``, ``trace``, ``bench``, ...) so each command
can parse its own, plus the parsed :class:`LintConfig`. Anything malformed raises
:class:`~jitscope.errors.ConfigError` naming the file and the key.

```toml
[tool.jitscope.lint]
select = ["JS1", "JS2", "JS3"]     # codes, prefixes, rule names or "ALL"
ignore = ["JS105"]
exclude = ["build/", "examples/legacy/*.py"]
fail-on = "warning"                # error | warning | info
trace = ["mypkg.model:*"]          # also trace these (jitscope lint --trace), using JITSCOPE_EXAMPLES

[tool.jitscope.lint.per-file-ignores]
"tests/*" = ["JS101"]
```

``[tool.jitscope] source = ["src", "scripts"]`` names the folders (relative to the pyproject.toml) whose
files are the user's code for ``jitscope trace``'s per-line annotations and summary (default: the
target's own package or folder).
"""

from __future__ import annotations

import difflib
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from jitscope.errors import ConfigError

if TYPE_CHECKING:  # SEVERITIES is imported where fail-on is checked: jitscope trace reads this file too
    from jitscope.model.lint import Severity

PYPROJECT = "pyproject.toml"
#: How messages name the lint table (errors are escaped before rich sees them, so the brackets stay).
LINT_TABLE = "[tool.jitscope.lint]"
_LINT_KEYS = ("select", "ignore", "per-file-ignores", "exclude", "extend-exclude", "fail-on", "trace")
_EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class LintConfig:
    """``[tool.jitscope.lint]``, validated. Patterns are relative to ``JitscopeConfig.root``."""

    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] = ()
    fail_on: Severity = "warning"
    #: Targets for the tracer-based checks (``jitscope lint --trace``), e.g. ``["pkg.model:*"]``.
    trace: tuple[str, ...] = ()

    def with_overrides(
        self,
        *,
        select: tuple[str, ...] | None = None,
        ignore: tuple[str, ...] | None = None,
        exclude: tuple[str, ...] = (),
        fail_on: Severity | None = None,
    ) -> LintConfig:
        """This config with command-line values replacing (select/ignore/fail-on) or extending (exclude) it."""
        return LintConfig(
            select=select if select is not None else self.select,
            ignore=ignore if ignore is not None else self.ignore,
            per_file_ignores=self.per_file_ignores,
            exclude=self.exclude + exclude,
            fail_on=fail_on or self.fail_on,
            trace=self.trace,
        )


@dataclass(frozen=True, slots=True)
class JitscopeConfig:
    """Where the configuration came from, its raw tables, and the parsed lint section."""

    path: Path | None
    root: Path
    raw: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    lint: LintConfig = field(default_factory=LintConfig)
    #: ``[tool.jitscope] source``: the folders of the user's own code, resolved against ``root``; () when unset.
    source: tuple[Path, ...] = ()

    def section(self, name: str) -> Mapping[str, Any]:
        """The raw ``[tool.jitscope.<name>]`` table (empty when absent)."""
        value = self.raw.get(name, _EMPTY)
        if not isinstance(value, Mapping):
            raise ConfigError(f"{self._where()}: [tool.jitscope.{name}] must be a table")
        return value

    def _where(self) -> str:
        return str(self.path) if self.path else PYPROJECT


def find_pyproject(start: Path) -> tuple[Path, dict[str, Any]] | None:
    """The nearest pyproject.toml at or above ``start`` that has a ``[tool.jitscope]`` table."""
    directory = start if start.is_dir() else start.parent
    directory = directory.resolve()
    for candidate_dir in (directory, *directory.parents):
        candidate = candidate_dir / PYPROJECT
        if not candidate.is_file():
            continue
        data = _read_toml(candidate)
        tool = data.get("tool")
        if isinstance(tool, dict) and "jitscope" in tool:
            return candidate, data
    return None


def load_config(start: Path, explicit: Path | None = None) -> JitscopeConfig:
    """Configuration for a run started in ``start`` (or read from ``explicit``)."""
    if explicit is not None:
        if not explicit.is_file():
            special = explicit.exists() and not explicit.is_dir()  # a FIFO or a device: never read
            raise ConfigError(f"config file is not a regular file: {explicit}" if special
                              else f"config file not found: {explicit}")
        path, data = explicit.resolve(), _read_toml(explicit)
    else:
        found = find_pyproject(start)
        if found is None:
            root = start if start.is_dir() else start.parent
            return JitscopeConfig(path=None, root=root.resolve())
        path, data = found
    table = data.get("tool", {}).get("jitscope", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.jitscope] must be a table")
    lint_table = table.get("lint", {})
    if not isinstance(lint_table, dict):
        raise ConfigError(f"{path}: {LINT_TABLE} must be a table")
    return JitscopeConfig(
        path=path,
        root=path.parent,
        raw=MappingProxyType(dict(table)),
        lint=parse_lint_config(lint_table, str(path)),
        source=_source_dirs(table, path),
    )


def _source_dirs(table: Mapping[str, Any], path: Path) -> tuple[Path, ...]:
    value = table.get("source", ())
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{path}: [tool.jitscope] 'source' must be a list of folders (strings)")
    return tuple((path.parent / v).resolve() for v in value)


def parse_lint_config(table: Mapping[str, Any], where: str = PYPROJECT) -> LintConfig:
    """Validate a ``[tool.jitscope.lint]`` table."""
    normalized: dict[str, Any] = {}
    for key, value in table.items():
        canon = key.replace("_", "-")
        if canon not in _LINT_KEYS:
            close = difflib.get_close_matches(canon, _LINT_KEYS, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else f" (known keys: {', '.join(_LINT_KEYS)})"
            raise ConfigError(f"{where}: unknown key '{key}' in {LINT_TABLE}{hint}")
        normalized[canon] = value
    select = _str_list(normalized, "select", where) if "select" in normalized else None
    ignore = _str_list(normalized, "ignore", where)
    exclude = _str_list(normalized, "exclude", where) + _str_list(normalized, "extend-exclude", where)
    per_file: list[tuple[str, tuple[str, ...]]] = []
    raw_pfi = normalized.get("per-file-ignores", {})
    if not isinstance(raw_pfi, dict):
        raise ConfigError(f"{where}: {LINT_TABLE} 'per-file-ignores' must be a table of pattern = [codes]")
    for pattern, codes in raw_pfi.items():
        per_file.append(
            (pattern, _str_list({"codes": codes}, "codes", where, f"per-file-ignores '{pattern}'"))
        )
    fail_on = normalized.get("fail-on", "warning")
    from jitscope.model.lint import SEVERITIES

    if fail_on not in SEVERITIES:
        raise ConfigError(f"{where}: {LINT_TABLE} 'fail-on' must be one of {', '.join(SEVERITIES)}, not {fail_on!r}")
    _check_codes(where, select or (), ignore, *(codes for _, codes in per_file))
    trace = _str_list(normalized, "trace", where)
    return LintConfig(select, ignore, tuple(per_file), exclude, fail_on, trace)


def _str_list(table: Mapping[str, Any], key: str, where: str, label: str | None = None) -> tuple[str, ...]:
    value = table.get(key, ())
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: {LINT_TABLE} '{label or key}' must be a list of strings")
    return tuple(value)


def _check_codes(where: str, *groups: tuple[str, ...]) -> None:
    from jitscope.linter.registry import expand, suggest

    for group in groups:
        try:
            expand(group)
        except KeyError as err:
            bad = str(err.args[0])
            close = suggest(bad)
            hint = f" (did you mean {close}?)" if close else ""
            raise ConfigError(f"{where}: unknown rule '{bad}' in {LINT_TABLE}{hint}") from None


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{path}: invalid TOML: {err}") from None
    except UnicodeDecodeError as err:  # tomllib decodes the whole file before parsing it
        raise ConfigError(f"{path}: not UTF-8 text (TOML files are UTF-8): byte {err.object[err.start]:#04x} "
                          f"at offset {err.start}") from None
    except OSError as err:
        raise ConfigError(f"{path}: cannot read: {err.strerror or err}") from None
