"""The primitives over a blocking ``Client``: each method is one library call, answered when
it is done (the GIL released meanwhile).

The lease primitives (locks, semaphores, idempotency keys, the job queue) are in
``_locks.py``/``_alocks.py``, ``_idempotency.py`` and ``_queue.py``/``_aqueue.py``.
"""

from __future__ import annotations

from typing import Iterable, Sequence, Tuple, Union, cast

from . import _native
from ._client import Client
from ._native import Applied, Bounds, Limit, Policy, RateLimitKeys, Verdict, Write
from ._types import Seconds
from ._results import BoundedAdd, Decision, FencedResult, RaiseResult

__all__ = ["RateLimiter", "Quotas", "Dedup", "FencedWrites"]

BoundsLike = Union[Bounds, Tuple[int, int]]


def _native_client(client: Client) -> _native.Client:
    if not isinstance(client, Client):
        raise TypeError(f"expected a redis_atomic.Client, got {type(client).__name__}")
    return client._native


class RateLimiter:
    """Rate limits under one namespace: one ``Limit`` or ``Policy`` applied per identity
    (user, API key, IP). See ``docs/python.md`` for each algorithm's guarantee."""

    __slots__ = ("_n",)

    def __init__(
        self,
        client: Client,
        namespace: str,
        policy: Limit | Policy,
        *,
        request_ttl: Seconds | None = None,
    ) -> None:
        self._n = _native.RateLimiter(
            _native_client(client), namespace, policy, request_ttl=request_ttl
        )

    def consume(self, key: str, cost: int = 1, *, request_id: str | None = None) -> Decision:
        """Charges ``cost`` to every limit of ``key``'s policy, or to none: ``Allowed`` or
        ``Limited``. With ``request_id`` it is retry-safe: a repeat within the request TTL gets
        the first admission's decision back and is charged nothing."""
        return cast(Decision, self._n.consume(key, cost, request_id=request_id))

    def consume_detailed(
        self, key: str, cost: int = 1, *, request_id: str | None = None
    ) -> Verdict:
        """``consume`` with each limit's status and whether the decision was a replay."""
        return cast(Verdict, self._n.consume_detailed(key, cost, request_id=request_id))

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


class Quotas:
    """Bounded counters, TTLs set once or extended forward only, and monotonic maxima."""

    __slots__ = ("_n",)

    def __init__(
        self, client: Client, namespace: str, *, request_ttl: Seconds | None = None
    ) -> None:
        self._n = _native.Quotas(_native_client(client), namespace, request_ttl=request_ttl)

    def add(
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
        return cast(BoundedAdd, self._n.add(name, delta, bounds, ttl=ttl, request_id=request_id))

    def add_clamped(
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
            self._n.add(name, delta, bounds, ttl=ttl, request_id=request_id, clamp=True),
        )

    def get(self, name: str) -> int:
        """The counter's value (0 when absent)."""
        return cast(int, self._n.get(name))

    def expire_once(self, name: str, ttl: Seconds) -> bool:
        """Sets the counter's TTL only if it has none: whether it was set."""
        return cast(bool, self._n.expire_once(name, ttl))

    def extend_ttl(self, name: str, ttl: Seconds) -> bool:
        """Moves the expiry to ``ttl`` from now only if that is later: whether it moved."""
        return cast(bool, self._n.extend_ttl(name, ttl))

    def raise_to(self, name: str, candidate: int) -> RaiseResult:
        """Raises the value to ``candidate`` unless it already holds at least that:
        ``Raised(value)`` or ``Kept(value)``."""
        return cast(RaiseResult, self._n.raise_to(name, candidate))

    def add_unless_smaller(
        self, set_name: str, entries: Iterable[Tuple[int, Union[str, bytes]]]
    ) -> int:
        """``ZADD GT CH``: adds members, raises smaller scores, never lowers one. How many
        were added or raised."""
        return cast(int, self._n.add_unless_smaller(set_name, entries))

    @property
    def request_ttl(self) -> float:
        return self._n.request_ttl


class Dedup:
    """First sighting of an event id within a TTL (``SET NX PX GET``)."""

    __slots__ = ("_n",)

    def __init__(self, client: Client, namespace: str) -> None:
        self._n = _native.Dedup(_native_client(client), namespace)

    def first_seen(self, event_id: str, ttl: Seconds, *, token: str | None = None) -> bool:
        """Whether this is the first sighting of ``event_id`` within ``ttl``. Pass a ``token``
        to make a resend after ``OutcomeUnknown`` give the same answer."""
        return cast(bool, self._n.first_seen(event_id, ttl, token=token))

    def first_seen_many(
        self, event_ids: Sequence[str], ttl: Seconds, *, token: str | None = None
    ) -> list[bool]:
        """``first_seen`` for up to 1000 ids, answers in order (not atomic across ids)."""
        return cast("list[bool]", self._n.first_seen_many(event_ids, ttl, token=token))


class FencedWrites:
    """Writes applied only for the newest fence: a stale holder cannot overwrite a newer one."""

    __slots__ = ("_n",)

    def __init__(
        self, client: Client, namespace: str, *, retention: Seconds | None = None
    ) -> None:
        self._n = _native.FencedWrites(_native_client(client), namespace, retention=retention)

    def key(self, resource: str, part: str) -> str:
        """A data key under ``resource``'s hash tag."""
        return self._n.key(resource, part)

    def fence_key(self, resource: str) -> str:
        """The key of ``resource``'s fence record."""
        return self._n.fence_key(resource)

    def write(self, resource: str, fence: int, writes: Sequence[Write]) -> FencedResult:
        """Applies ``writes`` if ``fence`` is at least the highest that wrote to ``resource``:
        ``Written(fence, writes)`` or ``Stale(highest)``. Retry-safe."""
        return cast(FencedResult, self._n.write(resource, fence, writes))

    def highest(self, resource: str) -> int:
        """The highest fence that wrote to ``resource`` (0 if none is remembered)."""
        return cast(int, self._n.highest(resource))


