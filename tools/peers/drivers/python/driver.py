"""Python peer drivers for `redis-atomic verify --driver` (docs/verify.md, "Drivers"), each with
its library's defaults (redis-py's client retries a failed command three times on its own):

  driver.py redis-py-lock   redis-py's `Lock`, row `mutex` (it has no fences). Its docstring:
                            "A shared, distributed Lock. Using Redis for locking allows the Lock
                            to be shared across processes and/or machines." `timeout` is "a
                            maximum life for the lock"; `acquire(blocking=False, token=...)`,
                            `release()` raises `LockNotOwnedError` when the lock is no longer
                            owned (the outcome `lost`).
  driver.py redis-py-alock  the same `Lock` of redis-py's asyncio client (`redis.asyncio`), row
                            `mutex`: its own code path (an awaited `acquire` and `release`).
  driver.py python-redis-lock
                            python-redis-lock's `Lock`, row `mutex`: "Lock context manager
                            implemented via redis SETNX/BLPOP"; `release()` raises `NotAcquired`
                            when the lock "is not acquired or it already expired". Its `expire`
                            is whole seconds (it truncates): the driver rounds the lease up, so
                            the harness's lease is never longer than the lock's.
  driver.py limits-moving   limits' `MovingWindowRateLimiter` on `RedisStorage`, row
                            `ratelimit-sl`: "This strategy adds each request's timestamp to a log
                            if the nth oldest entry (where n is the limit) is either not present
                            or is older than the duration of the window".
  driver.py limits-fixed    limits' `FixedWindowRateLimiter`, row `ratelimit-win`: "If 10 requests
                            occur at any time in that window, any further request before
                            00:01:45 is rejected" (windows start at a key's first request).
  driver.py limits-sliding  limits' `SlidingWindowCounterRateLimiter`, row `ratelimit-win`: its
                            current window's count plus the previous one's, weighted, stays
                            within the limit, so at most 2 × limit in any period (the weighted
                            rule itself is not asked).

A redis-py `ConnectionError` or `TimeoutError` after the library's own retries is an unknown
outcome (the command may have run), any other `RedisError` a server error (it may have run too).
Under a fault, any other exception raised inside the library (a damaged reply it did not expect)
is an unusable reply, `bad_reply`; in a clean row it is a bug of this driver and ends it.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any, Optional

import redis
import redis.asyncio
from redis.exceptions import ConnectionError, LockNotOwnedError, TimeoutError

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # protocol.py, copied beside this file by tools/verify-peers.py

from protocol import Message, serve  # noqa: E402

ROWS = {
    "redis-py-lock": ["mutex"],
    "redis-py-alock": ["mutex"],
    "python-redis-lock": ["mutex"],
    "limits-moving": ["ratelimit-sl"],
    "limits-fixed": ["ratelimit-win"],
    "limits-sliding": ["ratelimit-win"],
}


FAULTED = [False]  # whether the current row runs under a fault (set by each hello)


def code(e: BaseException) -> Optional[str]:
    if isinstance(e, (ConnectionError, TimeoutError)):
        return "outcome_unknown"
    if isinstance(e, redis.RedisError):
        return "server_error"
    return "bad_reply" if FAULTED[0] and isinstance(e, Exception) else None


class Peer:
    def __init__(self, peer: str) -> None:
        self.peer = peer
        self.client: Optional[redis.Redis] = None
        self.ns = ""
        self.locks: dict[str, Any] = {}
        self.limiter: Any = None
        self.url = ""
        self.aclient: Any = None
        self.loop = asyncio.new_event_loop()

    def hello(self, msg: Message) -> Message:
        if msg.get("cluster"):
            return {"driver": self.peer, "rows": [], "unsupported": "standalone only"}
        if self.client is not None:
            self.client.close()
        self.url, self.ns = msg["url"], msg["namespace"]
        FAULTED[0] = msg.get("fault") is not None
        self.client = redis.Redis.from_url(self.url)
        if self.aclient is not None:
            self.loop.run_until_complete(self.aclient.aclose())
        self.aclient = None
        self.locks, self.limiter = {}, None
        return {"driver": self.peer, "rows": ROWS[self.peer]}

    def run(self, op: str, a: Message) -> Message:
        assert self.client is not None
        if op.startswith("lock.") and self.peer == "redis-py-alock":
            return self.loop.run_until_complete(self.alock(op, a))
        if op.startswith("lock.") and self.peer == "python-redis-lock":
            return self.prl(op, a)
        if op == "lock.acquire":
            lock = self.client.lock(f"{self.ns}:{a['resource']}", timeout=a["ttl_ms"] / 1000)
            if not lock.acquire(blocking=False, token=a["token"]):
                return {"outcome": "held"}
            self.locks[a["token"]] = lock
            return {"outcome": "acquired", "handle": a["token"]}
        if op == "lock.release":
            try:
                self.locks.pop(a["handle"]).release()
                return {"outcome": "released"}
            except LockNotOwnedError:
                return {"outcome": "lost"}
        if op == "ratelimit.consume":
            return {"outcome": "allowed" if self.hit(a) else "limited"}
        return {"error": "bad_argument"}

    async def alock(self, op: str, a: Message) -> Message:
        """redis-py's asyncio `Lock`, on a client of this driver's one event loop."""
        if self.aclient is None:
            self.aclient = redis.asyncio.Redis.from_url(self.url)
        if op == "lock.acquire":
            lock = self.aclient.lock(f"{self.ns}:{a['resource']}", timeout=a["ttl_ms"] / 1000)
            if not await lock.acquire(blocking=False, token=a["token"]):
                return {"outcome": "held"}
            self.locks[a["token"]] = lock
            return {"outcome": "acquired", "handle": a["token"]}
        try:
            await self.locks.pop(a["handle"]).release()
            return {"outcome": "released"}
        except LockNotOwnedError:
            return {"outcome": "lost"}

    def prl(self, op: str, a: Message) -> Message:
        """python-redis-lock's `Lock` (whole seconds: the lease rounded up)."""
        import redis_lock

        if op == "lock.acquire":
            expire = max(1, -(-int(a["ttl_ms"]) // 1000))
            name = f"{self.ns}:{a['resource']}"
            lock = redis_lock.Lock(self.client, name, expire=expire, id=a["token"])
            if not lock.acquire(blocking=False):
                return {"outcome": "held"}
            self.locks[a["token"]] = lock
            return {"outcome": "acquired", "handle": a["token"]}
        try:
            self.locks.pop(a["handle"]).release()
            return {"outcome": "released"}
        except redis_lock.NotAcquired:
            return {"outcome": "lost"}

    def hit(self, a: Message) -> bool:
        from limits import RateLimitItemPerSecond, storage, strategies

        if self.limiter is None:
            store = storage.RedisStorage(self.url)
            kind = {
                "limits-moving": strategies.MovingWindowRateLimiter,
                "limits-fixed": strategies.FixedWindowRateLimiter,
                "limits-sliding": strategies.SlidingWindowCounterRateLimiter,
            }[self.peer]
            self.limiter = kind(store)
        item = RateLimitItemPerSecond(int(a["limit"]), max(1, a["period_ms"] // 1000))
        return bool(self.limiter.hit(item, self.ns, a["name"]))


if __name__ == "__main__":
    serve(Peer(sys.argv[1]), code)
