#!/usr/bin/env python3
"""A service we did not write, behind `redis-atomic proxy`: Python's standard library only.

It counts executions per (Authorization, Idempotency-Key) — the side effect the proxy must not
repeat — answers each execution with a body no other execution has, and records the
Idempotency-Generation header it received. Endpoints:

  POST /orders    201, body {"execution": N, "key": ..., "body": ...}
  POST /slow      same after 1.5 s (duplicates arrive while it runs)
  POST /fail      500 (not stored: a retry must run again)
  GET  /limited   200 (behind a rate-limited route)
  GET  /_state    the counts, as JSON (read directly, not through the proxy)

Prints its port on one line to stdout when ready; stops on SIGTERM.
"""

import json
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
STATE = {"executions": 0, "per_key": {}, "generations": {}, "limited": 0}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, payload):
        body = json.dumps(payload, sort_keys=True).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def execute(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode()
        key = self.headers.get("Idempotency-Key", "")
        who = self.headers.get("Authorization", "")
        slot = who + "|" + key
        with LOCK:
            STATE["executions"] += 1
            n = STATE["executions"]
            STATE["per_key"][slot] = STATE["per_key"].get(slot, 0) + 1
            STATE["generations"].setdefault(slot, []).append(
                self.headers.get("Idempotency-Generation")
            )
        return {"execution": n, "key": key, "body": body}

    def do_POST(self):
        if self.path == "/orders":
            self.answer(201, self.execute())
        elif self.path == "/slow":
            result = self.execute()
            time.sleep(1.5)
            self.answer(201, result)
        elif self.path == "/fail":
            self.answer(500, self.execute())
        else:
            self.answer(404, {"error": "no such path"})

    def do_GET(self):
        if self.path == "/_state":
            with LOCK:
                self.answer(200, STATE)
        elif self.path == "/limited":
            with LOCK:
                STATE["limited"] += 1
            self.answer(200, {"ok": True})
        else:
            self.answer(404, {"error": "no such path"})


class Server(ThreadingHTTPServer):
    request_queue_size = 128  # the default 5 drops connections when the proxy opens many at once


def main():
    server = Server(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    print(server.server_address[1], flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
