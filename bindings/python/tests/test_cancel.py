"""The documented cancellation rule for leases: an asyncio call whose task is cancelled runs to
its end, and a lease it won is given back by the binding (its caller never received it): a lock
or permit released, an idempotency claim failed as retryable, a job nacked for redelivery."""

from __future__ import annotations

import asyncio
import time
from typing import Any, Awaitable, Callable

import redis_atomic as ra
from redis_atomic.testing import RedisServer


async def until(check: Callable[[], Awaitable[bool]], what: str, limit: float = 20.0) -> None:
    """Polls a condition (bounded)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if await check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"not within {limit} s: {what}")


async def cancelled_while_stalled(server: RedisServer, call: Awaitable[Any]) -> None:
    """Starts `call` while the server is stopped, cancels its task, then lets the server run."""
    with server.stalled():
        task = asyncio.ensure_future(call)
        await asyncio.sleep(0)  # the task starts and hands the call to the runtime
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        assert task.cancelled()


def test_cancelled_acquire_is_released(redis_server: RedisServer) -> None:
    """The lock was taken (its fence counter exists) and then released by the binding, long
    before its 30 s lease would have run out."""

    async def main() -> None:
        client = await ra.AsyncClient.connect(redis_server.url, timeout=30)
        locks = ra.AsyncLocks(client, "cancel")
        keys = locks.keys("r")
        await cancelled_while_stalled(redis_server, locks.acquire("r", 30))

        async def released() -> bool:
            state = await locks.inspect("r")
            return isinstance(state, ra.Free) and state.last_fence > 0

        await until(released, "the cancelled acquisition released")
        assert redis_server.command("EXISTS", keys.fence) == 1
        sem = ra.AsyncSemaphore(client, "cancel", "s", 1)
        await cancelled_while_stalled(redis_server, sem.acquire(30))

        async def permit_back() -> bool:
            state = await sem.inspect()
            return state.live == 0 and state.last_fence > 0

        await until(permit_back, "the cancelled permit released")

    redis_server.flushall()
    asyncio.run(main())


def test_cancelled_claim_is_nacked_and_begin_freed(redis_server: RedisServer) -> None:
    async def main() -> None:
        client = await ra.AsyncClient.connect(redis_server.url, timeout=30)
        queue = ra.AsyncQueue(client, "cancel", "q")
        await queue.enqueue("j", b"p")
        await cancelled_while_stalled(redis_server, queue.claim("w", 30))

        async def nacked() -> bool:
            state = await queue.inspect("j")
            return isinstance(state, ra.JobQueued) and state.deliveries == 1

        await until(nacked, "the cancelled claim's job due again")
        jobs = await queue.claim("w2", 30)
        assert isinstance(jobs, list) and jobs[0].deliveries == 2
        await jobs[0].ack()

        store = ra.AsyncIdempotency(client, "cancel", ttl=30)
        record = store.keys("s", "k").record
        await cancelled_while_stalled(redis_server, store.begin("s", "k", ["a"]))

        async def ran() -> bool:
            return redis_server.command("EXISTS", record) == 1

        await until(ran, "the cancelled begin ran")

        async def freed() -> bool:
            got = await store.begin("s", "k", ["a"])
            if isinstance(got, ra.AsyncClaim):
                await got.complete(ra.Response(200, b""))
                return True
            assert isinstance(got, ra.InProgress)
            return False

        await until(freed, "the cancelled claim failed as retryable (key free)")

    redis_server.flushall()
    asyncio.run(main())
