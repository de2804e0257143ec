"""A small HTTP service with the standard library only (http.server) and redis_atomic.

    python examples/python/service.py --redis redis://127.0.0.1:6379 --port 8080
    curl -i localhost:8080/api/hello -H 'X-Api-Key: k1'

* ``GET /api/hello``: rate limited per API key by a policy of two limits decided together
  (10 per second as GCRA, 1000 per day as a fixed window): 200 with ``RateLimit`` headers, or
  429 with ``Retry-After``. A client may send ``Idempotency-Key`` to make a retry of the same
  request free (it becomes the decision's request id: charged once, replayed after).
* ``POST /api/charges``: (phase 2) the idempotent endpoint, on the library's idempotency keys.
* the queue worker: (phase 2) a thread claiming jobs from the library's job queue.

ThreadingHTTPServer serves each request on its own thread; one blocking ``Client`` is shared
by all of them (calls release the GIL while they wait on Redis).
"""

from __future__ import annotations

import argparse
import json
import math
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Optional

import redis_atomic as ra

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
        # Phase 2: self.idempotency = ... (the library's idempotency keys), and a queue worker
        # started here: threading.Thread(target=worker, args=(queue,), daemon=True).start()


def handler_for(app: App) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
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
            # Phase 2: POST /api/charges on the library's idempotency keys.
            self.reply(501, {"error": "not implemented yet"})

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
