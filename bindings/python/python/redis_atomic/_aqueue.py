"""The job queue over an ``AsyncClient``: ``AsyncQueue`` and its leased ``AsyncJob`` handles.
Leaving ``async with job:`` acks it, or nacks it when the block raised.

**Cancellation.** The library call of a cancelled ``claim`` runs to its end; jobs it leased are
nacked by the binding at once (due again, the delivery counted), since its caller never
received them.
"""

from __future__ import annotations

from typing import Any, List, Optional, Union, cast

from . import _native
from ._client import AsyncClient
from ._handles import AsyncWatched, deliver
from ._locks import ExtendResult
from ._native import DeadLetters, Empty, Idle, Purged, QueueKeys, QueueStats, Reaped
from ._queue import (
    AckResult,
    EnqueueResult,
    JobState,
    JobView,
    NackResult,
    RequeueResult,
    When,
    claimed,
    when,
)
from ._types import Seconds

__all__ = ["AsyncQueue", "AsyncJob"]

AsyncClaimResult = Union[List["AsyncJob"], Empty, Idle]


class AsyncJob(JobView):
    """A leased job (asyncio): ``await ack()`` or ``await nack(...)`` ends it."""

    __slots__ = ()

    async def extend(self, ttl: Seconds) -> ExtendResult:
        return cast(ExtendResult, await self._n.extend(ttl))

    async def ack(self) -> AckResult:
        return cast(AckResult, await self._n.ack())

    async def nack(self, retry_after: Seconds = 0, error: str = "") -> NackResult:
        return cast(NackResult, await self._n.nack(retry_after, error))

    def watch(
        self, *, renew_fraction: Optional[float] = None, margin_fraction: Optional[float] = None
    ) -> AsyncWatched[AsyncJob]:
        self._w = AsyncWatched(self._n.watch(renew_fraction, margin_fraction), self)
        return cast("AsyncWatched[AsyncJob]", self._w)

    async def __aenter__(self) -> AsyncJob:
        return self

    async def __aexit__(self, kind: Any, exc: Any, tb: Any) -> None:
        if self._w is not None and not self._w._n.stopped:
            await self._w.stop()
        if self._n.ended:
            return
        if exc is None:
            await self._n.ack()
        else:
            await self._n.nack(0, repr(exc))


class AsyncQueue:
    """A reliable delayed job queue (asyncio). See ``Queue``."""

    __slots__ = ("_n",)

    def __init__(
        self,
        client: AsyncClient,
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
        if not isinstance(client, AsyncClient):
            raise TypeError(f"expected a redis_atomic.AsyncClient, got {type(client).__name__}")
        self._n = _native.Queue(
            client._native, namespace, name, max_payload_bytes=max_payload_bytes,
            max_deliveries=max_deliveries, dedup_window=dedup_window,
            max_dead_letters=max_dead_letters, dead_letter_retention=dead_letter_retention,
            claim_id_ttl=claim_id_ttl,
        )

    async def enqueue(
        self,
        job_id: str,
        payload: Union[bytes, str],
        *,
        delay: Optional[Seconds] = None,
        at: Optional[When] = None,
    ) -> EnqueueResult:
        return cast(EnqueueResult, await self._n.enqueue(job_id, payload, delay=delay, at=when(at)))

    async def claim(
        self, worker: str, ttl: Seconds, max_jobs: int = 1
    ) -> Union[List[AsyncJob], Empty, Idle]:
        got = await deliver(self._n.claim(worker, ttl, max_jobs))
        return cast(AsyncClaimResult, claimed(got, AsyncJob))

    async def claim_with_id(
        self, worker: str, ttl: Seconds, max_jobs: int, claim_id: str
    ) -> Union[List[AsyncJob], Empty, Idle]:
        got = await deliver(self._n.claim_with_id(worker, ttl, max_jobs, claim_id))
        return cast(AsyncClaimResult, claimed(got, AsyncJob))

    async def extend(self, job_id: str, worker: str, fence: int, ttl: Seconds) -> ExtendResult:
        return cast(ExtendResult, await self._n.extend(job_id, worker, fence, ttl))

    async def ack(self, job_id: str, worker: str, fence: int) -> AckResult:
        return cast(AckResult, await self._n.ack(job_id, worker, fence))

    async def nack(
        self, job_id: str, worker: str, fence: int, retry_after: Seconds = 0, error: str = ""
    ) -> NackResult:
        return cast(NackResult, await self._n.nack(job_id, worker, fence, retry_after, error))

    async def stats(self) -> QueueStats:
        return cast(QueueStats, await self._n.stats())

    async def inspect(self, job_id: str) -> JobState:
        return cast(JobState, await self._n.inspect(job_id))

    async def dead_letters(self, start: int = 0, count: int = 100) -> DeadLetters:
        return cast(DeadLetters, await self._n.dead_letters(start, count))

    async def requeue_dead(self, job_id: str, delay: Seconds = 0) -> RequeueResult:
        return cast(RequeueResult, await self._n.requeue_dead(job_id, delay))

    async def purge_dead_letters(self, older_than: Seconds = 0, limit: int = 1000) -> Purged:
        return cast(Purged, await self._n.purge_dead_letters(older_than, limit))

    async def reap(self, limit: int = 100) -> Reaped:
        return cast(Reaped, await self._n.reap(limit))

    @property
    def keys(self) -> QueueKeys:
        return self._n.keys

    def claim_key(self, claim_id: str) -> str:
        return self._n.claim_key(claim_id)
