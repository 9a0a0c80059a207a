"""jaxcompat/xspace.py, the XSpace reader for JAX without ProfileData: against ProfileData, and on hand-built bytes."""

from __future__ import annotations

import struct
import warnings
from pathlib import Path

import pytest

from jitscope.jaxcompat import profiler as jp
from jitscope.jaxcompat.xspace import XSpaceError, parse_xspace, read_xspace

# -- a minimal protobuf encoder, enough to write any XSpace by hand ---------------------------------------


def varint(n: int) -> bytes:
    n &= (1 << 64) - 1  # negative int64: ten bytes of two's complement
    out = bytearray()
    while True:
        low = n & 0x7F
        n >>= 7
        if n:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def num(field: int, value: int) -> bytes:
    return varint(field << 3) + varint(value)


def msg(field: int, *parts: bytes | str) -> bytes:
    body = b"".join(p.encode() if isinstance(p, str) else p for p in parts)
    return varint(field << 3 | 2) + varint(len(body)) + body


def double(field: int, value: float) -> bytes:
    return varint(field << 3 | 1) + struct.pack("<d", value)


def fixed32(field: int, value: int) -> bytes:
    return varint(field << 3 | 5) + struct.pack("<I", value)


def stat_metadata(key: int, name: str) -> bytes:  # XPlane.stat_metadata entry (field 5): key=1, value=2
    return msg(5, num(1, key), msg(2, num(1, key), msg(2, name), msg(3, "a description")))


def event_metadata(key: int, name: str, *stats: bytes) -> bytes:  # XPlane.event_metadata entry (field 4)
    return msg(4, num(1, key), msg(2, num(1, key), msg(2, name), msg(4, "display " + name), *stats))


def stat(field: int, metadata_id: int, value: bytes) -> bytes:
    return msg(field, num(1, metadata_id), value)


# -- the real thing ---------------------------------------------------------------------------------------


def _capture(tmp_path: Path) -> str:
    import jax
    import jax.numpy as jnp

    @jax.jit
    def step(x, w):
        y, _ = jax.lax.scan(lambda c, _: (jnp.tanh(c @ w), None), x, None, length=3)
        return (y * 2.0).sum()

    x, w = jnp.ones((64, 64)), jnp.full((64, 64), 0.01)
    step(x, w).block_until_ready()
    with jp.capture(str(tmp_path)):
        for _ in range(3):
            step(x, w).block_until_ready()
    return jp.xspace_files(str(tmp_path))[-1]


def _tree(space):
    return [(plane.name, list(plane.stats),
             [(line.name, [(e.name, e.start_ns, e.duration_ns, list(e.stats)) for e in line.events])
              for line in plane.lines])
            for plane in space.planes]


def test_the_reader_yields_what_profile_data_yields(tmp_path):
    cls = jp.profile_data_class()
    if cls is None:
        pytest.skip("this JAX has no jax.profiler.ProfileData to compare with")
    path = _capture(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        expected = _tree(cls.from_file(path))
    mine = _tree(read_xspace(path))
    assert mine == expected  # every plane, line, event (name, start, duration) and stat, in order
    events = sum(len(line[1]) for plane in mine for line in plane[2])
    assert events > 20 and any(k == "hlo_op" for *_, lines in mine for _, evs in lines for *_, s in evs
                                for k, _ in s)


def test_a_capture_read_without_profile_data_has_the_programs_thunks(tmp_path, monkeypatch):
    path = _capture(tmp_path)
    monkeypatch.setattr(jp, "profile_data_class", lambda: None)  # as on JAX 0.4.38-0.6.x
    events = jp.read_events(path)
    modules = {e.stats.get("hlo_module") for e in events}
    assert "jit_step" in modules and all(e.plane == "/host:CPU" for e in events)
    assert all(e.duration_ns >= 0 and e.stats["hlo_op"] for e in events)


# -- the wire format, by hand -----------------------------------------------------------------------------


def _space() -> bytes:
    event = msg(4, num(1, 7), num(2, 2_500_000), num(3, 1_500), stat(4, 1, msg(5, "dot.3")),
                stat(4, 2, num(4, -5)), stat(4, 3, num(3, 2**64 - 1)), stat(4, 4, double(2, 0.25)),
                stat(4, 5, num(7, 1)), stat(4, 6, msg(6, b"\x08\x01")))
    line = msg(3, num(1, 11), msg(2, "tf_XLAEigen/1"), num(3, 1_000), event, num(9, 10**9), num(10, 3),
               msg(11, "Eigen"))
    plane = msg(1, num(1, 2), msg(2, "/host:CPU"), line,
                event_metadata(7, "dot.3", stat(5, 2, num(4, 9))),
                stat_metadata(1, "hlo_op"), stat_metadata(2, "run_id"), stat_metadata(3, "big"),
                stat_metadata(4, "ratio"), stat_metadata(5, "ref"), stat_metadata(6, "raw"),
                stat(6, 1, msg(5, "plane stat")))
    return plane + msg(2, "an error") + msg(4, "host-a")


def test_hand_built_bytes_read_as_profile_data_reads_them():
    cls = jp.profile_data_class()
    if cls is None or not hasattr(cls, "from_serialized_xspace"):
        pytest.skip("this JAX has no jax.profiler.ProfileData to compare with")
    unknown = num(15, 3) + double(16, 1.5) + fixed32(17, 9) + msg(18, "later")
    odd = msg(1, unknown, msg(2, "odd"), stat_metadata(1, "n"), event_metadata(1, "e"), event_metadata(2, "f"),
              msg(3, msg(2, "l"), num(3, 5), msg(4, num(1, 1), num(2, 1_234_567), num(3, 2_500), unknown,
                                                stat(4, 1, num(4, -7))),
                  msg(4, num(1, 2), num(5, 3), stat(4, 1, msg(6, b"\x00\x01")))))
    for data in (_space(), odd):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            expected = _tree(cls.from_serialized_xspace(data))
        assert _tree(parse_xspace(data)) == expected


def test_fields_in_their_wire_order_decode_to_named_values():
    space = parse_xspace(_space())
    (plane,) = space.planes
    assert (plane.id, plane.name, plane.stats) == (2, "/host:CPU", (("hlo_op", "plane stat"),))
    (line,) = plane.lines
    assert (line.id, line.name, line.timestamp_ns) == (11, "tf_XLAEigen/1", 1_000)
    (event,) = line.events
    assert event.name == "dot.3"  # the metadata's name, not its display name
    assert (event.start_ns, event.duration_ns, event.end_ns) == (3_500.0, 1.0, 3_501.0)  # whole ns
    assert event.stats == (("hlo_op", "dot.3"), ("run_id", -5), ("big", 2**64 - 1), ("ratio", 0.25),
                           ("ref", "hlo_op"),  # a ref_value names a stat metadata
                           ("raw", "\x08\x01"))  # bytes are text; the metadata's stats are not shown
    assert (space.errors, space.warnings, space.hostnames) == (("an error",), (), ("host-a",))


def test_metadata_before_lines_and_missing_fields_default():
    # Any field order is valid protobuf; absent fields are 0 / "" / empty.
    plane = msg(1, stat_metadata(1, "hlo_op"), event_metadata(3, "add"),
                msg(3, msg(4, num(1, 3), stat(4, 1, msg(5, "add.1")))),
                msg(3, msg(2, "no events")))
    lines = parse_xspace(plane).planes[0].lines
    assert lines[0].events[0].stats == (("hlo_op", "add.1"),) and lines[0].events[0].start_ns == 0.0
    assert lines[1].name == "no events" and lines[1].events == ()
    assert parse_xspace(b"").planes == ()


def test_unknown_fields_of_every_wire_type_are_skipped():
    unknown = num(15, 3) + double(16, 1.5) + fixed32(17, 9) + msg(18, "later")
    event = msg(4, num(1, 1), unknown, num(3, 2_000))
    plane = msg(1, unknown, msg(2, "p"), msg(3, unknown, msg(2, "l"), event), event_metadata(1, "e"))
    space = parse_xspace(unknown + plane + unknown)
    assert _tree(space) == [("p", [], [("l", [("e", 0.0, 2.0, [])])])]


def test_negative_and_large_integers():
    plane = msg(1, num(1, -1), msg(3, num(1, -2**63), num(3, -1_000),
                                   msg(4, num(1, 1), num(2, 500_000)), msg(4, num(1, 1), num(5, 4))),
                event_metadata(1, "e"))
    (plane_read,) = parse_xspace(plane).planes
    line = plane_read.lines[0]
    assert (plane_read.id, line.id, line.timestamp_ns) == (-1, -2**63, -1_000)
    assert [e.start_ns for e in line.events] == [-500.0, -1_000.0]  # num_occurrences: at the line's start


@pytest.mark.parametrize(("timestamp_ns", "offset_ps", "duration_ps", "expected"), [
    (1_000, 2_500_500, 1_999, (3_500.0, 1.0)),  # picoseconds truncated to whole nanoseconds
    (0, 999, 999, (0.0, 0.0)),
    (7, -1_500, -1_500, (6.0, -1.0)),  # toward zero, as C++ divides
    (10**18, 123_456_789, 5, (float(10**18 + 123_456), 0.0)),  # added as integers, then made a float
])
def test_times_are_whole_nanoseconds_as_profile_data_gives_them(timestamp_ns, offset_ps, duration_ps, expected):
    plane = msg(1, msg(3, num(3, timestamp_ns), msg(4, num(1, 1), num(2, offset_ps), num(3, duration_ps))),
                event_metadata(1, "e"))
    event = parse_xspace(plane).planes[0].lines[0].events[0]
    assert (event.start_ns, event.duration_ns) == expected


def test_child_ids_packed_or_not_and_wrong_wire_types_do_not_disturb_the_rest():
    # XEventMetadata.child_id (6), a repeated int64 that ProfileData does not show: packed or one varint
    # per value, both valid protobuf, are stepped over.
    packed = msg(4, num(1, 1), msg(2, num(1, 1), msg(2, "parent"), msg(6, varint(2) + varint(-3))))
    unpacked = msg(4, num(1, 2), msg(2, num(1, 2), msg(2, "child"), num(6, 5), num(6, 6)))
    wrong = num(2, 4)  # XPlane.name sent as a varint: skipped, as protobuf does
    plane = msg(1, wrong, packed, unpacked, msg(3, msg(4, num(1, 1)), msg(4, num(1, 2))))
    assert [e.name for e in parse_xspace(plane).planes[0].lines[0].events] == ["parent", "child"]


def test_a_stat_without_a_value_is_left_out():
    plane = msg(1, stat_metadata(1, "empty"), event_metadata(1, "e"), msg(3, msg(4, num(1, 1), stat(4, 1, b""))))
    assert parse_xspace(plane).planes[0].lines[0].events[0].stats == ()


@pytest.mark.parametrize("cut", [1, 5, 40])
def test_a_truncated_file_is_an_error_not_a_wrong_answer(cut):
    data = _space()
    with pytest.raises(XSpaceError, match="not a well-formed XSpace|past the end|overruns"):
        parse_xspace(data[:-cut])


def test_a_file_that_is_not_an_xspace_is_an_error(tmp_path, monkeypatch):
    bad = tmp_path / "x.xplane.pb"
    bad.write_bytes(b"\x0f\xff\xff")  # wire type 7
    with pytest.raises(XSpaceError):
        read_xspace(str(bad))
    monkeypatch.setattr(jp, "profile_data_class", lambda: None)
    with pytest.raises(jp.CaptureReadError, match="could not read the captured profile"):
        jp.read_events(str(bad))


# -- against Google's protobuf, with the schema compiled into jaxlib -------------------------------------


def _jaxlib_xplane_descriptor() -> bytes | None:
    """The serialized FileDescriptorProto of xplane.proto that jaxlib's binaries embed (an independent
    source of the field numbers), or None where it cannot be found."""
    import mmap
    import re

    import jaxlib

    def varint(data, i):
        value = shift = 0
        while True:
            byte = data[i]
            value |= (byte & 0x7F) << shift
            i, shift = i + 1, shift + 7
            if byte < 0x80:
                return value, i

    for library in sorted(Path(jaxlib.__file__).parent.rglob("*.so")):
        with open(library, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            for found in re.finditer(rb"tsl/profiler/protobuf/xplane\.proto", data):
                # The descriptor starts with its name: field 1 (key 0x0a), a one-byte length, the path.
                start = next((s for s in range(found.start() - 40, found.start() - 1)
                              if data[s] == 0x0A and data[s + 1] == found.end() - s - 2), None)
                if start is None:
                    continue
                i = start
                while True:  # FileDescriptorProto's fields (1-14, varint or length-delimited) until garbage
                    key, j = varint(data, i)
                    if not 1 <= key >> 3 <= 14 or key & 7 not in (0, 2):
                        return bytes(data[start:i])
                    n, j = varint(data, j)
                    i = j + (n if key & 7 == 2 else 0)
    return None


def test_the_reader_agrees_with_googles_protobuf_on_a_real_capture(tmp_path):
    pytest.importorskip("google.protobuf")  # not a dependency of JAX: missing on some installs
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    blob = _jaxlib_xplane_descriptor()
    if blob is None:
        pytest.skip("no xplane.proto descriptor found in jaxlib's binaries")
    file_proto = descriptor_pb2.FileDescriptorProto.FromString(blob)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file_proto)
    space = message_factory.GetMessageClass(pool.FindMessageTypeByName("tensorflow.profiler.XSpace"))()
    path = _capture(tmp_path)
    space.ParseFromString(Path(path).read_bytes())

    def stats(owner, names):
        out = []
        for s in owner.stats:
            kind = s.WhichOneof("value")
            if kind is not None:
                value = getattr(s, kind)
                out.append((names[s.metadata_id].name, names[value].name if kind == "ref_value" else
                            value.decode(errors="replace") if kind == "bytes_value" else value))
        return out

    expected = []
    for plane in space.planes:
        lines = []
        for line in plane.lines:
            events = []
            for e in line.events:
                kind = plane.event_metadata[e.metadata_id]
                events.append((kind.name, float(line.timestamp_ns + int(e.offset_ps / 1000)),
                               float(int(e.duration_ps / 1000)), stats(e, plane.stat_metadata)))
            lines.append((line.name, events))
        expected.append((plane.name, stats(plane, plane.stat_metadata), lines))
    assert _tree(read_xspace(path)) == expected
