"""A reader of the ``*.xplane.pb`` file that ``jax.profiler.trace`` writes, for JAX without ``ProfileData``.

The file is one serialized ``tensorflow.profiler.XSpace`` protobuf message. JAX 0.4.38-0.6.x
write it but have no public reader (``jax.profiler.ProfileData`` is missing or None), and the
``protobuf`` package is not a dependency of JAX, so this module decodes the protobuf wire format
itself: pure Python, no jax import. It yields what ``ProfileData`` yields (checked event by event
against it in ``tests/profile/test_xspace_reader.py``): planes, their lines, each line's events
with ``name``, ``start_ns``, ``duration_ns`` and ``stats`` as (name, value) pairs.

Field numbers are those of ``tsl/profiler/protobuf/xplane.proto``, checked against the
descriptor compiled into jaxlib 0.4.38 and 0.10.2 (identical in both)::

    XSpace          planes=1 errors=2 warnings=3 hostnames=4
    XPlane          id=1 name=2 lines=3 event_metadata=4 (map<int64, XEventMetadata>)
                    stat_metadata=5 (map<int64, XStatMetadata>) stats=6
    XLine           id=1 name=2 timestamp_ns=3 events=4 duration_ps=9 display_id=10 display_name=11
    XEvent          metadata_id=1 offset_ps=2 | num_occurrences=5 (oneof) duration_ps=3 stats=4
    XStat           metadata_id=1, value oneof: double=2 uint64=3 int64=4 str=5 bytes=6 ref=7
    XEventMetadata  id=1 name=2 metadata=3 display_name=4 stats=5 child_id=6
    XStatMetadata   id=1 name=2 description=3

As ``ProfileData`` does: an event's name is its metadata's name; its start is the line's
``timestamp_ns`` plus ``offset_ps`` in whole nanoseconds (truncated, like its duration); its stats
are its own (not its metadata's); a ``ref_value`` stat is the name of the stat metadata it points
to; ``str_value`` and ``bytes_value`` are both text (undecodable bytes replaced).
Unknown fields (a newer proto) are skipped; a truncated or malformed file raises ``XSpaceError``.
Where ProfileData stumbles on odd input this reader goes on: a stat without a value is left out
(ProfileData gives ``(None, None)``), invalid UTF-8 is replaced (ProfileData raises).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

StatValue = int | float | str

_DOUBLE = struct.Struct("<d")
_VARINT, _FIXED64, _LENGTH, _FIXED32 = 0, 1, 2, 5
_INT64_SIGN = 1 << 63
_UINT64 = 1 << 64


class XSpaceError(ValueError):
    """The bytes are not a well-formed XSpace (truncated file, or not an ``.xplane.pb``)."""


@dataclass(frozen=True, slots=True)
class Event:
    name: str
    start_ns: float
    duration_ns: float
    stats: tuple[tuple[str, StatValue], ...]

    @property
    def end_ns(self) -> float:
        return self.start_ns + self.duration_ns


@dataclass(frozen=True, slots=True)
class Line:
    id: int
    name: str
    timestamp_ns: int
    events: tuple[Event, ...]


@dataclass(frozen=True, slots=True)
class Plane:
    id: int
    name: str
    lines: tuple[Line, ...]
    stats: tuple[tuple[str, StatValue], ...]


@dataclass(frozen=True, slots=True)
class Space:
    planes: tuple[Plane, ...]
    errors: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    hostnames: tuple[str, ...] = ()


def read_xspace(path: str) -> Space:
    """The XSpace in the file at ``path``."""
    with open(path, "rb") as f:
        return parse_xspace(f.read())


def parse_xspace(data: bytes) -> Space:
    """The XSpace serialized in ``data``."""
    try:
        planes: list[Plane] = []
        texts: dict[int, list[str]] = {2: [], 3: [], 4: []}  # errors, warnings, hostnames
        for field, wire, value in _fields(data, 0, len(data)):
            if wire != _LENGTH:
                continue
            if field == 1:
                planes.append(_plane(data, *value))
            elif field in texts:
                texts[field].append(_string(data, value))
        return Space(tuple(planes), tuple(texts[2]), tuple(texts[3]), tuple(texts[4]))
    except (IndexError, UnicodeDecodeError, struct.error) as exc:
        raise XSpaceError(f"not a well-formed XSpace ({type(exc).__name__}: {exc})") from None


# -- wire format ---------------------------------------------------------------------------------------


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    """(value, next index) of the base-128 varint at ``i``."""
    byte = buf[i]
    if byte < 0x80:
        return byte, i + 1
    result, shift = byte & 0x7F, 7
    while True:
        i += 1
        byte = buf[i]
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, i + 1
        shift += 7
        if shift > 63:
            raise XSpaceError(f"a varint longer than 10 bytes at offset {i}")


def _fields(buf: bytes, i: int, end: int) -> list[tuple[int, int, tuple[int, int]]]:
    """Every field of the message in ``buf[i:end]``: (number, wire type, value).

    The value is ``(integer, 0)`` for a varint, ``(start, stop)`` for a length-delimited field,
    and the offset of the bytes as ``(start, start + 8 or 4)`` for a fixed64/fixed32.
    """
    out = []
    while i < end:
        key, i = _varint(buf, i)
        field, wire = key >> 3, key & 7
        if wire == _VARINT:
            n, i = _varint(buf, i)
            out.append((field, wire, (n, 0)))
            continue
        if wire == _LENGTH:
            n, i = _varint(buf, i)
            start, i = i, i + n
        elif wire == _FIXED64:
            start, i = i, i + 8
        elif wire == _FIXED32:
            start, i = i, i + 4
        else:  # 3, 4: proto2 groups, which xplane.proto never uses; 6, 7: invalid
            raise XSpaceError(f"wire type {wire} (field {field}) at offset {i}")
        if i > end:
            raise XSpaceError(f"field {field} runs past the end of its message ({i} > {end})")
        out.append((field, wire, (start, i)))
    if i != end:
        raise XSpaceError(f"a message overruns its length ({i} > {end})")
    return out


def _skip(buf: bytes, i: int, wire: int, end: int) -> int:
    """The index after a field's value of wire type ``wire`` starting at ``i``."""
    if wire == _VARINT:
        return _varint(buf, i)[1]
    if wire == _LENGTH:
        n, i = _varint(buf, i)
        i += n
    elif wire == _FIXED64:
        i += 8
    elif wire == _FIXED32:
        i += 4
    else:
        raise XSpaceError(f"wire type {wire} at offset {i}")
    if i > end:
        raise XSpaceError(f"a field runs past the end of its message ({i} > {end})")
    return i


def _int64(n: int) -> int:
    """A varint read as a signed int64 (negative values are 10-byte two's complement)."""
    n &= _UINT64 - 1
    return n - _UINT64 if n & _INT64_SIGN else n


def _ns(picoseconds: int) -> int:
    """Whole nanoseconds, truncated toward zero as ProfileData's C++ does."""
    return picoseconds // 1000 if picoseconds >= 0 else -(-picoseconds // 1000)


def _string(buf: bytes, span: tuple[int, int]) -> str:
    return buf[span[0]:span[1]].decode()


# -- messages ------------------------------------------------------------------------------------------


def _stat(buf: bytes, start: int, stop: int, stat_names: dict[int, str]) -> tuple[str, StatValue] | None:
    """An XStat as (name, value); None when its value is unset."""
    metadata_id = 0
    value: StatValue | None = None
    for field, wire, (a, b) in _fields(buf, start, stop):
        if field == 1 and wire == _VARINT:
            metadata_id = _int64(a)
        elif field == 2 and wire == _FIXED64:
            value = _DOUBLE.unpack_from(buf, a)[0]
        elif field == 3 and wire == _VARINT:
            value = a
        elif field == 4 and wire == _VARINT:
            value = _int64(a)
        elif field in (5, 6) and wire == _LENGTH:
            # ProfileData gives bytes as text too (profile_options is a serialized message).
            value = buf[a:b].decode(errors="replace")
        elif field == 7 and wire == _VARINT:
            value = stat_names.get(a, "")
    return None if value is None else (stat_names.get(metadata_id, ""), value)


def _stats(buf: bytes, spans: list[tuple[int, int]], stat_names: dict[int, str]) -> tuple[tuple[str, StatValue], ...]:
    out = []
    for start, stop in spans:
        stat = _stat(buf, start, stop, stat_names)
        if stat is not None:
            out.append(stat)
    return tuple(out)


def _name(buf: bytes, start: int, stop: int) -> str:
    """The name (field 2) of an XEventMetadata or XStatMetadata; their id is the map's key, and
    ProfileData shows nothing else of them (display name, stats, description)."""
    name = ""
    for field, wire, value in _fields(buf, start, stop):
        if field == 2 and wire == _LENGTH:
            name = _string(buf, value)
    return name


def _map_entry(buf: bytes, start: int, stop: int) -> tuple[int, tuple[int, int] | None]:
    """(key, span of the value message) of a ``map<int64, Message>`` entry (key=1, value=2)."""
    key, span = 0, None
    for field, wire, value in _fields(buf, start, stop):
        if field == 1 and wire == _VARINT:
            key = _int64(value[0])
        elif field == 2 and wire == _LENGTH:
            span = value
    return key, span


def _plane(buf: bytes, start: int, stop: int) -> Plane:
    plane_id, name = 0, ""
    lines, event_entries, stat_entries, stats = [], [], [], []
    # Lines (field 3) come before the metadata maps (4, 5) on the wire: collect, then decode.
    for field, wire, value in _fields(buf, start, stop):
        if field == 1 and wire == _VARINT:
            plane_id = _int64(value[0])
        elif wire != _LENGTH:
            continue
        elif field == 2:
            name = _string(buf, value)
        elif field == 3:
            lines.append(value)
        elif field == 4:
            event_entries.append(value)
        elif field == 5:
            stat_entries.append(value)
        elif field == 6:
            stats.append(value)
    stat_names: dict[int, str] = {}
    for entry in stat_entries:
        key, span = _map_entry(buf, *entry)
        # The map's key is the metadata's id; a message without the value keeps the key.
        stat_names[key] = _name(buf, *span) if span is not None else ""
    kinds: dict[int, str] = {}
    for entry in event_entries:
        key, span = _map_entry(buf, *entry)
        kinds[key] = _name(buf, *span) if span is not None else ""
    cache = _StatCache(stat_names)
    return Plane(plane_id, name, tuple(_line(buf, *span, kinds, cache) for span in lines),
                 _stats(buf, stats, stat_names))


class _StatCache(dict[bytes, "tuple[str, StatValue] | None"]):
    """Decoded XStats by their bytes: the events of a capture repeat the same few stats (``hlo_module``,
    an op's ``hlo_op``, one ``run_id`` per call), so most are decoded once."""

    def __init__(self, stat_names: dict[int, str]) -> None:
        super().__init__()
        self.stat_names = stat_names

    def __missing__(self, raw: bytes) -> tuple[str, StatValue] | None:
        stat = self[raw] = _stat(raw, 0, len(raw), self.stat_names)
        return stat


def _line(buf: bytes, start: int, stop: int, kinds: dict[int, str], cache: _StatCache) -> Line:
    line_id, name, timestamp_ns, events = 0, "", 0, []
    for field, wire, value in _fields(buf, start, stop):
        if field == 1 and wire == _VARINT:
            line_id = _int64(value[0])
        elif field == 2 and wire == _LENGTH:
            name = _string(buf, value)
        elif field == 3 and wire == _VARINT:
            timestamp_ns = _int64(value[0])
        elif field == 4 and wire == _LENGTH:
            events.append(value)
    return Line(line_id, name, timestamp_ns,
                tuple(_event(buf, a, b, timestamp_ns, kinds, cache) for a, b in events))


def _event(buf: bytes, i: int, stop: int, timestamp_ns: int, kinds: dict[int, str],
           cache: _StatCache) -> Event:
    kind_id, offset_ps, duration_ps = 0, 0, 0
    stats: list[tuple[str, StatValue]] = []
    while i < stop:
        key = buf[i]
        i += 1
        if key > 0x7F:
            key, i = _varint(buf, i - 1)
        field, wire = key >> 3, key & 7
        if wire == _VARINT and field in (1, 2, 3, 5):
            n, i = _varint(buf, i)
            if field == 1:
                kind_id = n if n < _INT64_SIGN else _int64(n)
            elif field == 2:
                offset_ps = n if n < _INT64_SIGN else _int64(n)
            elif field == 3:
                duration_ps = n if n < _INT64_SIGN else _int64(n)
            else:  # num_occurrences: an aggregated event, which starts at the line's start
                offset_ps = 0
        elif wire == _LENGTH and field == 4:
            n = buf[i]  # a stat is nearly always shorter than 128 bytes: a one-byte length
            if n < 0x80:
                i += 1
            else:
                n, i = _varint(buf, i)
            end = i + n
            if end > stop:
                raise XSpaceError(f"a stat runs past the end of its event ({end} > {stop})")
            stat = cache[buf[i:end]]
            if stat is not None:
                stats.append(stat)
            i = end
        else:
            i = _skip(buf, i, wire, stop)
    if i != stop:
        raise XSpaceError(f"an event overruns its length ({i} > {stop})")
    return Event(kinds.get(kind_id, ""), float(timestamp_ns + _ns(offset_ps)), float(_ns(duration_ps)), tuple(stats))
