"""The client as a user expects one: closed by ``close()`` or by leaving ``with`` / ``async
with`` (every later call, of the client, of a primitive made from it or of a handle it granted,
raises ``ClientError`` saying so), and batching reachable: a setting and its counters."""

from __future__ import annotations

import asyncio
from typing import Any, Callable

import pytest

import redis_atomic as ra


def after_close(client: ra.Client) -> list[tuple[str, Callable[[], Any]]]:
    """A call of each kind made from ``client`` (the primitives and handles made before the
    close), to be refused after it."""
    limiter = ra.RateLimiter(client, "c", ra.Limit.gcra(5, 1))
    locks = ra.Locks(client, "c")
    guard = locks.acquire("r", 10)
    assert isinstance(guard, ra.LockGuard)
    queue = ra.Queue(client, "c", "jobs")
    return [
        ("consume", lambda: limiter.consume("k")),
        ("acquire", lambda: locks.acquire("other", 10)),
        ("a handle's release", guard.release),
        ("a handle's extend", lambda: guard.extend(10)),
        ("enqueue", lambda: queue.enqueue("j", b"x")),
        ("a new primitive", lambda: ra.Quotas(client, "c")),
        ("batch_stats", client.batch_stats),
    ]


def test_close_refuses_every_later_call(redis_url: str) -> None:
    """After close() every call raises ClientError (nothing ran, the message says closed); a
    second close does nothing."""
    client = ra.connect(redis_url)
    calls = after_close(client)
    assert not client.closed
    client.close()
    client.close()
    assert client.closed and "closed=True" in repr(client)
    for what, call in calls:
        with pytest.raises(ra.ClientError, match="closed") as info:
            call()
        assert info.value.code == "client" and info.value.nothing_ran, what


def test_with_closes_on_exit(redis_url: str) -> None:
    """Leaving ``with client:`` closes it, also when the block raised."""
    with ra.connect(redis_url) as client:
        assert ra.RateLimiter(client, "w", ra.Limit.gcra(5, 1)).consume("k")
    assert client.closed
    with pytest.raises(KeyError):
        with ra.connect(redis_url) as raising:
            raise KeyError("inside")
    assert raising.closed
    with pytest.raises(ra.ClientError, match="closed"):
        ra.Quotas(raising, "w")


def test_async_with_closes_on_exit(redis_url: str) -> None:
    """Leaving ``async with`` closes an AsyncClient; its primitives then raise ClientError."""

    async def main() -> None:
        async with await ra.AsyncClient.connect(redis_url) as client:
            quotas = ra.AsyncQuotas(client, "a")
            assert await quotas.add("n", 1, (0, 5)) == ra.Applied(1)
        assert client.closed
        with pytest.raises(ra.ClientError, match="closed"):
            await quotas.get("n")
        other = await ra.AsyncClient.connect(redis_url)
        await other.close()
        assert other.closed

    asyncio.run(main())


def test_batching_counts_batched_decisions_under_concurrency(redis_url: str) -> None:
    """256 consumes in flight at once on a client allowing one call in flight per lane: the
    first goes alone, the others wait and leave together, so the counters show batch calls.
    Every decision is counted once, and every one was decided (a batch answers each as its
    own call would: exactly 100 of the 256 admitted)."""
    n = 256

    async def main(batching: ra.Batching) -> tuple[ra.BatchStats, list[ra.Decision]]:
        async with await ra.AsyncClient.connect(redis_url, batching=batching) as client:
            limiter = ra.AsyncRateLimiter(client, "b", ra.Limit.fixed_window(100, 3600))
            before = client.batch_stats()
            decisions = await asyncio.gather(*(limiter.consume("k") for _ in range(n)))
            after = client.batch_stats()
        return (
            ra.BatchStats(*(a - b for a, b in zip(_fields(after), _fields(before)))),
            list(decisions),
        )

    stats, decisions = asyncio.run(main(ra.Batching(in_flight=1, min_batch=2)))
    assert sum(bool(d) for d in decisions) == 100
    assert stats.decisions == n
    assert stats.alone + stats.batched + stats.separate == n
    assert stats.batches >= 1 and stats.batched >= 2 * stats.batches

    off, _ = asyncio.run(main(ra.Batching.off()))
    assert (off.batches, off.batched) == (0, 0)


def test_batching_setting(redis_url: str) -> None:
    """``batching`` takes a bool or a ``Batching``; anything else is a TypeError."""
    assert ra.Batching() == ra.Batching(enabled=True)
    assert not ra.Batching.off().enabled
    tuned = ra.Batching(in_flight=2, max_decisions=8, max_bytes=4096, min_batch=3)
    assert (tuned.in_flight, tuned.max_decisions, tuned.max_bytes, tuned.min_batch) == (
        2,
        8,
        4096,
        3,
    )
    for setting in (True, False, tuned):
        with ra.connect(redis_url, batching=setting) as client:
            assert isinstance(client.batch_stats(), ra.BatchStats)
    with pytest.raises(TypeError):
        ra.connect(redis_url, batching="yes")  # type: ignore[arg-type]


def _fields(stats: ra.BatchStats) -> tuple[int, int, int, int, int]:
    return (stats.decisions, stats.alone, stats.batches, stats.batched, stats.separate)
