"""redis_atomic: correct Redis-backed workflows, bound directly to the redis-atomic Rust library.

Rate limits (six algorithms, multi-limit policies, request ids), quotas and counters, event
dedup, fenced writes and your own Lua scripts, each keeping its invariant under concurrency,
timeouts, retries and lost replies. Blocking (``Client``, ``RateLimiter``, ...) and asyncio
(``AsyncClient``, ``AsyncRateLimiter``, ...) faces over one native core.

    import redis_atomic as ra
    client = ra.connect("redis://127.0.0.1:6379")
    limiter = ra.RateLimiter(client, "api", ra.Limit.gcra(10, 1.0))
    decision = limiter.consume("user-42")
    if not decision:
        print("retry in", decision.retry_after, "s")

Durations go in as seconds (``int``/``float``) or ``datetime.timedelta`` and come back as
``float`` seconds. Refusals are values (``Limited``, ``Refused``); errors are exceptions under
``RedisAtomicError`` that say whether the request may have run. See ``docs/python.md``.
"""

from __future__ import annotations

from ._async import AsyncDedup, AsyncFencedWrites, AsyncQuotas, AsyncRateLimiter
from ._client import AsyncClient, Client, connect
from ._errors import (
    BadArgument,
    BadReply,
    ClientError,
    ConnectionError,
    CostExceedsBurst,
    CrossSlot,
    NotReplicated,
    NotSent,
    OutcomeUnknown,
    RedisAtomicError,
    Rejected,
    ScriptFolderError,
    ServerError,
    TlsError,
    UsedAfterFork,
    WrongType,
)
from ._native import (
    ALGORITHMS,
    Algorithm,
    Allowed,
    Applied,
    Bounds,
    Kept,
    Limit,
    Limited,
    LimitStatus,
    Policy,
    Raised,
    RateLimitKeys,
    Refused,
    Replicas,
    RetryPolicy,
    Script,
    ScriptReply,
    ScriptSet,
    Stale,
    TlsOptions,
    Verdict,
    Write,
    Written,
)
from ._results import BoundedAdd, Decision, FencedResult, RaiseResult
from ._sync import Dedup, FencedWrites, Quotas, RateLimiter
from ._types import Delivery, Seconds

__all__ = [
    # clients
    "Client",
    "AsyncClient",
    "connect",
    "RetryPolicy",
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
    "RaiseResult",
    "Dedup",
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
    # errors
    "RedisAtomicError",
    "NotSent",
    "Rejected",
    "OutcomeUnknown",
    "WrongType",
    "BadArgument",
    "CostExceedsBurst",
    "BadReply",
    "CrossSlot",
    "ServerError",
    "ConnectionError",
    "TlsError",
    "ClientError",
    "NotReplicated",
    "UsedAfterFork",
    "ScriptFolderError",
]
