"""The Python package's driver for `redis-atomic verify --driver` (docs/verify.md, "Drivers"):
`python tools/drivers/python_face.py [--async]` drives `redis_atomic`'s blocking (or asyncio)
face through the protocol's rows — `lock` (fences), `quota`, `queue`, `ratelimit-sl` (a sliding
log), `ratelimit-win` (a fixed window), `semaphore` — as a user following docs/python.md would:
an acquisition (of a lock or a permit) whose outcome is unknown is resent with the same owner
token, an add with the same request id, an enqueue with the same job id, a claim with the same
claim id (`claim_with_id`), an ack by parts with the same worker and fence (all retry-safe, at
most twice more); nothing else is resent. The queue allows 1000 deliveries (as the in-process
row), so a job the row's zombies and faults redeliver is not dead-lettered. Under a fault it uses
the short timeout the in-process rows use (0.2 s), so a stall or a lost reply becomes an unknown
outcome. Connecting makes a round trip: one that fails at the hello (the row's fault already
under way) is made again by the next request, whose answer is then its error (nothing ran).
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable, Optional, TypeVar, Union

sys.dont_write_bytecode = True  # no __pycache__ beside the drivers
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import redis_atomic as ra  # noqa: E402
from protocol import Message, serve, serve_async  # noqa: E402

ROWS = ["lock", "quota", "queue", "ratelimit-sl", "ratelimit-win", "semaphore"]
RESENDS = 2
SAFE = ("lock.acquire", "semaphore.acquire", "quota.add", "queue.enqueue", "queue.claim", "queue.ack")
DELIVERIES = 1000
JOB_STATES = {ra.JobQueued: "queued", ra.JobRunning: "running", ra.JobDead: "dead",
              ra.JobAcked: "acked", ra.JobUnknown: "unknown"}
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


def queued(op: str, got: Any) -> Message:
    """A queue call's answer (one job per claim)."""
    if op == "queue.enqueue":
        return {"outcome": "enqueued" if isinstance(got, ra.Enqueued) else "exists"}
    if op == "queue.ack":
        return {"outcome": "acked" if isinstance(got, ra.Acked) else "lost"}
    if op == "queue.inspect":
        return {"outcome": JOB_STATES[type(got)]}
    if isinstance(got, (ra.Empty, ra.Idle)):
        return {"outcome": "empty" if isinstance(got, ra.Empty) else "idle"}
    if not got:  # a claim id's repeat after its leases ended
        return {"outcome": "claimed"}
    return {"outcome": "claimed", "job_id": got[0].id, "fence": got[0].fence, "handle": got[0].fence}


def queue_call(q: Any, op: str, a: Message) -> Any:
    """The queue call of `op` on `q` (a Queue or an AsyncQueue: the same methods)."""
    if op == "queue.enqueue":
        return q.enqueue(a["job_id"], a["payload"])
    if op == "queue.claim":
        return q.claim_with_id(a["worker"], a["visibility_ms"] / 1000, 1, a["claim_id"])
    if op == "queue.ack":
        return q.ack(a["job_id"], a["worker"], int(a["handle"]))
    return q.inspect(a["job_id"])


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
        self.hello_msg: Message = {}
        self.row = ""
        self.ns = ""
        self.limiter: Optional[ra.RateLimiter] = None
        self.semaphores: dict[str, ra.Semaphore] = {}

    def hello(self, msg: Message) -> Message:
        if self.client is not None:
            self.client.close()
        self.client, self.hello_msg = None, msg
        try:  # connecting runs nothing: refused under the row's fault, the next request connects
            self.client = ra.Client.connect(target(msg), timeout=timeout(msg))
        except ra.RedisAtomicError:
            pass
        self.row, self.ns, self.limiter, self.semaphores = msg["row"], msg["namespace"], None, {}
        return {"driver": "redis_atomic (Python, blocking)", "rows": ROWS}

    def run(self, op: str, a: Message) -> Message:
        if self.client is None:  # its failure is the request's answer (nothing ran)
            self.client = ra.Client.connect(target(self.hello_msg), timeout=timeout(self.hello_msg))
        c = self.client
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
        if op.startswith("queue."):
            q = ra.Queue(c, self.ns, a["queue"], max_deliveries=DELIVERIES)
            return queued(op, resend(lambda: queue_call(q, op, a)))
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
        self.hello_msg: Message = {}
        self.row = ""
        self.ns = ""
        self.limiter: Optional[ra.AsyncRateLimiter] = None
        self.semaphores: dict[str, ra.AsyncSemaphore] = {}

    async def hello(self, msg: Message) -> Message:
        if self.client is not None:
            await self.client.close()
        self.client, self.hello_msg = None, msg
        try:  # as Blocking.hello: a connect refused under the fault is retried by the next request
            self.client = await ra.AsyncClient.connect(target(msg), timeout=timeout(msg))
        except ra.RedisAtomicError:
            pass
        self.row, self.ns, self.limiter, self.semaphores = msg["row"], msg["namespace"], None, {}
        return {"driver": "redis_atomic (Python, asyncio)", "rows": ROWS}

    async def run(self, op: str, a: Message) -> Message:
        if self.client is None:
            msg = self.hello_msg
            self.client = await ra.AsyncClient.connect(target(msg), timeout=timeout(msg))
        c = self.client
        try:
            return await self.once(c, op, a)
        except ra.OutcomeUnknown as first:
            if op not in SAFE:  # the retry-safe calls only
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
        if op.startswith("queue."):
            q = ra.AsyncQueue(c, self.ns, a["queue"], max_deliveries=DELIVERIES)
            return queued(op, await queue_call(q, op, a))
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
