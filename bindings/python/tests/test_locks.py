"""Locks and semaphores through the package, blocking and asyncio: the invariants counted."""

from __future__ import annotations

import asyncio
import threading
from typing import List

import pytest

import redis_atomic as ra
from redis_atomic.testing import RedisServer

THREADS, ROUNDS = 16, 4


def test_locks_from_threads_never_overlap(client: ra.Client) -> None:
    """16 threads take one lock 4 times each (waiting for it): never two inside at once, each
    holder's fenced write applies (fences strictly increase in the order holders entered), and
    every release answers Released."""
    locks, fenced = ra.Locks(client, "l"), ra.FencedWrites(client, "l")
    state = {"inside": 0, "most": 0}
    fences: List[int] = []
    guard = threading.Lock()
    start = threading.Barrier(THREADS)
    data = fenced.key("res", "owner")

    def worker() -> None:
        start.wait()
        for _ in range(ROUNDS):
            got = locks.acquire("res", 10, wait=60)
            assert isinstance(got, ra.LockGuard), got
            with got as held:
                with guard:
                    state["inside"] += 1
                    state["most"] = max(state["most"], state["inside"])
                    fences.append(held.fence)
                written = fenced.write("res", held.fence, [ra.Write.set(data, held.fence)])
                assert isinstance(written, ra.Written), written
                with guard:
                    state["inside"] -= 1
            assert held.ended

    threads = [threading.Thread(target=worker) for _ in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert state["most"] == 1
    assert len(fences) == THREADS * ROUNDS
    assert all(a < b for a, b in zip(fences, fences[1:]))
    assert fenced.highest("res") == fences[-1]
    assert locks.inspect("res") == ra.Free(fences[-1])


def test_locks_from_tasks_never_overlap(redis_url: str) -> None:
    """The same with 16 asyncio tasks, each suspended inside the lock on a fenced write."""

    async def main() -> tuple[int, List[int]]:
        client = await ra.AsyncClient.connect(redis_url)
        locks, fenced = ra.AsyncLocks(client, "al"), ra.AsyncFencedWrites(client, "al")
        state = {"inside": 0, "most": 0}
        fences: List[int] = []
        data = fenced.key("res", "owner")

        async def worker() -> None:
            for _ in range(ROUNDS):
                got = await locks.acquire("res", 10, wait=60)
                assert isinstance(got, ra.AsyncLockGuard), got
                async with got as held:
                    state["inside"] += 1
                    state["most"] = max(state["most"], state["inside"])
                    fences.append(held.fence)
                    written = await fenced.write("res", held.fence, [ra.Write.set(data, "x")])
                    assert isinstance(written, ra.Written), written
                    state["inside"] -= 1

        await asyncio.gather(*(worker() for _ in range(THREADS)))
        return state["most"], fences

    most, fences = asyncio.run(main())
    assert most == 1 and len(fences) == THREADS * ROUNDS
    assert all(a < b for a, b in zip(fences, fences[1:]))


def test_lock_values_and_by_parts(client: ra.Client, redis_server: RedisServer) -> None:
    """Held is a falsy value with the holder's remaining lease; extend and release by parts act
    only for the right token and fence; a second end raises HandleEnded."""
    locks = ra.Locks(client, "v")
    guard = locks.acquire("r", 30)
    assert isinstance(guard, ra.LockGuard) and guard and guard.resource == "r"
    assert guard.ttl == 30.0 and 29 < guard.expires_in <= 30
    held = locks.acquire("r", 5)
    assert isinstance(held, ra.Held) and not held and 29 < held.retry_after <= 30
    pttl = redis_server.command("PTTL", locks.keys("r").lock)
    assert isinstance(pttl, int) and pttl > 29_000
    assert guard.extend(60) == ra.Extended(guard.fence, 60)
    assert guard.ttl == 60.0
    assert locks.extend("r", "not-the-owner", guard.fence, 5) == ra.Lost()
    assert locks.extend("r", guard.token, guard.fence + 1, 5) == ra.Lost()
    assert locks.release("r", guard.token, guard.fence - 1) == ra.Lost()
    state = locks.inspect("r")
    assert isinstance(state, ra.Locked) and state.fence == guard.fence and 59 < state.ttl <= 60
    assert locks.release("r", guard.token, guard.fence) == ra.Released(guard.fence)
    assert guard.release() == ra.Lost()  # released by parts already: the handle's end is Lost
    assert guard.ended
    with pytest.raises(ra.HandleEnded) as ended:
        guard.release()
    assert ended.value.nothing_ran and ended.value.code == "handle_ended"
    with pytest.raises(ra.HandleEnded):
        guard.extend(1)
    # The same token gets the same lease back (retry after an unknown outcome).
    mine = locks.acquire("t", 10, token="worker-1")
    again = locks.acquire("t", 10, token="worker-1")
    assert isinstance(mine, ra.LockGuard) and isinstance(again, ra.LockGuard)
    assert mine.fence == again.fence and mine.token == "worker-1"
    assert isinstance(locks.acquire("t", 1, wait=0.05), ra.Held)  # waited, still held
    with pytest.raises(ra.BadArgument):
        locks.acquire("t", 1, wait=1, token="x")
    with pytest.raises(ra.BadArgument):
        locks.acquire("t", 0)
    with pytest.raises(ra.BadArgument):
        locks.acquire("", 1)
    with pytest.raises(TypeError):
        locks.acquire("t", "1")  # type: ignore[arg-type]


def test_lock_released_when_the_with_block_raises(client: ra.Client) -> None:
    """Leaving `with guard:` by an exception releases the lock too."""
    locks = ra.Locks(client, "w")
    with pytest.raises(RuntimeError):
        got = locks.acquire("r", 30)
        assert isinstance(got, ra.LockGuard)
        with got:
            raise RuntimeError("boom")
    assert isinstance(locks.inspect("r"), ra.Free)


def test_semaphore_never_more_than_capacity(client: ra.Client) -> None:
    """16 threads try 20 times each for one of 3 permits: never more than 3 holders at once
    (counted here and by the server inside each hold); every permit is released."""
    sem = ra.Semaphore(client, "s", "pool", 3)
    assert sem.capacity == 3 and sem.keys.permits == "s:sem:v1:{pool}"
    state = {"inside": 0, "most": 0, "acquired": 0, "full": 0}
    guard = threading.Lock()
    start = threading.Barrier(THREADS)

    def worker() -> None:
        start.wait()
        for _ in range(20):
            got = sem.acquire(10)
            if isinstance(got, ra.Full):
                assert got.retry_after > 0
                with guard:
                    state["full"] += 1
                continue
            with got:
                with guard:
                    state["inside"] += 1
                    state["acquired"] += 1
                    state["most"] = max(state["most"], state["inside"])
                assert sem.inspect().live <= 3
                with guard:
                    state["inside"] -= 1

    threads = [threading.Thread(target=worker) for _ in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert 1 <= state["most"] <= 3
    assert state["acquired"] + state["full"] == THREADS * 20 and state["acquired"] >= 3
    assert sem.inspect().live == 0


def test_semaphore_values_and_by_parts(client: ra.Client) -> None:
    """Full when every permit is taken; by-parts extend and release; the same token keeps its
    permit; a bad capacity is BadArgument."""
    sem = ra.Semaphore(client, "sv", "p", 2)
    a, b = sem.acquire(30), sem.acquire(30, token="worker-b")
    assert isinstance(a, ra.Permit) and isinstance(b, ra.Permit) and a.fence < b.fence
    full = sem.acquire(30)
    assert isinstance(full, ra.Full) and not full
    again = sem.acquire(30, token="worker-b")
    assert isinstance(again, ra.Permit) and again.fence == b.fence
    assert sem.extend(b.token, b.fence, 60) == ra.Extended(b.fence, 60)
    assert sem.release(b.token, b.fence) == ra.Released(b.fence)
    assert sem.release(b.token, b.fence) == ra.Lost()
    state = sem.inspect()
    assert state.live == 1 and state.last_fence == b.fence
    assert a.release() == ra.Released(a.fence)
    with pytest.raises(ra.BadArgument):
        ra.Semaphore(client, "sv", "p", 0)


def test_async_semaphore_never_more_than_capacity(redis_url: str) -> None:
    """16 tasks share 2 permits, each holder suspended inside on a server read."""

    async def main() -> tuple[int, int]:
        client = await ra.AsyncClient.connect(redis_url)
        sem = ra.AsyncSemaphore(client, "as", "pool", 2)
        state = {"inside": 0, "most": 0, "acquired": 0}

        async def worker() -> None:
            for _ in range(10):
                got = await sem.acquire(10)
                if isinstance(got, ra.Full):
                    continue
                async with got:
                    state["inside"] += 1
                    state["acquired"] += 1
                    state["most"] = max(state["most"], state["inside"])
                    assert (await sem.inspect()).live <= 2
                    state["inside"] -= 1

        await asyncio.gather(*(worker() for _ in range(THREADS)))
        assert (await sem.inspect()).live == 0
        return state["most"], state["acquired"]

    most, acquired = asyncio.run(main())
    assert most == 2 and acquired >= 2
