"""jaxcompat.distributed.publish/fetch, the way --distributed's reports reach process 0, on a stand-in for JAX's
coordination service client: chunks, their count, and a time limit; and the real client's methods on this JAX."""

from __future__ import annotations

import pytest

from jitscope.jaxcompat import distributed


class FakeClient:
    """The four methods publish and fetch use, over a dict; a missing key times out at once."""

    def __init__(self) -> None:
        self.store: dict[str, bytes | str] = {}

    def key_value_set(self, key: str, value: str, allow_overwrite: bool = False) -> None:
        assert allow_overwrite or key not in self.store
        self.store[key] = value

    key_value_set_bytes = key_value_set

    def blocking_key_value_get(self, key: str, timeout_in_ms: int) -> bytes | str:
        assert timeout_in_ms >= 1
        if key not in self.store:
            raise RuntimeError(f"DEADLINE_EXCEEDED: GetKeyValue() timed out with key: {key}\nmore detail")
        return self.store[key]

    blocking_key_value_get_bytes = blocking_key_value_get


@pytest.fixture
def client(monkeypatch: pytest.MonkeyPatch) -> FakeClient:
    import jax._src.distributed as jax_distributed

    fake = FakeClient()
    monkeypatch.setattr(jax_distributed.global_state, "client", fake)
    monkeypatch.setattr(distributed, "KV_CHUNK_BYTES", 10)
    return fake


def test_a_value_travels_in_chunks_under_its_count(client: FakeClient) -> None:
    data = bytes(range(25))
    distributed.publish("jitscope/bench/report/p1", data)
    assert client.store["jitscope/bench/report/p1"] == "3"  # 10 + 10 + 5 bytes; the count is set last
    assert [len(client.store[f"jitscope/bench/report/p1/{n}"]) for n in range(3)] == [10, 10, 5]
    assert distributed.fetch("jitscope/bench/report/p1", 1.0) == data
    distributed.publish("empty", b"")
    assert distributed.fetch("empty", 1.0) == b""


def test_a_value_never_published_is_one_line(client: FakeClient) -> None:
    with pytest.raises(distributed.KeyValueError, match=r"^DEADLINE_EXCEEDED: GetKeyValue.*report/p2$"):
        distributed.fetch("jitscope/bench/report/p2", 0.01)


def test_without_a_client_there_is_no_store(monkeypatch: pytest.MonkeyPatch) -> None:
    import jax._src.distributed as jax_distributed

    monkeypatch.setattr(jax_distributed.global_state, "client", None)
    assert not distributed.key_value_store()
    with pytest.raises(distributed.KeyValueError):
        distributed.publish("k", b"x")


def test_this_jax_client_has_the_methods() -> None:
    """What publish and fetch call exists on this JAX's DistributedRuntimeClient (checked on 0.4.38, 0.10.2, 0.12)."""
    try:
        from jaxlib import _jax as extension
    except ImportError:
        from jaxlib import xla_extension as extension  # JAX 0.4.38
    missing = [name for name in distributed._KV_METHODS if not hasattr(extension.DistributedRuntimeClient, name)]
    assert missing == []
