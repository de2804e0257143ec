"""What every lease handle shares in Python: the read-only view of a lease, the watchdog faces
(``Watched`` for threads, ``AsyncWatched`` for asyncio), and how an asyncio call gives back a
lease its cancelled caller never took.

A handle (``LockGuard``, ``Permit``, ``Claim``, ``Job`` and their ``Async`` twins) wraps the
native handle, which keeps the library's lease. Its end verb (``release``, ``complete``/``fail``,
``ack``/``nack``) consumes the lease: a second end raises ``HandleEnded``, and the handle's
``fence`` and ``token`` stay readable for a repeat by parts after an unknown outcome.

**Watchdog.** ``handle.watch()`` lends the lease to the library's watchdog, which renews it
every ``renew_fraction × ttl`` (default 1/3) and declares it lost ``margin_fraction × ttl``
(default 5%) before the last proven lease ends. The loss is learnt from ``watched.lost``: a
``threading.Event`` for the blocking face, an ``asyncio.Event`` (set on the loop that called
``watch()``) for asyncio; ``watched.reason`` then says ``"not_held"`` (the server answered
that the lease is gone) or ``"unconfirmed"`` (no renewal succeeded in time: the server stalled
or unreachable). ``stop()`` ends the renewals and gives the lease back to the handle, whose end
verbs work again; leaving ``with handle.watch():`` stops it and ends the handle as leaving
``with handle:`` does.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Generic, List, Optional, Protocol, TypeVar

__all__ = ["Watched", "AsyncWatched", "LeaseView", "taken", "abandon"]


class _NativeHandle(Protocol):
    fence: int
    token: str
    ttl: float
    expires_in: float
    ended: bool
    watched: bool

    def watch(self, renew_fraction: Optional[float], margin_fraction: Optional[float]) -> Any: ...
    def _taken(self) -> None: ...
    def _abandon(self) -> None: ...


class _Owned:
    """Whose lease it is: what a handle and its watchdog both say."""

    __slots__ = ()

    _n: Any

    @property
    def fence(self) -> int:
        """The lease's fence: pass it to every write the lease protects."""
        return int(self._n.fence)

    @property
    def token(self) -> str:
        """The owner token (for a job: the worker). Reuse it to repeat a call by parts."""
        return str(self._n.token)


class LeaseView(_Owned):
    """The read-only view every handle has of its lease."""

    __slots__ = ("_n", "_w")

    def __init__(self, native: Any) -> None:
        self._n = native
        self._w: Optional[Any] = None

    @property
    def ttl(self) -> float:
        """The lease's length as last set (the take, or the last confirmed extend), seconds."""
        return float(self._n.ttl)

    @property
    def expires_in(self) -> float:
        """Seconds until the lease surely ends by the local clock (0 once past): the time the
        taking (or last extending) request was sent, plus its ttl, minus now."""
        return float(self._n.expires_in)

    @property
    def ended(self) -> bool:
        """Whether the end verb ran (the handle can end nothing more)."""
        return bool(self._n.ended)

    @property
    def watched(self) -> bool:
        """Whether a watchdog holds the lease now."""
        return bool(self._n.watched)

    def __bool__(self) -> bool:
        return True

    def __repr__(self) -> str:
        return repr(self._n)

    def _watch(
        self, face: Any, renew_fraction: Optional[float], margin_fraction: Optional[float]
    ) -> Any:
        """Lends the lease to the library's watchdog, seen through ``face`` (``Watched`` or
        ``AsyncWatched``): what every handle's ``watch()`` does."""
        self._w = face(self._n.watch(renew_fraction, margin_fraction), self)
        return self._w

    def _running_watchdog(self) -> Optional[Any]:
        """The watchdog to stop on leaving a ``with`` block: the one still renewing, if any."""
        w = self._w
        return w if w is not None and not w._n.stopped else None


H = TypeVar("H", bound=LeaseView)


def _lost(event: threading.Event, why: List[str], reason: str) -> None:
    why.append(reason)
    event.set()


class _WatchedView(_Owned, Generic[H]):
    """What both watchdog faces say of the lease they renew."""

    __slots__ = ("_n", "handle", "lost", "_why")

    def __init__(self, native: Any, handle: H) -> None:
        self._n = native
        self.handle = handle
        self._why: List[str] = []

    @property
    def reason(self) -> Optional[str]:
        """``None`` while held; ``"not_held"`` or ``"unconfirmed"`` once lost."""
        return self._why[0] if self._why else None

    @property
    def is_held(self) -> bool:
        """Whether the lease is provably held now (checked against the local clock)."""
        return bool(self._n.is_held)

    @property
    def failed_renewals(self) -> int:
        """Renewals that failed so far (each retried while the lease lasted)."""
        return int(self._n.failed_renewals)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.handle!r}, held={self.is_held}, "
            f"reason={self.reason!r})"
        )


class Watched(_WatchedView[H]):
    """A lease a background task renews (blocking face). ``lost`` is set when it is lost."""

    __slots__ = ()

    def __init__(self, native: Any, handle: H) -> None:
        super().__init__(native, handle)
        self.lost = threading.Event()
        event, why = self.lost, self._why
        # The callback holds only the event and the reason list, never this object: a watchdog
        # dropped without stop() is freed (and its renewals end) as the library says.
        native.on_lost(lambda reason: _lost(event, why, reason))

    def wait_lost(self, timeout: Optional[float] = None) -> bool:
        """Blocks until the lease is lost or ``timeout`` seconds pass: whether it was lost."""
        return self.lost.wait(timeout)

    def stop(self) -> H:
        """Stops the renewals and gives the lease back to the handle (returned)."""
        self._n.stop()
        return self.handle

    def __enter__(self) -> Watched[H]:
        return self

    def __exit__(self, *exc: Any) -> Any:
        self.stop()
        return self.handle.__exit__(*exc)  # type: ignore[attr-defined]


def _lost_async(
    loop: asyncio.AbstractEventLoop, event: asyncio.Event, why: List[str], reason: str
) -> None:
    def mark() -> None:
        why.append(reason)
        event.set()

    try:
        loop.call_soon_threadsafe(mark)
    except RuntimeError:  # the loop is closed: nobody waits any more
        pass


class AsyncWatched(_WatchedView[H]):
    """A lease a background task renews (asyncio face). ``lost`` is an ``asyncio.Event`` set on
    the loop that started the watchdog when the lease is lost."""

    __slots__ = ()

    def __init__(self, native: Any, handle: H) -> None:
        super().__init__(native, handle)
        self.lost = asyncio.Event()
        loop, event, why = asyncio.get_running_loop(), self.lost, self._why
        native.on_lost(lambda reason: _lost_async(loop, event, why, reason))

    async def wait_lost(self) -> str:
        """Returns once the lease is lost: the reason."""
        await self.lost.wait()
        return self._why[0]

    async def stop(self) -> H:
        """Stops the renewals and gives the lease back to the handle (returned)."""
        await self._n.stop()
        return self.handle

    async def __aenter__(self) -> AsyncWatched[H]:
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        await self.stop()
        return await self.handle.__aexit__(*exc)  # type: ignore[attr-defined]


def taken(native: Any) -> Any:
    """Marks a native handle (or each of a list) as delivered to the caller."""
    if isinstance(native, list):
        for n in native:
            n._taken()
    elif hasattr(native, "_taken"):
        native._taken()
    return native


def abandon(fut: "asyncio.Future[Any]") -> None:
    """The caller of ``fut`` was cancelled: give back any lease it won but never took. (If
    ``fut`` was cancelled itself, the native side gives the lease back when the call ends.)"""
    if not fut.done() or fut.cancelled() or fut.exception() is not None:
        return
    got = fut.result()
    for n in got if isinstance(got, list) else [got]:
        if hasattr(n, "_abandon"):
            n._abandon()


async def deliver(fut: Any) -> Any:
    """Awaits a native call that may win leases, and takes them for the caller; on
    ``CancelledError`` gives them back (see ``abandon``)."""
    try:
        got = await fut
    except asyncio.CancelledError:
        abandon(fut)
        raise
    return taken(got)
