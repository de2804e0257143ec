"""The runtime's process rules: a fresh runtime in a forked child, a clear error for a client
created before the fork, and asyncio cancellation that does not stop a call half-way."""

from __future__ import annotations

import asyncio
import os
import time

import redis_atomic as ra
import redis_atomic.testing

PERIOD = 3600


def _child(redis_url: str, parent_client: ra.Client) -> int:
    """In the forked child: the parent's client must refuse; a new one must work."""
    try:
        parent_client.call  # the object itself is fine to hold
        ra.Quotas(parent_client, "fork").get("q")
        return 10  # no error: wrong
    except ra.UsedAfterFork as e:
        if "create clients after forking" not in str(e) or not e.nothing_ran:
            return 11
    except BaseException:
        return 12
    try:
        fresh = ra.connect(redis_url)
        added = ra.Quotas(fresh, "fork").add("q", 7, (0, 100))
        return 0 if added == ra.Applied(7) else 13
    except BaseException:
        return 14


def test_fork_child_gets_a_fresh_runtime(redis_url: str) -> None:
    """After os.fork(): the parent's client raises UsedAfterFork in the child, a client made in
    the child works (on the child's own runtime), and the parent's client still works."""
    parent = ra.connect(redis_url)
    quotas = ra.Quotas(parent, "fork")
    assert quotas.get("q") == 0  # the runtime and connections exist before the fork
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through its exit status
        os._exit(_child(redis_url, parent))
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert quotas.get("q") == 7  # the child's add, read by the parent's client


def test_cancelled_task_call_runs_to_its_end(redis_server: ra.testing.RedisServer) -> None:
    """Cancelling the task awaiting a call does not stop the call: it runs to its end. The
    script cache is flushed first, so the add lands only if the library, after the task was
    cancelled, still gets NOSCRIPT, loads the script and resends (a dropped call would stop at
    NOSCRIPT and change nothing)."""

    async def main() -> int:
        client = await ra.AsyncClient.connect(redis_server.url, timeout=30)
        quotas = ra.AsyncQuotas(client, "cancel")
        await quotas.get("q")  # connected
        redis_server.command("SCRIPT", "FLUSH")
        with redis_server.stalled():
            task = asyncio.ensure_future(quotas.add("q", 5, (0, 100)))
            await asyncio.sleep(0)  # the task starts and hands the call to the runtime
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
            assert task.cancelled()
        # Wait for the condition (bounded): the cancelled call's effect lands.
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            value = await quotas.get("q")
            if value:
                return value
            await asyncio.sleep(0.01)
        return 0

    redis_server.flushall()
    assert asyncio.run(main()) == 5
