#!/usr/bin/env python3
"""A tiny payments service that knows nothing about idempotency: every POST /payments "charges"
(a counter) and answers with a fresh charge id. Run it, put `redis-atomic proxy` in front, and
send the same Idempotency-Key twice: the charge happens once, the second answer is a replay.

It also shows the one thing a service should do with the proxy: reject a write whose
Idempotency-Generation is older than one it has already seen for that key (a stale execution
after a proxy crash).
"""
import itertools
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CHARGES = itertools.count(1)
SEEN = {}  # Idempotency-Key -> highest generation seen
LOCK = threading.Lock()


class Payments(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        key = self.headers.get("Idempotency-Key", "")
        generation = int(self.headers.get("Idempotency-Generation") or 0)
        with LOCK:
            if generation < SEEN.get(key, 0):
                return self.reply(409, {"error": "stale generation"})
            SEEN[key] = generation
            charge = next(CHARGES)
        self.reply(201, {"charge": f"ch_{charge}", "generation": generation})

    def reply(self, status, payload):
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


if __name__ == "__main__":
    print("payments upstream on http://127.0.0.1:8080")
    ThreadingHTTPServer(("127.0.0.1", 8080), Payments).serve_forever()
