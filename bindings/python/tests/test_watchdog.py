"""The watchdog over every lease kind: it keeps a lease held past its ttl, reports a loss when
the server stops answering (and gives a lock back once it can), reports a lease taken away,
and hands the lease back on stop."""

from __future__ import annotations

import asyncio
import time

import pytest

import redis_atomic as ra
from redis_atomic.testing import RedisServer

TTL = 0.6  # renewed every 0.2 s, declared lost 30 ms before the proven lease ends
# Leases that must stay held: renewed every 0.67 s, so a process descheduled for over a second on
# a loaded machine still renews in time (the watchdog is real time; the test proves it renews, not
# how fast); watched for 1.3 leases, past the ttl.
HELD_TTL = 2.0
HELD_FOR = 1.3 * HELD_TTL


def wait_until(check: object, what: str, limit: float = 20.0) -> None:
    """Polls a condition (bounded): the test waits on state, never on a fixed sleep."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return
        time.sleep(0.01)
    raise AssertionError(f"not within {limit} s: {what}")


def test_keeps_a_lock_held_past_its_ttl(client: ra.Client) -> None:
    locks = ra.Locks(client, "wd")
    guard = locks.acquire("r", HELD_TTL)
    assert isinstance(guard, ra.LockGuard)
    with guard.watch() as watched:
        assert guard.watched and watched.is_held and watched.fence == guard.fence
        with pytest.raises(ra.HandleEnded, match="watchdog"):
            guard.release()
        assert not watched.wait_lost(HELD_FOR)  # past its ttl: still held
        held = locks.acquire("r", 1)
        assert isinstance(held, ra.Held)
        state = locks.inspect("r")
        assert isinstance(state, ra.Locked) and state.fence == guard.fence
        assert watched.reason is None and watched.failed_renewals == 0
    assert guard.ended and locks.inspect("r") == ra.Free(guard.fence)


def test_reports_loss_when_the_server_stalls(client: ra.Client, redis_server: RedisServer) -> None:
    """SIGSTOP the server: no renewal is answered, the watchdog declares the lock lost
    ("unconfirmed") while the server is still stopped, and gives the lock back once it runs."""
    locks = ra.Locks(client, "stall")
    guard = locks.acquire("r", 1.0)
    assert isinstance(guard, ra.LockGuard)
    watched = guard.watch()
    with redis_server.stalled():
        assert watched.wait_lost(10)
        assert watched.reason == "unconfirmed" and not watched.is_held
    wait_until(lambda: isinstance(locks.inspect("r"), ra.Free), "the lock given back")
    assert watched.stop() is guard
    assert guard.release() == ra.Lost()


def test_reports_a_lease_taken_away(client: ra.Client, redis_server: RedisServer) -> None:
    """The lock's key deleted behind the holder's back: the next renewal says so ("not_held")."""
    locks = ra.Locks(client, "gone")
    guard = locks.acquire("r", TTL)
    assert isinstance(guard, ra.LockGuard)
    watched = guard.watch()
    redis_server.command("DEL", locks.keys("r").lock)
    assert watched.wait_lost(10) and watched.reason == "not_held"
    watched.stop()


def test_every_lease_kind_is_watched_and_handed_back(client: ra.Client) -> None:
    """A permit, an idempotency claim and a job are renewed past their ttl, then stopped and
    ended with their own verbs."""
    permit = ra.Semaphore(client, "k", "s", 1).acquire(HELD_TTL)
    claim = ra.Idempotency(client, "k", ttl=HELD_TTL).begin("s", "k", ["x"])
    queue = ra.Queue(client, "k", "q")
    queue.enqueue("j", b"")
    jobs = queue.claim("w", HELD_TTL)
    assert isinstance(permit, ra.Permit) and isinstance(claim, ra.Claim)
    assert isinstance(jobs, list)
    job = jobs[0]
    w_permit, w_claim, w_job = permit.watch(), claim.watch(renew_fraction=0.25), job.watch()
    assert not w_permit.wait_lost(HELD_FOR)
    assert w_permit.is_held and w_claim.is_held and w_job.is_held
    assert isinstance(queue.claim("other", 1), ra.Empty)  # the job is still leased
    assert w_permit.stop().release() == ra.Released(permit.fence)
    assert w_claim.stop().complete(ra.Response(200, b"ok")) == ra.Stored()
    assert w_job.stop().ack() == ra.Acked()
    with pytest.raises(ra.BadArgument):
        ra.Locks(client, "k").acquire("x", 1).watch(renew_fraction=1.5)  # type: ignore[union-attr]


def test_async_watchdog(redis_url: str, redis_server: RedisServer) -> None:
    """The asyncio face: `lost` is an asyncio.Event set on the loop; `async with` stops and
    releases."""

    async def main() -> None:
        client = await ra.AsyncClient.connect(redis_url)
        locks = ra.AsyncLocks(client, "awd")
        guard = await locks.acquire("r", HELD_TTL)
        assert isinstance(guard, ra.AsyncLockGuard)
        async with guard.watch() as watched:
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(watched.lost.wait(), HELD_FOR)
            assert isinstance(await locks.acquire("r", 1), ra.Held)
        assert guard.ended and isinstance(await locks.inspect("r"), ra.Free)
        again = await locks.acquire("r", TTL)
        assert isinstance(again, ra.AsyncLockGuard)
        watched2 = again.watch()
        redis_server.command("DEL", locks.keys("r").lock)
        assert await asyncio.wait_for(watched2.wait_lost(), 10) == "not_held"
        assert watched2.lost.is_set()
        await watched2.stop()
        assert await again.release() == ra.Lost()

    asyncio.run(main())
