"""The job queue through the package: every job acked exactly once over many workers (threads
and asyncio tasks, with nacks and a worker whose leases expire), dead letters, claim ids, by
parts."""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter
from datetime import datetime, timedelta, timezone
from typing import Any, List

import pytest

import redis_atomic as ra

JOBS, WORKERS = 120, 8


def drain(queue: ra.Queue, worker: str, acks: Counter[str], lock: threading.Lock) -> None:
    """Claims until the queue is idle; nacks each job's first delivery when its number is a
    multiple of 7 (due again at once), acks everything else, counting each Acked per job id."""
    while True:
        got = queue.claim(worker, 10, 5)
        if isinstance(got, ra.Idle):
            return
        if isinstance(got, ra.Empty):
            time.sleep(min(got.retry_after, 0.02))  # the queue's own answer: ask again then
            continue
        for job in got:
            if int(job.id.split("-")[1]) % 7 == 0 and job.deliveries == 1:
                assert isinstance(job.nack(0, "first try fails"), ra.Retrying)
                continue
            assert job.payload == job.id.encode()
            if job.ack() == ra.Acked():
                with lock:
                    acks[job.id] += 1


def test_every_job_acked_once_by_threads(client: ra.Client) -> None:
    queue = ra.Queue(client, "q", "work")
    for i in range(JOBS):
        assert queue.enqueue(f"job-{i}", f"job-{i}") == ra.Enqueued(0)
    assert queue.enqueue("job-0", "again") == ra.Exists("queued")
    # A worker that dies holding 5 jobs: its leases run out and others finish the jobs.
    zombie = queue.claim("zombie", 0.05, 5)
    assert isinstance(zombie, list) and len(zombie) == 5
    acks: Counter[str] = Counter()
    lock = threading.Lock()
    threads = [
        threading.Thread(target=drain, args=(queue, f"w{n}", acks, lock)) for n in range(WORKERS)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert acks == Counter({f"job-{i}": 1 for i in range(JOBS)})
    assert all(job.ack() == ra.Lost() for job in zombie)  # superseded: not acked twice
    stats = queue.stats()
    assert (stats.acked, stats.ready, stats.running, stats.dead) == (JOBS, 0, 0, 0)
    assert isinstance(queue.inspect("job-7"), ra.JobAcked)
    assert queue.enqueue("job-3", "x") == ra.Exists("acked")  # the dedup window


def test_every_job_acked_once_by_tasks(redis_url: str) -> None:
    async def main() -> Counter[str]:
        client = await ra.AsyncClient.connect(redis_url)
        queue = ra.AsyncQueue(client, "aq", "work")
        await asyncio.gather(*(queue.enqueue(f"job-{i}", b"p") for i in range(JOBS)))
        acks: Counter[str] = Counter()

        async def worker(name: str) -> None:
            while True:
                got = await queue.claim(name, 10, 3)
                if isinstance(got, ra.Idle):
                    return
                if isinstance(got, ra.Empty):
                    await asyncio.sleep(min(got.retry_after, 0.02))
                    continue
                for job in got:
                    async with job:  # acks on the way out
                        pass
                    acks[job.id] += 1

        await asyncio.gather(*(worker(f"t{n}") for n in range(16)))
        assert (await queue.stats()).acked == JOBS
        return acks

    assert asyncio.run(main()) == Counter({f"job-{i}": 1 for i in range(JOBS)})


def test_dead_letters_requeue_purge(client: ra.Client) -> None:
    """A job nacked max_deliveries times is dead-lettered; listed, requeued, then purged."""
    queue = ra.Queue(client, "dl", "q", max_deliveries=2, dead_letter_retention=3600)
    queue.enqueue("j", b"payload")
    for expected in [ra.Retrying(0), ra.Dead()]:
        jobs = queue.claim("w", 10)
        assert isinstance(jobs, list) and len(jobs) == 1
        assert jobs[0].nack(0, "broken") == expected
    assert queue.claim("w", 10) == ra.Idle()
    assert queue.inspect("j") == ra.JobDead(2, "broken")
    letters = queue.dead_letters()
    assert letters.total == 1 and letters.letters[0].id == "j"
    assert letters.letters[0].error == "broken" and letters.letters[0].deliveries == 2
    assert queue.requeue_dead("j") == ra.Requeued()
    assert queue.requeue_dead("j") == ra.NotDead()
    jobs = queue.claim("w", 10)
    assert isinstance(jobs, list) and jobs[0].deliveries == 1
    with pytest.raises(RuntimeError):
        with jobs[0]:  # the block raises: the job is nacked with the error
            raise RuntimeError("again")
    assert isinstance(queue.inspect("j"), ra.JobQueued)
    jobs = queue.claim("w", 10)
    assert isinstance(jobs, list) and jobs[0].deliveries == 2
    assert jobs[0].nack() == ra.Dead()
    assert queue.purge_dead_letters() == ra.Purged(1, 0)
    assert queue.inspect("j") == ra.JobUnknown()


def test_claim_with_id_by_parts_and_schedule(client: ra.Client) -> None:
    """A repeated claim id returns the same leases; by-parts calls check worker and fence;
    delayed and timed jobs wait; a reap returns expired leases."""
    queue = ra.Queue(client, "cp", "q")
    queue.enqueue("a", b"1")
    queue.enqueue("b", b"2")
    first = queue.claim_with_id("w", 30, 2, "claim-1")
    again = queue.claim_with_id("w", 30, 2, "claim-1")
    assert isinstance(first, list) and isinstance(again, list) and len(first) == 2
    assert [(j.id, j.fence) for j in first] == [(j.id, j.fence) for j in again]
    a = first[0]
    assert queue.extend(a.id, "other", a.fence, 5) == ra.Lost()
    assert queue.extend(a.id, a.worker, a.fence, 60) == ra.Extended(a.fence, 60)
    assert queue.ack(a.id, a.worker, a.fence + 1) == ra.Lost()
    assert queue.ack(a.id, a.worker, a.fence) == ra.Acked()
    assert queue.ack(a.id, a.worker, a.fence) == ra.Acked()  # a repeat within the window
    b = first[1]
    assert queue.nack(b.id, b.worker, b.fence, 3600, "later") == ra.Retrying(3600)
    running = queue.inspect("b")
    assert isinstance(running, ra.JobQueued) and running.due_in > 3500
    empty = queue.claim("w", 1)
    assert isinstance(empty, ra.Empty) and empty.retry_after > 3500
    at = datetime.now(timezone.utc) + timedelta(hours=2)
    assert isinstance(queue.enqueue("c", b"3", at=at), ra.Enqueued)
    assert queue.enqueue("d", b"4", delay=7200).due_in > 7100  # type: ignore[union-attr]
    with pytest.raises(ra.BadArgument):
        queue.enqueue("e", b"5", delay=1, at=at)
    queue.enqueue("now", b"x")
    short = queue.claim("w", 0.01)
    assert isinstance(short, list)
    reaped: Any = None
    for _ in range(2000):  # bounded: the 10 ms lease runs out on the server's clock
        reaped = queue.reap(10)
        if reaped.requeued:
            break
    assert reaped == ra.Reaped(1, 0)
    assert queue.keys.due == "cp:queue:v1:{q}:due"
    assert queue.claim_key("claim-1").startswith("cp:queue:v1:{q}:claim:")
    with pytest.raises(ra.BadArgument):
        queue.claim("w", 10, 0)
    with pytest.raises(ra.BadArgument):
        ra.Queue(client, "cp", "q", max_deliveries=0)


def test_job_lists(client: ra.Client) -> None:
    """A claim of several jobs returns them in due order, each its own lease."""
    queue = ra.Queue(client, "jl", "q")
    for i in range(5):
        queue.enqueue(f"j{i}", str(i))
    jobs: List[ra.Job] = queue.claim("w", 30, 10)  # type: ignore[assignment]
    assert [j.id for j in jobs] == [f"j{i}" for i in range(5)]
    # Fences are per job: one claim may stamp several jobs with the same (time-floored) fence.
    assert all(j.fence > 0 and j.deliveries == 1 for j in jobs)
    assert all(j.claimed_at_ms > 0 and 29 < j.expires_in <= 30 for j in jobs)
