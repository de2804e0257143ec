"""The job queue over a blocking ``Client``: ``Queue`` and its leased ``Job`` handles.

``claim`` answers a list of jobs (each a fenced lease, acked or nacked once), ``Empty
(retry_after)`` or ``Idle()``; a job is also a context manager: leaving ``with job:`` acks it,
or nacks it (due again at once, the exception's ``repr`` as its error) when the block raised.

What the asyncio twin (``_aqueue.py``) shares without a call lives here once: ``JobView`` (a
job's fields and how leaving its block ends it), ``claimed`` and ``when``; the queue's
constructor and keys, in ``_views.py``.
"""

from __future__ import annotations

import functools
from datetime import datetime
from typing import Any, List, Optional, Union, cast

from ._client import Client
from ._handles import LeaseView, Watched
from ._locks import ExtendResult
from ._native import (
    Acked,
    Dead,
    DeadLetters,
    Empty,
    Enqueued,
    Exists,
    Idle,
    JobAcked,
    JobDead,
    JobQueued,
    JobRunning,
    JobUnknown,
    Lost,
    NotDead,
    Purged,
    QueueStats,
    Reaped,
    Requeued,
    Retrying,
)
from ._types import Seconds
from ._views import QueueView

__all__ = ["Queue", "Job"]

AckResult = Union[Acked, Lost]
NackResult = Union[Retrying, Dead, Lost]
EnqueueResult = Union[Enqueued, Exists]
JobState = Union[JobQueued, JobRunning, JobDead, JobAcked, JobUnknown]
RequeueResult = Union[Requeued, NotDead]
When = Union[datetime, float, int]
ClaimResult = Union[List["Job"], Empty, Idle]


def when(at: Optional[When]) -> Optional[float]:
    """``at`` as seconds since the epoch (a naive ``datetime`` is local time, as
    ``datetime.timestamp`` reads it)."""
    if at is None:
        return None
    return at.timestamp() if isinstance(at, datetime) else float(at)


class JobView(LeaseView):
    """What a leased job says about itself (both faces)."""

    __slots__ = ()

    @property
    def id(self) -> str:
        """The job id."""
        return str(self._n.id)

    @property
    def payload(self) -> bytes:
        """The payload, byte for byte as enqueued."""
        return bytes(self._n.payload)

    @property
    def deliveries(self) -> int:
        """Deliveries so far, this one included (1 on the first claim)."""
        return int(self._n.deliveries)

    @property
    def claimed_at_ms(self) -> int:
        """The server's clock (ms since the epoch) when the lease began."""
        return int(self._n.claimed_at_ms)

    @property
    def worker(self) -> str:
        """The worker the job is leased to."""
        return str(self._n.worker)

    def _end_on_exit(self, exc: Any) -> Optional[Any]:
        """The call that leaving a ``with`` block ends the job with (the watchdog stopped
        first): ``ack``, or ``nack`` due again at once with the exception's ``repr`` as its
        error when the block raised; ``None`` if the job was ended in the block."""
        if self._n.ended:
            return None
        if exc is None:
            return self._n.ack
        return functools.partial(self._n.nack, 0, repr(exc))


class Job(JobView):
    """A leased job (blocking): ``ack()`` or ``nack(...)`` ends it."""

    __slots__ = ()

    def extend(self, ttl: Seconds) -> ExtendResult:
        """Sets the lease to end ``ttl`` from the server's now."""
        return cast(ExtendResult, self._n.extend(ttl))

    def ack(self) -> AckResult:
        """Completes the job: ``Acked()``, or ``Lost()`` if this lease is not the job's any
        more (another worker has or had it)."""
        return cast(AckResult, self._n.ack())

    def nack(self, retry_after: Seconds = 0, error: str = "") -> NackResult:
        """Gives the job back: ``Retrying(retry_after)``, ``Dead()`` once delivered
        ``max_deliveries`` times, or ``Lost()``."""
        return cast(NackResult, self._n.nack(retry_after, error))

    def watch(
        self, *, renew_fraction: Optional[float] = None, margin_fraction: Optional[float] = None
    ) -> Watched[Job]:
        """Renews the lease in the background until stopped (see ``Watched``). A job whose
        renewal could not be confirmed is not given back: it runs out and is claimed again."""
        return cast("Watched[Job]", self._watch(Watched, renew_fraction, margin_fraction))

    def __enter__(self) -> Job:
        return self

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> None:
        watchdog = self._running_watchdog()
        if watchdog is not None:
            watchdog.stop()
        end = self._end_on_exit(exc)
        if end is not None:
            end()


def claimed(got: Any, wrap: Any) -> Any:
    """A claim's answer with each native job wrapped."""
    return [wrap(j) for j in got] if isinstance(got, list) else got


class Queue(QueueView[Client]):
    """A reliable delayed job queue: each job in exactly one place, at most one live lease per
    job, every lease fenced, each job acked at most once."""

    __slots__ = ()

    _face = Client

    def enqueue(
        self,
        job_id: str,
        payload: Union[bytes, str],
        *,
        delay: Optional[Seconds] = None,
        at: Optional[When] = None,
    ) -> EnqueueResult:
        """Adds a job, due now, after ``delay``, or at ``at`` (a ``datetime`` or epoch
        seconds; the server's clock decides): ``Enqueued(due_in)`` or ``Exists(status)``."""
        return cast(EnqueueResult, self._n.enqueue(job_id, payload, delay=delay, at=when(at)))

    def claim(
        self, worker: str, ttl: Seconds, max_jobs: int = 1
    ) -> Union[List[Job], Empty, Idle]:
        """Leases up to ``max_jobs`` due jobs to ``worker`` for ``ttl``: a list of ``Job``,
        ``Empty(retry_after)`` or ``Idle()``. Not resent after an unknown outcome (the jobs it
        may have leased come back after ``ttl``): ``claim_with_id`` is the retry-safe claim."""
        return cast(ClaimResult, claimed(self._n.claim(worker, ttl, max_jobs), Job))

    def claim_with_id(
        self, worker: str, ttl: Seconds, max_jobs: int, claim_id: str
    ) -> Union[List[Job], Empty, Idle]:
        """``claim``, retry-safe: a repeat of ``claim_id`` returns the first claim's live
        leases (same fences) and leases nothing new."""
        got = self._n.claim_with_id(worker, ttl, max_jobs, claim_id)
        return cast(ClaimResult, claimed(got, Job))

    def extend(self, job_id: str, worker: str, fence: int, ttl: Seconds) -> ExtendResult:
        """Extends a job's lease by parts."""
        return cast(ExtendResult, self._n.extend(job_id, worker, fence, ttl))

    def ack(self, job_id: str, worker: str, fence: int) -> AckResult:
        """Acks a job by parts (safe to repeat within the dedup window)."""
        return cast(AckResult, self._n.ack(job_id, worker, fence))

    def nack(
        self, job_id: str, worker: str, fence: int, retry_after: Seconds = 0, error: str = ""
    ) -> NackResult:
        """Nacks a job by parts."""
        return cast(NackResult, self._n.nack(job_id, worker, fence, retry_after, error))

    def stats(self) -> QueueStats:
        """Counts of jobs by state (read-only)."""
        return cast(QueueStats, self._n.stats())

    def inspect(self, job_id: str) -> JobState:
        """One job's state (read-only)."""
        return cast(JobState, self._n.inspect(job_id))

    def dead_letters(self, start: int = 0, count: int = 100) -> DeadLetters:
        """At most ``count`` dead letters from position ``start``, oldest first."""
        return cast(DeadLetters, self._n.dead_letters(start, count))

    def requeue_dead(self, job_id: str, delay: Seconds = 0) -> RequeueResult:
        """Moves a dead letter back to the queue, deliveries reset."""
        return cast(RequeueResult, self._n.requeue_dead(job_id, delay))

    def purge_dead_letters(self, older_than: Seconds = 0, limit: int = 1000) -> Purged:
        """Deletes at most ``limit`` dead letters that died ``older_than`` ago or more."""
        return cast(Purged, self._n.purge_dead_letters(older_than, limit))

    def reap(self, limit: int = 100) -> Reaped:
        """Returns at most ``limit`` expired leases to the queue (or the dead letters)."""
        return cast(Reaped, self._n.reap(limit))
