"""Validate SARIF documents against the official SARIF 2.1.0 schema (vendored in tests/lint/data).

``jsonschema`` checks a ``format`` only where a checker for it is installed, and ``uri`` /
``uri-reference`` need optional packages: here they are checked against RFC 3986's grammar
(appendix A), so a file name put into a URI without percent-encoding fails validation.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

SCHEMA = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"

_UNRESERVED = r"A-Za-z0-9\-._~"
_SUB_DELIMS = r"!$&'()*+,;="
_PCT = r"%[0-9A-Fa-f]{2}"
_PCHAR = rf"(?:[{_UNRESERVED}{_SUB_DELIMS}:@]|{_PCT})"
_SEGMENT = rf"{_PCHAR}*"
_SEGMENT_NZ = rf"{_PCHAR}+"
_SEGMENT_NZ_NC = rf"(?:[{_UNRESERVED}{_SUB_DELIMS}@]|{_PCT})+"
_QUERY = rf"(?:{_PCHAR}|[/?])*"
_HOST = rf"(?:\[[0-9A-Fa-f:.vV\-{_UNRESERVED}{_SUB_DELIMS}]+\]|(?:[{_UNRESERVED}{_SUB_DELIMS}]|{_PCT})*)"
_AUTHORITY = rf"(?:(?:[{_UNRESERVED}{_SUB_DELIMS}:]|{_PCT})*@)?{_HOST}(?::[0-9]*)?"
_ABEMPTY = rf"(?:/{_SEGMENT})*"
_ABSOLUTE = rf"/(?:{_SEGMENT_NZ}(?:/{_SEGMENT})*)?"
_TAIL = rf"(?:\?{_QUERY})?(?:#{_QUERY})?"
_SCHEME = r"[A-Za-z][A-Za-z0-9+\-.]*"
URI = re.compile(rf"{_SCHEME}:(?://{_AUTHORITY}{_ABEMPTY}|{_ABSOLUTE}|{_SEGMENT_NZ}(?:/{_SEGMENT})*|){_TAIL}")
RELATIVE_REF = re.compile(rf"(?://{_AUTHORITY}{_ABEMPTY}|{_ABSOLUTE}|{_SEGMENT_NZ_NC}(?:/{_SEGMENT})*|){_TAIL}")


def is_uri(value: object) -> bool:
    return not isinstance(value, str) or URI.fullmatch(value) is not None


def is_uri_reference(value: object) -> bool:
    return not isinstance(value, str) or is_uri(value) or RELATIVE_REF.fullmatch(value) is not None


@cache
def _validator() -> Any:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    checker = jsonschema.FormatChecker(formats=())
    checker.checks("uri")(is_uri)
    checker.checks("uri-reference")(is_uri_reference)
    validator = jsonschema.validators.validator_for(schema)
    validator.check_schema(schema)
    return validator(schema, format_checker=checker)


def sarif_errors(document: Any) -> list[str]:
    """Every way ``document`` breaks the SARIF 2.1.0 schema (empty when it is valid)."""
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in _validator().iter_errors(document)]
