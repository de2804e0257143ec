"""Idempotency keys: ``Idempotency`` / ``Claim`` (blocking) and ``AsyncIdempotency`` /
``AsyncClaim`` (asyncio). ``begin`` answers a claim (run the request, then ``complete`` or
``fail``), ``InProgress(retry_after)``, ``Replay(response, failed)`` or ``Mismatch()``; the
``idempotent`` decorator (``_idempotent.py``) wraps a function in that cycle."""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence, TypeVar, Union, cast

from . import _native
from ._client import AsyncClient, Client
from ._handles import AsyncWatched, LeaseView, Watched, deliver
from ._locks import ExtendResult
from ._native import (
    Fingerprint,
    IdempotencyKeys,
    InProgress,
    Lost,
    Mismatch,
    Replay,
    Response,
    Stored,
)
from ._types import Seconds

__all__ = ["Idempotency", "AsyncIdempotency", "Claim", "AsyncClaim"]

EndResult = Union[Stored, Lost]
FingerprintLike = Union[Fingerprint, Sequence[Union[str, bytes, int]]]
KeyLike = Union[str, bytes]
F = TypeVar("F", bound=Callable[..., Any])


class Claim(LeaseView):
    """A live claim on an idempotency key (blocking): run the request, then ``complete`` or
    ``fail`` it (both end it)."""

    __slots__ = ()

    @property
    def is_takeover(self) -> bool:
        """Whether this claim took over an earlier executor's expired lease."""
        return bool(self._n.is_takeover)

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
        self._w = Watched(self._n.watch(renew_fraction, margin_fraction), self)
        return cast("Watched[Claim]", self._w)

    def __exit__(self, *exc: Any) -> None:
        if self._w is not None and not self._w._n.stopped:
            self._w.stop()

    def __repr__(self) -> str:
        return repr(self._n)


class AsyncClaim(LeaseView):
    """A live claim on an idempotency key (asyncio). See ``Claim``."""

    __slots__ = ()

    @property
    def is_takeover(self) -> bool:
        return bool(self._n.is_takeover)

    async def extend(self, ttl: Seconds) -> ExtendResult:
        return cast(ExtendResult, await self._n.extend(ttl))

    async def complete(self, response: Response) -> EndResult:
        return cast(EndResult, await self._n.complete(response))

    async def fail(self, response: Optional[Response] = None) -> EndResult:
        return cast(EndResult, await self._n.fail(response))

    def watch(
        self, *, renew_fraction: Optional[float] = None, margin_fraction: Optional[float] = None
    ) -> AsyncWatched[AsyncClaim]:
        self._w = AsyncWatched(self._n.watch(renew_fraction, margin_fraction), self)
        return cast("AsyncWatched[AsyncClaim]", self._w)

    async def __aexit__(self, *exc: Any) -> None:
        if self._w is not None and not self._w._n.stopped:
            await self._w.stop()

    def __repr__(self) -> str:
        return repr(self._n)


Begin = Union[Claim, InProgress, Replay, Mismatch]
AsyncBegin = Union[AsyncClaim, InProgress, Replay, Mismatch]


def _settings(
    ttl: Optional[Seconds], result_ttl: Optional[Seconds], max_response_bytes: Optional[int]
) -> dict[str, Any]:
    return {"ttl": ttl, "result_ttl": result_ttl, "max_response_bytes": max_response_bytes}


class _Store:
    __slots__ = ("_n",)
    _n: Any

    def keys(self, scope: str, key: KeyLike) -> IdempotencyKeys:
        """The key of (``scope``, ``key``)'s record."""
        return cast(IdempotencyKeys, self._n.keys(scope, key))

    @property
    def ttl(self) -> float:
        """A claim's lease, in seconds."""
        return float(self._n.ttl)

    @property
    def result_ttl(self) -> float:
        """How long a stored result is kept, in seconds."""
        return float(self._n.result_ttl)


class Idempotency(_Store):
    """Idempotency records under one namespace: each request's side effect happens once,
    however often it is sent. ``ttl``: a claim's lease (default 30 s) before a duplicate may
    take it over; ``result_ttl``: how long results are kept (default 24 h)."""

    __slots__ = ()

    def __init__(
        self,
        client: Client,
        namespace: str,
        *,
        ttl: Optional[Seconds] = None,
        result_ttl: Optional[Seconds] = None,
        max_response_bytes: Optional[int] = None,
    ) -> None:
        if not isinstance(client, Client):
            raise TypeError(f"expected a redis_atomic.Client, got {type(client).__name__}")
        settings = _settings(ttl, result_ttl, max_response_bytes)
        self._n = _native.Idempotency(client._native, namespace, **settings)

    def begin(
        self, scope: str, key: KeyLike, fingerprint: FingerprintLike, *, token: Optional[str] = None
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

    def idempotent(self, *, scope: str, **options: Any) -> Callable[[F], F]:
        """A decorator: the function runs once per idempotency key; see ``idempotent``."""
        from ._idempotent import idempotent

        return idempotent(self, scope=scope, **options)


class AsyncIdempotency(_Store):
    """Idempotency records under one namespace (asyncio). See ``Idempotency``."""

    __slots__ = ()

    def __init__(
        self,
        client: AsyncClient,
        namespace: str,
        *,
        ttl: Optional[Seconds] = None,
        result_ttl: Optional[Seconds] = None,
        max_response_bytes: Optional[int] = None,
    ) -> None:
        if not isinstance(client, AsyncClient):
            raise TypeError(f"expected a redis_atomic.AsyncClient, got {type(client).__name__}")
        settings = _settings(ttl, result_ttl, max_response_bytes)
        self._n = _native.Idempotency(client._native, namespace, **settings)

    async def begin(
        self, scope: str, key: KeyLike, fingerprint: FingerprintLike, *, token: Optional[str] = None
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

    def idempotent(self, *, scope: str, **options: Any) -> Callable[[F], F]:
        """A decorator for coroutine functions; see ``idempotent``."""
        from ._idempotent import idempotent

        return idempotent(self, scope=scope, **options)
