"""What the blocking and the asyncio face of each primitive share: the constructor (which client
it takes, which settings) and what it answers without a call (keys, policy, TTLs, capacity).

Why: ``RateLimiter`` and ``AsyncRateLimiter`` (and each other pair) differ only in whether a
call blocks or is awaited. Everything else is written once here, in a ``*View`` generic over the
client face: ``RateLimiterView[Client]`` takes a ``Client`` (type checkers see that through the
type parameter; at run time ``_face`` checks it, a ``TypeError`` for the other face). The calls
themselves stay in ``_sync.py`` / ``_async.py``, ``_locks.py`` / ``_alocks.py``, ``_queue.py`` /
``_aqueue.py`` and ``_idempotency.py``.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, TypeVar, Union

from . import _native
from ._client import C, OnClient
from ._native import (
    DedupKeys,
    IdempotencyKeys,
    Limit,
    LockKeys,
    Policy,
    QueueKeys,
    QuotaKeys,
    RateLimitKeys,
    SemaphoreKeys,
)
from ._types import Seconds

__all__ = [
    "RateLimiterView",
    "QuotasView",
    "DedupView",
    "FencedWritesView",
    "LocksView",
    "SemaphoreView",
    "QueueView",
    "IdempotencyView",
]

F = TypeVar("F", bound=Callable[..., Any])
KeyLike = Union[str, bytes]


class RateLimiterView(OnClient[C]):
    """The constructor and call-free members of ``RateLimiter`` and ``AsyncRateLimiter``."""

    __slots__ = ("_n",)

    def __init__(
        self,
        client: C,
        namespace: str,
        policy: Limit | Policy,
        *,
        request_ttl: Seconds | None = None,
    ) -> None:
        self._n = _native.RateLimiter(
            self._native_client(client), namespace, policy, request_ttl=request_ttl
        )

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


class QuotasView(OnClient[C]):
    """The constructor and call-free members of ``Quotas`` and ``AsyncQuotas``."""

    __slots__ = ("_n",)

    def __init__(self, client: C, namespace: str, *, request_ttl: Seconds | None = None) -> None:
        self._n = _native.Quotas(self._native_client(client), namespace, request_ttl=request_ttl)

    def keys(self, name: str, request_id: str | None = None) -> QuotaKeys:
        """The keys of counter ``name`` (and of ``request_id``'s record, if given)."""
        return self._n.keys(name, request_id)

    @property
    def request_ttl(self) -> float:
        return self._n.request_ttl


class DedupView(OnClient[C]):
    """The constructor and call-free members of ``Dedup`` and ``AsyncDedup``."""

    __slots__ = ("_n",)

    def __init__(self, client: C, namespace: str) -> None:
        self._n = _native.Dedup(self._native_client(client), namespace)

    def keys(self, event_id: str) -> DedupKeys:
        """The key of ``event_id``'s sighting."""
        return self._n.keys(event_id)


class FencedWritesView(OnClient[C]):
    """The constructor and call-free members of ``FencedWrites`` and ``AsyncFencedWrites``."""

    __slots__ = ("_n",)

    def __init__(self, client: C, namespace: str, *, retention: Seconds | None = None) -> None:
        self._n = _native.FencedWrites(self._native_client(client), namespace, retention=retention)

    def key(self, resource: str, part: str) -> str:
        """A data key under ``resource``'s hash tag."""
        return self._n.key(resource, part)

    def fence_key(self, resource: str) -> str:
        """The key of ``resource``'s fence record."""
        return self._n.fence_key(resource)


class LocksView(OnClient[C]):
    """The constructor and call-free members of ``Locks`` and ``AsyncLocks``."""

    __slots__ = ("_n",)

    def __init__(self, client: C, namespace: str) -> None:
        self._n = _native.Locks(self._native_client(client), namespace)

    def keys(self, resource: str) -> LockKeys:
        """The keys of ``resource``'s lock."""
        return self._n.keys(resource)


class SemaphoreView(OnClient[C]):
    """The constructor and call-free members of ``Semaphore`` and ``AsyncSemaphore``."""

    __slots__ = ("_n",)

    def __init__(self, client: C, namespace: str, name: str, capacity: int) -> None:
        self._n = _native.Semaphore(self._native_client(client), namespace, name, capacity)

    @property
    def keys(self) -> SemaphoreKeys:
        return self._n.keys

    @property
    def capacity(self) -> int:
        return self._n.capacity


class QueueView(OnClient[C]):
    """The constructor and call-free members of ``Queue`` and ``AsyncQueue``."""

    __slots__ = ("_n",)

    def __init__(
        self,
        client: C,
        namespace: str,
        name: str,
        *,
        max_payload_bytes: Optional[int] = None,
        max_deliveries: Optional[int] = None,
        dedup_window: Optional[Seconds] = None,
        max_dead_letters: Optional[int] = None,
        dead_letter_retention: Optional[Seconds] = None,
        claim_id_ttl: Optional[Seconds] = None,
    ) -> None:
        self._n = _native.Queue(
            self._native_client(client), namespace, name,
            max_payload_bytes=max_payload_bytes, max_deliveries=max_deliveries,
            dedup_window=dedup_window, max_dead_letters=max_dead_letters,
            dead_letter_retention=dead_letter_retention, claim_id_ttl=claim_id_ttl,
        )

    @property
    def keys(self) -> QueueKeys:
        return self._n.keys

    def claim_key(self, claim_id: str) -> str:
        return self._n.claim_key(claim_id)


class IdempotencyView(OnClient[C]):
    """The constructor and call-free members of ``Idempotency`` and ``AsyncIdempotency``."""

    __slots__ = ("_n",)

    def __init__(
        self,
        client: C,
        namespace: str,
        *,
        ttl: Optional[Seconds] = None,
        result_ttl: Optional[Seconds] = None,
        max_response_bytes: Optional[int] = None,
    ) -> None:
        self._n = _native.Idempotency(
            self._native_client(client), namespace, ttl=ttl, result_ttl=result_ttl,
            max_response_bytes=max_response_bytes,
        )

    def keys(self, scope: str, key: KeyLike) -> IdempotencyKeys:
        """The key of (``scope``, ``key``)'s record."""
        return self._n.keys(scope, key)

    @property
    def ttl(self) -> float:
        """A claim's lease, in seconds."""
        return float(self._n.ttl)

    @property
    def result_ttl(self) -> float:
        """How long a stored result is kept, in seconds."""
        return float(self._n.result_ttl)

    def idempotent(self, *, scope: str, **options: Any) -> Callable[[F], F]:
        """A decorator: the function (a coroutine function for ``AsyncIdempotency``) runs once
        per idempotency key; see ``idempotent``."""
        from ._idempotent import idempotent

        return idempotent(self, scope=scope, **options)
