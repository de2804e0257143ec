"""redis_atomic: correct Redis-backed workflows, bound directly to the redis-atomic Rust library.

Locks with fencing tokens, semaphores, idempotency keys, a reliable job queue, rate limits (six
algorithms, multi-limit policies, request ids), quotas and counters, event dedup, fenced writes
and your own Lua scripts, each keeping its invariant under concurrency,
timeouts, retries and lost replies. Blocking (``Client``, ``RateLimiter``, ...) and asyncio
(``AsyncClient``, ``AsyncRateLimiter``, ...) faces over one native core.

    import redis_atomic as ra
    client = ra.connect("redis://127.0.0.1:6379")
    limiter = ra.RateLimiter(client, "api", ra.Limit.gcra(10, 1.0))
    decision = limiter.consume("user-42")
    if not decision:
        print("retry in", decision.retry_after, "s")

Durations go in as seconds (``int``/``float``) or ``datetime.timedelta`` and come back as
``float`` seconds. Refusals are values (``Limited``, ``Held``, ``Full``, ``Empty``, ...); errors are exceptions under
``RedisAtomicError`` that say whether the request may have run. See ``docs/python.md``.
"""

from __future__ import annotations

from ._alocks import AsyncLocks, AsyncLockGuard, AsyncPermit, AsyncSemaphore
from ._aqueue import AsyncJob, AsyncQueue
from ._async import AsyncDedup, AsyncFencedWrites, AsyncQuotas, AsyncRateLimiter
from ._client import AsyncClient, Client, connect
from . import _errors
from ._errors import *  # noqa: F401,F403 (the exceptions: _errors.__all__)
from ._handles import AsyncWatched, Watched
from ._idempotency import AsyncClaim, AsyncIdempotency, Claim, Idempotency
from ._idempotent import idempotent
from ._locks import Locks, LockGuard, Permit, Semaphore
from ._native import (
    ALGORITHMS,
    Acked,
    Algorithm,
    Allowed,
    Applied,
    BatchStats,
    Batching,
    Bounds,
    DeadLetter,
    Dead,
    DeadLetters,
    DedupKeys,
    Empty,
    Enqueued,
    Exists,
    Extended,
    Fingerprint,
    Free,
    Full,
    Held,
    IdempotencyKeys,
    Idle,
    InProgress,
    JobAcked,
    JobDead,
    JobQueued,
    JobRunning,
    JobUnknown,
    Kept,
    Limit,
    Limited,
    LimitStatus,
    Locked,
    LockKeys,
    Lost,
    Mismatch,
    NotDead,
    Policy,
    Purged,
    QueueKeys,
    QueueStats,
    QuotaKeys,
    Raised,
    RateLimitKeys,
    Reaped,
    Refused,
    Released,
    Replay,
    Replicas,
    Requeued,
    Response,
    RetryPolicy,
    Retrying,
    Script,
    ScriptReply,
    ScriptSet,
    SemaphoreKeys,
    SemaphoreState,
    Stale,
    Stored,
    TlsOptions,
    Verdict,
    Write,
    Written,
)
from ._queue import Job, Queue
from ._results import BoundedAdd, Decision, FencedResult, RaiseResult
from ._sync import Dedup, FencedWrites, Quotas, RateLimiter
from ._types import Delivery, Seconds

DeadLettered = Dead
"""Deprecated: the former name of ``Dead`` (the same class)."""

__all__ = [
    # locks and semaphores
    "Locks",
    "AsyncLocks",
    "LockGuard",
    "AsyncLockGuard",
    "Held",
    "Locked",
    "Free",
    "LockKeys",
    "Semaphore",
    "AsyncSemaphore",
    "Permit",
    "AsyncPermit",
    "Full",
    "SemaphoreState",
    "SemaphoreKeys",
    # what every lease answers, the watchdog
    "Extended",
    "Released",
    "Lost",
    "Watched",
    "AsyncWatched",
    # idempotency keys
    "Idempotency",
    "AsyncIdempotency",
    "Claim",
    "AsyncClaim",
    "idempotent",
    "Fingerprint",
    "Response",
    "Replay",
    "InProgress",
    "Mismatch",
    "Stored",
    "IdempotencyKeys",
    # the job queue
    "Queue",
    "AsyncQueue",
    "Job",
    "AsyncJob",
    "Enqueued",
    "Exists",
    "Empty",
    "Idle",
    "Acked",
    "Retrying",
    "Dead",
    "DeadLettered",
    "Requeued",
    "NotDead",
    "QueueStats",
    "JobQueued",
    "JobRunning",
    "JobDead",
    "JobAcked",
    "JobUnknown",
    "DeadLetter",
    "DeadLetters",
    "Purged",
    "Reaped",
    "QueueKeys",
    # clients
    "Client",
    "AsyncClient",
    "connect",
    "RetryPolicy",
    "Batching",
    "BatchStats",
    "Replicas",
    "TlsOptions",
    "Delivery",
    "Seconds",
    # rate limits
    "ALGORITHMS",
    "Algorithm",
    "Limit",
    "Policy",
    "RateLimiter",
    "AsyncRateLimiter",
    "Allowed",
    "Limited",
    "Decision",
    "LimitStatus",
    "Verdict",
    "RateLimitKeys",
    # quotas, dedup, fenced writes
    "Bounds",
    "Quotas",
    "AsyncQuotas",
    "Applied",
    "Refused",
    "BoundedAdd",
    "Raised",
    "Kept",
    "QuotaKeys",
    "RaiseResult",
    "Dedup",
    "DedupKeys",
    "AsyncDedup",
    "Write",
    "FencedWrites",
    "AsyncFencedWrites",
    "Written",
    "Stale",
    "FencedResult",
    # your scripts
    "ScriptSet",
    "Script",
    "ScriptReply",
]
__all__ += _errors.__all__  # the exceptions, listed once in _errors.py
