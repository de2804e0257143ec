"""Quotas, dedup, fenced writes and users' scripts through the package, blocking and async,
each checked against the invariant it keeps."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

import redis_atomic as ra
from redis_atomic.testing import RedisServer

USER_SCRIPTS = Path(__file__).resolve().parents[3] / "examples" / "user-scripts"


def test_quota_never_leaves_its_bounds(client: ra.Client) -> None:
    """16 threads add 1 to a counter bounded at 40, 10 times each: 40 applied, the rest refused,
    the counter ends at exactly 40."""
    quotas = ra.Quotas(client, "q")
    results: list[ra.BoundedAdd] = []
    lock = threading.Lock()

    def worker() -> None:
        mine = [quotas.add("credits", 1, ra.Bounds.up_to(40), ttl=3600) for _ in range(10)]
        with lock:
            results.extend(mine)

    threads = [threading.Thread(target=worker) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(isinstance(r, ra.Applied) for r in results) == 40
    assert all(r.value == 40 for r in results if isinstance(r, ra.Refused))
    assert quotas.get("credits") == 40
    assert quotas.add_clamped("credits", -100, (0, 40)) == ra.Applied(0)


def test_quota_request_id_and_ttls(client: ra.Client, redis_server: RedisServer) -> None:
    """A request id charges once; TTLs are set once and extended forward only; raise_to is a
    monotonic max; add_unless_smaller never lowers a score."""
    quotas = ra.Quotas(client, "q", request_ttl=60)
    assert quotas.request_ttl == 60.0
    assert quotas.add("c", 3, (0, 10), request_id="r1") == ra.Applied(3)
    assert quotas.add("c", 3, (0, 10), request_id="r1") == ra.Applied(3)
    assert quotas.get("c") == 3
    assert quotas.expire_once("c", 100) is True
    assert quotas.expire_once("c", 5) is False
    assert quotas.extend_ttl("c", 50) is False and quotas.extend_ttl("c", 200) is True
    ttl = redis_server.command("PTTL", "q:quota:v1:{c}")
    assert isinstance(ttl, int) and 100_000 < ttl <= 200_000
    assert quotas.raise_to("m", 10) == ra.Raised(10)
    assert quotas.raise_to("m", 4) == ra.Kept(10)
    assert quotas.add_unless_smaller("s", [(5, "a"), (7, b"b")]) == 2
    assert quotas.add_unless_smaller("s", [(3, "a"), (9, "b")]) == 1
    assert redis_server.command("ZSCORE", "q:quota:v1:{s}", "a") == b"5"


def test_dedup_first_sighting_once(client: ra.Client) -> None:
    """16 threads see one event id: exactly one is told it is first; a token repeats its answer."""
    dedup = ra.Dedup(client, "d")
    firsts: list[bool] = []
    lock = threading.Lock()

    def worker() -> None:
        first = dedup.first_seen("evt-1", 60)
        with lock:
            firsts.append(first)

    threads = [threading.Thread(target=worker) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(firsts) == [False] * 15 + [True]
    assert dedup.first_seen("evt-2", 60, token="w1") is True
    assert dedup.first_seen("evt-2", 60, token="w1") is True  # the same token: same answer
    assert dedup.first_seen("evt-2", 60, token="w2") is False
    assert dedup.first_seen_many(["a", "b", "a", "evt-1"], 60) == [True, True, False, False]


def test_fenced_writes_refuse_stale_fences(client: ra.Client, redis_server: RedisServer) -> None:
    """A write with an older fence after a newer one is Stale and changes nothing."""
    fenced = ra.FencedWrites(client, "f", retention=3600)
    data = fenced.key("order-1", "state")
    members = fenced.key("order-1", "tags")
    hashk = fenced.key("order-1", "h")
    writes = [
        ra.Write.set(data, "paid", ttl=60),
        ra.Write.sadd(members, ["x", "y"]),
        ra.Write.hset(hashk, {"a": "1", "b": 2}),
    ]
    assert fenced.write("order-1", 10, writes) == ra.Written(fence=10, writes=3)
    assert fenced.write("order-1", 9, [ra.Write.set(data, "stale")]) == ra.Stale(10)
    assert redis_server.command("GET", data) == b"paid"
    assert fenced.highest("order-1") == 10 and fenced.highest("none") == 0
    assert fenced.fence_key("order-1") == "f:fenced:v1:{order-1}:fence"
    later = [ra.Write.delete(data), ra.Write.srem(members, ["x"]), ra.Write.hdel(hashk, ["a"])]
    written = fenced.write("order-1", 11, later + [ra.Write.expire(hashk, 30)])
    assert isinstance(written, ra.Written) and written.writes == 4
    assert redis_server.command("EXISTS", data) == 0
    assert redis_server.command("SMEMBERS", members) == [b"y"]


@pytest.mark.parametrize("delivery", ["eval", "functions"])
def test_user_scripts(redis_url: str, delivery: ra.Delivery) -> None:
    """A folder of scripts loads as a ScriptSet; a call by name returns native values, through
    EVALSHA or FCALL; a wrong key count is BadArgument before sending."""
    scripts = ra.ScriptSet.load_dir(str(USER_SCRIPTS), "shop")
    assert "stock_reserve" in scripts and len(scripts) == len(scripts.names) >= 3
    reserve = scripts["stock_reserve"]
    assert reserve.keys == ["stock", "request"] and reserve.retry_safe
    client = ra.connect(redis_url, delivery=delivery)
    unknown = client.call(reserve, ["shop:stock:{sku-1}", "shop:res:{sku-1}:r1"], [2, 60])
    assert unknown == ra.ScriptReply("unknown_item", [])
    with pytest.raises(KeyError):
        scripts["nope"]
    with pytest.raises(ra.BadArgument):
        client.call(reserve, ["only-one-key"], [1, 60])
    with pytest.raises(ra.CrossSlot):
        client.call(reserve, ["shop:stock:{a}", "shop:res:{b}:r1"], [1, 60])


def test_user_scripts_reply_values(client: ra.Client, redis_server: RedisServer) -> None:
    """Replies convert to int, bytes and lists; a replay is the script's own status."""
    scripts = ra.ScriptSet.load_dir(str(USER_SCRIPTS), "shop")
    redis_server.command("SET", "shop:stock:{sku-2}", "10")
    keys = ["shop:stock:{sku-2}", "shop:res:{sku-2}:r1"]
    first = client.call(scripts["stock_reserve"], keys, [3, 60])
    assert first.status == "reserved" and first.fields == [7]
    assert client.call(scripts["stock_reserve"], keys, [3, 60]) == ra.ScriptReply("replay", [7])


def test_bad_script_folder(tmp_path: Path) -> None:
    """An unloadable folder is ScriptFolderError."""
    with pytest.raises(ra.ScriptFolderError):
        ra.ScriptSet.load_dir(str(tmp_path), "lib")


def test_async_primitives(redis_url: str) -> None:
    """The asyncio faces of quotas, dedup, fenced writes and scripts."""

    async def main() -> None:
        client = await ra.AsyncClient.connect(redis_url, pool_size=2, timeout=2)
        assert not client.is_cluster and client.timeout == 2.0
        quotas = ra.AsyncQuotas(client, "aq")
        adds = await asyncio.gather(*(quotas.add("c", 1, (0, 5)) for _ in range(20)))
        assert sum(isinstance(a, ra.Applied) for a in adds) == 5
        assert await quotas.get("c") == 5
        dedup = ra.AsyncDedup(client, "ad")
        firsts = await asyncio.gather(*(dedup.first_seen("e", 10) for _ in range(10)))
        assert sum(firsts) == 1
        fenced = ra.AsyncFencedWrites(client, "af")
        key = fenced.key("r", "d")
        assert await fenced.write("r", 3, [ra.Write.set(key, "v")]) == ra.Written(3, 1)
        assert await fenced.write("r", 2, [ra.Write.set(key, "w")]) == ra.Stale(3)
        scripts = ra.ScriptSet.load_dir(str(USER_SCRIPTS), "shop")
        reply = await client.call(scripts["stock_reserve"], ["s:{x}", "s:{x}:r"], [1, 5])
        assert reply.status == "unknown_item"

    asyncio.run(main())


def test_client_settings(redis_url: str) -> None:
    """Every setting is accepted as a named option and shows in the client."""
    client = ra.connect(
        redis_url,
        timeout=0.5,
        retry=ra.RetryPolicy(max_attempts=2, deadline=1, base_backoff=0.001, max_backoff=0.01),
        contention=ra.RetryPolicy.contention(),
        delivery="functions",
        pool_size=2,
        replicas=None,
        force_lua=True,
    )
    assert "delivery=functions" in repr(client) and client.timeout == 0.5
    assert ra.RetryPolicy(max_attempts=2).max_attempts == 2
    assert ra.Replicas(1, 0.1).timeout == 0.1
    # WAIT for a replica that does not exist: the write stands, NotReplicated says so.
    waiting = ra.connect(redis_url, replicas=ra.Replicas(1, 0.05))
    with pytest.raises(ra.NotReplicated) as info:
        ra.Quotas(waiting, "w").add("c", 1, (0, 5))
    assert (info.value.acked, info.value.wanted) == (0, 1)
    assert ra.Quotas(client, "w").get("c") == 1
