"""The examples (examples/python/service.py and worker.py) do what their docstrings say."""

from __future__ import annotations

import importlib.util
import json
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import ModuleType
from typing import Any, Iterator, List

import pytest

import redis_atomic as ra

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "python"


def load_example(name: str = "service") -> ModuleType:
    if str(EXAMPLES) not in sys.path:
        sys.path.insert(0, str(EXAMPLES))  # service.py imports worker.py, its sibling
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def service(redis_url: str) -> Iterator[str]:
    # The example's policy with a slow refill (one unit per hour): no refill during the test.
    policy = ra.Policy(
        [
            ra.Limit.gcra(10, 36_000, name="per-second"),
            ra.Limit.fixed_window(1000, 86_400, name="per-day"),
        ]
    )
    server = load_example().make_server(redis_url, policy=policy)
    thread = threading.Thread(target=server.serve_forever)
    thread.start()
    app = server.RequestHandlerClass.application
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
        app.worker.stop()
        app.worker_thread.join()


def get(
    url: str, headers: dict[str, str], body: bytes | None = None
) -> tuple[int, dict[str, str], dict[str, Any]]:
    request = urllib.request.Request(url, headers=headers, data=body)
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            return r.status, dict(r.headers), json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), json.loads(e.read())


def test_rate_limited_endpoint(service: str) -> None:
    """10 requests of one key pass the GCRA (burst 10), the 11th gets 429 with Retry-After; a
    resend with the same Idempotency-Key is replayed, not charged."""
    url = f"{service}/api/hello"
    statuses = [get(url, {"X-Api-Key": "k1"})[0] for _ in range(11)]
    assert statuses == [200] * 10 + [429]
    status, headers, _ = get(url, {"X-Api-Key": "k1"})
    assert status == 429 and int(headers["Retry-After"]) >= 1
    status, headers, body = get(url, {"X-Api-Key": "k2", "Idempotency-Key": "r1"})
    assert status == 200 and body["replayed"] is False and '"per-second";r=9' in headers["RateLimit"]
    status, headers, body = get(url, {"X-Api-Key": "k2", "Idempotency-Key": "r1"})
    assert status == 200 and body["replayed"] is True
    assert get(url, {})[0] == 401


def test_idempotent_charges(service: str, redis_url: str) -> None:
    """8 concurrent duplicates of one charge: one charge recorded, every answer the same 201
    (or 409 while the first runs); a later repeat is replayed; another body is 422; a bad body
    is a final 400, replayed too; the worker sends exactly one receipt."""
    url = f"{service}/api/charges"
    headers = {"X-Api-Key": "k1", "Idempotency-Key": "c-1"}
    body = json.dumps({"amount": 500, "customer": "acme"}).encode()
    answers: List[tuple[int, dict[str, str], dict[str, Any]]] = []
    lock = threading.Lock()

    def post() -> None:
        got = get(url, headers, body)
        with lock:
            answers.append(got)

    threads = [threading.Thread(target=post) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    created = [a for a in answers if a[0] == 201]
    assert created and all(a[0] in (201, 409) for a in answers)
    charge_ids = {a[2]["charge_id"] for a in created}
    assert len(charge_ids) == 1
    status, replay_headers, replayed = get(url, headers, body)
    assert status == 201 and replayed == created[0][2]
    assert replay_headers["Idempotent-Replayed"] == "true"
    assert get(url, headers, json.dumps({"amount": 1, "customer": "x"}).encode())[0] == 422
    bad = {"X-Api-Key": "k1", "Idempotency-Key": "c-2"}
    assert get(url, bad, b"{}")[0] == 400 and get(url, bad, b"{}")[0] == 400
    queue = ra.Queue(ra.connect(redis_url), "example", "receipts")
    deadline = time.monotonic() + 20
    while queue.stats().acked < 1 and time.monotonic() < deadline:
        time.sleep(0.01)  # polling the condition "the worker acked the receipt", bounded
    stats = queue.stats()
    assert (stats.acked, stats.ready, stats.running) == (1, 0, 0)
    charge_id = charge_ids.pop()
    assert isinstance(queue.inspect(f"receipt-{charge_id}"), ra.JobAcked)


def test_worker_nacks_a_failing_job(redis_url: str) -> None:
    """A job whose handler raises is nacked (due again) until it is dead-lettered; a good one
    is acked; stop() ends the loop."""
    worker_module = load_example("worker")
    client = ra.connect(redis_url)
    queue = ra.Queue(client, "wk", "q", max_deliveries=2)
    queue.enqueue("good", b"{}")
    queue.enqueue("bad", b"{}")

    def handle(job: ra.Job) -> None:
        if job.id == "bad":
            raise ValueError("cannot send")

    worker = worker_module.Worker(queue, "w", handle)
    thread = threading.Thread(target=worker.run)
    thread.start()
    deadline = time.monotonic() + 20
    while queue.stats().dead < 1 and time.monotonic() < deadline:
        time.sleep(0.01)  # polling the condition "the bad job is dead", bounded
    worker.stop()
    thread.join()
    assert worker.acked == 1
    assert queue.inspect("bad") == ra.JobDead(2, "ValueError('cannot send')")
    assert isinstance(queue.inspect("good"), ra.JobAcked)
