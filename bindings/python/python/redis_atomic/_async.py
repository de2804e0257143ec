"""The primitives over an ``AsyncClient``: each method is a coroutine of one library call.

Cancelling the task that awaits a call does not stop the call: it runs to its end on the
runtime and its result is discarded (see ``docs/python.md``, "Cancellation").

The lease primitives (locks, semaphores, idempotency keys, the job queue) are in
``_locks.py``/``_alocks.py``, ``_idempotency.py`` and ``_queue.py``/``_aqueue.py``.
"""

from __future__ import annotations

from typing import Iterable, Sequence, Tuple, Union, cast

from . import _native
from ._client import AsyncClient
from ._native import Applied, Bounds, Limit, Policy, RateLimitKeys, Verdict, Write
from ._types import Seconds
from ._results import BoundedAdd, Decision, FencedResult, RaiseResult

__all__ = ["AsyncRateLimiter", "AsyncQuotas", "AsyncDedup", "AsyncFencedWrites"]

BoundsLike = Union[Bounds, Tuple[int, int]]


def _native_client(client: AsyncClient) -> _native.Client:
    if not isinstance(client, AsyncClient):
        raise TypeError(f"expected a redis_atomic.AsyncClient, got {type(client).__name__}")
    return client._native


class AsyncRateLimiter:
    """Rate limits under one namespace: one ``Limit`` or ``Policy`` applied per identity
    (user, API key, IP). See ``docs/python.md`` for each algorithm's guarantee."""

    __slots__ = ("_n",)

    def __init__(
        self,
        client: AsyncClient,
        namespace: str,
        policy: Limit | Policy,
        *,
        request_ttl: Seconds | None = None,
    ) -> None:
        self._n = _native.RateLimiter(
            _native_client(client), namespace, policy, request_ttl=request_ttl
        )

    async def consume(self, key: str, cost: int = 1, *, request_id: str | None = None) -> Decision:
        """Charges ``cost`` to every limit of ``key``'s policy, or to none: ``Allowed`` or
        ``Limited``. With ``request_id`` it is retry-safe: a repeat within the request TTL gets
        the first admission's decision back and is charged nothing."""
        return cast(Decision, await self._n.consume(key, cost, request_id=request_id))

    async def consume_detailed(
        self, key: str, cost: int = 1, *, request_id: str | None = None
    ) -> Verdict:
        """``consume`` with each limit's status and whether the decision was a replay."""
        return cast(Verdict, await self._n.consume_detailed(key, cost, request_id=request_id))

    def keys(self, identity: str, request_id: str | None = None) -> RateLimitKeys:
        """The keys a consume for ``identity`` uses."""
        return self._n.keys(identity, request_id)

    @property
    def policy(self) -> Policy:
        return self._n.policy

    @property
    def request_ttl(self) -> float:
        """How long request ids are remembered, in seconds."""
        return self._n.request_ttl


class AsyncQuotas:
    """Bounded counters, TTLs set once or extended forward only, and monotonic maxima."""

    __slots__ = ("_n",)

    def __init__(
        self, client: AsyncClient, namespace: str, *, request_ttl: Seconds | None = None
    ) -> None:
        self._n = _native.Quotas(_native_client(client), namespace, request_ttl=request_ttl)

    async def add(
        self,
        name: str,
        delta: int,
        bounds: BoundsLike,
        *,
        ttl: Seconds | None = None,
        request_id: str | None = None,
    ) -> BoundedAdd:
        """Adds ``delta`` unless the result would leave ``bounds``: ``Applied(value)`` or
        ``Refused(value)`` (nothing changed). ``ttl`` is set when the counter is created and
        never extended. With ``request_id``: retry-safe (a repeat returns the first answer)."""
        return cast(BoundedAdd, await self._n.add(name, delta, bounds, ttl=ttl, request_id=request_id))

    async def add_clamped(
        self,
        name: str,
        delta: int,
        bounds: BoundsLike,
        *,
        ttl: Seconds | None = None,
        request_id: str | None = None,
    ) -> Applied:
        """Adds ``delta``, clamping the result into ``bounds``: always ``Applied``."""
        return cast(
            Applied,
            await self._n.add(name, delta, bounds, ttl=ttl, request_id=request_id, clamp=True),
        )

    async def get(self, name: str) -> int:
        """The counter's value (0 when absent)."""
        return cast(int, await self._n.get(name))

    async def expire_once(self, name: str, ttl: Seconds) -> bool:
        """Sets the counter's TTL only if it has none: whether it was set."""
        return cast(bool, await self._n.expire_once(name, ttl))

    async def extend_ttl(self, name: str, ttl: Seconds) -> bool:
        """Moves the expiry to ``ttl`` from now only if that is later: whether it moved."""
        return cast(bool, await self._n.extend_ttl(name, ttl))

    async def raise_to(self, name: str, candidate: int) -> RaiseResult:
        """Raises the value to ``candidate`` unless it already holds at least that:
        ``Raised(value)`` or ``Kept(value)``."""
        return cast(RaiseResult, await self._n.raise_to(name, candidate))

    async def add_unless_smaller(
        self, set_name: str, entries: Iterable[Tuple[int, Union[str, bytes]]]
    ) -> int:
        """``ZADD GT CH``: adds members, raises smaller scores, never lowers one. How many
        were added or raised."""
        return cast(int, await self._n.add_unless_smaller(set_name, entries))

    @property
    def request_ttl(self) -> float:
        return self._n.request_ttl


class AsyncDedup:
    """First sighting of an event id within a TTL (``SET NX PX GET``)."""

    __slots__ = ("_n",)

    def __init__(self, client: AsyncClient, namespace: str) -> None:
        self._n = _native.Dedup(_native_client(client), namespace)

    async def first_seen(self, event_id: str, ttl: Seconds, *, token: str | None = None) -> bool:
        """Whether this is the first sighting of ``event_id`` within ``ttl``. Pass a ``token``
        to make a resend after ``OutcomeUnknown`` give the same answer."""
        return cast(bool, await self._n.first_seen(event_id, ttl, token=token))

    async def first_seen_many(
        self, event_ids: Sequence[str], ttl: Seconds, *, token: str | None = None
    ) -> list[bool]:
        """``first_seen`` for up to 1000 ids, answers in order (not atomic across ids)."""
        return cast("list[bool]", await self._n.first_seen_many(event_ids, ttl, token=token))


class AsyncFencedWrites:
    """Writes applied only for the newest fence: a stale holder cannot overwrite a newer one."""

    __slots__ = ("_n",)

    def __init__(
        self, client: AsyncClient, namespace: str, *, retention: Seconds | None = None
    ) -> None:
        self._n = _native.FencedWrites(_native_client(client), namespace, retention=retention)

    def key(self, resource: str, part: str) -> str:
        """A data key under ``resource``'s hash tag."""
        return self._n.key(resource, part)

    def fence_key(self, resource: str) -> str:
        """The key of ``resource``'s fence record."""
        return self._n.fence_key(resource)

    async def write(self, resource: str, fence: int, writes: Sequence[Write]) -> FencedResult:
        """Applies ``writes`` if ``fence`` is at least the highest that wrote to ``resource``:
        ``Written(fence, writes)`` or ``Stale(highest)``. Retry-safe."""
        return cast(FencedResult, await self._n.write(resource, fence, writes))

    async def highest(self, resource: str) -> int:
        """The highest fence that wrote to ``resource`` (0 if none is remembered)."""
        return cast(int, await self._n.highest(resource))


