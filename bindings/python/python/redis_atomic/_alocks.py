"""Locks and semaphores over an ``AsyncClient``: ``AsyncLocks`` / ``AsyncLockGuard`` and
``AsyncSemaphore`` / ``AsyncPermit``. Each method is a coroutine of one library call; a held
lease is an ``async with`` context manager.

**Cancellation.** The library call of a cancelled ``acquire`` runs to its end (see
``docs/python.md``); a lock or permit it won is released by the binding at once, since its
caller never received it.
"""

from __future__ import annotations

from typing import Any, Literal, Optional, Union, cast

from ._client import AsyncClient
from ._handles import AsyncWatched, LeaseView, deliver
from ._locks import ExtendResult, LockGuardView, ReleaseResult
from ._native import Free, Full, Held, Locked, SemaphoreState
from ._types import Seconds
from ._views import LocksView, SemaphoreView

__all__ = ["AsyncLocks", "AsyncLockGuard", "AsyncSemaphore", "AsyncPermit"]


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
        watchdog = self._running_watchdog()
        if watchdog is not None:
            await watchdog.stop()
        if not self._n.ended:
            await self._n.release()


class AsyncLockGuard(_AsyncReleasable, LockGuardView):
    """A held lock (from ``AsyncLocks.acquire``)."""

    __slots__ = ()

    def watch(
        self, *, renew_fraction: Optional[float] = None, margin_fraction: Optional[float] = None
    ) -> AsyncWatched[AsyncLockGuard]:
        """Renews the lock in the background until stopped (see ``AsyncWatched``). Call it
        from a coroutine: ``lost`` is set on the running loop."""
        watched = self._watch(AsyncWatched, renew_fraction, margin_fraction)
        return cast("AsyncWatched[AsyncLockGuard]", watched)

    async def __aenter__(self) -> AsyncLockGuard:
        return self


class AsyncPermit(_AsyncReleasable):
    """A held semaphore permit (from ``AsyncSemaphore.acquire``)."""

    __slots__ = ()

    def watch(
        self, *, renew_fraction: Optional[float] = None, margin_fraction: Optional[float] = None
    ) -> AsyncWatched[AsyncPermit]:
        """Renews the permit in the background until stopped (see ``AsyncWatched``)."""
        watched = self._watch(AsyncWatched, renew_fraction, margin_fraction)
        return cast("AsyncWatched[AsyncPermit]", watched)

    async def __aenter__(self) -> AsyncPermit:
        return self


class AsyncLocks(LocksView[AsyncClient]):
    """Locks with fencing tokens under one namespace (asyncio). See ``Locks``."""

    __slots__ = ()

    _face = AsyncClient

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


class AsyncSemaphore(SemaphoreView[AsyncClient]):
    """A counting semaphore with fenced permits (asyncio). See ``Semaphore``."""

    __slots__ = ()

    _face = AsyncClient

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
