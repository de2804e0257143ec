"""Types held as the stubs say: where the module could take more than its stub allows (an
``int`` where ``str | bytes`` is declared, ``bytes`` where ``str`` is), it raises ``TypeError``
like any Python function given the wrong type, before anything is sent."""

from __future__ import annotations

from pathlib import Path
from collections.abc import Iterator, Mapping
from typing import Any, Callable, Union, cast

import pytest

import redis_atomic as ra
from redis_atomic.testing import RedisServer

USER_SCRIPTS = Path(__file__).resolve().parents[3] / "examples" / "user-scripts"


def wrong_types(client: ra.Client) -> list[tuple[str, Callable[[], Any]]]:
    queue = ra.Queue(client, "t", "q")
    idem = ra.Idempotency(client, "t")
    quotas = ra.Quotas(client, "t")
    dedup = ra.Dedup(client, "t")
    reserve = ra.ScriptSet.load_dir(USER_SCRIPTS, "shop")["stock_reserve"]
    bad: Any = 5
    return [
        ("enqueue payload int", lambda: queue.enqueue("j", bad)),
        ("response body int", lambda: ra.Response(200, bad)),
        ("response header value int", lambda: ra.Response(200, headers=[("h", bad)])),
        ("idempotency key int", lambda: idem.begin("s", bad, ["f"])),
        ("idempotency keys() key int", lambda: idem.keys("s", bad)),
        ("sorted set member int", lambda: quotas.add_unless_smaller("z", [(1, bad)])),
        ("event id bytes", lambda: dedup.first_seen_many([b"e"], 1)),  # type: ignore[list-item]
        ("event id int", lambda: dedup.first_seen_many([bad], 1)),
        ("hdel field bytes", lambda: ra.Write.hdel("k", [b"f"])),  # type: ignore[list-item]
        ("hdel field int", lambda: ra.Write.hdel("k", [bad])),
        ("script key int", lambda: client.call(reserve, [bad, "k"], [1, 60])),
        ("pem a str", lambda: ra.TlsOptions(ca_pem=cast(Any, "pem"))),
        ("pem a list of ints", lambda: ra.TlsOptions(ca_pem=cast(Any, [45, 45]))),
        ("batching a str", lambda: ra.Batching(in_flight=cast(Any, "2"))),
        ("dead_letters start a float", lambda: queue.dead_letters(cast(Any, 1.5))),
    ]


def test_wrong_types_raise_type_error(client: ra.Client, redis_server: RedisServer) -> None:
    for what, call in wrong_types(client):
        with pytest.raises(TypeError):
            call()
            pytest.fail(what)
    assert redis_server.command("DBSIZE") == 0


def test_paths_and_mappings_as_typed(client: ra.Client) -> None:
    """What the stubs allow beyond the narrowest type works: an ``os.PathLike`` folder, any
    ``Mapping`` of hash fields, ``bytes`` or ``str`` payloads."""
    assert len(ra.ScriptSet.load_dir(USER_SCRIPTS, "shop")) >= 3
    fields: dict[str, str | bytes | int] = {"a": 1, "b": b"2"}
    assert ra.Write.hset("k", fields.copy()) == ra.Write.hset("k", _Mapping(fields))
    queue = ra.Queue(client, "t", "q")
    assert queue.enqueue("b", b"x") and queue.enqueue("s", "x")


class _Mapping(Mapping[str, Union[str, bytes, int]]):
    """A Mapping that is not a dict."""

    def __init__(self, d: dict[str, str | bytes | int]) -> None:
        self._d = d

    def __getitem__(self, k: str) -> str | bytes | int:
        return self._d[k]

    def __iter__(self) -> Iterator[str]:
        return iter(self._d)

    def __len__(self) -> int:
        return len(self._d)
