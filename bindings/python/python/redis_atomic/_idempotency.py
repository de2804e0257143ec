"""Idempotency keys: ``Idempotency`` / ``Claim`` (blocking) and ``AsyncIdempotency`` /
``AsyncClaim`` (asyncio). ``begin`` answers a claim (run the request, then ``complete`` or
``fail``), ``InProgress(retry_after)``, ``Replay(response, failed)`` or ``Mismatch()``; the
``idempotent`` decorator (``_idempotent.py``) wraps a function in that cycle."""

from __future__ import annotations

from typing import Any, Optional, Sequence, Union, cast

from . import _native
from ._client import AsyncClient, Client
from ._handles import AsyncWatched, LeaseView, Watched, deliver
from ._locks import ExtendResult
from ._native import (
    Fingerprint,
    InProgress,
    Lost,
    Mismatch,
    Replay,
    Response,
    Stored,
)
from ._types import Seconds
from ._views import IdempotencyView, KeyLike

__all__ = ["Idempotency", "AsyncIdempotency", "Claim", "AsyncClaim"]

EndResult = Union[Stored, Lost]
FingerprintLike = Union[Fingerprint, Sequence[Union[str, bytes, int]]]


class ClaimView(LeaseView):
    """What a claim says of itself (both faces)."""

    __slots__ = ()

    @property
    def is_takeover(self) -> bool:
        """Whether this claim took over an earlier executor's expired lease."""
        return bool(self._n.is_takeover)


class Claim(ClaimView):
    """A live claim on an idempotency key (blocking): run the request, then ``complete`` or
    ``fail`` it (both end it)."""

    __slots__ = ()

    def extend(self, ttl: Seconds) -> ExtendResult:
        """Sets the claim's lease to end ``ttl`` from the server's now."""
        return cast(ExtendResult, self._n.extend(ttl))

    def complete(self, response: Response) -> EndResult:
        """Stores ``response`` for every duplicate: ``Stored()``, or ``Lost()`` if this claim
        was superseded (taken over after its lease ran out): nothing written then."""
        return cast(EndResult, self._n.complete(response))

    def fail(self, response: Optional[Response] = None) -> EndResult:
        """Ends the claim with a failure: without ``response`` retryable (the key is freed: the
        next duplicate runs the request), with it final (duplicates get ``Replay(response,
        failed=True)``)."""
        return cast(EndResult, self._n.fail(response))

    def watch(
        self, *, renew_fraction: Optional[float] = None, margin_fraction: Optional[float] = None
    ) -> Watched[Claim]:
        """Renews the claim in the background until stopped (see ``Watched``). A claim whose
        renewal could not be confirmed is not given back (a duplicate could run while this
        executor stores its result): it runs out."""
        return cast("Watched[Claim]", self._watch(Watched, renew_fraction, margin_fraction))

    def __exit__(self, *exc: Any) -> None:
        watchdog = self._running_watchdog()
        if watchdog is not None:
            watchdog.stop()


class AsyncClaim(ClaimView):
    """A live claim on an idempotency key (asyncio). See ``Claim``."""

    __slots__ = ()

    async def extend(self, ttl: Seconds) -> ExtendResult:
        return cast(ExtendResult, await self._n.extend(ttl))

    async def complete(self, response: Response) -> EndResult:
        return cast(EndResult, await self._n.complete(response))

    async def fail(self, response: Optional[Response] = None) -> EndResult:
        return cast(EndResult, await self._n.fail(response))

    def watch(
        self, *, renew_fraction: Optional[float] = None, margin_fraction: Optional[float] = None
    ) -> AsyncWatched[AsyncClaim]:
        watched = self._watch(AsyncWatched, renew_fraction, margin_fraction)
        return cast("AsyncWatched[AsyncClaim]", watched)

    async def __aexit__(self, *exc: Any) -> None:
        watchdog = self._running_watchdog()
        if watchdog is not None:
            await watchdog.stop()


Begin = Union[Claim, InProgress, Replay, Mismatch]
AsyncBegin = Union[AsyncClaim, InProgress, Replay, Mismatch]


class Idempotency(IdempotencyView[Client]):
    """Idempotency records under one namespace: each request's side effect happens once,
    however often it is sent. ``ttl``: a claim's lease (default 30 s) before a duplicate may
    take it over; ``result_ttl``: how long results are kept (default 24 h)."""

    __slots__ = ()

    _face = Client

    def begin(
        self,
        scope: str,
        key: KeyLike,
        fingerprint: FingerprintLike,
        *,
        token: Optional[str] = None,
    ) -> Begin:
        """Claims (``scope``, ``key``) for the request ``fingerprint`` identifies (a
        ``Fingerprint``, or the parts to digest): ``Claim``, ``InProgress(retry_after)``,
        ``Replay(response, failed)`` or ``Mismatch()``. ``token``: your owner token, to retry
        after ``OutcomeUnknown`` (the same token gets the same claim back)."""
        got = self._n.begin(scope, key, fingerprint, token=token)
        return Claim(got) if isinstance(got, _native.Claim) else cast(Begin, got)

    def extend(
        self, scope: str, key: KeyLike, token: str, fence: int, ttl: Seconds
    ) -> ExtendResult:
        """Extends the claim ``token`` holds with ``fence`` (by parts)."""
        return cast(ExtendResult, self._n.extend(scope, key, token, fence, ttl))

    def complete(
        self, scope: str, key: KeyLike, token: str, fence: int, response: Response
    ) -> EndResult:
        """Completes the claim ``token`` holds with ``fence`` (by parts; safe to repeat)."""
        return cast(EndResult, self._n.complete(scope, key, token, fence, response))

    def fail(
        self,
        scope: str,
        key: KeyLike,
        token: str,
        fence: int,
        response: Optional[Response] = None,
    ) -> EndResult:
        """Fails the claim ``token`` holds with ``fence`` (by parts; safe to repeat)."""
        return cast(EndResult, self._n.fail(scope, key, token, fence, response))


class AsyncIdempotency(IdempotencyView[AsyncClient]):
    """Idempotency records under one namespace (asyncio). See ``Idempotency``."""

    __slots__ = ()

    _face = AsyncClient

    async def begin(
        self,
        scope: str,
        key: KeyLike,
        fingerprint: FingerprintLike,
        *,
        token: Optional[str] = None,
    ) -> AsyncBegin:
        """See ``Idempotency.begin``. A claim won by a cancelled call is failed as retryable by
        the binding (no code ran under it): the key is free again."""
        got = await deliver(self._n.begin(scope, key, fingerprint, token=token))
        return AsyncClaim(got) if isinstance(got, _native.Claim) else cast(AsyncBegin, got)

    async def extend(
        self, scope: str, key: KeyLike, token: str, fence: int, ttl: Seconds
    ) -> ExtendResult:
        return cast(ExtendResult, await self._n.extend(scope, key, token, fence, ttl))

    async def complete(
        self, scope: str, key: KeyLike, token: str, fence: int, response: Response
    ) -> EndResult:
        return cast(EndResult, await self._n.complete(scope, key, token, fence, response))

    async def fail(
        self,
        scope: str,
        key: KeyLike,
        token: str,
        fence: int,
        response: Optional[Response] = None,
    ) -> EndResult:
        return cast(EndResult, await self._n.fail(scope, key, token, fence, response))
