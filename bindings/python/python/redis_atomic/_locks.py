"""Locks and semaphores over a blocking ``Client``: ``Locks`` / ``LockGuard`` and
``Semaphore`` / ``Permit``. Each method is one library call; a refusal is a value (``Held``,
``Full``); a held lease is a handle that is also a context manager (leaving the block releases
it)."""

from __future__ import annotations

from typing import Any, Literal, Optional, Union, cast

from . import _native
from ._client import Client
from ._handles import LeaseView, Watched
from ._native import (
    Extended,
    Free,
    Full,
    Held,
    Locked,
    LockKeys,
    Lost,
    Released,
    SemaphoreKeys,
    SemaphoreState,
)
from ._types import Seconds

__all__ = ["Locks", "LockGuard", "Semaphore", "Permit"]

ExtendResult = Union[Extended, Lost]
ReleaseResult = Union[Released, Lost]


def _client(client: Client) -> _native.Client:
    if not isinstance(client, Client):
        raise TypeError(f"expected a redis_atomic.Client, got {type(client).__name__}")
    return client._native


class _Releasable(LeaseView):
    """A lock guard or a permit: ``release()`` ends it; ``with`` releases it on the way out."""

    __slots__ = ()

    def extend(self, ttl: Seconds) -> ExtendResult:
        """Sets the lease to end ``ttl`` from the server's now: ``Extended(fence, ttl)`` or
        ``Lost()`` (it is not held any more)."""
        return cast(ExtendResult, self._n.extend(ttl))

    def release(self) -> ReleaseResult:
        """Ends the lease: ``Released(fence)``, or ``Lost()`` if it was not held any more. The
        handle is ended either way; after ``OutcomeUnknown`` repeat it by parts with this
        handle's ``token`` and ``fence``."""
        return cast(ReleaseResult, self._n.release())

    def __bool__(self) -> Literal[True]:
        return True

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._w is not None and not self._w._n.stopped:
            self._w.stop()
        if not self._n.ended:
            self._n.release()


class LockGuard(_Releasable):
    """A held lock (from ``Locks.acquire``)."""

    __slots__ = ()

    @property
    def resource(self) -> str:
        """The locked resource."""
        return str(self._n.resource)

    def watch(
        self, *, renew_fraction: Optional[float] = None, margin_fraction: Optional[float] = None
    ) -> Watched[LockGuard]:
        """Renews the lock in the background until stopped (see ``Watched``)."""
        self._w = Watched(self._n.watch(renew_fraction, margin_fraction), self)
        return cast("Watched[LockGuard]", self._w)

    def __enter__(self) -> LockGuard:
        return self

    def __repr__(self) -> str:
        return repr(self._n)


class Permit(_Releasable):
    """A held semaphore permit (from ``Semaphore.acquire``)."""

    __slots__ = ()

    def watch(
        self, *, renew_fraction: Optional[float] = None, margin_fraction: Optional[float] = None
    ) -> Watched[Permit]:
        """Renews the permit in the background until stopped (see ``Watched``)."""
        self._w = Watched(self._n.watch(renew_fraction, margin_fraction), self)
        return cast("Watched[Permit]", self._w)

    def __enter__(self) -> Permit:
        return self

    def __repr__(self) -> str:
        return repr(self._n)


class Locks:
    """Locks with fencing tokens under one namespace: at most one holder per resource at any
    instant of the server's clock; every acquisition's fence is larger than all before it."""

    __slots__ = ("_n",)

    def __init__(self, client: Client, namespace: str) -> None:
        self._n = _native.Locks(_client(client), namespace)

    def acquire(
        self,
        resource: str,
        ttl: Seconds,
        *,
        wait: Optional[Seconds] = None,
        token: Optional[str] = None,
    ) -> Union[LockGuard, Held]:
        """Takes ``resource`` for ``ttl``: a ``LockGuard``, or ``Held(retry_after)`` if someone
        holds it. ``wait``: keep trying (the client's contention backoff) for up to that long.
        ``token``: your owner token, to retry after ``OutcomeUnknown`` (the same token gets the
        same lease back); not with ``wait``."""
        got = self._n.acquire(resource, ttl, wait=wait, token=token)
        return got if isinstance(got, Held) else LockGuard(got)

    def release(self, resource: str, token: str, fence: int) -> ReleaseResult:
        """Releases ``resource`` if ``token`` holds it with ``fence`` (by parts)."""
        return cast(ReleaseResult, self._n.release(resource, token, fence))

    def extend(self, resource: str, token: str, fence: int, ttl: Seconds) -> ExtendResult:
        """Sets the lease ``fence`` of ``token`` to end ``ttl`` from now (by parts)."""
        return cast(ExtendResult, self._n.extend(resource, token, fence, ttl))

    def inspect(self, resource: str) -> Union[Locked, Free]:
        """The lock's state, unchanged: ``Locked(fence, ttl)`` or ``Free(last_fence)``."""
        return cast(Union[Locked, Free], self._n.inspect(resource))

    def keys(self, resource: str) -> LockKeys:
        """The keys of ``resource``'s lock."""
        return self._n.keys(resource)


class Semaphore:
    """A counting semaphore: at most ``capacity`` unexpired permits at any instant of the
    server's clock, each with a fence."""

    __slots__ = ("_n",)

    def __init__(self, client: Client, namespace: str, name: str, capacity: int) -> None:
        self._n = _native.Semaphore(_client(client), namespace, name, capacity)

    def acquire(self, ttl: Seconds, *, token: Optional[str] = None) -> Union[Permit, Full]:
        """Takes a permit for ``ttl``: a ``Permit``, or ``Full(retry_after)``. ``token``: your
        owner token, to retry after ``OutcomeUnknown``."""
        got = self._n.acquire(ttl, token=token)
        return got if isinstance(got, Full) else Permit(got)

    def release(self, token: str, fence: int) -> ReleaseResult:
        """Gives back the permit ``token`` holds with ``fence`` (by parts)."""
        return cast(ReleaseResult, self._n.release(token, fence))

    def extend(self, token: str, fence: int, ttl: Seconds) -> ExtendResult:
        """Sets that permit's lease to end ``ttl`` from now (by parts)."""
        return cast(ExtendResult, self._n.extend(token, fence, ttl))

    def inspect(self) -> SemaphoreState:
        """Live permits, the next expiry and the last fence (read-only)."""
        return cast(SemaphoreState, self._n.inspect())

    @property
    def keys(self) -> SemaphoreKeys:
        return self._n.keys

    @property
    def capacity(self) -> int:
        return self._n.capacity
