"""A worker draining the library's job queue, with the standard library only.

    python examples/python/worker.py --redis redis://127.0.0.1:6379 --name worker-1

Each claim leases up to 10 due jobs to this worker. A job is processed inside ``with job:``
(acked when the block ends, nacked with the exception when it raises: due again at once, dead
lettered after ``max_deliveries``) and inside ``with job.watch():`` (its lease renewed while it
runs, so a slow job is not handed to another worker; ``lost`` says if it was anyway, and the
fence passed to every write lets the store refuse a superseded worker). When nothing is due the
worker waits what the queue says (``Empty.retry_after``), or a poll interval when the queue is
``Idle``, on an event that ``stop()`` sets: it stops at once, between jobs.

The service (``service.py``) enqueues one receipt job per charge; ``handle_receipt`` is what
this worker does with it.
"""

from __future__ import annotations

import argparse
import json
import threading
from typing import Callable

import redis_atomic as ra

NAMESPACE, QUEUE = "example", "receipts"
LEASE = 30.0  # a job's lease; renewed by the watchdog while it runs
IDLE_POLL = 1.0


def open_queue(client: ra.Client) -> ra.Queue:
    """The receipts queue (dead letters after 5 deliveries, kept a week)."""
    return ra.Queue(client, NAMESPACE, QUEUE, max_deliveries=5)


Handler = Callable[[ra.Job], None]


def handle_receipt(job: ra.Job) -> None:
    """Sends the receipt of one charge (here: prints it)."""
    charge = json.loads(job.payload)
    print(f"receipt for charge {charge['charge_id']}: {charge['amount']} to {charge['customer']}")


class Worker:
    """Claims and processes jobs until ``stop()``; counts what it acked."""

    def __init__(self, queue: ra.Queue, name: str, handle: Handler = handle_receipt) -> None:
        self.queue, self.name, self.handle = queue, name, handle
        self.stopping = threading.Event()
        self.acked = 0

    def run(self) -> None:
        while not self.stopping.is_set():
            got = self.queue.claim(self.name, LEASE, 10)
            if isinstance(got, ra.Empty):
                self.stopping.wait(min(got.retry_after, IDLE_POLL))
            elif isinstance(got, ra.Idle):
                self.stopping.wait(IDLE_POLL)
            else:
                for job in got:
                    self.process(job)

    def process(self, job: ra.Job) -> None:
        try:
            with job, job.watch():
                self.handle(job)
        except Exception as e:  # nacked on the way out of `with job`; keep draining
            print(f"job {job.id} failed (delivery {job.deliveries}): {e!r}")
            return
        self.acked += 1

    def stop(self) -> None:
        self.stopping.set()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--redis", default="redis://127.0.0.1:6379")
    ap.add_argument("--name", default="worker-1")
    a = ap.parse_args()
    worker = Worker(open_queue(ra.connect(a.redis)), a.name)
    try:
        worker.run()
    except KeyboardInterrupt:
        worker.stop()


if __name__ == "__main__":
    main()
