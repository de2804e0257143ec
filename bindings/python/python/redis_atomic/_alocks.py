"""Locks and semaphores over an ``AsyncClient``: ``AsyncLocks`` / ``AsyncLockGuard`` and
``AsyncSemaphore`` / ``AsyncPermit``. Each method is a coroutine of one library call; a held
lease is an ``async with`` context manager.

**Cancellation.** The library call of a cancelled ``acquire`` runs to its end (see
``docs/python.md``); a lock or permit it won is released by the binding at once, since its
caller never received it.
"""

from __future__ import annotations

from typing import Any, Literal, Optional, Union, cast

from . import _native
from ._client import AsyncClient
from ._handles import AsyncWatched, LeaseView, deliver
from ._locks import ExtendResult, ReleaseResult
from ._native import Free, Full, Held, Locked, LockKeys, SemaphoreKeys, SemaphoreState
from ._types import Seconds

__all__ = ["AsyncLocks", "AsyncLockGuard", "AsyncSemaphore", "AsyncPermit"]


def _client(client: AsyncClient) -> _native.Client:
    if not isinstance(client, AsyncClient):
        raise TypeError(f"expected a redis_atomic.AsyncClient, got {type(client).__name__}")
    return client._native


class _AsyncReleasable(LeaseView):
    """A lock guard or a permit: ``await release()`` ends it; ``async with`` releases it."""

    __slots__ = ()

    async def extend(self, ttl: Seconds) -> ExtendResult:
        """Sets the lease to end ``ttl`` from the server's now: ``Extended`` or ``Lost``."""
        return cast(ExtendResult, await self._n.extend(ttl))

    async def release(self) -> ReleaseResult:
        """Ends the lease: ``Released(fence)`` or ``Lost()``. The handle is ended either way."""
        return cast(ReleaseResult, await self._n.release())

    def __bool__(self) -> Literal[True]:
        return True

    async def __aenter__(self) -> Any:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        if self._w is not None and not self._w._n.stopped:
            await self._w.stop()
        if not self._n.ended:
            await self._n.release()


class AsyncLockGuard(_AsyncReleasable):
    """A held lock (from ``AsyncLocks.acquire``)."""

    __slots__ = ()

    @property
    def resource(self) -> str:
        return str(self._n.resource)

    def watch(
        self, *, renew_fraction: Optional[float] = None, margin_fraction: Optional[float] = None
    ) -> AsyncWatched[AsyncLockGuard]:
        """Renews the lock in the background until stopped (see ``AsyncWatched``). Call it
        from a coroutine: ``lost`` is set on the running loop."""
        self._w = AsyncWatched(self._n.watch(renew_fraction, margin_fraction), self)
        return cast("AsyncWatched[AsyncLockGuard]", self._w)

    async def __aenter__(self) -> AsyncLockGuard:
        return self

    def __repr__(self) -> str:
        return repr(self._n)


class AsyncPermit(_AsyncReleasable):
    """A held semaphore permit (from ``AsyncSemaphore.acquire``)."""

    __slots__ = ()

    def watch(
        self, *, renew_fraction: Optional[float] = None, margin_fraction: Optional[float] = None
    ) -> AsyncWatched[AsyncPermit]:
        """Renews the permit in the background until stopped (see ``AsyncWatched``)."""
        self._w = AsyncWatched(self._n.watch(renew_fraction, margin_fraction), self)
        return cast("AsyncWatched[AsyncPermit]", self._w)

    async def __aenter__(self) -> AsyncPermit:
        return self

    def __repr__(self) -> str:
        return repr(self._n)


class AsyncLocks:
    """Locks with fencing tokens under one namespace (asyncio). See ``Locks``."""

    __slots__ = ("_n",)

    def __init__(self, client: AsyncClient, namespace: str) -> None:
        self._n = _native.Locks(_client(client), namespace)

    async def acquire(
        self,
        resource: str,
        ttl: Seconds,
        *,
        wait: Optional[Seconds] = None,
        token: Optional[str] = None,
    ) -> Union[AsyncLockGuard, Held]:
        """Takes ``resource`` for ``ttl``: an ``AsyncLockGuard`` or ``Held(retry_after)``; with
        ``wait``, keeps trying for up to that long."""
        got = await deliver(self._n.acquire(resource, ttl, wait=wait, token=token))
        return got if isinstance(got, Held) else AsyncLockGuard(got)

    async def release(self, resource: str, token: str, fence: int) -> ReleaseResult:
        return cast(ReleaseResult, await self._n.release(resource, token, fence))

    async def extend(self, resource: str, token: str, fence: int, ttl: Seconds) -> ExtendResult:
        return cast(ExtendResult, await self._n.extend(resource, token, fence, ttl))

    async def inspect(self, resource: str) -> Union[Locked, Free]:
        return cast(Union[Locked, Free], await self._n.inspect(resource))

    def keys(self, resource: str) -> LockKeys:
        return self._n.keys(resource)


class AsyncSemaphore:
    """A counting semaphore with fenced permits (asyncio). See ``Semaphore``."""

    __slots__ = ("_n",)

    def __init__(self, client: AsyncClient, namespace: str, name: str, capacity: int) -> None:
        self._n = _native.Semaphore(_client(client), namespace, name, capacity)

    async def acquire(
        self, ttl: Seconds, *, token: Optional[str] = None
    ) -> Union[AsyncPermit, Full]:
        got = await deliver(self._n.acquire(ttl, token=token))
        return got if isinstance(got, Full) else AsyncPermit(got)

    async def release(self, token: str, fence: int) -> ReleaseResult:
        return cast(ReleaseResult, await self._n.release(token, fence))

    async def extend(self, token: str, fence: int, ttl: Seconds) -> ExtendResult:
        return cast(ExtendResult, await self._n.extend(token, fence, ttl))

    async def inspect(self) -> SemaphoreState:
        return cast(SemaphoreState, await self._n.inspect())

    @property
    def keys(self) -> SemaphoreKeys:
        return self._n.keys

    @property
    def capacity(self) -> int:
        return self._n.capacity
