"""A small HTTP service with the standard library only (http.server) and redis_atomic.

    python examples/python/service.py --redis redis://127.0.0.1:6379 --port 8080
    curl -i localhost:8080/api/hello -H 'X-Api-Key: k1'

    curl -i localhost:8080/api/charges -H 'X-Api-Key: k1' -H 'Idempotency-Key: c-1' \
         -d '{"amount": 500, "customer": "acme"}'

* ``GET /api/hello``: rate limited per API key by a policy of two limits decided together
  (10 per second as GCRA, 1000 per day as a fixed window): 200 with ``RateLimit`` headers, or
  429 with ``Retry-After``. A client may send ``Idempotency-Key`` to make a retry of the same
  request free (it becomes the decision's request id: charged once, replayed after).
* ``POST /api/charges``: idempotent, on the library's idempotency keys (scoped by API key). The
  first request with an ``Idempotency-Key`` claims it, records the charge (a fenced write: the
  claim's fence, so a superseded executor cannot overwrite it), enqueues its receipt job and
  stores the 201 response; a repeat gets that response again (``Idempotent-Replayed: true``),
  whatever happened to the connection of the first; a repeat while the first runs gets 409 with
  ``Retry-After``; the same key with another body gets 422.
* the queue worker (``worker.py``) runs on a thread of the service and sends the receipts.

ThreadingHTTPServer serves each request on its own thread; one blocking ``Client`` is shared
by all of them (calls release the GIL while they wait on Redis).
"""

from __future__ import annotations

import argparse
import json
import math
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional

import redis_atomic as ra
from worker import NAMESPACE, Worker, open_queue

POLICY = ra.Policy(
    [
        ra.Limit.gcra(10, 1.0, name="per-second"),
        ra.Limit.fixed_window(1000, 86_400, name="per-day"),
    ]
)


class App:
    """What the handlers share: the client and the primitives made from it."""

    def __init__(self, redis_url: str, policy: ra.Policy) -> None:
        self.client = ra.connect(redis_url, timeout=0.5)
        self.policy = policy
        self.limiter = ra.RateLimiter(self.client, "example-api", policy)
        self.idempotency = ra.Idempotency(self.client, NAMESPACE, ttl=30, result_ttl=86_400)
        self.charges = ra.FencedWrites(self.client, NAMESPACE)
        self.queue = open_queue(self.client)
        self.worker = Worker(self.queue, "service-worker")
        self.worker_thread = threading.Thread(target=self.worker.run, daemon=True)
        self.worker_thread.start()

    def charge(self, api_key: str, idempotency_key: str, body: bytes) -> ra.Response:
        """The idempotent charge: the response to send, first or replayed."""
        got = self.idempotency.begin(api_key, idempotency_key, ["POST /api/charges", body])
        if isinstance(got, ra.Replay):
            r = got.response
            return ra.Response(r.status, r.body, headers=r.headers + [("Idempotent-Replayed", "true")])
        if isinstance(got, ra.InProgress):
            retry = str(max(1, math.ceil(got.retry_after)))
            return json_response(409, {"error": "in progress"}, [("Retry-After", retry)])
        if isinstance(got, ra.Mismatch):
            return json_response(422, {"error": "Idempotency-Key reused with another body"})
        watched = got.watch()  # renewed while the work runs
        try:
            response, failed = self.record_charge(got.fence, body)
        except BaseException:
            watched.stop()
            got.fail()  # retryable: the key is free, a retry runs the charge again
            raise
        watched.stop()
        if failed:
            got.fail(response)  # a bad request is final: duplicates get the same 400
        else:
            got.complete(response)
        return response

    def record_charge(self, fence: int, body: bytes) -> tuple[ra.Response, bool]:
        """Records the charge under the claim's fence and enqueues its receipt: the response,
        and whether it is a (final) failure."""
        try:
            request = json.loads(body)
            record: dict[str, str | int] = {
                "charge_id": str(uuid.uuid4()),
                "amount": int(request["amount"]),
                "customer": str(request["customer"]),
            }
        except (ValueError, KeyError, TypeError) as e:
            return json_response(400, {"error": f"bad request: {e!r}"}), True
        charge_id = str(record["charge_id"])
        key = self.charges.key(charge_id, "record")
        written = self.charges.write(charge_id, fence, [ra.Write.hset(key, record)])
        assert isinstance(written, ra.Written)  # a fresh charge id: no other fence wrote it
        self.queue.enqueue(f"receipt-{charge_id}", json.dumps(record))
        return json_response(201, record), False


def json_response(
    status: int, body: Any, headers: Optional[list[tuple[str, str]]] = None
) -> ra.Response:
    return ra.Response(
        status, json.dumps(body).encode(), headers=[("Content-Type", "application/json")] + (headers or [])
    )


def handler_for(app: App) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        application = app  # what the server serves (its worker, for a clean shutdown)

        def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
            if self.path != "/api/hello":
                self.reply(404, {"error": "not found"})
                return
            key = self.headers.get("X-Api-Key")
            if not key:
                self.reply(401, {"error": "X-Api-Key required"})
                return
            request_id: Optional[str] = self.headers.get("Idempotency-Key")
            try:
                verdict = app.limiter.consume_detailed(key, request_id=request_id)
            except ra.OutcomeUnknown as e:
                # The decision may have been charged: say so, and whether resending is safe.
                self.reply(503, {"error": "try again", "retry_safe": e.retry_safe})
                return
            except ra.RedisAtomicError as e:
                self.reply(503, {"error": e.code})
                return
            headers = {
                "RateLimit-Policy": ", ".join(
                    f'"{limit.name}";q={limit.limit};w={math.ceil(limit.period)}'
                    for limit in app.policy.limits
                ),
                "RateLimit": ", ".join(
                    f'"{limit.name}";r={status.remaining};t={math.ceil(status.reset_after)}'
                    for limit, status in zip(app.policy.limits, verdict.limits)
                ),
            }
            decision = verdict.decision
            if isinstance(decision, ra.Limited):
                headers["Retry-After"] = str(max(1, math.ceil(decision.retry_after)))
                self.reply(429, {"error": "rate limited"}, headers)
                return
            self.reply(200, {"hello": key, "replayed": verdict.replayed}, headers)

        def do_POST(self) -> None:  # noqa: N802
            if self.path != "/api/charges":
                self.reply(404, {"error": "not found"})
                return
            api_key, idem_key = self.headers.get("X-Api-Key"), self.headers.get("Idempotency-Key")
            if not api_key or not idem_key:
                self.reply(400, {"error": "X-Api-Key and Idempotency-Key required"})
                return
            body = self.rfile.read(min(int(self.headers.get("Content-Length", 0)), 65536))
            try:
                response = app.charge(api_key, idem_key, body)
            except ra.RedisAtomicError as e:
                # Nothing stored: a retry with the same key runs (or replays) it safely.
                self.reply(503, {"error": e.code})
                return
            self.send_response(response.status)
            for name, value in response.headers:
                self.send_header(name, value.decode())
            self.send_header("Content-Length", str(len(response.body)))
            self.end_headers()
            self.wfile.write(response.body)

        def reply(
            self, status: int, body: dict[str, object], headers: Optional[dict[str, str]] = None
        ) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            pass  # quiet; a real service logs through its own logger

    return Handler


def make_server(redis_url: str, port: int = 0, policy: ra.Policy = POLICY) -> ThreadingHTTPServer:
    """The service on 127.0.0.1:``port`` (0: any free port), not yet serving."""
    return ThreadingHTTPServer(("127.0.0.1", port), handler_for(App(redis_url, policy)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--redis", default="redis://127.0.0.1:6379")
    ap.add_argument("--port", type=int, default=8080)
    a = ap.parse_args()
    server = make_server(a.redis, a.port)
    print(f"serving on http://127.0.0.1:{server.server_address[1]}/api/hello")
    server.serve_forever()


if __name__ == "__main__":
    main()
