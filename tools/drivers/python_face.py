"""The Python package's driver for `redis-atomic verify --driver` (docs/verify.md, "Drivers"):
`python tools/drivers/python_face.py [--async]` drives `redis_atomic`'s blocking (or asyncio)
face through the protocol's rows — `lock` (fences), `quota`, `ratelimit-sl` (a sliding log),
`ratelimit-win` (a fixed window), `semaphore` — as a user following docs/python.md would: an
acquisition (of a lock or a permit) whose outcome is unknown is resent with the same owner token,
an add with the same request id (both retry-safe, at most twice more); nothing else is resent.
Under a fault it uses the short timeout the in-process rows use (0.2 s), so a stall or a lost
reply becomes an unknown outcome.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable, Optional, TypeVar, Union

sys.dont_write_bytecode = True  # no __pycache__ beside the drivers
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import redis_atomic as ra  # noqa: E402
from protocol import Message, serve, serve_async  # noqa: E402

ROWS = ["lock", "quota", "ratelimit-sl", "ratelimit-win", "semaphore"]
RESENDS = 2
T = TypeVar("T")


def code(e: BaseException) -> Optional[str]:
    """The vocabulary code of the package's exceptions (None: a bug of this driver)."""
    return e.code if isinstance(e, ra.RedisAtomicError) else None


def limit(row: str, args: Message) -> ra.Limit:
    make = ra.Limit.sliding_log if row == "ratelimit-sl" else ra.Limit.fixed_window
    return make(int(args["limit"]), args["period_ms"] / 1000)


def target(msg: Message) -> Union[str, list[str]]:
    """The server: its URL, or a cluster's seed URLs (every node's)."""
    urls: list[str] = msg["urls"]
    return urls if msg.get("cluster") else str(msg["url"])


def timeout(msg: Message) -> float:
    return 0.2 if msg.get("fault") else 10.0


def acquired(got: Any) -> Message:
    if isinstance(got, ra.Held):
        return {"outcome": "held"}
    return {"outcome": "acquired", "fence": got.fence, "handle": got.fence}


def permitted(got: Any) -> Message:
    if isinstance(got, ra.Full):
        return {"outcome": "full"}
    return {"outcome": "acquired", "fence": got.fence, "handle": got.fence}


def added(got: Any) -> Message:
    word = "applied" if isinstance(got, ra.Applied) else "refused"
    return {"outcome": word, "value": got.value}


def released(got: Any) -> Message:
    return {"outcome": "released" if isinstance(got, ra.Released) else "lost"}


def decided(got: Any) -> Message:
    return {"outcome": "allowed" if got else "limited"}


def resend(call: Callable[[], T]) -> T:
    """`call`, resent after an unknown outcome (only calls the package makes retry-safe). A
    resend that fails does not settle the first call, whatever it says: a refused resend (the
    server restarting) says nothing about the first, which may have run — still unknown."""
    try:
        return call()
    except ra.OutcomeUnknown as first:
        for _ in range(RESENDS):
            try:
                return call()
            except ra.RedisAtomicError:
                pass
        raise first


class Blocking:
    def __init__(self) -> None:
        self.client: Optional[ra.Client] = None
        self.row = ""
        self.ns = ""
        self.limiter: Optional[ra.RateLimiter] = None
        self.semaphores: dict[str, ra.Semaphore] = {}

    def hello(self, msg: Message) -> Message:
        if self.client is not None:
            self.client.close()
        self.client = ra.Client.connect(target(msg), timeout=timeout(msg))
        self.row, self.ns, self.limiter, self.semaphores = msg["row"], msg["namespace"], None, {}
        return {"driver": "redis_atomic (Python, blocking)", "rows": ROWS}

    def run(self, op: str, a: Message) -> Message:
        c = self.client
        assert c is not None
        if op == "lock.acquire":
            locks = ra.Locks(c, self.ns)
            ttl = a["ttl_ms"] / 1000
            return acquired(resend(lambda: locks.acquire(a["resource"], ttl, token=a["token"])))
        if op == "lock.release":
            got = ra.Locks(c, self.ns).release(a["resource"], a["token"], int(a["handle"]))
            return released(got)
        if op in ("quota.add", "quota.get"):
            quotas = ra.Quotas(c, self.ns)
            if op == "quota.get":
                return {"outcome": "value", "value": quotas.get(a["name"])}
            bounds = ra.Bounds(a["min"], a["max"])
            ttl, rid = a["ttl_ms"] / 1000, a["request_id"]
            add = lambda: quotas.add(a["name"], a["delta"], bounds, ttl=ttl, request_id=rid)  # noqa: E731
            return added(resend(add))
        if op == "ratelimit.consume":
            if self.limiter is None:
                self.limiter = ra.RateLimiter(c, self.ns, limit(self.row, a))
            return decided(self.limiter.consume(a["name"]))
        if op == "semaphore.acquire":
            sem = self.semaphores.setdefault(a["name"], ra.Semaphore(c, self.ns, a["name"], a["limit"]))
            ttl = a["ttl_ms"] / 1000
            return permitted(resend(lambda: sem.acquire(ttl, token=a["token"])))
        if op == "semaphore.release":
            return released(self.semaphores[a["name"]].release(a["token"], int(a["handle"])))
        return {"error": "bad_argument"}


class Async:
    def __init__(self) -> None:
        self.client: Optional[ra.AsyncClient] = None
        self.row = ""
        self.ns = ""
        self.limiter: Optional[ra.AsyncRateLimiter] = None
        self.semaphores: dict[str, ra.AsyncSemaphore] = {}

    async def hello(self, msg: Message) -> Message:
        if self.client is not None:
            await self.client.close()
        self.client = await ra.AsyncClient.connect(target(msg), timeout=timeout(msg))
        self.row, self.ns, self.limiter, self.semaphores = msg["row"], msg["namespace"], None, {}
        return {"driver": "redis_atomic (Python, asyncio)", "rows": ROWS}

    async def run(self, op: str, a: Message) -> Message:
        c = self.client
        assert c is not None
        try:
            return await self.once(c, op, a)
        except ra.OutcomeUnknown as first:
            if op not in ("lock.acquire", "semaphore.acquire", "quota.add"):  # the retry-safe calls only
                raise
            for _ in range(RESENDS):  # as `resend`: a failed resend settles nothing
                try:
                    return await self.once(c, op, a)
                except ra.RedisAtomicError:
                    pass
            raise first

    async def once(self, c: ra.AsyncClient, op: str, a: Message) -> Message:
        if op == "lock.acquire":
            locks = ra.AsyncLocks(c, self.ns)
            ttl = a["ttl_ms"] / 1000
            return acquired(await locks.acquire(a["resource"], ttl, token=a["token"]))
        if op == "lock.release":
            got = await ra.AsyncLocks(c, self.ns).release(a["resource"], a["token"], int(a["handle"]))
            return released(got)
        if op in ("quota.add", "quota.get"):
            quotas = ra.AsyncQuotas(c, self.ns)
            if op == "quota.get":
                return {"outcome": "value", "value": await quotas.get(a["name"])}
            bounds = ra.Bounds(a["min"], a["max"])
            ttl, rid = a["ttl_ms"] / 1000, a["request_id"]
            return added(await quotas.add(a["name"], a["delta"], bounds, ttl=ttl, request_id=rid))
        if op == "ratelimit.consume":
            if self.limiter is None:
                self.limiter = ra.AsyncRateLimiter(c, self.ns, limit(self.row, a))
            return decided(await self.limiter.consume(a["name"]))
        if op == "semaphore.acquire":
            new = ra.AsyncSemaphore(c, self.ns, a["name"], int(a["limit"]))
            sem = self.semaphores.setdefault(a["name"], new)
            return permitted(await sem.acquire(a["ttl_ms"] / 1000, token=a["token"]))
        if op == "semaphore.release":
            return released(await self.semaphores[a["name"]].release(a["token"], int(a["handle"])))
        return {"error": "bad_argument"}


if __name__ == "__main__":
    if "--async" in sys.argv[1:]:
        serve_async(Async(), code)
    else:
        serve(Blocking(), code)
