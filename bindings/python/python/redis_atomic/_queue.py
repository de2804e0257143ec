"""The job queue over a blocking ``Client``: ``Queue`` and its leased ``Job`` handles.

``claim`` answers a list of jobs (each a fenced lease, acked or nacked once), ``Empty
(retry_after)`` or ``Idle()``; a job is also a context manager: leaving ``with job:`` acks it,
or nacks it (due again at once, the exception's ``repr`` as its error) when the block raised.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, List, Optional, Union, cast

from . import _native
from ._client import Client
from ._handles import LeaseView, Watched
from ._locks import ExtendResult
from ._native import (
    Acked,
    DeadLettered,
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
    QueueKeys,
    QueueStats,
    Reaped,
    Requeued,
    Retrying,
)
from ._types import Seconds

__all__ = ["Queue", "Job"]

AckResult = Union[Acked, Lost]
NackResult = Union[Retrying, DeadLettered, Lost]
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

    def __repr__(self) -> str:
        return repr(self._n)


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
        """Gives the job back: ``Retrying(retry_after)``, ``DeadLettered()`` once delivered
        ``max_deliveries`` times, or ``Lost()``."""
        return cast(NackResult, self._n.nack(retry_after, error))

    def watch(
        self, *, renew_fraction: Optional[float] = None, margin_fraction: Optional[float] = None
    ) -> Watched[Job]:
        """Renews the lease in the background until stopped (see ``Watched``). A job whose
        renewal could not be confirmed is not given back: it runs out and is claimed again."""
        self._w = Watched(self._n.watch(renew_fraction, margin_fraction), self)
        return cast("Watched[Job]", self._w)

    def __enter__(self) -> Job:
        return self

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> None:
        if self._w is not None and not self._w._n.stopped:
            self._w.stop()
        if self._n.ended:
            return
        if exc is None:
            self._n.ack()
        else:
            self._n.nack(0, repr(exc))


def claimed(got: Any, wrap: Any) -> Any:
    """A claim's answer with each native job wrapped."""
    return [wrap(j) for j in got] if isinstance(got, list) else got


class Queue:
    """A reliable delayed job queue: each job in exactly one place, at most one live lease per
    job, every lease fenced, each job acked at most once."""

    __slots__ = ("_n",)

    def __init__(
        self,
        client: Client,
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
        if not isinstance(client, Client):
            raise TypeError(f"expected a redis_atomic.Client, got {type(client).__name__}")
        self._n = _native.Queue(
            client._native, namespace, name, max_payload_bytes=max_payload_bytes,
            max_deliveries=max_deliveries, dedup_window=dedup_window,
            max_dead_letters=max_dead_letters, dead_letter_retention=dead_letter_retention,
            claim_id_ttl=claim_id_ttl,
        )

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
        return cast(ClaimResult, claimed(self._n.claim_with_id(worker, ttl, max_jobs, claim_id), Job))

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

    @property
    def keys(self) -> QueueKeys:
        return self._n.keys

    def claim_key(self, claim_id: str) -> str:
        return self._n.claim_key(claim_id)
