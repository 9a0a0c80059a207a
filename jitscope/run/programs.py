"""The program each compile produced, as a fingerprint that is equal on every process of an SPMD step.

Processes of one multi-process program must compile the same program for every step they run
together: its collectives meet only when each process reaches the same ones in the same order.
Two processes whose Python took different paths under ``jit`` (a branch on the process index,
a config read from a host-local file, a pytree of dict keys in another order) compile different
programs, and the job hangs in the first collective they disagree on, or silently computes
something else. XLA's optimised HLO of one step is identical across processes except for what
names the source: ``metadata={...}`` (op names, file paths that differ between checkouts) and the
module's Python stack tables. ``canonical_hlo`` drops those; its hash is the fingerprint.

The HLO as compiled is kept too (zlib, base64, up to ``HLO_LIMIT`` characters) so ``jitscope
merge`` can show the first line where two processes' programs differ, with its source line.
"""

from __future__ import annotations

import base64
import hashlib
import re
import zlib
from typing import Any

from jitscope.model.run import CompiledProgram

#: Characters of each program's HLO kept in the report (a large model's step prints several MB).
HLO_LIMIT = 2_000_000
#: The most a kept HLO unpacks to (``HLO_LIMIT`` characters of at most 4 UTF-8 bytes each): a report that
#: claims more was not written by jitscope, and is not inflated past this (``jitscope merge`` reads others' files).
MAX_UNPACKED_BYTES = 4 * HLO_LIMIT
#: The Python stack tables newer XLA prints between the module header and the first computation.
_TABLES = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")
_METADATA = re.compile(r',?\s*metadata=\{(?:[^{}"]|"(?:[^"\\]|\\.)*")*\}')


def canonical_lines(text: str) -> list[str]:
    """The HLO lines that must agree between processes: no metadata, no stack tables, no blank lines."""
    return [canonical for canonical, _ in canonical_pairs(text)]


def canonical_pairs(text: str) -> list[tuple[str, str]]:
    """Each canonical line with the line it came from (metadata and all, to name its source line)."""
    out: list[tuple[str, str]] = []
    in_table = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped in _TABLES:
            in_table = True
            continue
        if in_table:
            if stripped and stripped[0].isdigit():
                continue
            in_table = False
        if not stripped:
            continue
        out.append((_METADATA.sub("", line).rstrip(), line))
    return out


def fingerprint(text: str) -> str:
    """16 hex digits of sha256 over the canonical lines."""
    return hashlib.sha256("\n".join(canonical_lines(text)).encode()).hexdigest()[:16]


def compiled_program(hlo_text: str, jax_fingerprint: str = "", *, keep_hlo: bool = True) -> CompiledProgram:
    """The record of one compile's program; ``keep_hlo`` False keeps the fingerprint only."""
    kept = hlo_text[:HLO_LIMIT]
    packed = base64.b64encode(zlib.compress(kept.encode(), 6)).decode("ascii") if keep_hlo else ""
    return CompiledProgram(fingerprint=fingerprint(hlo_text), jax_fingerprint=jax_fingerprint, hlo_zlib=packed,
                           hlo_chars=len(hlo_text), truncated=keep_hlo and len(hlo_text) > HLO_LIMIT)


def unpack_hlo(program: CompiledProgram) -> str:
    """The HLO text ``compiled_program`` kept ("" when none was, or it does not unpack within the bound)."""
    try:
        return _unpacked(program.hlo_zlib)
    except ValueError:
        return ""


def kept_hlo_problem(program: CompiledProgram) -> str | None:
    """Why the kept HLO cannot be unpacked (damaged, or more than ``MAX_UNPACKED_BYTES``); None when it can."""
    try:
        _unpacked(program.hlo_zlib)
    except ValueError as exc:
        return str(exc)
    return None


def _unpacked(packed: str) -> str:
    """``packed`` (zlib, base64) unpacked, never past ``MAX_UNPACKED_BYTES``; ValueError saying why not."""
    if not packed:
        return ""
    if len(packed) > 2 * MAX_UNPACKED_BYTES:  # base64 of zlib of text within the bound is never this long
        raise ValueError(f"is {len(packed):,} characters long, more than jitscope ever writes")
    try:
        raw = base64.b64decode(packed)
    except ValueError as exc:
        raise ValueError(f"is not base64 ({exc})") from None
    inflater = zlib.decompressobj()
    try:
        data = inflater.decompress(raw, MAX_UNPACKED_BYTES)
    except zlib.error as exc:
        raise ValueError(f"does not unpack ({exc})") from None
    if inflater.unconsumed_tail or (len(data) >= MAX_UNPACKED_BYTES and not inflater.eof):
        raise ValueError(f"unpacks to more than {MAX_UNPACKED_BYTES:,} bytes, more than jitscope ever keeps")
    if not inflater.eof:
        raise ValueError("does not unpack (the compressed data is cut short)")
    try:
        return data.decode()
    except UnicodeDecodeError as exc:
        raise ValueError(f"is not UTF-8 text ({exc.reason})") from None


def program_of(executable: Any, *, keep_hlo: bool = True) -> CompiledProgram | None:
    """The record for a loaded executable, or None when it cannot print its HLO."""
    from jitscope.jaxcompat.executables import executable_fingerprint, optimized_hlo_text

    text = optimized_hlo_text(executable)
    if text is None:
        return None
    return compiled_program(text, executable_fingerprint(executable), keep_hlo=keep_hlo)
